"""Question analysis for the answerability check (docs/decisions/0006-answerability-check.md).

A research question is either a **decision** ask ("Should I buy NVIDIA?", "Is data-center growth sustainable?",
"What are the main risks?"), which always gets a rating, or a **specific** ask (how much / how many / what price /
what was X's Y in period Z ...), which can only be answered if the evidence the run can see says something about it.
This module turns a question into that kind plus its **focus terms**: the content words of the ask, stemmed the way
the BM25 index stems (``store.sparse``: ``\\w\\w+`` tokens, lower-case, Snowball "english"), after removing

* general English function words (``FUNCTION_WORDS``),
* question-frame words: interrogatives, auxiliaries, degree and comparison words, period words
  (``FRAME_WORDS``, plus period tokens such as ``fy2024``, ``q2``, ``h1`` and numbers),
* the names of the subjects (the run's company, and other companies the question compares it with).

Everything here is a pure function of the question text and the subjects' names: the same input gives the same
analysis. The statistics over stored documents live in ``answerability_index``; the refusal rule in ``judge``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import pairwise
from typing import Any

import Stemmer

from equimind.lexicon.calendar import MONTHS
from equimind.lexicon.companies import LEGAL_FORMS
from equimind.lexicon.questions import COMPARE_WORDS
from equimind.lexicon.text import TOKEN
from equimind.lexicon.text import wordset as _wordset
from equimind.query.figure_asks import trend_word

# General English function words (articles, pronouns, prepositions, conjunctions, auxiliaries, common adverbs).
FUNCTION_WORDS = _wordset("""
a about above across after again against all almost along also although always am among an and another any anyone
anything are around as at be because been before being below between both but by can cannot could did do does doing
done down during each either else enough even ever every few for from further had has have having he her here hers
herself him himself his how however i if in into is it its itself just least less let like may me might mine more
most much must my myself neither no nor not now of off often on once one only onto or other others otherwise our ours
ourselves out over own per perhaps please quite rather same she should since so some something still such than that
the their theirs them themselves then there these they this those though through thus to too toward towards under
until up upon us very via was we well were what whatever when whenever where whereas wherever whether which while who
whoever whom whose why will with within without would yet you your yours yourself yourselves
get gets got getting go goes went gone going make makes made making take takes took taken come comes came give
gives gave given giving put puts keep keeps kept seem seems
substantially significantly materially considerably notably slightly meaningfully relatively particularly especially
generally typically really actually basically
""")

# Question-frame words: they say what KIND of answer is wanted (a quantity, a place, a comparison, a period), never
# what it is about. Interrogatives/auxiliaries are in FUNCTION_WORDS; these are the degree, size/speed, comparison,
# ask-verb and period words of question phrasing, the comparison words (lexicon.questions) and the month names.
FRAME_WORDS = _wordset("""
many amount number count size level total exact exactly approximately roughly overall
big bigger biggest large larger largest small smaller smallest high higher highest low lower lowest
fast faster fastest quick quicker quickly slow slower slowly great greater greatest
main mainly major mostly primarily largely key
describe description explain list tell say said state stated mention mentioned
current currently latest recent recently today now ago
fiscal year years yearly annual annually quarter quarters month months week weeks day days period periods half
end beginning start mid early late first second third fourth last next previous prior
""") | COMPARE_WORDS | frozenset(MONTHS)

# Decision / outlook vocabulary: a question using one of these asks for a judgement, not a reported fact.
ADVICE_WORDS = _wordset("""
should ought recommend recommended recommendation recommendations rating ratings
outlook prospect prospects sustainable sustainability unsustainable risk risks risky
valuation overvalued undervalued overpriced underpriced cheap expensive attractive worthwhile
bull bullish bear bearish upside downside thesis
""")
DECISION_VERBS = frozenset({"buy", "sell", "hold", "invest", "short"})
# A judgement adjective up to three words before a holding noun ("a good investment", "a great stock to own") asks
# for a decision.
JUDGEMENT_ADJECTIVES = frozenset({"good", "bad", "great", "wise", "smart", "safe", "solid", "poor"})
DECISION_NOUNS = frozenset({"investment", "stock", "shares", "buy", "bet", "pick", "stocks"})
PERSONAL = frozenset({"i", "we", "me", "my", "our", "us", "you", "your"})
# The nouns a question refers to the company it is about with ("Should I invest in this company?", "the firm",
# "its stock"): in a decision ask they are its subject, never its topic.
SUBJECT_REFERENTS = frozenset({"company", "firm", "corporation", "stock", "stocks", "share", "shares", "equity",
                               "ticker"})
# Words that frame a decision ask rather than name its topic ("a good long-term investment at this price").
DECISION_FRAME = (ADVICE_WORDS | DECISION_VERBS | PERSONAL | DECISION_NOUNS | JUDGEMENT_ADJECTIVES
                  | SUBJECT_REFERENTS
                  | frozenset({"long", "term", "near", "medium", "horizon", "price", "own", "owning", "worth",
                               # the decision verbs' other forms ("Would you recommend buying it?")
                               "buying", "selling", "holding", "investing", "shorting", "bought", "sold"}))
ARTICLES = frozenset({"a", "an"})
# Coordination that makes a second company a co-subject ("Apple and Netflix", "AWS or NVIDIA's", "Compare ...": a
# comparison word of lexicon.questions.COMPARE_WORDS).
COORDINATORS = frozenset({"and", "or", "&"})
# Words dropped from company names before they are used as name words: the legal forms (lexicon.companies) and the
# other words of SEC registrant titles that name no company: "the", "com" (AMAZON.COM), the state tags "/DE", "/DEL",
# "/MN" (WELLS FARGO & COMPANY/MN), "SE", "Holding", "Companies".
LEGAL_SUFFIXES = LEGAL_FORMS | frozenset({"companies", "holding", "se", "the", "com", "de", "del", "mn"})
# fy2024, q2, h1, 2024, 10k, 3m (units); a product code ("h20", "m4") is a name, not a period
_PERIOD = re.compile(r"^(?:fy\d*|q[1-4]|h[12]|\d+[a-z]*)$")
_SENTENCE = re.compile(r"(?<=[?!.])\s+")
_STOPS = frozenset("?!.:;")
_PAREN = re.compile(r"\([^()]*\)")
# The primary financial statements (ASC 205-10-45) by their names: a lead-in that names one is an instruction about
# where to look ("Using only the balance sheet, what ..."), not part of the ask; query shaping keeps these words.
STATEMENT_NAME = re.compile(
    r"\b(?:(?:consolidated\s+)?balance\s+sheets?|(?:consolidated\s+)?income\s+statements?|"
    r"(?:consolidated\s+)?statements?\s+of\s+(?:consolidated\s+)?(?:financial\s+position|operations|"
    r"(?:comprehensive\s+)?income|(?:comprehensive\s+)?earnings|cash\s+flows?|"
    r"(?:changes\s+in\s+)?(?:stockholders|shareholders)['\u2019]?\s+equity)|cash\s+flows?\s+statements?)\b",
    re.IGNORECASE,
)
_WH = ("what", "which", "how", "when", "where", "who", "whom", "whose", "why", "is", "are", "was", "were", "did",
       "does", "do", "has", "have", "had", "can", "could", "will", "would", "should")


class AskKind(StrEnum):
    DECISION = "decision"
    SPECIFIC = "specific"


@dataclass(frozen=True)
class Subject:
    """A company the run can see: its key (ticker), lower-case name words and its visible document ids."""

    key: str
    names: frozenset[str]
    doc_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class FocusTerm:
    """A content word of the ask: ``word`` as written (lower-case), ``stem`` as the BM25 index stores it, and
    whether it was capitalised inside a sentence (a proper noun: a place, a product, another company) or written in
    capitals (an acronym such as EBITDA or DPO: often the analyst's abbreviation of words the filing spells out)."""

    word: str
    stem: str
    proper: bool
    acronym: bool = False


@dataclass(frozen=True)
class NamePhrase:
    """Consecutive words capitalised inside a sentence ("Arm Holdings", "Model Y"): one named entity, which a document
    discusses only if it writes the words together. ``stems`` are the BM25 index's stems of ``words``."""

    words: tuple[str, ...]
    stems: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.words)

    @property
    def bigrams(self) -> tuple[tuple[str, str], ...]:
        return tuple(pairwise(self.stems))


