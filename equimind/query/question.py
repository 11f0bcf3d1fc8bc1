"""Question analysis for the answer path: what kind of value answers the ask, which reported metric and period it
names, and whether it compares two companies or two periods.

The decision-vs-specific split, the focus terms and the companies the question compares are the answerability
analysis's (``equimind.query.analysis.analyse``, ADR 0006); this module adds only the answer type, the metric
and the periods. The answer kind is a small explicit grammar (``GRAMMAR``: one ``KindRule`` per production below),
first match wins (on the ask's lower-case words):

* ``how many`` -> count; ``how much`` / ``how large|big`` -> an amount, or a count when the noun counted is a
  count noun (employees, members, vehicles ...) and no money verb (spend, pay, cost ...), or a percent when the ask
  is about growth ("how much did X grow");
* ``how fast|quickly``, ``what percentage|fraction|share|rate|margin``, ``by how much`` + grow -> percent;
* ``what is|was`` + headcount / workforce / "number of" (no reported metric) -> count;
* ``when`` / ``what year|date`` -> date; ``where``, ``which``, ``who``, ``in which`` -> name;
* a first word that is an auxiliary (is, are, does, did, can, has ...) -> yes/no;
* ``why``, ``what drove|caused|lifted``, ``how does X describe|explain|assign ...`` -> text, even when a metric is named
  ("what drove the decline in sales" asks for the reason, not the sales figure);
* an instruction naming a percent ("in units of percents", "(as a %)") -> percent; ``what was|were|is`` + a
  reported metric, or an instruction naming a currency unit ("Answer in USD millions", "(in USD millions)") ->
  amount; any other ask -> text.

An XBRL ask is an amount (or count / per-share) ask that names a metric of the concept map and whose other focus
terms are only the metric's own words, verbs such as "earn" or "spend", and period words: anything else (a
segment such as "data center", a qualifier such as "deferred") is answered from the passages.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import Stemmer

from equimind.lexicon.amounts import SCALES
from equimind.lexicon.concepts import METRIC_VERBS, SHARES, MetricMatch, find_metrics
from equimind.lexicon.formulas import OUTFLOWS, FormulaMatch, composed_formula, find_formula, metric_formula
from equimind.lexicon.line_items import find_line_items
from equimind.lexicon.questions import COMPARATIVES, COMPARE_WORDS, SPEND_WORDS
from equimind.lexicon.text import TOKEN
from equimind.lexicon.text import wordset as _wordset
from equimind.lexicon.vocabulary import MONEY_VERBS
from equimind.query.analysis import FUNCTION_WORDS, AskAnalysis, AskKind, Subject, analyse
from equimind.query.choice import Choice, find_choice
from equimind.query.figure_asks import DOWN, UP, asked_decimals, asks_each_year, trend_word
from equimind.query.kinds import AnswerKind
from equimind.query.periods import Period, find_periods

EXPLAIN = re.compile(r"^why\b|\bwhat (drove|drives|caused|causes|explains|lifted|hurt|weighed)\b"
                     r"|\bhow (does|do|did) [\w&' ]{1,40}?\b(describe|explain|assign|allocate|break|define|"
                     r"account|recognize|measure)\b")
COUNT_NOUNS = _wordset("""employees employee people staff headcount workforce workers members memberships
subscribers subscriptions users customers headcounts employer employers vehicles cars units deliveries stores
locations shares accounts countries offices facilities patents""")
COUNT_HEADS = _wordset("headcount headcounts workforce")  # "what is X's headcount": the answer is a count
GROWTH_WORDS = _wordset("grow grew growth grown increase increased rise rose decline declined fall fell change "
                         "changed")
PERCENT_HEADS = _wordset("percentage percent fraction share proportion rate margin ratio")
NAME_HEADS = _wordset("which who whom whose where")
AUXILIARIES = _wordset("is are was were do does did can could has have had will would should")
TEXT_CUES = _wordset("why drove drive drives driving describe explain how")
COMPARE_CUES = COMPARE_WORDS | COMPARATIVES  # two periods compared ("revenue in 2024 versus 2023", "grew faster")


@dataclass(frozen=True)
class QuestionAnalysis:
    question: str
    ask: AskAnalysis
    kind: AnswerKind  # COMPARISON / DECISION, else the value kind
    value_kind: AnswerKind  # the kind of value each side needs
    metric: MetricMatch | None
    xbrl: bool  # answerable from companyfacts (see module docstring)
    periods: tuple[Period, ...]
    leftover: tuple[str, ...]  # focus words beyond the metric, its verbs and the period
    cue: str
    head: str | None = None  # the noun a which/what ask names its answer by ("architecture" in "which new GPU
    # architecture did ..."): the answer is a name written before it ("the Blackwell architecture")
    scale: float | None = None  # the unit the question asks amounts in ("Answer in USD millions" -> 1e6)
    formula: FormulaMatch | None = None  # a computed figure the ask names ("days payable outstanding": computed)
    trend: str | None = None  # a yes / no ask about a figure's direction ("Has X increased its debt"): up / down
    cue_words: tuple[str, ...] = ()  # words naming the answer's type, not its topic ("city" in "in which city is
    # the head office", "fraction" in "what fraction of ..."): the answering sentence states a city or a percent and
    # need not repeat the word (``extract.score_units`` counts them only when held)
    decimals: int | None = None  # the decimals a computed figure is to be rounded to ("round to two decimal places")
    each_year: bool = False  # a computed ask that wants each year it names and the change between them
    years_before: int = 0  # a computed ask about a figure's stability over time ("are its gross margins
    # consistent?"): the years before the asked one it is also computed for (``STABILITY``)
    choice: Choice | None = None  # a choice among candidates the ask names ("among operations, investing and
    # financing activities, which brought in the most cash"): one row each in one table (``answer.choice``)
    subject_names: frozenset[str] = frozenset()  # the subject company's name words (lower case): a sentence naming
    # the company names no part of it ("Alphabet revenues were ..." answers "How much revenue did Google make?")
    explained: FormulaMatch | None = None  # a computed figure whose change the ask wants the reason for ("what
    # drove gross margin change"): not computed (the passages give reasons), but when the company's statements do
    # not define it the answer says so (``answer.undefined``)
    asker_verb: str | None = None  # the ask's own main verb after "did / does <Company>" ("pour" in "How much did
    # Meta pour into Reality Labs"): the asker's word, which a filing writes in its own ("investments were");
    # ``extract.score_units`` counts it only when held, as it does ``cue_words``

    @property
    def terms(self) -> tuple[str, ...]:
        return tuple(t.stem for t in self.ask.terms)

    @property
    def outflow(self) -> bool:
        """The ask is for the size of an outflow: a spend verb ("How much did Meta spend on ...") or a line that is
        one (capital expenditures, dividends, buybacks): the amount is stated positive, the quote keeps the print."""
        if self.metric is not None and self.metric.metric.key in OUTFLOWS:
            return True
        return bool(SPEND_WORDS & set(TOKEN.findall(self.ask.ask.lower())))

    def to_log(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "value_kind": self.value_kind.value, "cue": self.cue,
                "metric": self.metric.metric.key if self.metric else None, "xbrl_ask": self.xbrl,
                "computed": self.formula.formula.key if self.formula else None,
                "explained": self.explained.formula.key if self.explained else None,
                "choice": self.choice.names() if self.choice else None,
                "periods": [p.label() for p in self.periods], "leftover_terms": list(self.leftover),
                "answerability": self.ask.to_log()}


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9&']+", text.lower().replace("\u2019", "'"))


# The unit a question asks its answer in, as English states one: "in USD millions", "in units of dollars", "(in $
# billions)". One grammar for any wording that says it ("answer in", "state it in", "expressed in" all end in "in").
AMOUNT_FORM = re.compile(r"\bin\s+(?:units\s+of\s+)?(?:usd|us\$|\$|dollars)\s*"
                         r"(thousands|millions|billions)?\b|\(in (?:usd |\$ ?)?(thousands|millions|billions)\)",
                         re.I)
PERCENT_FORM = re.compile(r"\bin units of percents?\b|\(as a %\)|\bas a percent(?:age)?\b|%\s*margin\b", re.I)


@dataclass(frozen=True)
class _Ask:
    """What the answer-kind grammar reads: the ask's lower-case words, their text, the whole question (whose
    instructions may name the answer's form) and the reported metric it names."""

    words: tuple[str, ...]
    question: str
    metric: MetricMatch | None

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def first(self) -> str:
        return self.words[0] if self.words else ""

    def has(self, vocabulary: frozenset[str]) -> frozenset[str]:
        return vocabulary & frozenset(self.words)


