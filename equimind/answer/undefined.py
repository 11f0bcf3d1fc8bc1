"""A computed figure the company's statements do not define: a margin of a line its income statement does not
report (a card issuer's or a bank's gross margin: no cost of revenue and no gross profit; its operating margin: no
operating income).

When a formula stops on a missing line (``computed.Computed.missing``: the line each of its definitions lacked), the
statement row of a line of the formula that *was* found (revenue) is read with the rest of its table. When that
table is a whole income statement (it also holds the net income line) and none of its rows is a missing line or
could be one split in parts (no row named by the line's phrases, none holding one of the line's own words, as
stems: "cost", "gross", "operating"; Boeing's "Cost of products" and "Cost of services", Costco's "Merchandise
costs"), the answer says so: the figure is not one the company's statements define, and what the statement reports
instead (its total and net lines), every row cited. Otherwise nothing is said here and the passages answer, as
before. A figure is never called undefined for lacking revenue or net income: every income statement prints them,
so their miss is the reader's.

No company, industry or word list of a benchmark is involved: whether a line exists is read from the statement.
"""

from __future__ import annotations

import Stemmer

from equimind.answer.computed import Computed, amount, line_spec
from equimind.answer.lines import StatementLines, bottom_line, label_names, label_words
from equimind.answer.record import AnswerSentence, Method, Quote
from equimind.answer.units import cells
from equimind.lexicon.concepts import LINE_QUALIFIERS, MetricSpec
from equimind.lexicon.formulas import Formula

# words every statement line may hold: a row holding only these is no part of a missing line
_GENERIC = frozenset({"income", "profit", "profits", "earnings", "loss", "losses", "revenue", "revenues", "sales",
                      "expense", "expenses", "of", "and", "the", "from"}) | LINE_QUALIFIERS
# the lines whose absence from an income statement means the company does not report them (S-X 5-03 captions some
# issuers do not print: a bank or a card issuer has no cost of revenue, no gross profit, no operating income). A
# balance-sheet or cash-flow line (equity, capital expenditures, payables) missing from the income statement says
# nothing: a figure lacking one is never called undefined here (before, "3M's statements do not define return on
# equity" was claimed because its income statement has no equity row). Revenue and net income are not among them:
# every income statement prints them, so their miss is the reader's
INCOME_STATEMENT_LINES = frozenset({"cost_of_revenue", "gross_profit", "operating_income"})
_STEM = Stemmer.Stemmer("english")
# the rows that sum a statement: a total, or a line that ends in income, earnings, loss or profit (not per share)
_SUMMARY_ENDS = frozenset({"income", "earnings", "loss", "profit"})


def _summary(words: list[str]) -> bool:
    return bool(words) and "per" not in words and (words[0] == "total" or words[-1] in _SUMMARY_ENDS)


def own_words(metric: MetricSpec) -> frozenset[str]:
    """The words of a line's phrases that only it uses: the first and last word of each phrase, generic statement
    words aside ("cost", "sold" for cost of revenue; "gross"; "operating", "operations")."""
    words: set[str] = set()
    for phrase in metric.phrases:
        w = label_words(phrase)
        if w:
            words |= {w[0], w[-1]}
    return frozenset(words - _GENERIC)


def undefined_figure(f: Formula, result: Computed, statements: StatementLines, company: str,
                     ticker: str, year: int) -> AnswerSentence | None:
    """The sentence saying ``f`` is not defined by the company's income statement of fiscal ``year`` (the asked
    year; module docstring), or None."""
    if not result.missing or not set(result.missing) <= INCOME_STATEMENT_LINES:
        # revenue and net income: every income statement prints them, so their miss is the reader's; a line of
        # another statement: its absence from the income statement proves nothing
        return None
    missing = [line_spec(k) for k in result.missing]
    guard = _STEM.stemWords(sorted(frozenset().union(*(own_words(m) for m in missing))))
    present = [k for lines, _ in ((f.lines, f.compute), *f.alternatives) for k, off in lines
               if off == 0 and k not in result.missing]
    for key in dict.fromkeys(present):
        found = statements.value(line_spec(key), year, year)
        if found is None or found.row is None:
            continue
        table = statements.table_of(found.row)
        labels = [cells(u.span.text)[0] for u in table]
        if not any(bottom_line(label) for label in labels):
            return None  # not a whole income statement: a missing row may sit in another part of it
        if any(set(guard) & set(_STEM.stemWords(label_words(label))) or any(label_names(m, label) for m in missing)
               for label in labels):
            return None
        summary = [u for u, label in zip(table, labels, strict=True)
                   if _summary(label_words(label)) and u != found.row and statements.at(u, year) is not None]
        names = " or ".join(m.name.lower() for m in missing)
        reported = "; ".join(f"\"{cells(u.span.text)[0]}\"" for u in summary)
        text = (f"{company}'s statements do not define {f.name}: its income statement for fiscal {year} "
                f"reports no {names} line, nor lines that sum to one, so {f.name} ({f.text}) cannot be computed "
                f"from them. It reports {line_spec(key).name.lower()} as \"{labels[table.index(found.row)]}\" "
                f"({amount(found.value)}); its total and net lines are {reported}.")
        quotes: list[Quote] = [*found.quotes, *(q for u in summary for q in statements.quotes_of(u)
                                                 if q.role == "row")]
        return AnswerSentence(text=text, method=Method.EXTRACTIVE, subject=ticker, quotes=list(dict.fromkeys(quotes)),
                              figures=[found.figure])
    return None
