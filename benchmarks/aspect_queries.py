"""The per-aspect query words of the research's targeted aspect search, derived from the labelled sentences and chosen
leave-company-out (issue 32: "the critic's fetch asks for what is missing").

    python -m benchmarks.aspect_queries [--out benchmarks/results/aspect_queries.json] [--cache DIR]
    python -m benchmarks.aspect_queries --words-only [--words-out equimind/lexicon/data/aspect_queries.json]

Data: benchmarks/data/claim_sentences.jsonl (640 hand-labelled sentences, 16 companies; README-claims.md). A debate
aspect's words are the top ``k`` words of its sentences against every other sentence by the log-odds ratio with an
informative Dirichlet prior (Monroe, Colaresi & Quinn 2008, "Fightin' Words", the z-score; prior = the whole labelled
set's word frequencies, ``ALPHA0`` pseudo-counts, fixed). Words are lower-case letter runs of 3+ letters counted once
per sentence, minus bm25s' English stop list (the product's BM25 leg removes the same words, ``store/sparse.py``); a
word must occur in the aspect's sentences of ``MIN_COMPANIES`` companies (a word of one company is its vocabulary, not
the aspect's). Both constants are fixed a priori, not fitted. Two things are chosen, from ``K_GRID`` and
``POSITIVES``: ``k`` and which of the aspect's sentences count (its bull / bear "claims", or "all" of them).

Evaluation, leave-company-out: for each held company the words are built from the other 15; each document the held
company's labels were drawn from (the recorded 10-K / 10-Q, or the FinanceBench PDF) is parsed and chunked by the
product's ingest path (``ingest.documents``, ``ingest.chunk``: ~800-token parents, ~200-token children), its children
BM25-ranked (bm25s, the product's tokenisation) for the aspect's query, and the top ``PASSAGES`` distinct parents
taken, as the research's aspect search adds them. Scored per (held company, aspect) pair with at least one labelled
bull / bear sentence of the aspect at that company: a **hit** when a taken parent contains one of them. Baseline: the
aspect's name as the query ("regulation and legal", "capital return"). A second, label-free figure: a **cue hit** when
a taken parent holds a sentence the offline analyst's cues argue with one of the aspect's themes (what a claim needs).
This is the BM25 leg alone, a proxy for the product's hybrid + rerank search (which adds the dense leg).

The (k, positives) with the best leave-company-out hit rate (ties to the smaller k, then "claims") is the choice; the
nested figure (the choice made again inside each fold from the other 15 companies' leave-company-out, then scored on
the held company) is the honest estimate of the whole procedure. ``--words-only`` rebuilds the shipped word lists from
all 16 companies with the choice recorded in the results file (no documents read; what the test re-runs).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_info
from equimind.debate import cues as cue_rules
from equimind.debate.claim_model import LabelledSentence, load_labels
from equimind.debate.required import ASPECT_THEMES

REPO = Path(__file__).resolve().parent.parent
LABELS = REPO / "benchmarks" / "data" / "claim_sentences.jsonl"
RESULTS = REPO / "benchmarks" / "results" / "aspect_queries.json"
WORDS = REPO / "equimind" / "lexicon" / "data" / "aspect_queries.json"
COMMAND = "python -m benchmarks.aspect_queries"
# debate aspect (equimind/debate/required.py) -> its label in claim_sentences.jsonl
LABEL_OF = {"growth": "growth", "margins": "margins", "valuation": "valuation", "balance sheet": "balance_sheet",
            "capital return": "capital_return", "concentration": "concentration",
            "regulation and legal": "regulation_legal", "supply": "supply", "competition": "competition",
            "guidance": "guidance", "macro": "macro"}
K_GRID = (3, 5, 8, 12, 20, 30)
POSITIVES = ("claims", "all")
ALPHA0 = 100.0
MIN_COMPANIES = 2
PASSAGES = 2  # parents one aspect search adds (equimind/research/aspects.py reads it from the word-list file)
CLAIM_SIDES = ("bull", "bear")
_WORD = re.compile(r"[a-z]{3,}")


def _stop() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


def sentence_words(text: str, stop: frozenset[str]) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in stop}


def log_odds(rows: Sequence[LabelledSentence], label: str, positives: str,
             stop: frozenset[str]) -> list[tuple[str, float]]:
    """(word, z) of the aspect's sentences against the rest, best first (ties by word); only words of
    MIN_COMPANIES companies' positive sentences."""
    pos = [r for r in rows if r.aspect == label and (positives == "all" or r.side in CLAIM_SIDES)]
    pos_ids = {r.id for r in pos}
    rest = [r for r in rows if r.id not in pos_ids]
    if not pos:
        return []
    words = {r.id: sentence_words(r.text, stop) for r in rows}
    y_a = Counter(w for r in pos for w in words[r.id])
    y_b = Counter(w for r in rest for w in words[r.id])
    companies: dict[str, set[str]] = defaultdict(set)
    for r in pos:
        for w in words[r.id]:
            companies[w].add(r.company)
    total = Counter(w for r in rows for w in words[r.id])
    n_all = sum(total.values())
    n_a, n_b = sum(y_a.values()), sum(y_b.values())
    out = []
    for w, n in y_a.items():
        if len(companies[w]) < MIN_COMPANIES:
            continue
        alpha = ALPHA0 * total[w] / n_all
        delta = (math.log((n + alpha) / (n_a + ALPHA0 - n - alpha))
                 - math.log((y_b[w] + alpha) / (n_b + ALPHA0 - y_b[w] - alpha)))
        z = delta / math.sqrt(1.0 / (n + alpha) + 1.0 / (y_b[w] + alpha))
        out.append((w, z))
    return sorted(out, key=lambda wz: (-wz[1], wz[0]))


