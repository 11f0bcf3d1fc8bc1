"""Question words -> the words filings print for them, for the extractive answerer's term coverage.

A question asks "how much did X spend buying back its shares"; the 10-K says "the Company repurchased 499 million
shares for $95.0 billion". Coverage of the ask's focus stems (``extract.score_units``) would miss "buying back" in
that sentence, and the sentence that answers would not qualify. Each group below lists phrases that a US annual or
quarterly report uses interchangeably for one idea; when every stem of one phrase of a group is among the ask's focus
stems, those stems count as ONE term, held by a unit that holds any phrase of the group. The original words are always
among the alternatives, so a group only ever adds ways to match, and a question word that is in no group is matched as
before. The groups are general reporting vocabulary (SEC Regulation S-K items, US-GAAP line items, MD&A wording), not
taken from any evaluation question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from equimind.lexicon.text import TOKEN

# Verbs whose object is the amount itself ("how much did X spend / pay / invest"): for an amount ask the answering
# unit's amount is what they ask, so they are not terms a unit must hold (``content_terms``).
MONEY_VERBS = frozenset(["spend", "spent", "pay", "paid", "cost", "costs", "invest", "invested", "earn", "earned",
                         "return", "returned", "add", "added", "adds"])
EITHER = re.compile(r"\b([a-z][a-z'\-]+)\s+or\s+([a-z][a-z'\-]+)\b")

GROUPS: tuple[tuple[str, ...], ...] = tuple(tuple(p.strip() for p in g.split(";")) for g in (
    "buy back; buying back; bought back; buyback; buybacks; repurchase; repurchased; repurchases; repurchasing",
    "headcount; workforce; employees; employee; staff; full-time employees; people work; people working; "
    "people employed",
    "head office; headquarters; headquartered; principal executive offices",
    "grow; grew; growth; grown; increase; increased; rose; up; change",
    "decline; declined; decrease; decreased; fall; fell; lower; down",
    "drove; drive; driven; drivers; due to; primarily due; resulted from; result of; because",
    "lift; lifted; boost; boosted; improve; improved; expand; expanded; increase; increased; higher",
    "capital expenditures; capital expenditure; capex; capital spending; purchases of property and equipment; "
    "purchases of property, plant and equipment",
    "paying members; paid members; paid memberships; paying subscribers; paid subscribers",
    "founded; incorporated",
    "left; remaining; remained; available",
    "sales; revenue; revenues",
    "shareholders; stockholders",
    "exposed; exposure; affected; impact; impacted",
    "program; programme; programs; programmes",
    "extra; additional; incremental",
    "retain; retained; retaining; retention",
    "acquisition; acquisitions; acquire; acquired; acquiring",
    "legal battles; legal battle; lawsuits; lawsuit; litigation; legal proceedings; legal actions; legal action",
))


@dataclass(frozen=True)
class Term:
    """One focus term: the question's stems it stands for and the alternatives (each a tuple of stems) a unit may
    hold instead. A plain question word is a Term with itself as its only alternative."""

    stems: tuple[str, ...]
    alternatives: tuple[tuple[str, ...], ...]

    @property
    def key(self) -> str:
        return " ".join(self.stems)


def _stems(phrase: str, stem: Any) -> tuple[str, ...]:
    return tuple(str(s) for s in stem.stemWords(TOKEN.findall(phrase.lower())))


def expand_terms(stems: Sequence[str], stem: Any, groups: Sequence[Sequence[str]] = ()) -> list[Term]:
    """The ask's focus stems as Terms: the stems of a group phrase found among them become one Term with every
    phrase of the group as an alternative; other stems stay one Term each. Order: first appearance. ``groups``:
    more groups to use after ``GROUPS`` (the acronyms a filing defines)."""
    left = list(dict.fromkeys(stems))
    out: list[Term] = []
    for group in (*GROUPS, *groups):
        phrases = [_stems(p, stem) for p in group]
        found = max((p for p in phrases if p and all(s in left for s in p)), key=len, default=None)
        if found is None:
            continue
        for s in found:
            left.remove(s)
        out.append(Term(found, tuple(dict.fromkeys(phrases))))
    out += [Term((s,), ((s,),)) for s in left]
    order = {s: i for i, s in enumerate(dict.fromkeys(stems))}
    return sorted(out, key=lambda t: min(order[s] for s in t.stems))


def content_terms(stems: Sequence[str], stem: Any, amount_ask: bool,
                  metric_phrases: Sequence[str] = (), metric_verbs: Sequence[str] = (),
                  groups: Sequence[Sequence[str]] = (), either: Sequence[tuple[str, str]] = ()) -> list[Term]:
    """``expand_terms`` without the money verbs of an amount ask (see ``MONEY_VERBS``). ``metric_phrases``: the
    phrases of the reported metric the ask names, the one it uses first ("COGS", "cost of revenue", "cost of sales"
    ...): the ask's stems of the first become ONE term held by a unit that holds any of them, since a statement
    prints its own name for the line; ``metric_verbs`` ("generate", "report") are then not terms either.
    ``groups``: more interchangeable phrases (``expand_terms``); ``either``: stem pairs the ask joins with "or"
    (``either_pairs``), each pair one term held by either word."""
    money = {s for w in (*MONEY_VERBS, *(metric_verbs if metric_phrases else ())) for s in _stems(w, stem)} \
        if amount_ask else set()
    terms = expand_terms(stems, stem, groups)
    if metric_phrases:
        asked = set(_stems(metric_phrases[0], stem))
        # a phrase with "&" ("R&D expenses") loses that word to the tokenizer: it would match any "expenses"
        phrases = tuple(dict.fromkeys(p for p in (_stems(x, stem) for x in metric_phrases if "&" not in x) if p))
        inside = [t for t in terms if set(t.stems) <= asked]
        if not inside and phrases:  # the ask names it in no focus word ("R&D": too short a token): a term still
            terms.append(Term(phrases[0], phrases))
        elif inside:
            own = inside[0].alternatives if len(inside) == 1 else (tuple(s for t in inside for s in t.stems),)
            merged = Term(tuple(s for t in inside for s in t.stems), tuple(dict.fromkeys(own + phrases)))
            at = terms.index(inside[0])
            terms = [t for t in terms if t not in inside]
            terms.insert(at, merged)
    for a, b in either:
        ta = next((t for t in terms if a in t.stems), None)
        tb = next((t for t in terms if b in t.stems), None)
        if ta is not None and tb is not None and ta != tb:  # "fake or violating accounts": either word will do
            at = terms.index(ta)
            terms = [t for t in terms if t not in (ta, tb)]
            terms.insert(at, Term(ta.stems + tb.stems, tuple(dict.fromkeys(ta.alternatives + tb.alternatives))))
    kept = [t for t in terms if not set(t.stems) <= money]
    return kept or terms


def either_pairs(ask: str, stem: Any) -> list[tuple[str, str]]:
    """The stem pairs the ask joins with "or" ("fake or violating accounts" -> (fake, violat)): a unit holding
    either word holds the term (``content_terms``)."""
    out: list[tuple[str, str]] = []
    for m in EITHER.finditer(ask.lower().replace("\u2019", "'")):
        a, b = (_stems(w, stem) for w in m.groups())
        if a and b:
            out.append((a[-1], b[0]))
    return out


def stem_alternatives(stems: Sequence[str], stem: Any) -> dict[str, tuple[frozenset[str], ...]]:
    """Focus stem -> the stem sets of the other phrases of its group, for the answerability check's document and
    passage term presence (``index.scope_stats``): a filing that says "repurchase" holds the question's "buyback".
    A stem of a multi-word group phrase ("head office") is held when any phrase of the group is."""
    out: dict[str, tuple[frozenset[str], ...]] = {}
    for term in expand_terms(stems, stem):
        others = tuple(frozenset(a) for a in term.alternatives if a != term.stems)
        if others:
            for s in term.stems:
                out[s] = others
    return out