@dataclass(frozen=True)
class AskAnalysis:
    kind: AskKind
    cue: str  # the rule that decided the kind, for the log
    ask: str  # the part of the question that was analysed
    terms: tuple[FocusTerm, ...]
    co_subjects: tuple[str, ...]  # keys of other companies the question compares the run's company with
    names: tuple[NamePhrase, ...] = ()  # multi-word proper names of the ask ("Arm Holdings")
    topic: tuple[FocusTerm, ...] = ()  # a decision ask's content words beyond its advice words ("Is data-center
    # growth sustainable?" -> data, center, growth): what the rating is about, answered above the rating

    def to_log(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "cue": self.cue, "ask": self.ask,
                "focus_terms": [t.word for t in self.terms], "stems": [t.stem for t in self.terms],
                "names": [n.text for n in self.names],
                "proper_nouns": [t.word for t in self.terms if t.proper],
                "acronyms": [t.word for t in self.terms if t.acronym], "co_subjects": list(self.co_subjects)}


def name_words(*names: str | None) -> frozenset[str]:
    """Lower-case name words of company names / tickers, legal forms removed ("AMAZON.COM, INC." -> {amazon})."""
    out: set[str] = set()
    for name in names:
        out.update(w for w in TOKEN.findall((name or "").lower()) if w not in LEGAL_SUFFIXES)
    return frozenset(out)


