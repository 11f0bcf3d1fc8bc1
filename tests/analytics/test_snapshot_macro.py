"""SnapshotMacro over the recorded FRED CSVs: empty cells are missing values, each observation counts only after its
publication lag, and the figures are the live client's figures with provenance that says revisions are included."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from equimind.core.errors import ParseError
from equimind.sources.macro import MacroSource
from equimind.sources.snapshot_macro import SNAPSHOT_SERIES, SnapshotMacro, read_fred_file

MACRO_IDS = {"macro_cpi", "macro_cpi_yoy", "macro_unemployment", "macro_fed_funds", "macro_real_gdp_growth",
             "macro_real_gdp", "macro_treasury_10y", "macro_vix"}


def _series(sid: str):  # type: ignore[no-untyped-def]
    return next(s for s in SNAPSHOT_SERIES if s.series.series_id == sid)


def test_is_a_macro_source(corpus_dir: Path) -> None:
    assert isinstance(SnapshotMacro(corpus_dir), MacroSource)


def test_empty_cells_are_missing_not_zero(corpus_dir: Path) -> None:
    cpi = read_fred_file(corpus_dir / "macro" / "CPIAUCSL.csv", "CPIAUCSL")
    assert date(2025, 10, 1) in cpi.empty_days  # no October 2025 CPI was published
    assert all(o.day != date(2025, 10, 1) for o in cpi.observations)
    assert len(cpi.observations) == 951 - 1 and all(o.value > 0 for o in cpi.observations)
    dgs10 = read_fred_file(corpus_dir / "macro" / "DGS10.csv", "DGS10")
    assert len(dgs10.empty_days) == 55 and date(2025, 5, 26) in dgs10.empty_days  # Memorial Day
    assert len(dgs10.observations) == 1305 - 55


def test_a_file_of_another_series_is_refused(corpus_dir: Path) -> None:
    with pytest.raises(ParseError, match=r"is not FRED's 'observation_date,UNRATE'"):
        read_fred_file(corpus_dir / "macro" / "CPIAUCSL.csv", "UNRATE")


def test_publication_lags_decide_what_counts() -> None:
    no_holidays: frozenset[date] = frozenset()
    cpi, gdp, vix = _series("CPIAUCSL"), _series("A191RL1Q225SBEA"), _series("VIXCLS")
    assert cpi.counted_from(date(2025, 4, 1), no_holidays) == date(2025, 5, 16)  # April CPI: out 13 May 2025
    assert gdp.counted_from(date(2024, 10, 1), no_holidays) == date(2025, 2, 3)  # Q4 advance estimate: 30 Jan
    assert vix.counted_from(date(2025, 5, 30), no_holidays) == date(2025, 6, 2)  # Friday -> Monday
    assert vix.counted_from(date(2025, 5, 23), frozenset({date(2025, 5, 26)})) == date(2025, 5, 27)  # holiday


NOT_IN_SHARED_CORPUS = {"macro.gold", "macro.world_bank_gdp_growth", "macro.world_bank_inflation"}


def test_gold_and_world_bank_replay_when_recorded(corpus_dir: Path, tmp_path: Path) -> None:
    import json
    import shutil
    shutil.copytree(corpus_dir / "macro", tmp_path / "macro")
    (tmp_path / "macro" / "lbma_gold_pm.json").write_text(json.dumps(
        [{"d": "2025-05-29", "v": [3300.5, 1, 1]}, {"d": "2025-05-30", "v": [3288.0, 1, 1]}]))
    (tmp_path / "macro" / "worldbank").mkdir()
    for code, v in (("NY.GDP.MKTP.KD.ZG", 1.1), ("FP.CPI.TOTL.ZG", 0.2)):
        rows = [{"country": {"id": c, "value": n}, "date": y, "value": v + i}
                for i, (c, n) in enumerate((("US", "United States"), ("CN", "China"))) for y in ("2023", "2024")]
        (tmp_path / "macro" / "worldbank" / f"{code}.json").write_text(json.dumps([{"page": 1}, rows]))
    res = SnapshotMacro(tmp_path).report(date(2025, 6, 1), markets=("US", "CN"))
    assert res.degraded == ()
    figs = {f.id: f for f in res.figures}
    assert figs["macro_gold"].value == 3300.5 and figs["macro_gold"].as_of == date(2025, 5, 29)  # Friday: Monday
    assert figs["macro_wb_gdp_growth_cn"].value == 2.1 and figs["macro_wb_inflation_us"].as_of == date(2023, 12, 31)
    assert figs["macro_wb_gdp_growth_cn"].provenance["origin"] == "snapshot"


def test_report_at_june_2025(corpus_dir: Path) -> None:
    res = SnapshotMacro(corpus_dir).report(date(2025, 6, 1))
    # the shared corpus records no gold or World Bank file: each is one line naming the fix, the rest is there
    assert {d.capability for d in res.degraded} == NOT_IN_SHARED_CORPUS, res.degraded
    assert all("equimind snapshot record" in d.reason for d in res.degraded)
    lines = {d.capability: d.reason for d in res.degraded}  # each names its own live source, not FRED
    assert "live LBMA" in lines["macro.gold"] and "live World Bank" in lines["macro.world_bank_inflation"]
    figs = {f.id: f for f in res.figures}
    assert set(figs) == MACRO_IDS
    # May's monthly values are not out by 1 June; April's are (CPI from 16 May, UNRATE 11 May, FEDFUNDS 6 May)
    assert {figs[i].as_of for i in ("macro_cpi", "macro_unemployment", "macro_fed_funds")} == {date(2025, 4, 1)}
    assert figs["macro_cpi"].value == pytest.approx(320.302) and figs["macro_unemployment"].value == 4.2
    assert figs["macro_fed_funds"].value == 4.33
    assert figs["macro_cpi_yoy"].inputs["cpi"] == figs["macro_cpi"].value
    assert figs["macro_real_gdp_growth"].as_of == date(2025, 1, 1)  # Q1 2025, advance estimate 30 April
    assert figs["macro_real_gdp"].as_of == date(2025, 1, 1)
    # Friday 30 May counts from Monday 2 June: the last daily value known on Sunday 1 June is Thursday's
    assert figs["macro_vix"].as_of == figs["macro_treasury_10y"].as_of == date(2025, 5, 29)
    prov = figs["macro_real_gdp"].provenance
    assert prov["source"] == "fred" and prov["series_id"] == "GDPC1" and prov["origin"] == "snapshot"
    assert "revisions published after the as-of date are included" in prov["vintage"]
    assert prov["location"].endswith("macro/GDPC1.csv") and "125 days" in prov["publication_lag"]
    for f in res.figures:
        assert f.provenance["counted_from"] <= date(2025, 6, 1), f.id


def test_one_day_later_a_new_observation_counts(corpus_dir: Path) -> None:
    m = SnapshotMacro(corpus_dir)
    before = {f.id: f for f in m.report(date(2025, 5, 15)).figures}
    after = {f.id: f for f in m.report(date(2025, 5, 16)).figures}
    assert before["macro_cpi"].as_of == date(2025, 3, 1) and after["macro_cpi"].as_of == date(2025, 4, 1)


def test_missing_series_and_folder_degrade_clearly(corpus_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "macro").mkdir()
    shutil.copy(corpus_dir / "macro" / "VIXCLS.csv", tmp_path / "macro" / "VIXCLS.csv")
    res = SnapshotMacro(tmp_path).report(date(2025, 6, 1))
    assert [f.id for f in res.figures] == ["macro_vix"]
    reasons = {d.capability: d.reason for d in res.degraded}
    assert "CPIAUCSL is not recorded" in reasons["macro.cpi"] and "equimind snapshot record" in reasons["macro.cpi"]
    empty = SnapshotMacro(tmp_path / "nowhere").report(date(2025, 6, 1))
    assert empty.figures == () and empty.degraded[0].capability == "macro"
    assert empty.degraded[0].reason.startswith("unavailable (the snapshot has no macro/ folder")


def test_before_a_daily_series_starts_it_degrades(corpus_dir: Path) -> None:
    res = SnapshotMacro(corpus_dir).report(date(2021, 4, 13))  # DGS10 / VIXCLS start on that day
    reasons = {d.capability: d.reason for d in res.degraded}
    assert "no observation by 2021-04-13" in reasons["macro.vix"]
    assert "macro_cpi" in {f.id for f in res.figures}
