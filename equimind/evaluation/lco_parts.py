"""The leave-company-out block of ``equimind eval answers --leave-company-out`` (``evaluation.lco``) for its parts.

Each part is answered through the same engine (one store, opened once) under every candidate value of the chosen
tunables: the answer path runs inside ``tunables.overridden``; nothing is rebuilt. The dev rows the correctness block
already judged (every tunable at its default) are reused, not answered again.

* **financebench** — folds = the question's ``company`` (questions.jsonl); score = answer-bearing share (a cited
  quote on a gold page, or every gold number found); groups: all, question type, computed vs extracted.
* **golden** — folds = the question's first ticker; score = correct share minus false-refusal share (a refused
  answerable question; ``answer_probe``); groups: all, answerable, question type.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from equimind.evaluation.answer_quality import financebench_answers, golden_answers
from equimind.evaluation.golden import load_golden
from equimind.evaluation.lco import FINANCEBENCH, GOLDEN, asker, chosen_tunables, leave_company_out, with_company

# importing answer_quality imports the answer path, whose modules register their tunables (core.tunables)


def fb_companies(data_dir: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in (data_dir / "questions.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return {r["financebench_id"]: str(r["company"]) for r in rows}


def golden_companies() -> dict[str, str]:
    return {q.id: q.tickers[0] for q in load_golden()}


def run_lco(names: Sequence[str], dev: Mapping[str, Mapping[str, Any]], *, golden_engine: Any = None,
            fb_engine: Any = None, fb_data: Path | None = None) -> dict[str, Any]:
    """The ``leave_company_out`` block: per part present in ``dev`` (the correctness blocks, judged at the
    defaults), ``evaluation.lco.leave_company_out`` plus its wall time."""
    tunables = chosen_tunables(names)
    parts: dict[str, Any] = {}
    if "golden" in dev and golden_engine is not None:
        company = golden_companies()
        parts["golden"] = _timed(lambda: leave_company_out(
            GOLDEN, tunables, asker(lambda: list(golden_answers(golden_engine)["rows"]), company),
            {(): with_company(dev["golden"]["rows"], company)}))
    if "financebench" in dev and fb_engine is not None and fb_data is not None:
        company = fb_companies(fb_data)
        parts["financebench"] = _timed(lambda: leave_company_out(
            FINANCEBENCH, tunables, asker(lambda: list(financebench_answers(fb_engine, fb_data)["rows"]), company),
            {(): with_company(dev["financebench"]["rows"], company)}))
    return {"tunables": [t.name for t in tunables], "parts": parts}


def _timed(run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    t0 = time.perf_counter()
    block = run()
    return {**block, "seconds": round(time.perf_counter() - t0, 1)}