@dataclass(frozen=True)
class KindRule:
    """One production of the answer-kind grammar: when ``applies`` gives a cue, the ask wants a ``kind``."""

    name: str
    kind: AnswerKind
    applies: Callable[[_Ask], str | None]


def _how_much_counts(a: _Ask) -> str | None:
    nouns = a.has(COUNT_NOUNS)
    if nouns and not a.has(MONEY_VERBS) and (a.metric is None or a.metric.metric.unit == SHARES):
        return f"how large + count noun '{sorted(nouns)[0]}'"
    return None


def _search(pattern: str, cue: str) -> Callable[[_Ask], str | None]:
    rx = re.compile(pattern)
    return lambda a: cue if rx.search(a.text) else None


HOW_MUCH = re.compile(r"\bhow (much|large|big)\b")
# The answer-kind grammar (module docstring): its productions in order, the first that applies wins.
GRAMMAR: tuple[KindRule, ...] = (
    KindRule("how many", AnswerKind.COUNT, lambda a: "how many" if "how many" in a.text else None),
    KindRule("how fast / by how much + growth", AnswerKind.PERCENT,
             lambda a: "growth ask" if re.search(r"\bhow (fast|quickly)\b", a.text) or (
                 a.has(GROWTH_WORDS) and re.search(r"\b(by )?how much\b", a.text)) else None),
    KindRule("what percentage / fraction / rate", AnswerKind.PERCENT,
             _search(r"\bwhat (percentage|percent|fraction|share|proportion|rate|margin)\b",
                     "what percentage/fraction/rate")),
    KindRule("how much + count noun", AnswerKind.COUNT,
             lambda a: _how_much_counts(a) if HOW_MUCH.search(a.text) else None),
    KindRule("how much / large", AnswerKind.AMOUNT, lambda a: "how much/large" if HOW_MUCH.search(a.text) else None),
    KindRule("what is + headcount / number of", AnswerKind.COUNT,
             lambda a: "what is + headcount / number of" if a.metric is None and re.search(
                 r"\bwhat (is|was|are|were)\b", a.text) and (a.has(COUNT_HEADS) or "number of" in a.text)
             else None),
    KindRule("when / what year", AnswerKind.DATE,
             lambda a: "when" if a.first == "when" or re.search(r"\bwhat (year|date|day|month)\b", a.text)
             else None),
    KindRule("auxiliary first", AnswerKind.YES_NO,
             lambda a: f"auxiliary '{a.first}' first" if a.first in AUXILIARIES else None),
    KindRule("why / what drove / how does X describe", AnswerKind.TEXT,
             lambda a: "an explanation (why / what drove / how does ... describe)" if EXPLAIN.search(a.text)
             else None),
    KindRule("a percent instruction", AnswerKind.PERCENT,
             lambda a: "the question asks for a percent" if PERCENT_FORM.search(a.question) else None),
    KindRule("a reported metric", AnswerKind.AMOUNT,
             lambda a: f"metric '{a.metric.phrase}'" if a.metric is not None else None),
    KindRule("a currency instruction", AnswerKind.AMOUNT,
             lambda a: "the question asks for an amount in a currency unit"
             if AMOUNT_FORM.search(a.question) and not NAME_HEADS & set(a.words[:3]) else None),
    KindRule("which / where / who", AnswerKind.NAME,
             lambda a: "which/where/who" if NAME_HEADS & set(a.words[:3]) or re.search(
                 r"\bwhat (network|company|city|country|segments?|model)\b", a.text) else None),
    KindRule("anything else", AnswerKind.TEXT, lambda a: "an explanation"),
)


