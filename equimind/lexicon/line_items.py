"""Line items named by their XBRL labels: the reported lines the hand-written concept map (``concepts.METRICS``) does
not list, found in a question by the words of their us-gaap label ("selling, general and administrative expense",
"SG&A", "interest expense", "intangible assets, net").

Source: data, not hand-written. ``data/xbrl_labels.json`` holds each us-gaap concept the recorded companies report in
USD in a 10-K or 10-Q, with the taxonomy's standard label, its unit and whether it is a flow (a duration) or a balance
(an instant); ``python scripts/build_line_labels.py`` writes it from the SEC companyfacts of the recorded corpus
(``../shared/corpus/sec/companyfacts``). Deprecated concepts and the concepts ``METRICS`` already lists are left out.

The phrases of a label come from one small grammar of how the taxonomy writes labels (``label_phrases``):

1. the label's words, parentheses and commas dropped ("Intangible Assets, Net (Excluding Goodwill)" ->
   "intangible assets net"); a parenthesis of n capitalised words after n words is the signed line's other wording
   and also stands in their place ("Net Cash Provided by (Used in) Investing Activities" -> "net cash used in
   investing activities"; "Retained Earnings (Accumulated Deficit)" -> "accumulated deficit"); a label that starts
   "Selling" is also read with "Sales", the noun statements print ("Sales, general and administrative" in
   NVIDIA's 10-K, "Sales and marketing" in Alphabet's);
2. the label without its trailing qualifiers: comma-separated segments of at most three words with no "and"
   ("Accounts Payable, Current" -> "accounts payable"; "Property, Plant and Equipment, Net" -> "property plant and
   equipment", where "Plant and Equipment" is part of the name); a trailing "Net" or "Gross" also goes in front
   ("net intangible assets");
3. the initials of a name that ends "X, Y and Z", with "&" for the "and" ("Selling, General and Administrative
   Expense" -> "SG&A": the head noun after the series is left out; "Property, Plant and Equipment" -> "PP&E"),
   and that acronym's ampersand forms when it has at least three letters ("SGA", "SGNA": the "n" stands for "&",
   as "JnJ" does for "J&J"); the series alone is a phrase too, as statements print the line without its head noun
   ("Selling, general and administrative");
4. the name without its qualifiers (rule 2), and its "Net" / "Gross" form, also with its head noun in the plural,
   as statements print many lines ("Selling, general and administrative expenses").

A phrase is offered only when it has at least two words or is an acronym with "&" (or one of its forms): one
word ("Goodwill", "Assets") names too much to read as a line item. A phrase two concepts' labels give (the
"accounts payable" of "Accounts Payable, Current" and "Accounts Payable, Noncurrent") belongs to neither, unless it
is one concept's whole label.
``find_line_items`` is read by ``query.question`` when no phrase of ``METRICS`` matches, or when a label phrase
holds the one that does and is longer ("deferred revenue" is not "revenue"). Its concept is the ask's metric only
when the label's words account for every content word of the ask (a yes / no ask's direction word aside). An ask
about a line item is then answered as a concept-map line is: from companyfacts when the company has them, else from
the statement row its label names.
"""

from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from equimind.core.errors import ConfigError
from equimind.lexicon.concepts import (
    METRICS,
    MetricMatch,
    MetricSpec,
    longest_first,
    phrase_patterns,
)

PATH = Path(__file__).resolve().parent / "data" / "xbrl_labels.json"
FORMAT = 1
QUALIFIER_MAX_WORDS = 3  # a trailing comma segment this short, with no "and", qualifies the name before it
FRONT_QUALIFIERS = frozenset(["net", "gross"])  # "Intangible Assets, Net" is also written "net intangible assets"


@dataclass(frozen=True)
class LabelledConcept:
    concept: str  # "us-gaap:SellingGeneralAndAdministrativeExpense"
    label: str  # "Selling, General and Administrative Expense"
    unit: str
    flow: bool


ACRONYM_SKIP = frozenset(["of", "the", "for", "to", "in", "on", "a", "an"])


