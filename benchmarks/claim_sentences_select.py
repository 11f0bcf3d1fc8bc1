"""Draw the unlabelled candidate sentences for the claim-sentence label set (benchmarks/data/claim_sentences.jsonl).

    python -m benchmarks.claim_sentences_select --out /tmp/claim_candidates.jsonl [--shared ../shared]

Documents come through the repo's own ingest path: the 12 recorded 10-K / 10-Q filings of the 8 corpus tickers
(``evaluation.golden.snapshot_documents``) and one FinanceBench dev PDF each of 8 more companies (``LocalFileSource``
+ ``ingest.documents.to_document``). Sentences are split with ``lexicon.text.split_prose_sentences``; a candidate has
at least ``cues.MIN_CLAIM_WORDS`` words (the analyst's own floor), at most 120 words, and is mostly letters (not a
table row). Per company, with seed 32:

* half ("cue:<name>"): sentences of the whole document (Cover excluded) on which the current ``cues.sentence_cues``
  fires, drawn round-robin over the cue names that fire in that company's documents, so every cue is represented;
* half ("random"): a uniform sample of the remaining sentences of MD&A and risk-factor sections (the whole document
  but Cover when those sections hold under 20,000 characters, e.g. WFC's 10-K, which incorporates its MD&A by
  reference, and the JPMorgan 10-Q PDF whose headings the parser does not find).

The output is unlabelled; labels are added by hand (benchmarks/data/README-claims.md).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from equimind.core.documents import Document
from equimind.debate import cues as cue_rules
from equimind.lexicon.text import split_prose_sentences

REPO = Path(__file__).resolve().parent.parent
SEED = 32
FB_DOCS = ("3M_2022_10K", "AMERICANEXPRESS_2022_10K", "BESTBUY_2023_10K", "BOEING_2022_10K", "COCACOLA_2017_10K",
           "COSTCO_2021_10K", "JPMORGAN_2023Q2_10Q", "MICROSOFT_2023_10K")
FB_COMPANY = {"3M_2022_10K": "MMM", "AMERICANEXPRESS_2022_10K": "AXP", "BESTBUY_2023_10K": "BBY",
              "BOEING_2022_10K": "BA", "COCACOLA_2017_10K": "KO", "COSTCO_2021_10K": "COST",
              "JPMORGAN_2023Q2_10Q": "JPM", "MICROSOFT_2023_10K": "MSFT"}
MAX_WORDS = 120
MIN_FOCUS_CHARS = 20_000
_LETTERS = re.compile(r"[A-Za-z]")


def _section_of(doc: Document, pos: int) -> str:
    for s in doc.sections:
        if s.start <= pos < s.end:
            return s.name
    return ""


def _focus(section: str) -> bool:
    low = section.lower()
    return "risk factors" in low or "management’s discussion" in low or "management's discussion" in low


def _usable(text: str) -> bool:
    words = text.split()
    if not cue_rules.MIN_CLAIM_WORDS <= len(words) <= MAX_WORDS:
        return False
    return len(_LETTERS.findall(text)) >= 0.6 * len(text.replace(" ", ""))


def load_documents(shared: Path) -> Iterator[tuple[str, str, Document]]:
    """(company, doc label, Document) for the recorded filings and the chosen FinanceBench PDFs."""
    from equimind.evaluation.financebench import load_doc_meta
    from equimind.evaluation.golden import snapshot_documents
    from equimind.ingest.documents import to_document
    from equimind.sources.local import LocalFileSource

    for doc in snapshot_documents(shared / "corpus"):
        yield str(doc.ticker), f"{doc.ticker}-{doc.form}-{doc.filed_at}", doc
    fb = shared / "benchmarks" / "financebench"
    source = LocalFileSource([fb / "pdfs" / f"{n}.pdf" for n in FB_DOCS], metadata=load_doc_meta(fb))
    for path in source.files():
        yield FB_COMPANY[path.stem], f"financebench:{path.stem}", to_document(source.load(path))


def sentence_rows(company: str, label: str, doc: Document) -> list[dict[str, Any]]:
    focus_chars = sum(s.end - s.start for s in doc.sections if _focus(s.name))
    rows = []
    for s, e in split_prose_sentences(doc.text):
        text = " ".join(doc.text[s:e].split())
        section = _section_of(doc, s)
        if section == "Cover" or not _usable(text):
            continue
        fired, _ = cue_rules.sentence_cues(text)
        rows.append({"company": company, "doc_id": label, "section": section, "text": text,
                     "cues": [c.name for c in fired],
                     "focus": _focus(section) if focus_chars >= MIN_FOCUS_CHARS else True})
    return rows


def select(rows: list[dict[str, Any]], per_company: int, seed: int = SEED) -> list[dict[str, Any]]:
    by_company: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_company[r["company"]].append(r)
    out: list[dict[str, Any]] = []
    for company in sorted(by_company):
        rng = random.Random(f"{seed}:{company}")
        seen: set[str] = set()
        pool = []
        for r in by_company[company]:  # first occurrence of each text (10-K and 10-Q repeat sentences)
            key = r["text"].lower()
            if key not in seen:
                seen.add(key)
                pool.append(r)
        by_cue: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in pool:
            for name in r["cues"]:
                by_cue[name].append(r)
        for name in by_cue:
            rng.shuffle(by_cue[name])
        n_cue = per_company // 2
        chosen: list[dict[str, Any]] = []
        taken: set[str] = set()
        names = sorted(by_cue)
        while len(chosen) < n_cue and any(by_cue[n] for n in names):
            for name in names:
                while by_cue[name] and by_cue[name][-1]["text"] in taken:
                    by_cue[name].pop()
                if by_cue[name] and len(chosen) < n_cue:
                    r = by_cue[name].pop()
                    taken.add(r["text"])
                    chosen.append({**r, "selected_by": f"cue:{name}"})
        rest = [r for r in pool if r["focus"] and r["text"] not in taken]
        for r in rng.sample(rest, min(per_company - len(chosen), len(rest))):
            chosen.append({**r, "selected_by": "random"})
        out.extend(chosen)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--per-company", type=int, default=40)
    args = ap.parse_args(argv)
    rows: list[dict[str, Any]] = []
    for company, label, doc in load_documents(args.shared):
        rows.extend(sentence_rows(company, label, doc))
    picked = select(rows, args.per_company)
    with args.out.open("w", encoding="utf-8") as fh:
        for i, r in enumerate(picked, 1):
            fh.write(json.dumps({"id": f"cs{i:04d}", "company": r["company"], "doc_id": r["doc_id"],
                                 "section": r["section"], "text": r["text"], "selected_by": r["selected_by"],
                                 "cues_at_selection": r["cues"]}, ensure_ascii=False) + "\n")
    print(f"{len(picked)} candidates from {len({r['company'] for r in picked})} companies -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
