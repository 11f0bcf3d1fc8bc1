"""`equimind backtest`: argument errors name the fix; stored runs are listed and shown (no research run here: the
end-to-end run is in tests/backtest/test_backtest.py, and the real-model run is reported in docs)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from equimind.backtest.store import BacktestStore
from equimind.interfaces.cli.main import app

runner = CliRunner()


def test_missing_arguments(tmp_path: Path) -> None:
    res = runner.invoke(app, ["backtest", "--home", str(tmp_path), "--tickers", "NVDA"])
    assert res.exit_code == 2 and "give --tickers, --start and --end" in res.output


def test_invalid_request(tmp_path: Path, corpus_dir: Path) -> None:
    args = ["backtest", "--home", str(tmp_path), "--snapshot", str(corpus_dir), "--tickers", "NVDA",
            "--start", "2025-09-01", "--end", "2025-02-01"]
    res = runner.invoke(app, args)
    assert res.exit_code == 2 and "after end" in res.output
    res = runner.invoke(app, [*args[:-4], "--start", "2025-02-01", "--end", "2025-03-01", "--horizons", "1,x"])
    assert res.exit_code == 2 and "--horizons" in res.output


def test_live_mode_is_refused(tmp_path: Path) -> None:
    res = runner.invoke(app, ["backtest", "--home", str(tmp_path), "--tickers", "NVDA", "--start", "2025-02-01",
                              "--end", "2025-03-01"])
    assert res.exit_code == 2 and "--snapshot" in res.output


def test_list_and_show(tmp_path: Path) -> None:
    store = BacktestStore(tmp_path / "backtest.sqlite")
    store.start_run("bt-20250101-000000-abcdef", {"tickers": ["NVDA"], "start": "2025-02-01", "end": "2025-03-01"})
    store.close()
    res = runner.invoke(app, ["backtest", "--home", str(tmp_path), "--list", "--json"])
    assert res.exit_code == 0
    [run] = json.loads(res.output)["items"]  # a list result is {"items": [...], "trace": {...}}
    assert run["run_id"] == "bt-20250101-000000-abcdef" and run["status"] == "running"
    res = runner.invoke(app, ["backtest", "--home", str(tmp_path), "--show", "bt-20250101-000000-abcdef"])
    assert res.exit_code == 2 and "has no report" in res.output
