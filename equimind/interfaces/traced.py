"""The results the MCP tools and the REST API return, each with the ``trace`` of ``equimind.security.trace``.

Each class is its domain model plus one field, ``trace``; ``security.trace.traced(cls, result, trace)`` builds one
from a result without re-validating it. The domain models themselves stay trace-free (a Recommendation stored in
memory is the same whichever interface asked for it).
"""

from __future__ import annotations

from equimind.analytics.market import MarketReport
from equimind.analytics.price_series import PriceSeries
from equimind.answer.record import Answer
from equimind.app.engine import Health, Passage
from equimind.backtest.models import BacktestReport
from equimind.changes.model import ChangeReport
from equimind.core.research import Recommendation
from equimind.core.search import SearchResult
from equimind.interfaces.api.models import CitationCheckOut
from equimind.memory.records import LedgerHistory, MemorySnapshot
from equimind.security.trace import Trace


class TracedSearchResult(SearchResult):
    trace: Trace


class TracedPassage(Passage):
    trace: Trace


class TracedCitationCheck(CitationCheckOut):
    trace: Trace


class TracedMarketReport(MarketReport):
    trace: Trace


class TracedPriceSeries(PriceSeries):
    trace: Trace


class TracedRecommendation(Recommendation):
    trace: Trace


class TracedAnswer(Answer):
    trace: Trace


class TracedMemory(MemorySnapshot):
    trace: Trace


class TracedLedger(LedgerHistory):
    trace: Trace


class TracedChangeReport(ChangeReport):
    trace: Trace


class TracedHealth(Health):
    trace: Trace


class TracedBacktestReport(BacktestReport):
    trace: Trace
