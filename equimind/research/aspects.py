"""The aspect search: for every debate aspect the evidence the debate reads argues nothing on, one targeted search
of the ticker's stored filings (issue 32: "the critic's fetch asks for what is missing").

After compression, the offline analyst drafts its claims over the kept passages and figures
(``DebateEngine.argued_themes``); an aspect of ``debate.required.ASPECT_THEMES`` whose themes no claim argues is
missing. An aspect is searched when a text rule can argue it (a cue of ``debate.cues.TEXT_CUES`` has one of its
themes: valuation and the balance sheet are argued from figures alone) and it has query words
(``lexicon.aspect_queries``: derived from the labelled sentences, chosen leave-company-out). The search is the run's
own (hybrid + rerank) with the loop's filter (the ticker, as-of) narrowed to 10-K / 10-Q filings; the best
``passages`` parent passages not read yet are added to what the debate reads. Each search is an event and a record
in ``agentic_rag.aspect_searches``; the judge's "Aspects" line says what was searched for each aspect, so "no evidence
found" after a search means it was looked for. Same store, same evidence: same searches (deterministic).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from equimind.core.documents import FilterSpec
from equimind.core.search import EvidenceNode, SearchResult
from equimind.core.timeguard import as_of_filter, filter_dated
from equimind.debate.cues import TEXT_CUES
from equimind.debate.required import ASPECT_THEMES
from equimind.ingest.first_answer import CAPABILITY as DEFERRED
from equimind.lexicon.aspect_queries import AspectQueries
from equimind.research.events import Emitter, ResearchStage
from equimind.research.loop import SearchFn, evidence_node
from equimind.research.state import RunState, merge_filters

FILINGS = ("10-K", "10-Q")
_CUE_THEMES = frozenset(c.theme.value for c in TEXT_CUES)
TEXT_ARGUED = tuple(a for a, themes in ASPECT_THEMES if themes & _CUE_THEMES)  # aspects a text rule can argue


@dataclass(frozen=True)
class AspectSearch:
    """One aspect's search: the query, its hits, the passages it added (or why nothing was searched)."""

    aspect: str
    query: str | None
    hits: int = 0
    added: tuple[str, ...] = ()  # parent passage ids
    note: str = ""

    def said(self) -> str:
        """What the judge's "Aspects" line says of it."""
        if self.query is None:
            return f"not searched: {self.note}"
        return f"searched: '{self.query}', {len(self.added)} passage(s) added"

    def to_log(self) -> dict[str, Any]:
        return {"aspect": self.aspect, "query": self.query, "hits": self.hits, "added": list(self.added),
                "note": self.note}


class AspectSearcher:
    """Not reusable: one per research run (it records into the run's state)."""

    def __init__(self, *, search: SearchFn, base_filter: FilterSpec, as_of: date, queries: AspectQueries,
                 state: RunState, emit: Emitter, doc_sha: Callable[[str], str]) -> None:
        self._search, self._base, self.as_of, self.queries = search, base_filter, as_of, queries
        self.state, self.emit, self._doc_sha = state, emit, doc_sha

    def run(self, missing: Sequence[str], read: Sequence[EvidenceNode]) -> list[EvidenceNode]:
        """Search every missing aspect a text rule can argue; the passages to add to ``read`` (new ones only)."""
        t0 = time.perf_counter()
        seen = {n.id for n in read}
        added: list[EvidenceNode] = []
        for aspect in (a for a in TEXT_ARGUED if a in missing):
            record, nodes = self._one(aspect, seen)
            seen.update(n.id for n in nodes)
            added += nodes
            self.state.aspect_searches.append(record)
            self.emit(ResearchStage.SEARCH, f"aspect search, {aspect} (no claim in the {len(read)} passages read): "
                      + record.said(), None, **record.to_log())
        for aspect in (a for a in missing if a not in TEXT_ARGUED):
            self.state.aspect_searches.append(AspectSearch(aspect, None, note="only figure rules argue it"))
        self.state.time("aspect_search", t0)
        return added

    def _one(self, aspect: str, seen: set[str]) -> tuple[AspectSearch, list[EvidenceNode]]:
        query = self.queries.query(aspect)
        if query is None:
            return AspectSearch(aspect, None, note="too few labelled sentences to derive its query words"), []
        flt = as_of_filter(merge_filters(self._base, FilterSpec(forms=FILINGS)), self.as_of)
        result: SearchResult = self._search(query, flt, None)
        self.state.degraded.extend(d for d in result.degraded if d.capability != DEFERRED)
        nodes: dict[str, EvidenceNode] = {}
        for hit in result.hits:
            if hit.parent_id not in seen and hit.parent_id not in nodes:
                nodes[hit.parent_id] = evidence_node(hit, query, self._doc_sha)
        kept = filter_dated(list(nodes.values()), self.as_of)[:self.queries.passages]
        return AspectSearch(aspect, query, len(result.hits), tuple(n.id for n in kept)), kept
