"""Two filings compared section by section, then paragraph by paragraph, then sentence by sentence.

**Paragraphs** (``align``): ``difflib.SequenceMatcher`` over the sections' normalised paragraphs gives the runs that
are equal in order; a paragraph that only moved (the same normalised text elsewhere in the section) is unchanged.
The rest are paired by similarity: candidates share a three-word shingle that at most ``SHINGLE_MAX_DF`` other
paragraphs of the old side share, are scored with RapidFuzz's ``fuzz.ratio`` (normalised Indel similarity) and
paired greedily, best first, when the score reaches ``PAIR_MIN``. A paragraph split, merged or cut differently
still pairs: ``added`` means new text, so an unpaired paragraph holding any sentence (of 40 characters or more)
found verbatim (normalised) on the other side, occurring once on each side (a stock sentence repeated under
several factors links nothing), pairs with the part of the paragraph holding most of them
(``_restructured``): the span from the first to the last of those sentences. Only a paragraph none of whose
sentences existed before is ``added``; likewise ``removed``.

**Sentences** of a paired paragraph are aligned the same way (``SequenceMatcher`` over normalised sentences); a
replaced sentence whose template equals its counterpart's (``changes.figures``) is ``figures_changed``, one change
per sentence with its old -> new figures. When other words changed too the paragraph is ``reworded``, cited on
both sides whole, with its similarity. A sentence whose only difference is a year is *dates only*: counted, not
reported.

**Risk factors**: the section's paragraphs are aligned as above; an added (removed) heading whose body paragraphs
are at least half added (removed), by characters, is a whole **risk factor** added (removed): one change citing
its heading, with the factor's extent, instead of one per paragraph.

**Which sides may say added / removed.** A 10-K's Item 1A lists every risk factor; a 10-Q's lists only the ones
that changed ("other than the risk factors listed below, there have been no material changes"). So a factor is
reported ``added`` only when the old side is a complete list and ``removed`` only when the new side is. Between a
10-Q and a 10-K only the risk factors are compared: a quarter's MD&A against a year's says nothing about change.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from rapidfuzz import fuzz

from equimind.changes.blocks import (
    SECTION_KEYS,
    Paragraph,
    SectionText,
    heading_at,
    heading_text,
    is_title,
    norm,
    paragraphs,
    section_texts,
)
from equimind.changes.figures import figure_deltas
from equimind.changes.model import ChangeKind, FigureDelta, SectionPair, Side
from equimind.core.documents import Document
from equimind.lexicon.forms import is_quarterly
from equimind.lexicon.text import split_prose_sentences

PAIR_MIN = 0.6  # fuzz.ratio / 100 at or above which two paragraphs are the same paragraph reworded
SHINGLE_WORDS = 3
SHINGLE_MAX_DF = 25  # a shingle shared by more old paragraphs than this is boilerplate, not a candidate link
CANDIDATES_PER_PARAGRAPH = 12
RESTRUCTURED_MIN_CHARS = 40  # a sentence this long found verbatim on the other side makes a paragraph not new
FACTOR_BODY_SHARE = 0.5
UNPARSED_MAX_CHARS = 2_000  # a section this short next to one ten times longer was not found under its item
UNPARSED_RATIO = 10
_DIGIT = re.compile(r"\d")
# The reworded check of ``_elsewhere``: chosen leave-company-out on the hand-labelled added / removed changes by
# ``python -m benchmarks.changes_elsewhere`` (benchmarks/results/changes_elsewhere.json holds the choice, the
# leave-company-out estimate and the grid); a test checks these equal the all-companies choice written there.
REWORDED_MIN = 72  # RapidFuzz token_set_ratio of two fuzzy_key sentences at or above which one rewords the other
REWORDED_SHARE = 0.5  # share of a paragraph's sentence characters so found for it to be a rewording, not new
REWORDED_CANDIDATES = 10  # sentences scored per sentence: those sharing the most distinctive words
REWORDED_WORD_MAX_DF = 0.02  # a word in more than this share of the other filing's sentences selects nothing
EDIT_RUNS = 5
EDIT_MAX_WORDS = 3000  # share of a factor's body characters that must be new (gone) for the factor to be new


@dataclass
class RawChange:
    """A change before ranking: kind, section, cited sides, and what the ranker reads."""

    kind: ChangeKind
    section: str
    old: Side | None
    new: Side | None
    similarity: float | None = None
    figures: list[FigureDelta] = field(default_factory=list)
    risk_factor: str | None = None
    is_risk_factor: bool = False
    old_text: str = ""  # the compared text of each side (the quote, or a whole factor), for word counts
    new_text: str = ""
    inserted: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    elsewhere: bool = False  # a rewording found by the reworded check of ``_elsewhere``, not by alignment


@dataclass
class Alignment:
    equal: int
    pairs: list[tuple[int, int, float]]
    removed: list[int]
    added: list[int]
    matched: dict[int, int] = field(default_factory=dict)  # new index -> old index of every equal or moved item


@dataclass
class SectionDiff:
    pair: SectionPair
    changes: list[RawChange]


def _shingles(key: str) -> set[str]:
    words = key.split()
    if len(words) <= SHINGLE_WORDS:
        return {key} if key else set()
    return {" ".join(words[i:i + SHINGLE_WORDS]) for i in range(len(words) - SHINGLE_WORDS + 1)}


def align(old: Sequence[str], new: Sequence[str]) -> Alignment:
    """Align two sequences of normalised texts (paragraphs or sentences); see the module docstring."""
    sm = SequenceMatcher(None, list(old), list(new), autojunk=False)
    equal = 0
    left: list[int] = []
    right: list[int] = []
    matched: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag == "equal":
            equal += i2 - i1
            matched.update({j1 + k: i1 + k for k in range(i2 - i1)})
        else:
            left.extend(range(i1, i2))
            right.extend(range(j1, j2))
    by_key: dict[str, list[int]] = defaultdict(list)
    for i in left:
        by_key[old[i]].append(i)
    moved_old: set[int] = set()
    rest_new: list[int] = []
    for j in right:
        if by_key.get(new[j]):
            i = by_key[new[j]].pop(0)
            moved_old.add(i)
            matched[j] = i
            equal += 1
        else:
            rest_new.append(j)
    rest_old = [i for i in left if i not in moved_old]
    index: dict[str, list[int]] = defaultdict(list)
    for i in rest_old:
        for sh in _shingles(old[i]):
            index[sh].append(i)
    scored: list[tuple[float, int, int]] = []
    for j in rest_new:
        shared: dict[int, int] = defaultdict(int)
        for sh in _shingles(new[j]):
            olds = index.get(sh, ())
            if len(olds) <= SHINGLE_MAX_DF:
                for i in olds:
                    shared[i] += 1
        for i in sorted(shared, key=lambda k: (-shared[k], k))[:CANDIDATES_PER_PARAGRAPH]:
            score = fuzz.ratio(old[i], new[j], score_cutoff=PAIR_MIN * 100) / 100.0
            if score >= PAIR_MIN:
                scored.append((score, i, j))
    scored.sort(key=lambda t: (-t[0], t[1], t[2]))
    used_old: set[int] = set()
    used_new: set[int] = set()
    pairs = []
    for score, i, j in scored:
        if i not in used_old and j not in used_new:
            used_old.add(i)
            used_new.add(j)
            pairs.append((i, j, round(score, 4)))
    pairs.sort(key=lambda t: t[1])
    matched.update({j: i for i, j, _ in pairs})
    return Alignment(equal, pairs, [i for i in rest_old if i not in used_old],
                     [j for j in rest_new if j not in used_new], matched)


def word_edits(old: str, new: str, *, runs: int = EDIT_RUNS) -> tuple[list[str], list[str]]:
    """The first ``runs`` runs of words the new text inserted and the old text lost (``SequenceMatcher`` over
    words; at most ``EDIT_MAX_WORDS`` words a side are compared), each run clipped to 200 characters."""
    a, b = old.split()[:EDIT_MAX_WORDS], new.split()[:EDIT_MAX_WORDS]
    inserted: list[str] = []
    deleted: list[str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag in ("insert", "replace") and len(inserted) < runs:
            inserted.append(" ".join(b[j1:j2])[:200])
        if tag in ("delete", "replace") and len(deleted) < runs:
            deleted.append(" ".join(a[i1:i2])[:200])
    return inserted, deleted


def _side(doc: Document, start: int, end: int, section: str, extent: tuple[int, int] | None = None) -> Side:
    return Side(doc_id=doc.id, start=start, end=end, quote=doc.text[start:end], section=section, extent=extent)


class _Differ:
    def __init__(self, old: Document, new: Document) -> None:
        self.old, self.new = old, new
        self.dates_only = 0

    def paired(self, key: str, a: Paragraph, b: Paragraph, sim: float, factor: str | None) -> list[RawChange]:
        """The changes inside one pair of paragraphs: figures_changed per sentence, else one reworded."""
        sa, sb = a.sentences, b.sentences
        ta = [self.old.text[s:e] for s, e in sa]
        tb = [self.new.text[s:e] for s, e in sb]
        al = align([norm(t) for t in ta], [norm(t) for t in tb])
        out: list[RawChange] = []
        other = bool(al.removed or al.added)
        for i, j, _ in al.pairs:
            got = figure_deltas(ta[i], tb[j])
            if got is None:
                other = True
                continue
            deltas, years = got
            if not deltas:
                self.dates_only += int(years)
                continue
            out.append(RawChange(ChangeKind.FIGURES_CHANGED, key, _side(self.old, *sa[i], key),
                                 _side(self.new, *sb[j], key), similarity=sim, figures=deltas, risk_factor=factor,
                                 old_text=ta[i], new_text=tb[j]))
        if other:
            inserted, deleted = word_edits(a.text, b.text)
            out.append(RawChange(ChangeKind.REWORDED, key, _side(self.old, a.start, a.end, key),
                                 _side(self.new, b.start, b.end, key), similarity=sim, risk_factor=factor,
                                 old_text=a.text, new_text=b.text, inserted=inserted, deleted=deleted))
        return out

    def section(self, key: str, a: SectionText, b: SectionText, *, may_add: bool, may_remove: bool,
                mode: str) -> SectionDiff:
        pa, pb = list(a.paragraphs), list(b.paragraphs)
        al = align([p.key for p in pa], [p.key for p in pb])
        changes: list[RawChange] = []
        none: list[str | None] = [None]
        heads_a = _factor_of(pa) if key == "risk_factors" else none * len(pa)
        heads_b = _factor_of(pb) if key == "risk_factors" else none * len(pb)
        gone, new = set(al.removed), set(al.added)
        for i, j, sim in al.pairs:
            changes.extend(self.paired(key, pa[i], pb[j], sim, heads_b[j] or heads_a[i]))
        for a_part, b_part, sim in _restructured(self.old.text, pa, gone, self.new.text, pb, new,
                                                 old_side=may_remove):
            changes.extend(self.paired(key, a_part, b_part, sim, _head_at(pb, heads_b, b_part.start)
                                       or _head_at(pa, heads_a, a_part.start)))
        if key == "risk_factors":
            for i, j in _renamed_headings(pa, pb, al.matched, gone, new):
                changes.extend(self.paired(key, pa[i], pb[j], round(fuzz.ratio(pa[i].key, pb[j].key) / 100, 4),
                                           heads_b[j]))
            if may_add:
                changes.extend(self._whole_factors(key, pb, new, self.new, ChangeKind.ADDED))
            if may_remove:
                changes.extend(self._whole_factors(key, pa, gone, self.old, ChangeKind.REMOVED))
        gone = {i for i in gone if not is_title(pa[i])}  # a title line alone is layout, not content
        new = {j for j in new if not is_title(pb[j])}
        if mode == "risk_factor_update":  # a 10-Q's preamble ("other than the risk factors listed below ...")
            new = {j for j in new if heads_b[j] is not None}
            gone = {i for i in gone if heads_a[i] is not None}
        if may_add:
            changes.extend(RawChange(ChangeKind.ADDED, key, None, _side(self.new, pb[j].start, pb[j].end, key),
                                     risk_factor=heads_b[j], new_text=pb[j].text) for j in sorted(new))
        if may_remove:
            changes.extend(RawChange(ChangeKind.REMOVED, key, _side(self.old, pa[i].start, pa[i].end, key), None,
                                     risk_factor=heads_a[i], old_text=pa[i].text) for i in sorted(gone))
        note = "" if (may_add and may_remove) else _partial_note(may_add, may_remove)
        pair = SectionPair(key=key, old_name=a.name, new_name=b.name, old_paragraphs=len(pa),
                           new_paragraphs=len(pb), unchanged=al.equal, tables_skipped=a.tables + b.tables,
                           mode=mode, note=note)
        return SectionDiff(pair, changes)

    def _whole_factors(self, key: str, paras: list[Paragraph], unmatched: set[int], doc: Document,
                       kind: ChangeKind) -> list[RawChange]:
        """Whole risk factors among the unmatched paragraphs; their paragraphs leave ``unmatched``."""
        out = []
        for h, body in _factor_spans(paras):
            if h not in unmatched:
                continue
            chars = sum(len(paras[k].text) for k in body)
            gone = sum(len(paras[k].text) for k in body if k in unmatched)
            if chars and gone < FACTOR_BODY_SHARE * chars:
                continue
            last = max([h, *[k for k in body if k in unmatched]])
            extent = (paras[h].start, paras[last].end)
            side = _side(doc, paras[h].start, paras[h].end, key, extent)
            text = doc.text[extent[0]:extent[1]]
            change = RawChange(kind, key, None if kind == ChangeKind.ADDED else side,
                               side if kind == ChangeKind.ADDED else None, risk_factor=heading_text(paras[h]),
                               is_risk_factor=True, old_text="" if kind == ChangeKind.ADDED else text,
                               new_text=text if kind == ChangeKind.ADDED else "")
            out.append(change)
            unmatched.discard(h)
            unmatched.difference_update(body)
        return out


def _sentence_index(text: str, paras: list[Paragraph]) -> dict[str, tuple[int, int, int]]:
    """normalised sentence -> (paragraph index, start, end), for the sentences that occur once in the section: a
    stock sentence repeated under several risk factors ("this could harm our business ...") links nothing."""
    out: dict[str, tuple[int, int, int]] = {}
    seen: set[str] = set()
    for k, p in enumerate(paras):
        for s, e in p.sentences:
            key = norm(text[s:e])
            if key in seen:
                out.pop(key, None)
            else:
                seen.add(key)
                out[key] = (k, s, e)
    return out


def _span(text: str, start: int, end: int) -> Paragraph:
    return Paragraph(start, end, text[start:end], norm(text[start:end]))


def _restructured(old_text: str, pa: list[Paragraph], gone: set[int], new_text: str, pb: list[Paragraph],
                  new: set[int], *, old_side: bool) -> list[tuple[Paragraph, Paragraph, float]]:
    """Paragraphs split, merged or cut differently (module docstring): each unpaired paragraph holding a sentence
    found verbatim on the other side, as (old, new, similarity), the other side cut to the span from the first to
    the last of the sentences found in its best paragraph. Takes them out of ``gone`` / ``new`` (a new paragraph's
    best old paragraph too: its text is accounted for). ``old_side``: also pair the old paragraphs left over (when
    the new filing restates every paragraph, so an old one left out means something)."""
    out: list[tuple[Paragraph, Paragraph, float]] = []
    if not gone and not new:
        return out
    index_old, index_new = _sentence_index(old_text, pa), _sentence_index(new_text, pb)
    passes = [(new_text, pb, new, index_new, index_old, False, gone)]
    if old_side:
        passes.append((old_text, pa, gone, index_old, index_new, True, new))
    for this_text, this, unpaired, own, index, flip, other_unpaired in passes:
        other_text = old_text if not flip else new_text
        for k in sorted(unpaired):
            found: dict[int, list[tuple[int, int]]] = defaultdict(list)
            for s, e in this[k].sentences:
                key = norm(this_text[s:e])
                hit = index.get(key) if e - s >= RESTRUCTURED_MIN_CHARS and key in own else None
                if hit is not None:
                    found[hit[0]].append((hit[1], hit[2]))
            if not found:
                continue
            best = max(found, key=lambda h: sum(e - s for s, e in found[h]))
            part = _span(other_text, min(s for s, _ in found[best]), max(e for _, e in found[best]))
            unpaired.discard(k)
            other_unpaired.discard(best)
            a, b = (this[k], part) if flip else (part, this[k])
            out.append((a, b, round(fuzz.ratio(a.key, b.key) / 100.0, 4)))
    return out


def _renamed_headings(pa: list[Paragraph], pb: list[Paragraph], matched: dict[int, int], gone: set[int],
                      new: set[int]) -> list[tuple[int, int]]:
    """A risk factor whose heading was rewritten but whose body stayed: an unpaired new heading whose body
    paragraphs are mostly matched to one old factor with an unpaired heading is that heading reworded. Takes the
    pairs out of ``gone`` / ``new``."""
    old_factor = {k: h for h, body in _factor_spans(pa) for k in (h, *body)}
    out = []
    for h, body in _factor_spans(pb):
        if h not in new or not body:
            continue
        owners = [old_factor.get(matched[k]) for k in body if k in matched]
        if not owners:
            continue
        g = max(set(owners), key=lambda x: (owners.count(x), -(x if x is not None else -1)))
        if g is not None and g in gone and owners.count(g) * 2 > len(body):
            gone.discard(g)
            new.discard(h)
            out.append((g, h))
    return out


def _factor_spans(paras: list[Paragraph]) -> list[tuple[int, list[int]]]:
    """(heading index, body indices) of each risk factor."""
    out: list[tuple[int, list[int]]] = []
    for i in range(len(paras)):
        if heading_at(paras, i):
            out.append((i, []))
        elif out:
            out[-1][1].append(i)
    return out


def _factor_of(paras: list[Paragraph]) -> list[str | None]:
    """The heading of the risk factor each paragraph belongs to (None in the preamble)."""
    heads: list[str | None] = [None] * len(paras)
    for h, body in _factor_spans(paras):
        for k in (h, *body):
            heads[k] = heading_text(paras[h])
    return heads


def _head_at(paras: list[Paragraph], heads: list[str | None], offset: int) -> str | None:
    for p, h in zip(paras, heads, strict=True):
        if p.start <= offset < p.end:
            return h
    return None


def _unparsed(a: SectionText, b: SectionText) -> str | None:
    """Which side's section holds almost no text next to the other's ("old" / "new"), else None."""
    ca, cb = sum(len(p.text) for p in a.paragraphs), sum(len(p.text) for p in b.paragraphs)
    for side, mine, other in (("old", ca, cb), ("new", cb, ca)):
        if mine < UNPARSED_MAX_CHARS and mine * UNPARSED_RATIO < other:
            return side
    return None


def _partial_note(may_add: bool, may_remove: bool) -> str:
    if not may_add and not may_remove:
        return ("both filings list only the risk factors that changed (a 10-Q's Item 1A), so no factor is called "
                "added or removed; factors in both are compared")
    if may_add:
        return ("the new filing (a 10-Q) lists only the risk factors that changed, so a factor it leaves out is not "
                "called removed")
    return "the old filing lists only the risk factors that changed, so a factor it leaves out is not called added"


def diff_documents(old: Document, new: Document, sections: Sequence[str] = ()) -> tuple[list[SectionDiff], int]:
    """Every compared section of the two filings (or the ``sections`` asked for), and the dates-only count."""
    sa, sb = section_texts(old), section_texts(new)
    same_kind = is_quarterly(old.form) == is_quarterly(new.form)
    keys = [k for k in (*SECTION_KEYS, "full_text") if (not sections or k in sections) and (k in sa or k in sb)]
    differ = _Differ(old, new)
    out: list[SectionDiff] = []
    for key in keys:
        a, b = sa.get(key), sb.get(key)
        if a is None or b is None:
            which = a or b
            assert which is not None
            mode = "old_only" if b is None else "new_only"
            out.append(SectionDiff(SectionPair(
                key=key, old_name=a.name if a else None, new_name=b.name if b else None,
                old_paragraphs=len(a.paragraphs) if a else 0, new_paragraphs=len(b.paragraphs) if b else 0,
                unchanged=0, tables_skipped=which.tables, mode=mode,
                note=f"only the {'old' if b is None else 'new'} filing has this section; not compared"), []))
            continue
        small = _unparsed(a, b)
        if small is not None:
            out.append(SectionDiff(SectionPair(
                key=key, old_name=a.name, new_name=b.name, old_paragraphs=len(a.paragraphs),
                new_paragraphs=len(b.paragraphs), unchanged=0, tables_skipped=a.tables + b.tables, mode="unparsed",
                note=f"the {small} filing's {a.name if small == 'old' else b.name} holds almost no text (its "
                     "content was not found under this item, e.g. only a table-of-contents line): not compared, "
                     "rather than calling the other side's every paragraph new"), []))
            continue
        if key == "risk_factors":
            complete_old, complete_new = not is_quarterly(old.form), not is_quarterly(new.form)
            mode = "full" if complete_old and complete_new else "risk_factor_update"
            out.append(differ.section(key, a, b, may_add=complete_old, may_remove=complete_new, mode=mode))
        elif same_kind:
            out.append(differ.section(key, a, b, may_add=True, may_remove=True, mode="full"))
        else:
            out.append(SectionDiff(SectionPair(
                key=key, old_name=a.name, new_name=b.name, old_paragraphs=len(a.paragraphs),
                new_paragraphs=len(b.paragraphs), unchanged=0, tables_skipped=a.tables + b.tables, mode="skipped",
                note="a 10-Q against a 10-K: only the risk factors are compared (a quarter's section against a "
                     "year's says nothing about change)"), []))
    _elsewhere(old, new, out)
    return out, differ.dates_only


def _masked(norm_text: str) -> str:
    return _DIGIT.sub("0", norm_text)  # same length: offsets stay valid


def _elsewhere(old: Document, new: Document, diffs: list[SectionDiff]) -> None:
    """The last checks before a paragraph is called added (removed): its sentences are looked up in the WHOLE other
    filing (every paragraph of every section), so text that moved to another section, or a section the other filing
    files under another item, is not new.

    1. **Verbatim** (normalised, digits masked): a paragraph at least half of whose sentence characters are found is
       dropped (counted in the section's ``moved_elsewhere``); a sentence found with different figures becomes a
       ``figures_changed`` change citing both places.
    2. **Reworded** (``REWORDED_MIN`` / ``REWORDED_SHARE``): a paragraph at least ``REWORDED_SHARE`` of whose
       sentence characters have a sentence in the other filing scoring ``REWORDED_MIN`` or more
       (``fuzzy_key`` on both, RapidFuzz ``token_set_ratio``) says what the other filing said in other words or
       with other figures: it becomes a ``reworded`` change citing the other filing's paragraph that holds most of
       those sentences (counted in ``reworded_elsewhere``), not ``added`` / ``removed``. A stock sentence printed
       under several paragraphs of the paragraph's own filing counts on neither side of that share.
    3. A paragraph without one sentence of ``RESTRUCTURED_MIN_CHARS`` characters (a caption such as "Gain on Sale
       of Businesses:") states nothing that can be new: it is not reported (counted in ``fragments``)."""
    todo = [(d, c) for d in diffs for c in d.changes if c.kind in (ChangeKind.ADDED, ChangeKind.REMOVED)]
    if not todo:
        return
    whole = {d.id: _WholeText(d) for d in (old, new)}
    for d, c in todo:
        side = c.new if c.kind == ChangeKind.ADDED else c.old
        if side is None:
            continue
        this_doc, other_doc = (new, old) if c.kind == ChangeKind.ADDED else (old, new)
        lo, hi = side.extent or (side.start, side.end)
        spans = sentence_spans(this_doc.text, lo, hi)
        if not spans:
            d.changes.remove(c)
            d.pair.fragments += 1
            continue
        total = sum(e - s for s, e in spans)
        found = 0
        extra: list[RawChange] = []
        for s, e in spans:
            sentence = this_doc.text[s:e]
            ns = norm(sentence)
            at = whole[other_doc.id].find(ns)
            if at is None:
                continue
            found += e - s
            there = whole[other_doc.id].sentence_at(at, ns)
            if there is not None and norm(other_doc.text[there[0]:there[1]]) != ns:  # the same sentence, new figures
                here = (s, e)
                (a0, a1), (b0, b1) = (there, here) if c.kind == ChangeKind.ADDED else (here, there)
                got = figure_deltas(old.text[a0:a1], new.text[b0:b1])
                if got and got[0]:
                    extra.append(RawChange(ChangeKind.FIGURES_CHANGED, d.pair.key, _side(old, a0, a1, d.pair.key),
                                           _side(new, b0, b1, d.pair.key), figures=got[0],
                                           risk_factor=c.risk_factor, old_text=old.text[a0:a1],
                                           new_text=new.text[b0:b1]))
        if found * 2 >= total:
            d.changes.remove(c)
            d.pair.moved_elsewhere += 1
            d.changes.extend(x for x in extra if not any(_same(x, y) for y in d.changes))
            continue
        own = [(s, e) for s, e in spans if not whole[this_doc.id].repeated(this_doc.text[s:e])]
        reworded = whole[other_doc.id].reworded(this_doc.text, own) if own else None
        if reworded is None:
            continue
        k, sim = reworded
        other_para = whole[other_doc.id].paras[k]
        here_side = _side(this_doc, lo, hi, d.pair.key)
        there_side = _side(other_doc, other_para.start, other_para.end, d.pair.key)
        a_side, b_side = (there_side, here_side) if c.kind == ChangeKind.ADDED else (here_side, there_side)
        a_text, b_text = old.text[a_side.start:a_side.end], new.text[b_side.start:b_side.end]
        inserted, deleted = word_edits(a_text, b_text)
        d.changes.remove(c)
        d.pair.reworded_elsewhere += 1
        rw = RawChange(ChangeKind.REWORDED, d.pair.key, a_side, b_side, similarity=sim, risk_factor=c.risk_factor,
                       old_text=a_text, new_text=b_text, inserted=inserted, deleted=deleted, elsewhere=True)
        if not any(_same(rw, y) for y in d.changes):
            d.changes.append(rw)


def sentence_spans(text: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """The document spans of the sentences of ``text[lo:hi]`` that are ``RESTRUCTURED_MIN_CHARS`` or longer (line
    breaks read as spaces, so a PDF line wrap does not cut a sentence)."""
    flat = text[lo:hi].replace("\n", " ")
    return [(lo + s, lo + e) for s, e in split_prose_sentences(flat) if e - s >= RESTRUCTURED_MIN_CHARS]


_NOT_WORD = re.compile(r"[^a-z0 ]+")


def fuzzy_key(sentence: str) -> str:
    """What the reworded check compares: ``norm``, digits masked, and only letters left (punctuation, bullets and
    the spacing quirks of PDF text, such as "“ Company ”" or "•Our", read as spaces)."""
    return " ".join(_NOT_WORD.sub(" ", _DIGIT.sub("0", norm(sentence))).split())


class _WholeText:
    """Every paragraph of a whole filing (any section), normalised with digits masked, for ``_elsewhere``."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.paras, _ = paragraphs(doc.text, 0, len(doc.text))
        keys = [_masked(p.key) for p in self.paras]
        self.starts: list[int] = []
        pos = 0
        for k in keys:
            self.starts.append(pos)
            pos += len(k) + 1
        self.joined = "\n".join(keys)

    def find(self, sentence_key: str) -> int | None:
        """The paragraph holding the (normalised) sentence, digits masked, or None."""
        key = _masked(sentence_key)
        at = self.joined.find(key) if key else -1
        return None if at < 0 else bisect_right(self.starts, at) - 1

    @functools.cached_property
    def _repeats(self) -> frozenset[str]:
        """The sentences (normalised, digits masked) found in two or more paragraphs of this filing."""
        paragraphs_with = Counter(key for p in self.paras
                                  for key in {_masked(norm(self.doc.text[s:e])) for s, e in p.sentences})
        return frozenset(key for key, n in paragraphs_with.items() if n > 1)

    def repeated(self, sentence: str) -> bool:
        """A stock sentence ("This could harm our business ...") printed under several paragraphs of this filing:
        it says nothing about whether a paragraph is new, so the reworded check leaves it out of both counts."""
        return _masked(norm(sentence)) in self._repeats

    @functools.cached_property
    def _fuzzy(self) -> tuple[list[tuple[str, int]], dict[str, list[int]]]:
        """(fuzzy key, paragraph index) of every sentence, and word -> sentences for the words in at most
        ``REWORDED_WORD_MAX_DF`` of them (built on first use: most comparisons never need it)."""
        sents: list[tuple[str, int]] = []
        for k, p in enumerate(self.paras):
            for s, e in sentence_spans(self.doc.text, p.start, p.end):
                key = fuzzy_key(self.doc.text[s:e])
                if key:
                    sents.append((key, k))
        postings: dict[str, list[int]] = defaultdict(list)
        for i, (key, _) in enumerate(sents):
            for w in set(key.split()):
                postings[w].append(i)
        cap = max(1, int(REWORDED_WORD_MAX_DF * len(sents)))
        return sents, {w: ids for w, ids in postings.items() if len(ids) <= cap}

    def best(self, sentence: str) -> tuple[float, int] | None:
        """The closest sentence of this filing to ``sentence``: (token_set_ratio of the fuzzy keys, its paragraph),
        scored over the ``REWORDED_CANDIDATES`` sentences sharing most of its distinctive words; None when none
        shares one. ``token_set_ratio`` also scores a sentence found inside a longer one (merged into it) as a
        match."""
        sents, postings = self._fuzzy
        key = fuzzy_key(sentence)
        shared: dict[int, int] = defaultdict(int)
        for w in set(key.split()):
            for i in postings.get(w, ()):
                shared[i] += 1
        if not shared:
            return None
        top = sorted(shared, key=lambda i: (-shared[i], i))[:REWORDED_CANDIDATES]
        score, i = max((fuzz.token_set_ratio(key, sents[i][0]), -i) for i in top)
        return float(score), sents[-i][1]

    def reworded(self, text: str, spans: Sequence[tuple[int, int]]) -> tuple[int, float] | None:
        """When at least ``REWORDED_SHARE`` of the spans' characters are sentences reworded here (``best`` scoring
        ``REWORDED_MIN`` or more): the paragraph holding most of them and the character-weighted mean score / 100;
        else None."""
        total = sum(e - s for s, e in spans)
        by_para: dict[int, int] = defaultdict(int)
        weighted = 0.0
        for s, e in spans:
            hit = self.best(text[s:e])
            if hit is not None and hit[0] >= REWORDED_MIN:
                by_para[hit[1]] += e - s
                weighted += hit[0] * (e - s)
        found = sum(by_para.values())
        if not total or found < REWORDED_SHARE * total:
            return None
        k = max(by_para, key=lambda p: (by_para[p], -p))
        return k, round(weighted / found / 100.0, 4)

    def sentence_at(self, k: int, sentence_key: str) -> tuple[int, int] | None:
        """The span of paragraph ``k``'s sentence that reads as ``sentence_key`` with digits masked."""
        key = _masked(sentence_key)
        for s, e in self.paras[k].sentences:
            if _masked(norm(self.doc.text[s:e])) == key:
                return s, e
        return None


def _same(a: RawChange, b: RawChange) -> bool:
    return (a.kind == b.kind and a.old is not None and b.old is not None and a.new is not None and b.new is not None
            and (a.old.start, a.new.start) == (b.old.start, b.new.start))
