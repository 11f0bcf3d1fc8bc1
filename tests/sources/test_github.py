"""The GitHub-activity source (sources/github.py) against a loopback GitHub API (tests/fake_github.py): pagination,
the selection rules, 202/204, rate limits, the token, recordings and their replay. Retries wait through an injected
sleep (never really); the rate limiter is set high so request spacing costs about a millisecond."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_github import FakeGitHub, contributors, repo
from market_replay import SleepRecorder

from equimind.core.config import Settings
from equimind.core.research import Figure
from equimind.sources.github import (
    GitHubActivity,
    SnapshotGitHub,
    next_link,
    read_recordings,
    record_github,
)
from equimind.sources.web_intel import WebIntelResult, WebIntelSource

AS_OF = date(2025, 6, 30)  # Monday; the last complete week starts Sunday 2025-06-22
LAST = date(2025, 6, 22)
FIRST = date(2024, 6, 2)  # the statistics start here (before the prior quarter's first week, 2024-12-29)
DATA_END = date(2025, 8, 31)  # and run past the as-of date (retrieved "later")
STATS = "/repos/{}/stats/contributors"
TOKEN = "ghp_s3cretTOKENvalue"


def _stats(weekly: int = 2, login: str = "ann", extra: dict[str, dict[date, int]] | None = None) -> list[Any]:
    per_author = {login: {FIRST + timedelta(days=7 * i): weekly for i in range(70)}}
    per_author.update(extra or {})
    return contributors(per_author, first=FIRST, last=DATA_END)


@pytest.fixture()
def gh() -> Iterator[FakeGitHub]:
    with FakeGitHub(limit=1000) as s:
        yield s


def _settings(tmp_path: Path, server: FakeGitHub, orgs: list[str] | None = None, **kw: Any) -> Settings:
    return Settings(home=tmp_path / "home", github_api_url=server.url, http_retries=4,
                    github_orgs={"ACME": orgs if orgs is not None else ["acme"]}, **kw)


def _source(tmp_path: Path, server: FakeGitHub, sleep: SleepRecorder | None = None, *, top_k: int = 10,
            **kw: Any) -> GitHubActivity:
    return GitHubActivity(_settings(tmp_path, server, **kw), sleep=sleep or SleepRecorder(), top_k=top_k,
                          max_rps=1000.0)


def _figs(result: WebIntelResult) -> dict[str, Figure]:
    return {f.id: f for f in result.figures}


def _acme(server: FakeGitHub, n: int = 3) -> None:
    server.orgs["acme"] = [repo("acme", f"r{i}", pushed=f"2025-06-{10 + i:02d}T00:00:00Z") for i in range(n)]
    for i in range(n):
        server.stats[f"acme/r{i}"] = _stats()


def test_link_pagination_over_three_pages_and_the_request_headers(tmp_path: Path) -> None:
    with FakeGitHub(max_per_page=2) as server:
        _acme(server, 5)
        src = _source(tmp_path, server)
        assert isinstance(src, WebIntelSource) and src.name == "github"
        result = src.report("acme", AS_OF)
        src.close()
    pages = [q for p, q, _ in server.requests if p == "/orgs/acme/repos"]
    assert [q.get("page", "1") for q in pages] == ["1", "2", "3"]
    assert pages[0] == {"type": "public", "sort": "pushed", "per_page": "100"}
    f = _figs(result)
    assert sorted(f["github_commits_13w"].provenance["repos_counted"]) == [f"acme/r{i}" for i in range(5)]
    assert f["github_commits_13w"].value == 5 * 13 * 2
    headers = {k.lower(): v for k, v in server.requests[0][2].items()}
    assert headers["accept"] == "application/vnd.github+json"
    assert headers["x-github-api-version"] == "2022-11-28"
    assert headers["user-agent"] == "equimind/0.1 (github)"
    assert "authorization" not in headers


def test_forks_archived_and_repos_created_after_the_as_of_date_are_skipped_then_top_k_by_push(
        gh: FakeGitHub, tmp_path: Path) -> None:
    gh.orgs["acme"] = [
        repo("acme", "core", pushed="2025-06-20T00:00:00Z"),
        repo("acme", "sdk", pushed="2025-06-18T00:00:00Z"),
        repo("acme", "docs", pushed="2025-06-01T00:00:00Z"),  # beyond the top 2
        repo("acme", "linux", pushed="2025-06-25T00:00:00Z", fork=True),
        repo("acme", "old", pushed="2025-06-24T00:00:00Z", archived=True),
        repo("acme", "future", pushed="2025-08-01T00:00:00Z", created="2025-07-15T00:00:00Z"),
        {"full_name": None, "name": 3},  # malformed: skipped and counted
    ]
    for name in ("core", "sdk", "docs", "linux", "old", "future"):
        gh.stats[f"acme/{name}"] = _stats()
    result = _source(tmp_path, gh, top_k=2).report("ACME", AS_OF)
    prov = _figs(result)["github_commits_13w"].provenance
    assert prov["repos_counted"] == ["acme/core", "acme/sdk"]
    assert prov["repos_skipped"] == {"fork": 1, "archived": 1, "created after the as-of date": 1,
                                     "beyond the top 2 by pushed_at": 1, "unreadable repository entry": 1}
    assert "top 2 by pushed_at" in prov["selection"]
    assert any("survivorship" in c for c in prov["caveats"]) and any("top 100" in c for c in prov["caveats"])
    assert prov["origin"] == "live" and prov["orgs"] == ["acme"] and prov["retrieved_at"].endswith("Z")
    for skipped in ("docs", "linux", "old", "future"):
        assert gh.count(STATS.format(f"acme/{skipped}")) == 0  # statistics asked only for the selected


def test_202_is_retried_with_backoff_then_counted(gh: FakeGitHub, tmp_path: Path) -> None:
    _acme(gh, 2)
    gh.pending["acme/r0"] = 2
    sleep = SleepRecorder()
    result = _source(tmp_path, gh, sleep).report("ACME", AS_OF)
    assert sleep.waits == [1.0, 2.0]
    assert gh.count(STATS.format("acme/r0")) == 3
    assert result.degraded == ()
    assert _figs(result)["github_commits_13w"].provenance["repos_counted"] == ["acme/r1", "acme/r0"]


def test_202_forever_degrades_that_repo_and_the_others_still_count(gh: FakeGitHub, tmp_path: Path) -> None:
    _acme(gh, 3)
    gh.pending["acme/r1"] = -1
    sleep = SleepRecorder()
    result = _source(tmp_path, gh, sleep).report("ACME", AS_OF)
    assert sleep.waits == [1.0, 2.0, 4.0, 8.0]  # http_retries=4, then given up
    assert [str(d) for d in result.degraded] == [
        "web.github: GitHub is still computing statistics for acme/r1; run again in a minute"]
    f = _figs(result)["github_commits_13w"]
    assert f.provenance["repos_counted"] == ["acme/r2", "acme/r0"] and f.value == 2 * 13 * 2
    assert f.provenance["repos_skipped"] == {"statistics unavailable": 1}


def test_204_empty_repository_counts_as_zero_commits(gh: FakeGitHub, tmp_path: Path) -> None:
    _acme(gh, 2)
    gh.orgs["acme"].append(repo("acme", "empty", pushed="2025-06-29T00:00:00Z"))
    gh.stats["acme/empty"] = None
    result = _source(tmp_path, gh).report("ACME", AS_OF)
    f = _figs(result)["github_commits_13w"]
    assert "acme/empty" in f.provenance["repos_counted"] and f.value == 2 * 13 * 2
    assert result.degraded == ()


def test_429_and_403_with_retry_after_are_waited_out_then_retried(gh: FakeGitHub, tmp_path: Path) -> None:
    _acme(gh, 2)
    gh.fault(STATS.format("acme/r0"), "429:3")
    gh.fault(STATS.format("acme/r1"), "403:7")  # GitHub's secondary limit may come as a 403
    sleep = SleepRecorder()
    result = _source(tmp_path, gh, sleep).report("ACME", AS_OF)
    assert sorted(sleep.waits) == [3.0, 7.0]
    assert result.degraded == () and len(_figs(result)["github_commits_13w"].provenance["repos_counted"]) == 2


def test_a_spent_primary_rate_limit_stops_fetching_and_names_the_reset_and_the_token(tmp_path: Path) -> None:
    with FakeGitHub(limit=3) as server:  # the listing and two statistics pass; the fourth request is refused
        _acme(server, 4)
        sleep = SleepRecorder()
        result = _source(tmp_path, server, sleep).report("ACME", AS_OF)
        assert len(server.requests) == 4  # no retry, no further request
    assert sleep.waits == []
    assert len(result.degraded) == 1
    reason = str(result.degraded[0])
    assert "2030-03-17 17:46:40 UTC" in reason
    assert "set EQUIMIND_GITHUB_TOKEN (raises the limit from 60 to 5,000 requests an hour)" in reason
    f = _figs(result)["github_commits_13w"]
    assert len(f.provenance["repos_counted"]) == 2 and f.provenance["repos_skipped"] == {"statistics unavailable": 2}


def test_a_plain_403_is_a_source_error_naming_the_url(gh: FakeGitHub, tmp_path: Path) -> None:
    _acme(gh, 2)
    gh.fault(STATS.format("acme/r0"), "403")
    result = _source(tmp_path, gh).report("ACME", AS_OF)
    assert gh.count(STATS.format("acme/r0")) == 1
    (line,) = [str(d) for d in result.degraded]
    assert "HTTP 403" in line and f"{gh.url}/repos/acme/r0/stats/contributors" in line


def test_the_token_is_sent_only_as_authorization_and_never_written_or_said(gh: FakeGitHub, tmp_path: Path,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    _acme(gh, 2)
    caplog.set_level(logging.DEBUG)
    src = _source(tmp_path, gh, orgs=["acme", "ghost"], github_token=TOKEN)
    result = src.report("ACME", AS_OF)
    src.close()
    assert all({k.lower(): v for k, v in h.items()}["authorization"] == f"Bearer {TOKEN}" for _, _, h in gh.requests)
    assert all(TOKEN not in p and TOKEN not in json.dumps(q) for p, q, _ in gh.requests)
    home = tmp_path / "home"
    files = [p for p in home.rglob("*") if p.is_file()]
    assert any(p.suffix == ".resp" for p in files) and any(p.parent.name == "ACME" for p in files)
    for p in files:
        assert TOKEN not in str(p) and TOKEN.encode() not in p.read_bytes()
    said = " ".join(str(d) for d in result.degraded) + json.dumps([f.model_dump(mode="json") for f in result.figures])
    assert TOKEN not in said and TOKEN not in caplog.text


def test_an_unknown_organisation_is_a_degraded_line_naming_it(gh: FakeGitHub, tmp_path: Path) -> None:
    _acme(gh, 1)
    gh.orgs["quiet"] = []  # an organisation with no public repositories: no error
    result = _source(tmp_path, gh, orgs=["nope", "acme", "quiet"]).report("ACME", AS_OF)
    assert [str(d) for d in result.degraded] == [
        "web.github: GitHub has no organisation 'nope' (HTTP 404); check EQUIMIND_GITHUB_ORGS"]
    assert _figs(result)["github_commits_13w"].provenance["repos_counted"] == ["acme/r0"]


def test_the_week_rule_and_the_quarter_comparison_through_the_live_path(gh: FakeGitHub, tmp_path: Path) -> None:
    gh.orgs["acme"] = [repo("acme", "core")]
    prior_start = LAST - timedelta(days=7 * 25)
    bursts = {LAST: 10, LAST + timedelta(days=7): 1000, prior_start: 4}  # the week after the as-of date never counts
    gh.stats["acme/core"] = _stats(weekly=1, extra={"bob": bursts})
    f = _figs(_source(tmp_path, gh).report("ACME", AS_OF))
    assert f["github_commits_13w"].as_of == date(2025, 6, 28)
    assert f["github_commits_13w"].value == 13 + 10
    assert f["github_contributors_13w"].value == 2
    change = f["github_commits_change_qoq"]
    assert change.inputs["old"] == 13 + 4 and change.inputs["new"] == 23
    assert change.value == pytest.approx(23 / 17 - 1)
    assert change.inputs["z"] == pytest.approx(6 / 40 ** 0.5)
    assert f["github_trending_1"].name == "Trending repository: acme/core"
    assert f["github_trending_1"].provenance["url"] == f"{gh.url}/repos/acme/core/stats/contributors"


def test_recording_round_trip_and_replay_without_network(gh: FakeGitHub, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _acme(gh, 3)
    gh.stats["acme/r2"] = None
    settings = _settings(tmp_path, gh)
    path = record_github(settings, "acme", tmp_path / "corpus", sleep=SleepRecorder(), as_of=AS_OF, max_rps=1000.0)
    assert path.parent == tmp_path / "corpus" / "web" / "github" / "ACME" and path.suffix == ".json"
    (rec,) = read_recordings(tmp_path / "corpus", "ACME")
    assert set(rec) == {"ticker", "orgs", "retrieved_at", "api", "repos", "stats", "failures"}
    assert rec["api"] == gh.url and rec["stats"]["acme/r2"] is None and len(rec["repos"]["acme"]) == 3
    live = _source(tmp_path, gh).report("ACME", AS_OF)

    def no_network(*args: Any, **kw: Any) -> httpx.Response:
        raise AssertionError("the snapshot source used the network")

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", no_network)
    snap = SnapshotGitHub(tmp_path / "corpus").report("ACME", AS_OF)
    assert {f.id: f.value for f in snap.figures} == {f.id: f.value for f in live.figures}
    prov = snap.figures[0].provenance
    assert prov["origin"] == "snapshot" and prov["retrieved_at"] == rec["retrieved_at"]
    assert any("latest recording" in c for c in prov["caveats"])


def test_the_live_source_keeps_a_history_and_a_corrupt_recording_is_skipped(
        gh: FakeGitHub, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    _acme(gh, 1)
    _source(tmp_path, gh).report("ACME", AS_OF)
    history = tmp_path / "home" / "web" / "github" / "ACME"
    (good,) = history.glob("*.json")
    (history / "20000101T000000Z.json").write_text("{not json")
    with caplog.at_level(logging.WARNING):
        recs = read_recordings(tmp_path / "home", "ACME")
    assert [r["retrieved_at"] for r in recs] == [json.loads(good.read_text())["retrieved_at"]]
    assert "20000101T000000Z.json" in caplog.text
    assert SnapshotGitHub(tmp_path / "home").report("ACME", AS_OF).figures


def test_not_configured_and_no_recording_lines(gh: FakeGitHub, tmp_path: Path) -> None:
    result = _source(tmp_path, gh).report("ZZZ", AS_OF)
    assert result.figures == () and gh.requests == []
    assert str(result.degraded[0]) == ("web.github: unavailable (no organisation configured for ZZZ — set "
                                       'EQUIMIND_GITHUB_ORGS, e.g. \'{"ZZZ": ["org"]}\')')
    snap = SnapshotGitHub(tmp_path / "empty").report("ACME", AS_OF)
    assert snap.figures == () and "equimind snapshot record" in str(snap.degraded[0])


def test_malformed_statistics_rows_are_skipped_and_counted(gh: FakeGitHub, tmp_path: Path) -> None:
    _acme(gh, 1)
    gh.stats["acme/r0"] = [*_stats(), {"author": {"login": "x"}, "weeks": "garbage"}, 42]
    gh.orgs["acme"].append(repo("acme", "odd"))
    gh.stats["acme/odd"] = {"unexpected": "shape"}
    result = _source(tmp_path, gh).report("ACME", AS_OF)
    prov = _figs(result)["github_commits_13w"].provenance
    assert prov["stats_rows_skipped"] == 2 and prov["repos_skipped"] == {"unreadable statistics": 1}
    assert prov["repos_counted"] == ["acme/r0"]


def test_next_link_reads_the_rel_next_url() -> None:
    header = ('<https://api.github.com/organizations/1/repos?page=2&per_page=100>; rel="next", '
              '<https://api.github.com/organizations/1/repos?page=9&per_page=100>; rel="last"')
    assert next_link(header) == "https://api.github.com/organizations/1/repos?page=2&per_page=100"
    assert next_link('<https://x/?page=1>; rel="prev"') is None and next_link(None) is None
