"""The evaluation harness's entry points in one place, for the CLI to import on first use (numpy, the stores and
the benchmark readers stay out of ``equimind --help``): each name is the module function that does the work."""

from __future__ import annotations

from equimind.evaluation.answers import ANSWER_PARTS, run_answers
from equimind.evaluation.financebench import run_financebench
from equimind.evaluation.golden import run_golden
from equimind.evaluation.refusals import run_refusals
from equimind.evaluation.regression import default_baseline_path, run_gate
from equimind.evaluation.report_lco import lco_lines
from equimind.evaluation.report_md import render_markdown
from equimind.evaluation.runner import STORE_VARIANTS

__all__ = ["ANSWER_PARTS", "STORE_VARIANTS", "default_baseline_path", "lco_lines", "render_markdown", "run_answers",
           "run_financebench", "run_gate", "run_golden", "run_refusals"]