def word_lists(rows: Sequence[LabelledSentence], k: int, positives: str) -> dict[str, list[str]]:
    """Debate aspect -> its top-k words with a positive z (fewer when fewer qualify; [] when none do)."""
    stop = _stop()
    return {aspect: [w for w, z in log_odds(rows, label, positives, stop)[:k] if z > 0]
            for aspect, label in LABEL_OF.items()}


# ---- the documents the labels were drawn from, chunked as the product chunks them ------------------------------

Passages = list[tuple[str, str]]  # (parent id, parent text) in document order
Children = list[tuple[str, str]]  # (parent id, child text)


def load_passages(shared: Path, doc_ids: set[str], cache: Path | None) -> dict[str, tuple[Passages, Children]]:
    """doc label -> (parents, children) of every labelled document; cached as JSON under ``cache`` when given."""
    if cache is not None and (cache / "passages.json").is_file():
        raw = json.loads((cache / "passages.json").read_text(encoding="utf-8"))
        return {k: ([tuple(p) for p in v[0]], [tuple(c) for c in v[1]]) for k, v in raw.items()}  # type: ignore[misc]
    from benchmarks.claim_sentences_select import load_documents
    from equimind.ingest.chunk import ParentChildChunker
    from equimind.ingest.tokens import HFTokenizer

    chunker = ParentChildChunker(HFTokenizer.from_model_dir())
    out: dict[str, tuple[Passages, Children]] = {}
    for _company, label, doc in load_documents(shared):
        if label not in doc_ids:
            continue
        parents, children = chunker.chunk(doc)
        out[label] = ([(p.id, doc.text[p.start:p.end]) for p in parents], [(c.parent_id, c.text) for c in children])
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        (cache / "passages.json").write_text(json.dumps(out), encoding="utf-8")
    return out


