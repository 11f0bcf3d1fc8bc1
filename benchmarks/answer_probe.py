"""Answer correctness of the offline answer path over the golden set (issue 14 groundwork).

    python -m benchmarks.answer_probe --home /tmp/answer-home [--embedder product|hash] [--out PATH]

Opens (or builds, by ingesting the recorded 10-K / 10-Q filings of ``--corpus`` with the product pipeline) the store
at ``--home``, then for every golden question: ``EquiMindEngine.search`` with the question's tickers as the filter,
``Answerer.answer`` with the recorded XBRL companyfacts, and the judgement of
``equimind.evaluation.answer_probe``. Prints correct / wrong / refused per type and writes the rows and tallies to
``--out`` (default benchmarks/results/answer_probe.json) with machine info.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

from benchmarks.machine import machine_info
from equimind.core.config import Settings

RESULTS = Path(__file__).resolve().parent / "results" / "answer_probe.json"


def _services(home: Path, corpus: Path, embedder: str) -> Any:
    from equimind.app.services import open_services

    settings = Settings(home=home, snapshot=corpus)
    if embedder == "hash":
        from equimind.embedding.embed import HashEmbedder
        from equimind.embedding.rerank import FixedScoreReranker
        from equimind.ingest.tokens import WhitespaceTokenizer

        return open_services(settings, embedder=HashEmbedder(), tokenizer=WhitespaceTokenizer(),
                             reranker=FixedScoreReranker({}, unavailable="hash-embedder probe: no cross-encoder"))
    return open_services(settings)


def _ensure_ingested(services: Any, corpus: Path) -> None:
    from equimind.evaluation.golden import snapshot_documents

    if services.docstore.known_tickers():
        return
    t0 = time.perf_counter()
    report = services.pipeline().run(snapshot_documents(corpus))
    logging.info("ingested %d documents in %.0f s", report.documents_added, time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", type=Path, required=True, help="store home (built on first run)")
    ap.add_argument("--corpus", type=Path, default=Path("../shared/corpus"))
    ap.add_argument("--embedder", choices=("product", "hash"), default="product")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from equimind.answer.answerer import Answerer
    from equimind.app.engine import EquiMindEngine
    from equimind.evaluation.answer_probe import AS_OF, run_probe
    from equimind.evaluation.golden import load_golden, resolve
    from equimind.evaluation.report import write_json
    from equimind.query.parsed import QuestionParser
    from equimind.sources.market_snapshot import SnapshotSec

    services = _services(args.home, args.corpus, args.embedder)
    _ensure_ingested(services, args.corpus)
    docs = [services.docstore.get_document(r.doc_id) for r in services.docstore.list_documents()]
    questions = load_golden()
    spans = resolve([q for q in questions if not q.absent], docs)
    t0 = time.perf_counter()
    facts = SnapshotSec(args.corpus)
    parser = QuestionParser(services.docstore, ticker_map=facts.ticker_map,
                            entity_name=lambda t: facts.company_facts(t).entity_name)
    result = run_probe(EquiMindEngine(services), Answerer(services.docstore, facts), questions, spans, AS_OF,
                       parser=parser)
    seconds = round(time.perf_counter() - t0, 1)
    for qtype, t in result["by_type"].items():
        print(f"{qtype:16} n={t['n']:3} correct={t['correct']:3} wrong={t['wrong']:3} refused={t['refused']:3} "
              f"correct={t['correct_share']} CI95={t['correct_ci95']} gold_reached={t['gold_reached']}")
    for cause, n in result["misses_by_cause"].items():
        print(f"  miss  {cause}: {n}")
    write_json(args.out, {"benchmark": "answer_probe", "as_of": str(AS_OF), "embedder": args.embedder,
                          "seconds": seconds, "machine": machine_info(), **result})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