def series_acronyms(words: list[str]) -> list[str]:
    """The initials of a name that ends "X, Y and Z", with "&" for the "and": "selling general and administrative"
    -> "sg&a", and its ampersand forms when it has three letters or more ("sga", "sgna"); none for another name."""
    if len(words) < 3 or words[-2] != "and":  # "X, Y and Z": the initials end at the word after "and"
        return []
    letters = "".join("&" if w == "and" else w[0] for w in words if w not in ACRONYM_SKIP)
    out = [letters]
    if len(letters.replace("&", "")) >= 3:
        out += [letters.replace("&", ""), letters.replace("&", "n")]
    return out


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+(?:[-'][a-z0-9]+)*", text.lower())


_ALTERNATIVE = re.compile(r"((?:[A-Za-z][\w-]*\s+){1,3})\(([^)]*)\)")
_PAREN = re.compile(r"\([^)]*\)")


def _wordings(label: str) -> list[str]:
    """The label with its parentheses dropped, and, when a parenthesis of n capitalised words follows n words or
    more, with it in place of the last n of them: the taxonomy writes a signed line's other wording so ("Net Cash
    Provided by (Used in) Investing Activities", "Retained Earnings (Accumulated Deficit)")."""
    text = label.replace("\u2019", "'")
    out = [_PAREN.sub(" ", text)]
    if text.startswith("Selling"):  # statements print the noun: "Sales, general and administrative" (NVIDIA),
        out.append(_PAREN.sub(" ", "Sales" + text[len("Selling"):]))  # "Sales and marketing" (Alphabet)
    for m in _ALTERNATIVE.finditer(text):
        before, inside = m.group(1).split(), m.group(2).split()
        n = len(inside)
        if 0 < n <= len(before) and inside[0][:1].isupper():
            kept = " ".join(before[:len(before) - n])
            out.append(_PAREN.sub(" ", f"{text[:m.start()]}{kept} {m.group(2)} {text[m.end():]}"))
    return out


def label_phrases(label: str) -> tuple[str, ...]:
    """The phrases a question may name ``label``'s concept by (module docstring, rules 1-4), lower case."""
    return tuple(dict.fromkeys(p for text in _wordings(label) for p in _phrases(text)))


def _phrases(text: str) -> list[str]:
    segments = [s for s in (_words(seg) for seg in text.split(",")) if s]
    if not segments:
        return []
    names: list[list[str]] = [[w for s in segments for w in s]]
    front: list[list[str]] = []
    while len(segments) > 1 and len(segments[-1]) <= QUALIFIER_MAX_WORDS and "and" not in segments[-1]:
        qualifier = segments.pop()
        name = [w for s in segments for w in s]
        names.append(name)
        if qualifier == [qualifier[0]] and qualifier[0] in FRONT_QUALIFIERS:
            front.append([qualifier[0], *name])
    out: list[str] = []
    for name in names:
        out.append(" ".join(name))
        for cut in (name, name[:-1]):
            short = series_acronyms(cut)
            out += short
            if short and cut is not name:  # the series alone, as statements print the line
                out.append(" ".join(cut))
    out += [" ".join(name) for name in front]
    out += [_plural(" ".join(n)) for n in (names[-1], *front) if len(n) >= 2]  # "... administrative expenses"
    return [p for p in dict.fromkeys(out) if len(p.split()) >= 2 or "&" in p or _is_ampersand_form(p, out)]


def _plural(phrase: str) -> str:
    """The phrase with its last word in the plural, as statements often print a line ("expense" -> "expenses",
    "liability" -> "liabilities"); a last word already ending in "s" is kept."""
    head, _, last = phrase.rpartition(" ")
    if last.endswith("s"):
        return phrase
    last = last[:-1] + "ies" if last.endswith("y") and last[-2:-1] not in "aeiou" else last + "s"
    return f"{head} {last}"


def _is_ampersand_form(phrase: str, phrases: list[str]) -> bool:
    return any("&" in p and phrase in (p.replace("&", ""), p.replace("&", "n")) for p in phrases)


@dataclass(frozen=True)
class LineItems:
    concepts: tuple[LabelledConcept, ...]
    provenance: dict[str, Any]

    @functools.cached_property
    def specs(self) -> dict[str, MetricSpec]:
        """Each concept as a concept-map line of its own: phrases from its label, the concept itself."""
        return {c.concept: MetricSpec(c.concept, c.label, label_phrases(c.label), (c.concept,), c.unit, c.flow)
                for c in self.concepts}

    @functools.cached_property
    def _patterns(self) -> tuple[tuple[re.Pattern[str], str, MetricSpec], ...]:
        owners: dict[str, set[str]] = defaultdict(set)
        whole: dict[str, str] = {}
        for spec in self.specs.values():
            for p in spec.phrases:
                owners[p].add(spec.key)
            for wording in _wordings(spec.name):  # the whole label in each of its wordings
                whole.setdefault(" ".join(_words(wording)), spec.key)
        kept: list[tuple[str, MetricSpec]] = []
        for phrase, keys in owners.items():
            key = next(iter(keys)) if len(keys) == 1 else whole.get(phrase)
            if key is not None and key in keys:
                kept.append((phrase, self.specs[key]))
        return phrase_patterns(kept)

    def find(self, text: str) -> list[MetricMatch]:
        """Every line item named in ``text`` (longest phrase first, non-overlapping), in text order; commas are read
        as spaces, as the phrases drop them ("selling, general and administrative expense")."""
        found = longest_first(self._patterns, text.replace(",", " "))
        return [MetricMatch(m, phrase, a, b) for m, phrase, a, b in found]


def parse(raw: dict[str, Any]) -> LineItems:
    if raw.get("format") != FORMAT:
        raise ConfigError(f"XBRL line labels: format {raw.get('format')!r}, expected {FORMAT}; rebuild them with "
                          "`python scripts/build_line_labels.py`")
    listed = {c for m in METRICS for c in m.concepts}
    concepts = tuple(LabelledConcept(str(c["concept"]), str(c["label"]), str(c["unit"]), bool(c["flow"]))
                     for c in raw["concepts"] if c["concept"] not in listed)
    return LineItems(concepts, dict(raw["provenance"]))


@functools.cache
def load_line_items(path: Path = PATH) -> LineItems:
    try:
        return parse(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"XBRL line labels unreadable at {path}: {exc}; rebuild them with "
                          "`python scripts/build_line_labels.py`") from exc


def find_line_items(text: str) -> list[MetricMatch]:
    """Every line item ``text`` names by its XBRL label, in text order."""
    return load_line_items().find(text)