class CompanyIndex:
    """BM25 over one company's children (the product's tokenisation); a query's top distinct parents."""

    def __init__(self, passages: Passages, children: Children) -> None:
        import bm25s

        from equimind.store.sparse import STOPWORDS, _stemmer, tokenize

        self.text = dict(passages)
        self.parent_of = [p for p, _ in children]
        self._stemmer = _stemmer()
        self._bm25 = bm25s.BM25(k1=1.5, b=0.75)
        self._bm25.index(tokenize([t for _, t in children], self._stemmer), show_progress=False)
        self._stop = STOPWORDS
        self._tokenize = tokenize
        self._cache: dict[str, list[str]] = {}

    def top(self, query: str, n: int) -> list[str]:
        if query not in self._cache:
            tokens = self._tokenize([query], self._stemmer)
            if not tokens[0]:
                self._cache[query] = []
            else:
                docs, _ = self._bm25.retrieve(tokens, k=min(50, len(self.parent_of)), show_progress=False)
                order = list(dict.fromkeys(self.parent_of[int(i)] for i in docs[0]))
                self._cache[query] = order
        return self._cache[query][:n]


def _norm(text: str) -> str:
    return " ".join(text.split())


def cue_aspects(text: str) -> set[str]:
    """The debate aspects the offline analyst's cues argue in some sentence of ``text``."""
    from equimind.lexicon.text import split_prose_sentences

    out: set[str] = set()
    for s, e in split_prose_sentences(text):
        sentence = text[s:e]
        if len(sentence.split()) < cue_rules.MIN_CLAIM_WORDS:
            continue
        for cue in cue_rules.sentence_cues(sentence)[0]:
            out.update(a for a, themes in ASPECT_THEMES if cue.theme.value in themes)
    return out


# ---- leave-company-out evaluation ---------------------------------------------------------------------------------

class Scorer:
    """Hits of a query for (company, aspect), over the company's documents."""

    def __init__(self, rows: Sequence[LabelledSentence], indexes: dict[str, CompanyIndex]) -> None:
        self.indexes = indexes
        self.claims: dict[tuple[str, str], list[str]] = defaultdict(list)
        for r in rows:
            if r.side in CLAIM_SIDES:
                self.claims[(r.company, r.aspect)].append(_norm(r.text))
        self._cues: dict[str, set[str]] = {}
        self.cue_aspects = {a for a, themes in ASPECT_THEMES
                            if any(c.theme.value in themes for c in cue_rules.TEXT_CUES)}

    def pairs(self, company: str) -> list[str]:
        """The aspects the company has labelled bull / bear sentences of (the labelled hit's denominator)."""
        return [a for a, label in LABEL_OF.items() if self.claims.get((company, label))]

    def hit(self, company: str, aspect: str, query: str) -> bool:
        index = self.indexes[company]
        wanted = self.claims[(company, LABEL_OF[aspect])]
        return any(any(s in _norm(index.text[p]) for s in wanted) for p in index.top(query, PASSAGES)) if query \
            else False

    def cue_hit(self, company: str, aspect: str, query: str) -> bool:
        index = self.indexes[company]
        for p in index.top(query, PASSAGES) if query else []:
            if p not in self._cues:
                self._cues[p] = cue_aspects(index.text[p])
            if aspect in self._cues[p]:
                return True
        return False


def _query(words: Sequence[str]) -> str:
    return " ".join(words)


def baseline_query(aspect: str) -> str:
    return aspect


class Folds:
    """Word lists per (companies left out, positives), truncated per k: each log-odds table is computed once."""

    def __init__(self, rows: Sequence[LabelledSentence]) -> None:
        self.rows = rows
        self.stop = _stop()
        self._tables: dict[tuple[frozenset[str], str], dict[str, list[tuple[str, float]]]] = {}

    def words(self, out: Iterable[str], k: int, positives: str) -> dict[str, list[str]]:
        key = (frozenset(out), positives)
        if key not in self._tables:
            train = [r for r in self.rows if r.company not in key[0]]
            self._tables[key] = {a: log_odds(train, label, positives, self.stop) for a, label in LABEL_OF.items()}
        return {a: [w for w, z in t[:k] if z > 0] for a, t in self._tables[key].items()}


