"""Build a snapshot that shows the web-intelligence and gold / World Bank figures offline.

This machine has no internet, and the shared corpus records neither job boards, GitHub activity, gold nor the World
Bank panel. This script makes a snapshot folder that links the recorded corpus (nothing is copied) and adds:
- two recordings of a Greenhouse board and one of a GitHub organisation, made by EquiMind's real live clients
  (``record_board``, ``record_github``) against the loopback fakes the tests use (tests/fake_job_boards.py,
  tests/fake_github.py); the postings and commit counts are fixtures in the APIs' shapes, not real NVIDIA data;
- ``macro/lbma_gold_pm.json`` and ``macro/worldbank/*.json`` in the layouts ``equimind snapshot record`` writes, with
  fixture values typed in those formats (not a recording).

Usage (from the repository root):
    .venv/bin/python scripts/web_intel_demo.py /tmp/webdemo
    export EQUIMIND_HOME=/tmp/webdemo/home EQUIMIND_PRODUCT_TERMS='{"NVDA": ["CUDA", "Data Center"]}'
    .venv/bin/equimind market NVDA --snapshot /tmp/webdemo/snap --as-of 2025-09-30
    .venv/bin/equimind research NVDA "Should I invest in NVIDIA?" --snapshot /tmp/webdemo/snap --as-of 2025-09-30
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fake_github import FakeGitHub, contributors, repo  # noqa: E402
from fake_job_boards import FakeJobBoards, greenhouse_job  # noqa: E402

from equimind.core.config import Settings  # noqa: E402
from equimind.sources.github import record_github  # noqa: E402
from equimind.sources.jobs import record_board  # noqa: E402

TITLES = ("CUDA Compiler Engineer", "Data Center Sales Lead", "ASIC Verification Engineer", "Recruiter")
GOLD = [("2025-09-25", 3738.95), ("2025-09-26", 3759.15), ("2025-09-29", 3812.10)]  # fixture USD/oz
WORLD_BANK = {"NY.GDP.MKTP.KD.ZG": {"US": 2.8, "SG": 4.4}, "FP.CPI.TOTL.ZG": {"US": 2.9, "SG": 2.4}}  # fixture, 2024


def _jobs(n: int, published: str, first_id: int) -> list[dict[str, object]]:
    functions = ("Engineering", "Sales", "Hardware", "People")
    return [greenhouse_job(first_id + i, TITLES[i % 4], department=functions[i % 4],
                           location=("Santa Clara, CA", "Taipei", "Remote")[i % 3], first_published=published)
            for i in range(n)]


def build(out: Path, corpus: Path) -> Path:
    snap = out / "snap"
    snap.mkdir(parents=True, exist_ok=False)
    for part in corpus.iterdir():
        if part.is_dir() and part.name != "macro":
            (snap / part.name).symlink_to(part)
    (snap / "macro" / "worldbank").mkdir(parents=True)
    for f in (corpus / "macro").iterdir():
        (snap / "macro" / f.name).symlink_to(f)
    (snap / "macro" / "lbma_gold_pm.json").write_text(
        json.dumps([{"d": d, "v": [usd, None, None]} for d, usd in GOLD]), encoding="utf-8")
    for code, by_country in WORLD_BANK.items():
        rows = [{"indicator": {"id": code}, "country": {"id": cc, "value": cc}, "countryiso3code": "",
                 "date": "2024", "value": v} for cc, v in by_country.items()]
        (snap / "macro" / "worldbank" / f"{code}.json").write_text(
            json.dumps([{"page": 1, "pages": 1, "per_page": 20000, "total": len(rows)}, rows]), encoding="utf-8")
    with FakeJobBoards() as boards, FakeGitHub() as gh:
        settings = Settings(home=out / "home", greenhouse_base_url=boards.url, github_api_url=gh.url,
                            job_boards={"NVDA": "greenhouse:nvda-demo"}, github_orgs={"NVDA": ["nvda-oss"]},
                            product_terms={"NVDA": ["CUDA", "Data Center"]}, http_retries=1)
        boards.greenhouse["nvda-demo"] = _jobs(40, "2025-05-01T09:00:00-04:00", 1000)
        record_board(settings, "NVDA", snap, sleep=lambda s: None, now=lambda: datetime(2025, 7, 1, 15, tzinfo=UTC))
        boards.greenhouse["nvda-demo"] += _jobs(35, "2025-09-10T09:00:00-04:00", 5000)
        record_board(settings, "NVDA", snap, sleep=lambda s: None, now=lambda: datetime(2025, 9, 29, 15, tzinfo=UTC))
        first, last = date(2024, 10, 6), date(2025, 9, 28)  # Sundays, GitHub's week starts
        weeks = [first + timedelta(days=7 * i) for i in range((last - first).days // 7 + 1)]
        gh.orgs["nvda-oss"] = [repo("nvda-oss", n, pushed="2025-09-20T00:00:00Z") for n in ("cutlass", "warp")]
        gh.stats["nvda-oss/cutlass"] = contributors(
            {"a": {w: 12 if w > date(2025, 7, 1) else 4 for w in weeks}, "b": dict.fromkeys(weeks, 3)},
            first=first, last=last)
        gh.stats["nvda-oss/warp"] = contributors({"c": dict.fromkeys(weeks, 2)}, first=first, last=last)
        record_github(settings, "NVDA", snap, sleep=lambda s: None, as_of=date(2025, 9, 30), max_rps=1000.0)
    return snap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="an empty or new folder")
    shared = Path(os.environ.get("EQUIMIND_SHARED", ROOT.parent / "shared"))
    ap.add_argument("--corpus", type=Path, default=shared / "corpus")
    args = ap.parse_args()
    if not (args.corpus / "sec").is_dir():
        sys.exit(f"no recorded corpus at {args.corpus}: set EQUIMIND_SHARED or pass --corpus")
    print(build(args.out, args.corpus))


if __name__ == "__main__":
    main()
