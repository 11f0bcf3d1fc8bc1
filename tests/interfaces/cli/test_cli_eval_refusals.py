"""`equimind eval refusals`: the answerability check alone over every golden question, from a cached store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from equimind.interfaces.cli.main import app

runner = CliRunner()


def test_eval_refusals_reads_the_answers_store_and_reports_rates_per_question(nvda_template: Path,
                                                                                tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(nvda_template, cache / "answers")  # a store holding NVDA's 10-K only
    out = tmp_path / "refusals.json"
    res = runner.invoke(app, ["eval", "refusals", "--cache", str(cache), "--json", str(out), "--data",
                              str(tmp_path / "no-financebench")])
    assert res.exit_code == 0, res.output
    env = json.loads(out.read_text())
    golden = env["metrics"]["golden"]
    assert golden["absent_questions"] == 10 and golden["answerable_questions"] == 67
    rows = {r["id"]: r for r in golden["rows"]}
    # a ticker with no visible document cannot answer a specific ask; NVIDIA's own factual questions are answerable
    nvda_rows = [r for r in golden["rows"] if r["type"] != "absent" and r["id"] in _nvda_factual_ids()]
    assert nvda_rows and sum(r["refused"] for r in nvda_rows) <= 1
    assert rows["g069"]["refused"] and rows["g077"]["refused"]  # Tesla questions; no Tesla document is stored
    assert "skipped" in env["metrics"]["financebench"]


def test_eval_refusals_without_a_store_says_what_to_run(tmp_path: Path) -> None:
    res = runner.invoke(app, ["eval", "refusals", "--cache", str(tmp_path)])
    assert res.exit_code == 2 and "equimind eval answers" in res.output


def _nvda_factual_ids() -> set[str]:
    from equimind.evaluation.golden import load_golden

    return {q.id for q in load_golden() if q.tickers == ("NVDA",) and q.qtype == "factual"
            and all(g.form == "10-K" for g in q.gold)}