def lco_hits(folds: Folds, scorer: Scorer, companies: Sequence[str], k: int, positives: str,
             out_extra: frozenset[str] = frozenset()) -> list[tuple[str, str, bool]]:
    """(company, aspect, hit) of every labelled pair, each company held out in turn (and ``out_extra`` left out of
    every training set: the outer fold's company in the nested estimate)."""
    res = []
    for c in companies:
        words = folds.words({c, *out_extra}, k, positives)
        for a in scorer.pairs(c):
            res.append((c, a, scorer.hit(c, a, _query(words[a]))))
    return res


def _rate(hits: Sequence[bool]) -> dict[str, Any]:
    return {"hits": sum(hits), "n": len(hits), "rate": round(sum(hits) / len(hits), 4) if hits else None}


def choose(folds: Folds, scorer: Scorer, companies: Sequence[str],
           out_extra: frozenset[str] = frozenset()) -> tuple[tuple[int, str], dict[str, Any]]:
    grid: dict[str, Any] = {}
    best: tuple[float, int, int] | None = None
    choice = (K_GRID[0], POSITIVES[0])
    for pi, positives in enumerate(POSITIVES):
        for k in K_GRID:
            hits = [h for _, _, h in lco_hits(folds, scorer, companies, k, positives, out_extra)]
            grid[f"k={k},{positives}"] = _rate(hits)
            key = (-sum(hits) / max(1, len(hits)), k, pi)
            if best is None or key < best:
                best, choice = key, (k, positives)
    return choice, grid


def evaluate(rows: Sequence[LabelledSentence], indexes: dict[str, CompanyIndex]) -> dict[str, Any]:
    folds, scorer = Folds(rows), Scorer(rows, indexes)
    companies = sorted(indexes)
    (k, positives), grid = choose(folds, scorer, companies)
    chosen = lco_hits(folds, scorer, companies, k, positives)
    nested: list[tuple[str, str, bool]] = []
    nested_choices = {}
    for c in companies:
        inner = [x for x in companies if x != c]
        (ki, pi), _ = choose(folds, scorer, inner, frozenset({c}))
        nested_choices[c] = f"k={ki},{pi}"
        words = folds.words({c}, ki, pi)
        nested += [(c, a, scorer.hit(c, a, _query(words[a]))) for a in scorer.pairs(c)]
    base = [(c, a, scorer.hit(c, a, baseline_query(a))) for c in companies for a in scorer.pairs(c)]
    per_aspect: dict[str, Any] = {}
    for a in LABEL_OF:
        rows_a = {"baseline": [h for _, x, h in base if x == a], "lco": [h for _, x, h in chosen if x == a],
                  "nested": [h for _, x, h in nested if x == a]}
        per_aspect[a] = {name: _rate(v) for name, v in rows_a.items()}
    cue = {}
    for a in sorted(scorer.cue_aspects, key=list(LABEL_OF).index):
        b = [scorer.cue_hit(c, a, baseline_query(a)) for c in companies]
        q = [scorer.cue_hit(c, a, _query(folds.words({c}, k, positives)[a])) for c in companies]
        cue[a] = {"baseline": _rate(b), "lco": _rate(q)}
    return {"choice": {"k": k, "positives": positives}, "grid": grid,
            "overall": {"baseline": _rate([h for *_, h in base]), "lco": _rate([h for *_, h in chosen]),
                        "nested": _rate([h for *_, h in nested])},
            "per_aspect": per_aspect, "cue_hit": cue, "nested_choices": nested_choices,
            "folds": {c: {"words": folds.words({c}, k, positives)} for c in companies}}


# ---- the shipped word lists ------------------------------------------------------------------------------------