def kind_rule(words: Sequence[str], metric: MetricMatch | None, question: str = "") -> tuple[KindRule, str]:
    """The production of ``GRAMMAR`` that decides the ask's answer kind, and its cue."""
    a = _Ask(tuple(words), question, metric)
    for rule in GRAMMAR:
        cue = rule.applies(a)
        if cue is not None:
            return rule, cue
    raise AssertionError("the grammar's last production applies to every ask")


def value_kind(words: Sequence[str], metric: MetricMatch | None, question: str = "") -> tuple[AnswerKind, str]:
    """The kind of value that answers the ask (``GRAMMAR``, the module docstring's rules); ``question``: the whole
    question, whose instructions may name the answer's form ("Answer in USD millions", "in units of percents")."""
    rule, cue = kind_rule(words, metric, question)
    return rule.kind, cue


def name_head(words: Sequence[str]) -> str | None:
    """The last word of the "which/what ..." phrase before its verb ("which new GPU architecture did" ->
    "architecture"), when it is a content word."""
    start = next((i for i, w in enumerate(words) if w in ("which", "what")), None)
    if start is None:
        return None
    phrase: list[str] = []
    for w in words[start + 1:]:
        if w in AUXILIARIES:
            break
        phrase.append(w)
    return phrase[-1] if phrase and len(phrase[-1]) > 2 and phrase[-1] not in AUXILIARIES else None


