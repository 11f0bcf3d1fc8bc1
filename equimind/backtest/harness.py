"""The backtester's entry points in one place, for the CLI to import on first use (numpy, the engine and the stores
stay out of ``equimind --help``)."""

from __future__ import annotations

from equimind.backtest.models import BacktestReport, BacktestRequest
from equimind.backtest.plot import (
    ACCURACY_HEADER,
    CALIBRATION_HEADER,
    RETURNS_HEADER,
    accuracy_rows,
    calibration_lines,
    calibration_rows,
    return_rows,
)
from equimind.backtest.runner import Backtester
from equimind.backtest.store import BacktestStore

__all__ = ["ACCURACY_HEADER", "CALIBRATION_HEADER", "RETURNS_HEADER", "BacktestReport", "BacktestRequest",
           "BacktestStore", "Backtester", "accuracy_rows", "calibration_lines", "calibration_rows",
           "return_rows"]