def shipped(rows: Sequence[LabelledSentence], k: int, positives: str, labels: Path) -> dict[str, Any]:
    """The runtime's file: the word lists from all companies, and how they were made."""
    return {"format": 1,
            "provenance": {
                "command": f"{COMMAND} (evaluation and choice), then {COMMAND} --words-only (this file)",
                "labels": str(labels.relative_to(REPO) if labels.is_relative_to(REPO) else labels),
                "rows": len(rows), "companies": len({r.company for r in rows}),
                "method": ("top-k words of the aspect's labelled sentences against all other sentences by the "
                           "log-odds ratio with an informative Dirichlet prior (Monroe et al. 2008, z-score); "
                           "3+ letter words once per sentence, bm25s English stop list removed, a word in the "
                           f"aspect's sentences of at least {MIN_COMPANIES} companies, prior pseudo-count "
                           f"{ALPHA0:g}"),
                "chosen_by": "leave-company-out hit rate (benchmarks/results/aspect_queries.json)",
                "k": k, "positives": positives},
            "passages": PASSAGES,
            "aspects": word_lists(rows, k, positives)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--words-out", type=Path, default=WORDS)
    ap.add_argument("--words-only", action="store_true", help="rebuild the word lists with the recorded choice")
    ap.add_argument("--cache", type=Path, default=None, help="keep the chunked documents here between runs")
    ap.add_argument("--shared", type=Path, default=Path(os.environ.get("EQUIMIND_SHARED", str(REPO.parent / "shared"))))
    args = ap.parse_args(argv)
    rows = load_labels(args.labels)
    if args.words_only:
        choice = json.loads(args.out.read_text(encoding="utf-8"))["choice"]
    else:
        t0 = time.perf_counter()
        docs = load_passages(args.shared, {r.doc_id for r in rows}, args.cache)
        by_company: dict[str, tuple[Passages, Children]] = {}
        for company in sorted({r.company for r in rows}):
            labels = sorted({r.doc_id for r in rows if r.company == company})
            by_company[company] = ([x for d in labels for x in docs[d][0]], [x for d in labels for x in docs[d][1]])
        t_docs = time.perf_counter() - t0
        t1 = time.perf_counter()
        res = evaluate(rows, {c: CompanyIndex(*pc) for c, pc in by_company.items()})
        out = {"config": {"labels": str(args.labels.relative_to(REPO)), "k_grid": list(K_GRID),
                          "positives": list(POSITIVES), "alpha0": ALPHA0, "min_companies": MIN_COMPANIES,
                          "passages": PASSAGES, "retrieval": "BM25 over children (bm25s, product tokenisation)"},
               "timing_s": {"documents": round(t_docs, 1), "evaluation": round(time.perf_counter() - t1, 1)},
               "machine": machine_info(), **res}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
        print_table(res)
        choice = res["choice"]
    args.words_out.parent.mkdir(parents=True, exist_ok=True)
    args.words_out.write_text(json.dumps(shipped(rows, choice["k"], choice["positives"], args.labels), indent=1)
                              + "\n", encoding="utf-8")
    print(f"word lists (k={choice['k']}, {choice['positives']}) -> {args.words_out}")
    return 0


def print_table(res: dict[str, Any]) -> None:
    def f(m: dict[str, Any]) -> str:
        return f"{m['hits']:>3}/{m['n']:<3} {m['rate'] if m['rate'] is not None else '-':>6}"

    print(f"choice: k={res['choice']['k']}, positives={res['choice']['positives']}  (nested per fold: "
          f"{sorted(Counter(res['nested_choices'].values()).items())})")
    print(f"{'aspect':22} {'baseline (name)':>16} {'LCO words':>16} {'nested':>16}   cue hit: baseline / words")
    for a, m in res["per_aspect"].items():
        cue = res["cue_hit"].get(a)
        tail = f"   {f(cue['baseline'])} / {f(cue['lco'])}" if cue else ""
        print(f"{a:22} {f(m['baseline']):>16} {f(m['lco']):>16} {f(m['nested']):>16}{tail}")
    o = res["overall"]
    print(f"{'all pairs':22} {f(o['baseline']):>16} {f(o['lco']):>16} {f(o['nested']):>16}")


if __name__ == "__main__":
    raise SystemExit(main())