def ask_text(question: str) -> str:
    """The ask: the sentences ending in "?" (instructions and definitions around them are not the ask), without
    parenthesised asides (units, aliases, formats: "(in USD millions)", "(DPO)"); inside a sentence, a lead-in
    ending in ":" is dropped when the question proper starts after it ("Here's the question: what is ..."), and so is
    a lead-in ending in "," that names a financial statement ("Using only the information within the balance sheet,
    how much ..."). Without a question mark, the whole text is the ask."""
    text = _PAREN.sub(" ", question.strip())
    sentences = [s.strip() for s in _SENTENCE.split(text) if s.strip()]
    asks = [s for s in sentences if s.endswith("?")] or [question.strip()]
    out: list[str] = []
    for s in asks:
        _, sep, tail = s.rpartition(":")
        first = TOKEN.findall(tail.lower())[:1]
        ask = tail.strip() if sep and first and first[0] in _WH else s
        head, sep, tail = ask.partition(",")
        first = TOKEN.findall(tail.lower())[:1]
        out.append(tail.strip() if sep and first and first[0] in _WH and STATEMENT_NAME.search(head) else ask)
    return " ".join(out)


@dataclass(frozen=True)
class _Token:
    lower: str
    proper: bool
    acronym: bool = False


def _tokens(text: str) -> list[_Token]:
    """Words and "&", each marked proper when capitalised (not all-caps) inside a sentence. One-letter words are
    kept for classifying ("a buy", "should I"); focus terms use only bm25s' two-or-more-character words."""
    out: list[_Token] = []
    start = True
    for m in re.finditer(r"(?u)\w+|[?!.:;]|&", text):
        raw = m.group(0)
        if raw in _STOPS:
            start = True
            continue
        proper = raw[0].isupper() and any(c.islower() for c in raw[1:]) and not start
        acronym = sum(c.isupper() for c in raw) >= 2 and not any(c.islower() for c in raw)
        out.append(_Token(raw.lower(), proper, acronym))
        start = False
    return out