def _compared_kind(words: Sequence[str], metric: MetricMatch | None, vkind: AnswerKind) -> AnswerKind:
    """What each side of a comparison needs: "which company has the larger workforce" compares counts, "which grew
    faster" growth rates, "compare revenue" amounts; a description stays text."""
    if vkind not in (AnswerKind.NAME, AnswerKind.TEXT, AnswerKind.YES_NO):
        return vkind
    if COUNT_NOUNS & set(words):
        return AnswerKind.COUNT
    if GROWTH_WORDS & set(words):
        return AnswerKind.PERCENT
    return AnswerKind.AMOUNT if metric is not None else vkind


def _line_item(ask: AskAnalysis, stem: Any, words: Sequence[str], hand: Sequence[MetricMatch],
               items: Sequence[MetricMatch], figure_named: bool) -> list[MetricMatch]:
    """A line item the ask names by its XBRL label (``items``, from ``lexicon.line_items``: "SG&A", "interest
    expense") when no phrase of the concept map matches (``hand``) or the label's phrase holds the one that does and
    is longer ("deferred revenue" holds "revenue", "net cash used in investing activities" holds "cash"), no computed
    figure is named (``figure_named``) and the label's words are every content word of the ask, bar the direction
    word of a yes / no ask ("Did NVIDIA's SG&A increase ...?"); else none."""
    wider = [m for m in items
             if not hand or any(m.start <= h.start and h.end <= m.end and m.end - m.start > h.end - h.start
                                for h in hand)]
    if not wider or figure_named:
        return []
    item = wider[0]
    rest = _leftover(ask, item, stem)
    if rest and value_kind(words, None)[0] is AnswerKind.YES_NO:
        rest = tuple(w for w in rest if not (UP.fullmatch(w) or DOWN.fullmatch(w)))
    return [] if rest else [item]


