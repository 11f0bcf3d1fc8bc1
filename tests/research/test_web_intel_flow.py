"""Web intelligence end to end: job boards and GitHub recorded from loopback fakes into a snapshot (beside the
recorded corpus, linked, not copied), replayed by the market report with no network, and argued by the offline
analyst's rules (docs/decisions/0018-web-intelligence-rules.md)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from fake_github import FakeGitHub, contributors, repo
from fake_job_boards import FakeJobBoards, greenhouse_job

from equimind.analytics.market import report_for
from equimind.core.config import Settings
from equimind.core.research import Speaker
from equimind.debate.offline import figure_claims
from equimind.sources.github import record_github
from equimind.sources.jobs import record_board

AS_OF = date(2025, 9, 30)


def _jobs(n: int, published: str) -> list[dict[str, object]]:
    titles = ("CUDA Compiler Engineer", "Data Center Sales Lead", "ASIC Verification Engineer", "Recruiter")
    return [greenhouse_job(1000 + i, titles[i % 4], department=("Engineering", "Sales", "Hardware", "People")[i % 4],
                           location=("Santa Clara, CA", "Taipei", "Remote")[i % 3], first_published=published)
            for i in range(n)]


@pytest.fixture(scope="module")
def snapshot(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Settings]]:
    snap = tmp_path_factory.mktemp("web") / "snap"
    snap.mkdir()
    for part in corpus_dir.iterdir():
        if part.is_dir():
            (snap / part.name).symlink_to(part)
    with FakeJobBoards() as boards, FakeGitHub() as gh:
        settings = Settings(home=snap.parent / "home", greenhouse_base_url=boards.url, github_api_url=gh.url,
                            job_boards={"NVDA": "greenhouse:nvda-test"}, github_orgs={"NVDA": ["nvda-oss"]},
                            product_terms={"NVDA": ["CUDA", "Data Center"]}, http_retries=1)
        boards.greenhouse["nvda-test"] = _jobs(40, "2025-05-01T09:00:00-04:00")
        record_board(settings, "NVDA", snap, sleep=lambda s: None,
                     now=lambda: datetime(2025, 7, 1, 15, tzinfo=UTC))
        boards.greenhouse["nvda-test"] = _jobs(40, "2025-05-01T09:00:00-04:00") + [
            {**j, "id": 5000 + k} for k, j in enumerate(_jobs(35, "2025-09-10T09:00:00-04:00"))]
        record_board(settings, "NVDA", snap, sleep=lambda s: None,
                     now=lambda: datetime(2025, 9, 29, 15, tzinfo=UTC))
        first, last = date(2024, 10, 6), date(2025, 9, 28)  # Sundays
        weeks = [first + timedelta(days=7 * i) for i in range((last - first).days // 7 + 1)]
        gh.orgs["nvda-oss"] = [repo("nvda-oss", n, pushed="2025-09-20T00:00:00Z") for n in ("cutlass", "warp")]
        gh.stats["nvda-oss/cutlass"] = contributors(
            {"a": {w: 12 if w > date(2025, 7, 1) else 4 for w in weeks}, "b": {w: 3 for w in weeks}},
            first=first, last=last)
        gh.stats["nvda-oss/warp"] = contributors({"c": {w: 2 for w in weeks}}, first=first, last=last)
        record_github(settings, "NVDA", snap, sleep=lambda s: None, as_of=AS_OF, max_rps=1000.0)
    yield snap, settings


def test_the_market_report_replays_both_sources_with_provenance(snapshot: tuple[Path, Settings]) -> None:
    snap, live = snapshot
    settings = Settings(home=live.home, snapshot=snap, product_terms={"NVDA": ["CUDA", "Data Center"]})
    report = report_for(settings, "NVDA", AS_OF)
    web = {f.id: f for f in report.web}
    assert web["jobs_open_roles"].value == 75 and web["jobs_open_roles"].as_of == date(2025, 9, 29)
    change = web["jobs_change_90d"]
    assert change.inputs["old"] == 40 and change.inputs["new"] == 75 and change.inputs["z"] > 2
    assert web["jobs_product_roles"].inputs == {"CUDA": 19, "Data Center": 19}
    assert web["jobs_open_roles"].provenance["url"].endswith("/v1/boards/nvda-test/jobs?content=true")
    assert web["jobs_open_roles"].provenance["retrieved_at"].startswith("2025-09-29T15:00")
    assert web["github_commits_change_qoq"].inputs["z"] > 2 and web["github_contributors_13w"].value == 3
    assert web["github_trending_1"].name == "Trending repository: nvda-oss/cutlass"
    # two recordings 90 days apart: the 30-day change has no retrieval to compare with, and says so
    assert [d.capability for d in report.degraded if d.capability.startswith("web.")] == ["web.jobs.change_30d"]
    claims = [c for c in figure_claims(report.figures()) if c.signal.startswith("figure:jobs")
              or c.signal.startswith("figure:github")]
    texts = {c.speaker: c.text for c in claims}
    assert texts[Speaker.BULL].startswith("Open job postings rose +88% in 90 days (40 → 75; z +3.3)") or any(
        c.text.startswith("Open job postings rose +88% in 90 days (40 → 75") for c in claims), claims
    assert any(c.text.startswith("Public GitHub commits rose") for c in claims)


def test_without_configuration_the_report_says_what_to_set(corpus_dir: Path, tmp_path: Path) -> None:
    report = report_for(Settings(home=tmp_path, snapshot=corpus_dir), "NVDA", AS_OF)
    lines = {d.capability: d.reason for d in report.degraded}
    assert report.web == []
    assert "no job-board recording for NVDA" in lines["web.jobs"] and "equimind snapshot record" in lines["web.jobs"]
    assert "equimind snapshot record" in lines["web.github"]