def _mentions(tokens: Sequence[_Token], subject: Subject, others: Sequence[Subject]) -> list[str | None]:
    """Per token, the key of the company it names, else None: the run's company by any of its name words; another
    company by its ticker or by a word of its name capitalised inside the sentence ("and Meta", "or Wells Fargo";
    not "the best", nor a sentence's first word: "Buy or sell?")."""
    keys: list[str | None] = []
    for t in tokens:
        key = subject.key if t.lower in subject.names else None
        for other in others:
            if key is None and (t.lower == other.key.lower() or ((t.proper or t.acronym) and t.lower in other.names)):
                key = other.key
        keys.append(key)
    return keys


def _co_subjects(tokens: Sequence[_Token], keys: Sequence[str | None], subject: Subject) -> tuple[str, ...]:
    """Other companies the question is ALSO about: it compares (compare/versus/than), or names them in a choice or
    a list ("A or B", "A and B"). "Amazon's acquisition of Netflix" names Netflix as an object, not a subject."""
    others = [k for k in dict.fromkeys(keys) if k is not None and k != subject.key]
    if not others:
        return ()
    if any(t.lower in COMPARE_WORDS for t in tokens):
        return tuple(others)
    out: list[str] = []
    for i, k in enumerate(keys):
        if k is None or k == subject.key or k in out:
            continue
        before = next((j for j in range(i - 1, -1, -1) if keys[j] != k), None)
        after = next((j for j in range(i + 1, len(keys)) if keys[j] != k), None)
        if any(j is not None and tokens[j].lower in COORDINATORS for j in (before, after)):
            out.append(k)
    return tuple(out)


# The auxiliaries of an ask about what already happened ("did the risk ... decrease", "has the outlook improved").
PAST_AUXILIARIES = frozenset({"did", "was", "were", "has", "have", "had"})


def _measured_change(tokens: Sequence[str], i: int) -> bool:
    """The advice word at ``i`` names a quantity whose past change is asked: the ask is put in the past ("did",
    "has" ...), a direction word or "compared" follows the advice word ("did the risk JPM faced decrease compared
    to ...": VaR, a reported figure), and no person or "should" frames it ("should I have sold when risk rose?")."""
    if not PAST_AUXILIARIES & set(tokens[:i]) or PERSONAL & set(tokens) or "should" in tokens:
        return False
    rest = " ".join(tokens[i + 1:])
    return trend_word(rest) is not None or bool(COMPARE_WORDS & set(tokens[i + 1:]))


def classify(tokens: Sequence[str]) -> tuple[AskKind, str]:
    """Decision when the question uses advice / outlook vocabulary, or a decision verb (buy, sell, hold, invest,
    short) with a personal pronoun ("should I buy"), as a noun ("a buy") or as its first word ("Buy or sell?"), or a
    judgement adjective before a holding noun ("a good investment"). An advice word that names a quantity whose
    past change is asked ("did the risk ... decrease compared to the prior year": ``_measured_change``) asks for a
    reported fact, not a judgement.
    Everything else is a specific ask. ``tokens`` are the lower-case words with company names removed."""
    measured = ""
    for i, w in enumerate(tokens):
        if w in ADVICE_WORDS:
            if not _measured_change(tokens, i):
                return AskKind.DECISION, f"advice/outlook word '{w}'"
            measured = measured or w
    for i, a in enumerate(tokens):
        noun = next((b for b in tokens[i + 1:i + 4] if b in DECISION_NOUNS), None)
        if a in JUDGEMENT_ADJECTIVES and noun is not None:
            return AskKind.DECISION, f"judgement '{a} ... {noun}'"
    personal = any(w in PERSONAL for w in tokens)
    for i, w in enumerate(tokens):
        if w in DECISION_VERBS and (personal or i == 0 or tokens[i - 1] in ARTICLES):
            return AskKind.DECISION, f"decision verb '{w}'"
    if measured:
        return AskKind.SPECIFIC, f"'{measured}' names a figure whose past change is asked: a specific factual ask"
    return AskKind.SPECIFIC, "no advice or outlook word: a specific factual ask"


