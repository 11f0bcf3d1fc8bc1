"""The concept map: a reported metric named in a question -> the XBRL concepts that report it, in order of preference.

A question names a metric by one of its ``phrases`` (matched as whole words, case-insensitive, the longest phrase
first, so "deferred revenue" is not "revenue" and "earnings per share" is not "earnings"). The first concept of the
list that has a fact for the asked period wins (companies switch concepts over the years: NVIDIA reports
``Revenues``, Apple ``RevenueFromContractWithCustomerExcludingAssessedTax``).

* ``revenue`` (USD, flow): us-gaap: Revenues, RevenueFromContractWithCustomerExcludingAssessedTax, SalesRevenueNet,
  RevenueFromContractWithCustomerIncludingAssessedTax. Phrases: revenue, net sales, total revenues, top line,
  operating revenues (a beverage maker's or a utility's "Net operating revenues").
* ``net_income`` (USD, flow): us-gaap: NetIncomeLoss, ProfitLoss, NetIncomeLossAvailableToCommonStockholdersBasic.
  Phrases: net income, net loss (a loss year's line), profit, earnings, bottom line, earn.
* ``eps_diluted`` (USD/shares, flow): us-gaap: EarningsPerShareDiluted. Phrases: diluted EPS, EPS, earnings per
  share.
* ``eps_basic`` (USD/shares, flow): us-gaap: EarningsPerShareBasic. Phrases: basic EPS, basic earnings per share.
* ``operating_income`` (USD, flow): us-gaap: OperatingIncomeLoss. Phrases: operating income, operating profit,
  income from operations, and a loss year's lines (operating loss, loss from operations, earnings from operations).
* ``gross_profit`` (USD, flow): us-gaap: GrossProfit. Phrases: gross profit.
* ``rnd`` (USD, flow): us-gaap: ResearchAndDevelopmentExpense,
  ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost. Phrases: research and development, R&D.
* ``capex`` (USD, flow): us-gaap: PaymentsToAcquirePropertyPlantAndEquipment, PaymentsToAcquireProductiveAssets.
  Phrases: capital expenditures, capex, purchases of property and equipment.
* ``buybacks`` (USD, flow): us-gaap: PaymentsForRepurchaseOfCommonStock. Phrases: share repurchases, buybacks,
  repurchases of common stock.
* ``dividends`` (USD, flow): us-gaap: PaymentsOfDividends, PaymentsOfDividendsCommonStock, DividendsCommonStockCash.
  Phrases: dividends paid, dividends.
* ``dividend_per_share`` (USD/shares, flow): us-gaap: CommonStockDividendsPerShareDeclared,
  CommonStockDividendsPerShareCashPaid. Phrases: dividend per share.
* ``operating_cash_flow`` (USD, flow): us-gaap: NetCashProvidedByUsedInOperatingActivities. Phrases: operating cash
  flow, cash from operations, cash flow(s) from operating activities.
* ``cost_of_revenue`` (USD, flow): us-gaap: CostOfRevenue, CostOfGoodsAndServicesSold. Phrases: cost of revenue,
  cost of sales, cost of goods sold, COGS.
* ``cash`` (USD, instant): us-gaap: CashAndCashEquivalentsAtCarryingValue,
  CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents. Phrases: cash and cash equivalents, cash.
* ``total_debt`` (USD, instant): us-gaap: LongTermDebt, LongTermDebtNoncurrent, DebtInstrumentCarryingAmount.
  Phrases: total debt, long-term debt, debt.
* ``total_assets`` (USD, instant): us-gaap: Assets. Phrases: total assets.
* ``current_assets`` / ``current_liabilities`` (USD, instant): us-gaap: AssetsCurrent / LiabilitiesCurrent.
  Phrases: (total) current assets / liabilities.
* ``inventories`` (USD, instant): us-gaap: InventoryNet. Phrases: inventories, inventory, merchandise inventories.
* ``ppe_net`` (USD, instant): us-gaap: PropertyPlantAndEquipmentNet. Phrases: net property, plant and equipment,
  property and equipment, net, net PP&E.
* ``accounts_payable`` (USD, instant): us-gaap: AccountsPayableCurrent. Phrases: accounts payable.
* ``accounts_receivable`` (USD, instant): us-gaap: AccountsReceivableNetCurrent. Phrases: accounts receivable.
* ``depreciation_amortization`` (USD, flow): us-gaap: DepreciationDepletionAndAmortization,
  DepreciationAndAmortization, DepreciationAmortizationAndAccretionNet. Phrases: depreciation and amortization.
* ``income_tax`` (USD, flow): us-gaap: IncomeTaxExpenseBenefit. Phrases: provision for income taxes, income tax
  expense. ``pretax_income`` (USD, flow): us-gaap: IncomeLossFromContinuingOperationsBeforeIncomeTaxes... Phrases:
  income before income taxes, pretax income.
* ``interest_expense`` (USD, flow): us-gaap: InterestExpense, InterestExpenseDebt. Phrases: interest expense.
* ``total_liabilities`` (USD, instant): us-gaap: Liabilities. Phrases: total liabilities.
* ``stockholders_equity`` (USD, instant): us-gaap: StockholdersEquity,
  StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest. Phrases: stockholders' equity,
  shareholders' equity.
* ``shares_outstanding`` (shares, instant): dei: EntityCommonStockSharesOutstanding; us-gaap:
  CommonStockSharesOutstanding. Phrases: shares outstanding.

Source: the us-gaap and dei taxonomies (the concepts) and the line names US annual and quarterly reports print
(the phrases); hand-written. ``concept_name_words`` gives a concept's name in words ("us-gaap:NetIncomeLoss" ->
"net income loss"), the wording statement line items are printed in (query shaping, rule 5).

Ratios, margins and other computed figures are not reported facts: their catalogue, with the lines of this map each
is computed from, is ``lexicon/formulas.py`` (``FORMULAS``; query shaping reads its ``RATIOS``).

Segment figures (NVIDIA's data center revenue, AWS sales) carry XBRL dimensions, which companyfacts does not have:
a question with words beyond the metric, its verbs and its period is not an XBRL ask and goes to the extractive path.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from equimind.lexicon.text import wordset

USD, USD_PER_SHARE, SHARES = "USD", "USD/shares", "shares"


@dataclass(frozen=True)
class MetricSpec:
    key: str
    name: str
    phrases: tuple[str, ...]
    concepts: tuple[str, ...]
    unit: str
    flow: bool  # duration (income / cash-flow statement) vs instant (balance sheet)


_ACRONYM_AMP = re.compile(r"\b[a-z]+&[a-z]+\b")


def ampersand_acronyms(phrase: str) -> tuple[str, ...]:
    """The phrase with each acronym of three or more letters around "&" also written without it and with "n" for it
    ("net pp&e" -> "net ppe", "net ppne"), the way "AT&T" is written "ATT" and "Johnson & Johnson" "JnJ"
    (``query.identity.ampersand_forms``); a two-letter one ("r&d") keeps its "&", as "rd" is not a name."""
    forms = [phrase]
    for m in _ACRONYM_AMP.finditer(phrase):
        if len(m.group(0)) - 1 >= 3:
            forms += [f.replace(m.group(0), m.group(0).replace("&", x)) for f in list(forms) for x in ("", "n")]
    return tuple(forms)


def _m(key: str, name: str, phrases: str, concepts: str, unit: str = USD, flow: bool = True) -> MetricSpec:
    """A concept-map line; each phrase also in its ampersand forms."""
    forms = (f for p in phrases.split(";") for f in ampersand_acronyms(p.strip()))
    return MetricSpec(key, name, tuple(dict.fromkeys(forms)), tuple(concepts.split()), unit, flow)


METRICS: tuple[MetricSpec, ...] = (
    _m("revenue", "Revenue", "revenue; revenues; net revenue; net revenues; total revenue; total revenues; sales; "
       "net sales; total net sales; top line; top-line; topline; operating revenues; net operating revenues; "
       "total operating revenues",
       "us-gaap:Revenues us-gaap:RevenueFromContractWithCustomerExcludingAssessedTax us-gaap:SalesRevenueNet "
       "us-gaap:RevenueFromContractWithCustomerIncludingAssessedTax"),
    _m("net_income", "Net income", "net income; net loss; profit; net profit; profits; earnings; net earnings; "
       "bottom line; "
       "bottom-line profit; bottom line profit; earn; net income attributable to shareholders; net income "
       "attributable to stockholders; net income attributable to common stockholders; net income attributable to "
       "common shareholders",
       "us-gaap:NetIncomeLoss us-gaap:ProfitLoss us-gaap:NetIncomeLossAvailableToCommonStockholdersBasic"),
    _m("eps_diluted", "Diluted EPS", "diluted eps; diluted earnings per share; eps; earnings per share",
       "us-gaap:EarningsPerShareDiluted", USD_PER_SHARE),
    _m("eps_basic", "Basic EPS", "basic eps; basic earnings per share", "us-gaap:EarningsPerShareBasic",
       USD_PER_SHARE),
    _m("operating_income", "Operating income", "operating income; operating profit; income from operations; "
       "operating loss; loss from operations; earnings from operations",
       "us-gaap:OperatingIncomeLoss"),
    _m("gross_profit", "Gross profit", "gross profit", "us-gaap:GrossProfit"),
    _m("rnd", "Research and development expense", "research and development; research and development expense; "
       "research and development expenses; r&d; r&d expense; r&d expenses",
       "us-gaap:ResearchAndDevelopmentExpense us-gaap:ResearchAndDevelopmentExpenseExcludingAcquiredInProcessCost"),
    _m("capex", "Capital expenditures", "capital expenditures; capital expenditure; capex; purchases of property "
       "and equipment; purchases of property, plant and equipment; purchases of property, plant, and equipment; "
       "additions to property and equipment; additions to property, plant and equipment",
       "us-gaap:PaymentsToAcquirePropertyPlantAndEquipment us-gaap:PaymentsToAcquireProductiveAssets"),
    _m("buybacks", "Repurchases of common stock", "share repurchases; stock repurchases; buybacks; buyback; "
       "share buybacks; repurchases of common stock", "us-gaap:PaymentsForRepurchaseOfCommonStock"),
    _m("dividends", "Dividends paid", "dividends paid; dividends; dividend payments",
       "us-gaap:PaymentsOfDividends us-gaap:PaymentsOfDividendsCommonStock us-gaap:DividendsCommonStockCash"),
    _m("dividend_per_share", "Dividend per share", "dividend per share; dividends per share",
       "us-gaap:CommonStockDividendsPerShareDeclared us-gaap:CommonStockDividendsPerShareCashPaid", USD_PER_SHARE),
    _m("operating_cash_flow", "Operating cash flow", "operating cash flow; cash from operations; cash flow from "
       "operations; cash provided by operating activities; cash flow from operating activities; cash flows from "
       "operating activities; net cash provided by operating activities",
       "us-gaap:NetCashProvidedByUsedInOperatingActivities"),
    _m("cost_of_revenue", "Cost of revenue", "cost of revenue; cost of revenues; cost of sales; cost of goods sold; "
       "cogs", "us-gaap:CostOfRevenue us-gaap:CostOfGoodsAndServicesSold"),
    _m("cash", "Cash and cash equivalents", "cash and cash equivalents; cash",
       "us-gaap:CashAndCashEquivalentsAtCarryingValue "
       "us-gaap:CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents", flow=False),
    _m("total_debt", "Total debt", "total debt; long-term debt; long term debt; debt",
       "us-gaap:LongTermDebt us-gaap:LongTermDebtNoncurrent us-gaap:DebtInstrumentCarryingAmount", flow=False),
    _m("total_assets", "Total assets", "total assets", "us-gaap:Assets", flow=False),
    _m("current_assets", "Total current assets", "total current assets; current assets", "us-gaap:AssetsCurrent",
       flow=False),
    _m("current_liabilities", "Total current liabilities", "total current liabilities; current liabilities",
       "us-gaap:LiabilitiesCurrent", flow=False),
    _m("inventories", "Inventories", "inventories; inventory; total inventories; merchandise inventories",
       "us-gaap:InventoryNet", flow=False),
    _m("ppe_net", "Property, plant and equipment, net", "net property, plant and equipment; net property, plant, "
       "and equipment; property, plant and equipment, net; net property and equipment; property and equipment, "
       "net; net pp&e; pp&e, net", "us-gaap:PropertyPlantAndEquipmentNet", flow=False),
    _m("accounts_payable", "Accounts payable", "accounts payable", "us-gaap:AccountsPayableCurrent", flow=False),
    _m("accounts_receivable", "Accounts receivable", "accounts receivable; accounts receivable, net; "
       "receivables, net", "us-gaap:AccountsReceivableNetCurrent", flow=False),
    _m("depreciation_amortization", "Depreciation and amortization", "depreciation and amortization; "
       "depreciation, depletion and amortization; depreciation, amortization and other; depreciation & amortization; "
       "d&a; dd&a",
       "us-gaap:DepreciationDepletionAndAmortization us-gaap:DepreciationAndAmortization "
       "us-gaap:DepreciationAmortizationAndAccretionNet"),
    _m("income_tax", "Income tax expense", "provision for income taxes; income tax expense; income tax provision; "
       "provision for (benefit from) income taxes; income taxes", "us-gaap:IncomeTaxExpenseBenefit"),
    _m("pretax_income", "Income before income taxes", "income before income taxes; income before provision for "
       "income taxes; earnings before income taxes; income before taxes; pretax income; pre-tax income; loss before "
       "income taxes; income from continuing operations before income taxes; earnings from continuing operations "
       "before income taxes; pretax income from continuing operations",
       "us-gaap:IncomeLossFromContinuingOperationsBeforeIncomeTaxesExtraordinaryItemsNoncontrollingInterest "
       "us-gaap:IncomeLossFromContinuingOperationsBeforeIncomeTaxesMinorityInterestAndIncomeLossFromEquityMethod"
       "Investments"),
    _m("interest_expense", "Interest expense", "interest expense; total interest expense",
       "us-gaap:InterestExpense us-gaap:InterestExpenseDebt"),
    _m("total_liabilities", "Total liabilities", "total liabilities", "us-gaap:Liabilities", flow=False),
    _m("stockholders_equity", "Stockholders' equity", "stockholders' equity; shareholders' equity; stockholders "
       "equity; shareholders equity", "us-gaap:StockholdersEquity "
       "us-gaap:StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest", flow=False),
    _m("shares_outstanding", "Shares outstanding", "shares outstanding",
       "dei:EntityCommonStockSharesOutstanding us-gaap:CommonStockSharesOutstanding", SHARES, flow=False),
)


# Words a statement puts before a line's name ("Total assets", "Net revenues", "Merchandise inventories",
# "Consolidated net sales"): a row so labelled is the line
LINE_QUALIFIERS = frozenset(["total", "net", "merchandise", "consolidated"])
# The head nouns of statement lines: a row whose label has one the ask does not name is another line ("Total Google
# Cloud costs and expenses" is not Google Cloud's revenue).
LINE_HEADS = frozenset(["revenue", "revenues", "sales", "cost", "costs", "expense", "expenses", "income", "loss",
                        "losses", "profit", "profits", "earnings", "assets", "liabilities", "equity", "cash", "tax",
                        "taxes", "debt", "interest", "margin", "dividends", "deficit"])

# Verbs and modifiers an XBRL ask may use around the metric ("How much did NVIDIA earn", "total net sales",
# "unadjusted operating income": as reported, which is what companyfacts and the statements hold).
METRIC_VERBS = wordset("""spend spent earn earned generate generated report reported post posted record recorded
book booked make made pay paid carry carried hold held have had total net reported consolidated company overall
full whole unadjusted""")


@dataclass(frozen=True)
class MetricMatch:
    metric: MetricSpec
    phrase: str
    start: int
    end: int


def _pattern(phrase: str) -> re.Pattern[str]:
    body = r"[\s-]+".join(re.escape(w) for w in phrase.split())
    return re.compile(rf"(?<![\w&]){body}(?![\w&])")


T = TypeVar("T")


def phrase_patterns(entries: Iterable[tuple[str, T]]) -> tuple[tuple[re.Pattern[str], str, T], ...]:
    """(pattern, phrase, what it names) for each phrase, the longest phrase first."""
    return tuple((_pattern(p), p, x) for p, x in sorted(entries, key=lambda px: -len(px[0])))


def longest_first(patterns: Sequence[tuple[re.Pattern[str], str, T]], text: str) -> list[tuple[T, str, int, int]]:
    """(what, phrase, start, end) of every non-overlapping phrase in ``text``, longer phrases taken first, in text
    order."""
    low = text.lower().replace("\u2019", "'")
    found: list[tuple[T, str, int, int]] = []
    for pat, phrase, x in patterns:
        for m in pat.finditer(low):
            if not any(m.start() < b and a < m.end() for _, _, a, b in found):
                found.append((x, phrase, m.start(), m.end()))
    return sorted(found, key=lambda f: f[2])


_PATTERNS = phrase_patterns((p, m) for m in METRICS for p in m.phrases)
_CAMEL = re.compile(r"[A-Z][a-z]+|[A-Z]+(?![a-z])")


def find_metrics(text: str) -> list[MetricMatch]:
    """Every metric named in ``text``, longest phrase first, non-overlapping, in text order."""
    return [MetricMatch(m, phrase, a, b) for m, phrase, a, b in longest_first(_PATTERNS, text)]


def concept_name_words(concept: str) -> str:
    """The words of an XBRL concept's name, lower case: "us-gaap:NetIncomeLoss" -> "net income loss",
    "us-gaap:PaymentsToAcquirePropertyPlantAndEquipment" -> "payments to acquire property plant and equipment"."""
    return " ".join(_CAMEL.findall(concept.split(":", 1)[-1])).lower()
