"""The as-of rule: nothing dated after the cutoff passes; items keep their own dates."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pandas as pd
import pytest

from equimind.core.documents import Chunk, FilterSpec, Source
from equimind.core.errors import ConfigError, EquiMindError
from equimind.core.research import Figure
from equimind.core.search import EvidenceNode
from equimind.core.timeguard import (
    LookAheadError,
    Undated,
    as_of_filter,
    assert_bars_not_after,
    assert_not_after,
    filter_bars,
    filter_dated,
    filter_nodes,
    int_to_date,
    item_date,
    to_date,
)

AS_OF = date(2024, 6, 30)


def node(nid: str, filed: date | None) -> EvidenceNode:
    return EvidenceNode(id=nid, doc_id="d-" + nid, start=0, end=4, text="text", ticker="NVDA", company=None,
                        source=Source.SEC_EDGAR, form="10-Q", filed_at=filed, section=None, score=1.0,
                        doc_sha256="x")


def test_as_of_filter_caps_until_and_keeps_other_fields() -> None:
    flt = FilterSpec(tickers=("NVDA",), since=date(2024, 1, 1), until=date(2024, 12, 31), forms=("10-Q",))
    out = as_of_filter(flt, AS_OF)
    assert out.until == AS_OF
    assert (out.tickers, out.since, out.forms) == (("NVDA",), date(2024, 1, 1), ("10-Q",))
    assert as_of_filter(FilterSpec(until=date(2024, 3, 1)), AS_OF).until == date(2024, 3, 1)  # min keeps earlier
    assert as_of_filter(None, AS_OF) == FilterSpec(until=AS_OF)
    assert as_of_filter(flt, None) is flt


def test_as_of_filter_rejects_window_after_cutoff() -> None:
    with pytest.raises(ConfigError, match="after as-of"):
        as_of_filter(FilterSpec(since=date(2024, 7, 1)), AS_OF)


def test_planted_future_nodes_never_pass() -> None:
    nodes = [node("past", date(2024, 5, 1)), node("cutoff", AS_OF), node("future", date(2024, 7, 1)),
             node("undated", None)]
    kept = filter_nodes(nodes, AS_OF)
    assert [n.id for n in kept] == ["past", "cutoff", "undated"]
    assert [n.id for n in filter_nodes(nodes, AS_OF, Undated.DROP)] == ["past", "cutoff"]
    assert kept[0].filed_at == date(2024, 5, 1)  # nothing is re-stamped with the cutoff
    assert len(filter_nodes(nodes, None)) == 4


def test_assert_not_after_names_offenders() -> None:
    assert_not_after([node("ok", AS_OF)], AS_OF)
    with pytest.raises(LookAheadError, match="1 item") as exc:
        assert_not_after([node("ok", AS_OF), node("late", date(2024, 7, 1))], AS_OF)
    assert isinstance(exc.value, EquiMindError)
    assert "2024-07-01" in str(exc.value)
    with pytest.raises(LookAheadError):
        assert_not_after([node("undated", None)], AS_OF, Undated.DROP)


def test_item_date_reads_every_dated_record() -> None:
    chunk = Chunk(id="c", doc_id="d", parent_id="p", start=0, end=1, parent_start=0, parent_end=1, section=None,
                  text="t", ticker="T", source=Source.SEC_EDGAR, form="10-K", filed_at=20240701)
    fig = Figure(id="f", name="rsi", value=50.0, unit="", as_of=date(2024, 7, 2), formula="rsi14")
    assert item_date(chunk) == date(2024, 7, 1)
    assert item_date(fig) == date(2024, 7, 2)
    assert filter_dated([chunk, fig, date(2024, 1, 1), "2024-06-30"], AS_OF) == [date(2024, 1, 1), "2024-06-30"]
    assert int_to_date(0) is None
    assert to_date(datetime(2024, 6, 30, 23, 59)) == AS_OF
    with pytest.raises(TypeError):
        item_date(object())


def test_filter_bars_with_mixed_utc_offsets_keeps_local_dates() -> None:
    df = pd.DataFrame({"Date": ["2024-06-28 00:00:00-04:00", "2024-06-30 00:00:00-04:00",
                                "2024-07-01 00:00:00-04:00", "2024-12-02 00:00:00-05:00"],
                       "Close": [1.0, 2.0, 3.0, 4.0]})
    out = filter_bars(df, AS_OF)
    assert out["Close"].tolist() == [1.0, 2.0]
    assert len(df) == 4  # the input is untouched
    assert_bars_not_after(out, AS_OF)
    with pytest.raises(LookAheadError, match="2 price bar"):
        assert_bars_not_after(df, AS_OF)


def test_filter_bars_on_datetime_index() -> None:
    idx = pd.DatetimeIndex(["2024-06-29", "2024-06-30", "2024-07-01"]).tz_localize("America/New_York")
    df = pd.DataFrame({"Close": [1.0, 2.0, 3.0]}, index=idx)
    assert filter_bars(df, AS_OF)["Close"].tolist() == [1.0, 2.0]


def test_filter_bars_on_recorded_prices(corpus_dir: Path) -> None:
    df = pd.read_csv(corpus_dir / "prices" / "NVDA.csv")
    out = filter_bars(df, date(2024, 6, 10))
    assert out["Date"].iloc[-1].startswith("2024-06-10")  # the split day itself passes
    assert len(out) < len(df)
    assert all(d[:10] <= "2024-06-10" for d in out["Date"])