def _composed(ask: str, lines: Sequence[MetricMatch]) -> tuple[FormulaMatch, MetricMatch] | None:
    """The figure the ask composes from one of the ``lines`` it names (``formulas.composed_formula``: a line's share
    of revenue or its growth in percent), trying them in text order, concept-map lines and label line items alike."""
    for m in sorted(lines, key=lambda m: (m.start, -(m.end - m.start))):
        found = composed_formula(ask, m.metric, m.start, m.end)
        if found is not None:
            return found, m
    return None


def _leftover(ask: AskAnalysis, metric: MetricMatch | None, stem: Any) -> tuple[str, ...]:
    if metric is None:
        return tuple(t.word for t in ask.terms)
    own = set(_stem_words(TOKEN.findall(metric.phrase), stem)) | set(_stem_words(sorted(METRIC_VERBS), stem))
    return tuple(t.word for t in ask.terms if t.stem not in own)


def _stem_words(words: Sequence[str], stem: Any) -> list[str]:
    if stem is None:

        stem = Stemmer.Stemmer("english")
    return [str(s) for s in stem.stemWords(list(words))]


def analyse_question(question: str, subject: Subject, others: Sequence[Subject] = (),
                     stem: Any = None, topic: bool = False) -> QuestionAnalysis:
    """The answer-path analysis of ``question`` about ``subject`` (``others``: the other companies known).

    ``topic``: a decision ask with content words ("Is data-center growth sustainable?") is analysed as the text ask
    about those words (its topic), answered above the debate's rating; without content words it stays a decision."""
    ask = analyse(question, subject, others, stem)
    periods = tuple(find_periods(ask.ask))
    words = _words(ask.ask)
    hand, items = find_metrics(ask.ask), find_line_items(ask.ask)
    named = find_formula(ask.ask)
    composed = _composed(ask.ask, [*hand, *items])  # "SG&A as a % of revenue", "operating income growth in %"
    metrics = _line_item(ask, stem, words, hand, items, named is not None or composed is not None) or hand
    metric = metrics[0] if metrics else None
    vkind, cue = value_kind(words, metric, question)
    kind = vkind
    if topic and ask.kind is AskKind.DECISION and ask.topic:
        ask = replace(ask, kind=AskKind.SPECIFIC, terms=ask.topic, cue=f"the topic of a decision ask ({ask.cue})")
        kind = vkind = AnswerKind.TEXT
        cue = "the topic of a decision ask: the passages about it"
    if ask.kind is AskKind.DECISION:
        kind, cue = AnswerKind.DECISION, ask.cue
    elif ask.co_subjects or (len(periods) >= 2 and COMPARE_CUES & set(words)):
        kind, cue = AnswerKind.COMPARISON, "two companies" if ask.co_subjects else "two periods"
        vkind = _compared_kind(words, metric, vkind)
    compare = COMPARE_CUES if kind is AnswerKind.COMPARISON else frozenset()
    leftover = tuple(w for w in _leftover(ask, metric, stem) if w not in compare)
    # a computed figure is asked for unless the ask wants a reason ("what drove the margin change") or compares
    # companies; a yes / no ask that names one ("healthy liquidity based on its quick ratio?") gets the figure, and
    # its direction when it asks about one ("an improving margin")
    direction = trend_word(ask.ask) if vkind is AnswerKind.YES_NO else None
    figure_asked = not EXPLAIN.search(" ".join(words)) and not ask.co_subjects  # co-subjects: each side computes
    formula = named if figure_asked else None
    explained = named if not figure_asked and not ask.co_subjects else None
    if formula is None and figure_asked and composed is not None:
        formula, metric = composed
    if direction and formula is None and metric is not None:  # "Has Microsoft increased its debt ...?"
        formula = FormulaMatch(metric_formula(metric.metric), metric.phrase, False)
    trend = direction if formula is not None else None
    xbrl = (metric is not None and formula is None and not leftover and vkind in (AnswerKind.AMOUNT, AnswerKind.COUNT)
            and (vkind is AnswerKind.AMOUNT or metric.metric.unit == SHARES)
            and len({m.metric.key for m in metrics}) == 1)
    stability = formula is not None and trend is None and STABILITY.search(ask.ask) is not None \
        and len({p.fiscal_year for p in periods}) <= 1
    head = name_head(words) if vkind is AnswerKind.NAME else None
    choice = None if ask.co_subjects else find_choice(ask.ask, subject.names)  # companies compared: each a side
    return QuestionAnalysis(question, ask, kind, vkind, metric, xbrl, periods, leftover, cue, head,
                            asked_scale(question), formula, trend, answer_type_words(words, vkind, head),
                            asked_decimals(question),
                            stability or (formula is not None and asks_each_year(ask.ask, formula)),
                            STABILITY_YEARS_BEFORE if stability else 0, choice, subject.names, explained,
                            asker_verb(ask.ask))


