"""First-answer indexing (issue 16.3): which chunks of a document fetched by a research or ask run are embedded before
the answer, and which wait until after it.

Embedding is the one cost of a first run on a new ticker that grows with the filing (~800 chunks of a 10-K and a 10-Q
plus two years of market documents for NVDA; ~15 texts/s on 2 cores). The run's critic judges four aspects, and each
is served by known parts of the documents (``analytics/aspects.py``): MD&A and the financial statements
(fundamentals), the risk-factor and market-risk items (risks), recent prices and reported figures (valuation and
recent events). So a fetched document is embedded now when it is small, and otherwise only in those parts:

- a filing with at least ``MIN_DEFER_CHUNKS`` children: the children whose section names one of
  ``FIRST_SECTIONS``; the other items (business, properties, legal, exhibits, governance, ...) are deferred;
- market documents (monthly daily-price tables, per-filing XBRL facts): those dated within ``MARKET_DAYS`` of the as-of
  date (the critic's recent window); older ones are deferred. The run's figures (growth, multiples, technicals) are
  computed from the data itself, not retrieved, and these tables are found by BM25 (whose top hits the dense leg
  scores on the fly), so embedding two years of monthly tables first only delays the answer;
- anything else (8-Ks, news, a filing without sections such as a PDF): all of it.

Deferred chunks are stored and searchable by BM25 at once (the searcher embeds BM25's top 10 of them on the fly, so
they fuse on equal terms); the dense leg sees all of them once they are embedded, which
happens after the answer (``EquiMindEngine.finish_indexing``) or at the start of the next run on the ticker, or with
``equimind complete``. A search whose scope holds deferred chunks says so in ``degraded``. The as-of rule is untouched
(deferral never changes which documents are stored), and so is idempotency (chunk ids are content hashes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from equimind.core.documents import Chunk, Document
from equimind.lexicon.aspects import RECENT_WINDOW_DAYS

CAPABILITY = "embeddings"  # the degraded line's capability (a search's, and a run's)
MIN_DEFER_CHUNKS = 60
MARKET_DAYS = RECENT_WINDOW_DAYS  # the critic's recent window (120 days)
MARKET_FORMS = frozenset({"prices", "fundamentals"})
FIRST_SECTIONS: tuple[str, ...] = (
    # fundamentals
    "item 7.", "item 8.", "management's discussion", "management’s discussion", "financial statements",
    "results of operations",
    # risks
    "item 1a.", "risk factors", "item 7a.", "market risk",
)


@dataclass(frozen=True)
class FirstAnswerRule:
    """``ingest.pipeline.DeferRule`` for a run at ``as_of`` (see the module docstring)."""

    as_of: date

    def embed_now(self, doc: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
        if doc.form in MARKET_FORMS:
            recent = doc.filed_at is None or (self.as_of - doc.filed_at).days <= MARKET_DAYS
            return list(chunks) if recent else []
        if len(chunks) < MIN_DEFER_CHUNKS or not any(c.section for c in chunks):
            return list(chunks)
        return [c for c in chunks if c.section and any(p in c.section.lower() for p in FIRST_SECTIONS)]


def search_note(without: int, total: int) -> str:
    """A search's degraded reason when its scope holds chunks without a vector yet."""
    return (f"{without} of {total} passages in this search's scope are not embedded yet (first-answer indexing "
            "deferred them: BM25 searches them and the dense leg scores only BM25's top 10 of them) — they are "
            "embedded after the answer, or run `equimind complete`")


def run_note(ticker: str, deferred: int) -> str:
    """A research or ask result's degraded reason (one line, however many searches saw the deferred chunks)."""
    return (f"first-answer indexing: {deferred} passages of the {ticker} documents fetched for this answer were "
            "searched by BM25 only (not embedded yet) — they are embedded right after it, so the next run reads the "
            "whole filing; `equimind complete` does it now")