def _is_frame(word: str) -> bool:
    return word in FUNCTION_WORDS or word in FRAME_WORDS or bool(_PERIOD.match(word))


def analyse(question: str, subject: Subject, others: Sequence[Subject] = (), stem: Any = None) -> AskAnalysis:
    """Kind, focus terms and co-subjects of ``question`` asked about ``subject`` (``others``: the other companies
    the store knows). ``stem`` is a PyStemmer ``Stemmer`` (default: Snowball "english", as the BM25 index)."""
    ask = ask_text(question)
    tokens = _tokens(ask)
    keys = _mentions(tokens, subject, others)
    co = _co_subjects(tokens, keys, subject)
    # the run's company and its co-subjects name the scope; any other company named is part of the ask
    free = [t for t, k in zip(tokens, keys, strict=True) if k is None or (k != subject.key and k not in co)]
    kind, cue = classify([t.lower for t in free])
    if kind is AskKind.DECISION:
        topic = [t for t in free if t.lower not in DECISION_FRAME]
        return AskAnalysis(kind, cue, ask, (), co, topic=_focus_terms(topic, stem))
    terms = _focus_terms(free, stem)
    in_ask = [k is None or (k != subject.key and k not in co) for k in keys]
    return AskAnalysis(kind, cue, ask, terms, co, _name_phrases(tokens, in_ask, stem))


def _focus_terms(free: Sequence[_Token], stem: Any) -> tuple[FocusTerm, ...]:
    """The content words of ``free`` (frame and function words dropped), one FocusTerm per stem."""
    words: dict[str, tuple[bool, bool]] = {}
    for t in free:
        if len(t.lower) > 1 and t.lower != "&" and not _is_frame(t.lower):
            proper, acronym = words.get(t.lower, (False, True))
            words[t.lower] = (proper or t.proper, acronym and t.acronym)
    stems = _stems(list(words), stem)
    terms: dict[str, FocusTerm] = {}
    for (w, (proper, acronym)), s in zip(words.items(), stems, strict=True):
        if s not in terms:
            terms[s] = FocusTerm(w, s, proper, acronym)
    return tuple(terms.values())


def _name_phrases(tokens: Sequence[_Token], in_ask: Sequence[bool], stem: Any) -> tuple[NamePhrase, ...]:
    """Maximal runs of two or more adjacent proper-noun words of the ask (not the run's company's own name)."""
    runs: list[list[str]] = [[]]
    for t, mine in zip(tokens, in_ask, strict=True):
        if mine and t.proper and len(t.lower) > 1 and not _is_frame(t.lower):
            runs[-1].append(t.lower)
        elif runs[-1]:
            runs.append([])
    phrases = [tuple(r) for r in runs if len(r) >= 2]
    return tuple(NamePhrase(p, tuple(_stems(list(p), stem))) for p in dict.fromkeys(phrases))


def _stems(words: list[str], stem: Any) -> list[str]:
    if stem is None:

        stem = Stemmer.Stemmer("english")
    return [str(s) for s in stem.stemWords(words)]


def stem_sets(texts: Iterable[str], stem: Any) -> list[frozenset[str]]:
    """The stemmed token set of each text, tokenised as the BM25 index tokenises (function words kept: they never
    are focus terms, so keeping them costs nothing and keeps this independent of the stopword list)."""
    return [_stem_set(t, stem) for t in texts]


@functools.lru_cache(maxsize=16_384)  # texts: passages and their sentence / row units
def _stem_set(text: str, stem: Any) -> frozenset[str]:
    # Cached per (text, stemmer): answerability and the answerer stem the same passages and units on every run.
    return frozenset(stem.stemWords(TOKEN.findall(text.lower())))