# An ask about whether a figure holds steady over time: "consistent", "stable", "fluctuating", "volatile".
STABILITY = re.compile(r"\b(?:consisten\w*|stable|stability|steady|steadily|volatil\w*|fluctuat\w*)\b", re.I)
# Such an ask is answered over the three fiscal years one annual report's income statement prints: the asked (or
# latest) year and the two before it. Fixed by that report layout, not fitted.
STABILITY_YEARS_BEFORE = 2


def asked_scale(question: str) -> float | None:
    """The scale the question wants amounts stated in ("Answer in USD millions", "(in USD billions)": the first
    currency instruction of ``AMOUNT_FORM`` that names one), or None."""
    for m in AMOUNT_FORM.finditer(question):
        word = m.group(1) or m.group(2)
        if word:
            return SCALES[word.lower()]
    return None


# "did / does / do / will / can <Subject> <verb>": an auxiliary, the subject as a run of capitalised words or a
# pronoun, then the lower-case main verb. "Has" / "have" are left out: "Has Microsoft increased its debt" asks about
# the verb's direction itself.
_ASKER_VERB = re.compile(r"\b(?:[Dd]id|[Dd]oes|[Dd]o|[Ww]ill|[Cc]an|[Cc]ould|[Ww]ould|[Ss]hould)\s+"
                         r"(?:(?:[A-Z][\w&.-]*\s+)+|(?:it|they|the\s+company)\s+)([a-z][a-z-]+)\b")
_POSSESSIVE_END = re.compile(r"['\u2019]s?\s*$")


def asker_verb(ask: str) -> str | None:
    """The main verb of an ask after an auxiliary and its subject (``_ASKER_VERB``: "pour" in "How much did Meta pour
    into Reality Labs", "break" in "How does Apple break down its business"); None after a possessive (the subject
    goes on: "Does Foot Locker's new CEO have"), for a function word, a word of direction (a yes / no ask's
    "increase" is what it asks about) or a word of ``METRIC_VERBS`` (read with the metric already)."""
    m = _ASKER_VERB.search(ask)
    if m is None or _POSSESSIVE_END.search(ask[:m.start(1)]):
        return None
    verb = m.group(1)
    if verb in FUNCTION_WORDS or verb in METRIC_VERBS or UP.fullmatch(verb) or DOWN.fullmatch(verb):
        return None
    return verb


PERCENT_CUE = re.compile(r"\bwhat (percentage|percent|fraction|share|proportion)\b")


def answer_type_words(words: Sequence[str], vkind: AnswerKind, head: str | None) -> tuple[str, ...]:
    """The words of the ask that name the type of its answer (``QuestionAnalysis.cue_words``): the head noun of a
    name ask's which / what phrase (``head``: "which city", "what network", "which new GPU architecture"), the
    share word of a percent ask ("what fraction")."""
    if vkind is AnswerKind.PERCENT:
        m = PERCENT_CUE.search(" ".join(words))
        return (m.group(1),) if m else ()
    return (head,) if vkind is AnswerKind.NAME and head else ()
