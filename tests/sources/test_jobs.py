"""The job-board sources (``equimind.sources.jobs``) through their real HTTP code against a loopback server speaking
the Greenhouse Job Board API and the Lever Postings API (tests/fake_job_boards.py): parsing, Lever paging, faults,
the recording layout, the as-of rule, the history the changes are computed from, and the snapshot replay.

The payloads are small fixtures in the APIs' documented shapes (not recorded data). No test sleeps: the client's
``sleep`` (backoff and rate limiter) is a recorder."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_job_boards import FakeJobBoards, SleepRecorder, greenhouse_job, lever_posting

from equimind.core.config import Settings
from equimind.core.errors import ConfigError, ParseError, SourceError
from equimind.core.research import Figure
from equimind.sources import jobs as jobs_module
from equimind.sources.jobs import (
    LEVER_PAGE_LIMIT,
    USER_AGENT,
    JobBoards,
    SnapshotJobBoards,
    load_recordings,
    parse_greenhouse_page,
    read_recordings,
    record_board,
    recording_path,
    write_recording,
)
from equimind.sources.web_intel import WebIntelSource

NOW = datetime(2025, 9, 1, 12, 0, 0, tzinfo=UTC)
TODAY = NOW.date()
GH_PATH = "/v1/boards/acme/jobs"


@pytest.fixture()
def server() -> Iterator[FakeJobBoards]:
    with FakeJobBoards() as s:
        yield s


def _settings(tmp_path: Path, server: FakeJobBoards, *, boards: dict[str, str] | None = None,
              terms: dict[str, list[str]] | None = None, retries: int = 2) -> Settings:
    return Settings(home=tmp_path / "home", greenhouse_base_url=server.url, lever_base_url=server.url,
                    job_boards=boards if boards is not None else {"ACME": "greenhouse:acme"},
                    product_terms=terms or {}, http_retries=retries, http_timeout_s=5.0)


def _source(settings: Settings, sleep: SleepRecorder | None = None, now: datetime = NOW) -> JobBoards:
    return JobBoards(settings, sleep=sleep or SleepRecorder(), now=lambda: now)


def _figs(figures: tuple[Figure, ...]) -> dict[str, Figure]:
    return {f.id: f for f in figures}


def _board() -> list[dict[str, Any]]:
    return [
        greenhouse_job(1, "Senior CUDA Engineer", content_html="<p>Work on <b>CUDA</b> &amp; Blackwell.</p>"),
        greenhouse_job(2, "Compiler Engineer"),
        greenhouse_job(3, "Recruiter", department="People", location="Remote - US"),
        greenhouse_job(4, "Datacenter Sales Lead", department="Sales", location="London",
                       first_published="2025-08-25T08:00:00Z"),
    ]


def _recording(root: Path, retrieved_at: datetime, jobs: list[dict[str, Any]], *, ticker: str = "ACME",
               board: str = "acme") -> Path:
    """A recording as ``record_board`` writes it, with a chosen retrieval time (the history of earlier runs)."""
    return write_recording(root, {"ticker": ticker, "kind": "greenhouse", "board": board,
                                  "url": f"https://boards-api.greenhouse.io/v1/boards/{board}/jobs?content=true",
                                  "retrieved_at": retrieved_at.isoformat(),
                                  "pages": [{"jobs": jobs, "meta": {"total": len(jobs)}}]})


def _jobs(n: int, *, published: str = "2025-01-01T00:00:00Z", start: int = 100) -> list[dict[str, Any]]:
    return [greenhouse_job(start + i, f"Engineer {i}", first_published=published) for i in range(n)]


# ------------------------------------------------------------------------------------------------ fetch and parse
def test_greenhouse_board_is_parsed_into_cited_figures(tmp_path: Path, server: FakeJobBoards) -> None:
    server.greenhouse["acme"] = _board()
    src = _source(_settings(tmp_path, server))
    assert isinstance(src, WebIntelSource)
    res = src.report("acme", TODAY)
    figs = _figs(res.figures)
    opened = figs["jobs_open_roles"]
    assert opened.value == 4 and opened.as_of == TODAY
    assert opened.inputs["by_function"] == {"Engineering": 2, "People": 1, "Sales": 1}
    assert list(opened.inputs["by_location"]) == ["Santa Clara, CA", "London", "Remote - US"]
    assert figs["jobs_function_engineering"].value == 2
    assert figs["jobs_function_engineering"].name == "Open roles: Engineering"
    assert figs["jobs_location_remote_us"].value == 1
    assert figs["jobs_new_30d"].value == 1  # only the Sales role was first published after 2025-08-02
    assert figs["jobs_new_90d"].value == 4
    prov = opened.provenance
    assert prov["source"] == "greenhouse" and prov["board"] == "acme" and prov["origin"] == "live"
    assert prov["url"] == f"{server.url}{GH_PATH}?content=true"
    assert prov["retrieved_at"] == NOW.isoformat() and prov["published_field"] == "first_published"
    assert server.requests[0][1] == {"content": "true"}
    assert server.requests[0][2]["User-Agent"] == USER_AGENT == "equimind/0.1 (job boards)"
    # no history yet: the changes say how it accrues; no product terms: the setting is named
    reasons = {d.capability: d.reason for d in res.degraded}
    assert "needs a board retrieval from about 2025-08-02 (±7 days)" in reasons["web.jobs.change_30d"]
    assert "equimind snapshot record" in reasons["web.jobs.change_90d"]
    assert "EQUIMIND_PRODUCT_TERMS" in reasons["web.jobs.product_roles"]
    # the retrieval went into the history under settings.home, in the recording layout
    stored = read_recordings(tmp_path / "home", "ACME")
    assert [r.retrieved_at for r in stored] == [NOW]
    assert stored[0].path == tmp_path / "home/web/jobs/ACME/greenhouse-acme-20250901T120000Z.json"


def test_greenhouse_text_is_unescaped_and_stripped() -> None:
    page = {"jobs": [greenhouse_job(1, "CUDA Engineer", content_html="<p>Work on <b>CUDA</b>&nbsp;&amp; more</p>")]}
    postings, skipped = parse_greenhouse_page(page, "acme")
    assert skipped == 0
    assert postings[0].text == "Work on CUDA & more"
    assert "<" not in postings[0].text and "&amp;" not in postings[0].text
    assert postings[0].first_published == datetime(2025, 7, 1, 13, 0, tzinfo=UTC)


def test_old_greenhouse_board_falls_back_to_updated_at_and_says_so(tmp_path: Path, server: FakeJobBoards) -> None:
    server.greenhouse["acme"] = [greenhouse_job(1, "Engineer", drop_first_published=True,
                                                updated_at="2025-08-30T10:00:00-04:00"),
                                 greenhouse_job(2, "Engineer", drop_first_published=True)]
    res = _source(_settings(tmp_path, server)).report("ACME", TODAY)
    figs = _figs(res.figures)
    assert figs["jobs_new_30d"].value == 2
    assert figs["jobs_new_30d"].provenance["published_field"] == "updated_at"
    assert "updated_at" in figs["jobs_open_roles"].provenance["published_field_note"]


def test_lever_pagination_reads_every_page(tmp_path: Path, server: FakeJobBoards) -> None:
    server.lever["acme"] = [lever_posting(f"id-{i:04d}", f"Role {i}", department="R&D" if i % 2 else None,
                                          team="Firmware") for i in range(250)]
    settings = _settings(tmp_path, server, boards={"ACME": "lever:acme"})
    res = _source(settings).report("ACME", TODAY)
    figs = _figs(res.figures)
    assert figs["jobs_open_roles"].value == 250
    assert figs["jobs_open_roles"].inputs["by_function"] == {"Firmware": 125, "R&D": 125}  # department, else team
    assert figs["jobs_function_r_d"].value == 125
    assert figs["jobs_open_roles"].provenance["published_field"] == "createdAt"
    pages = [q for p, q, _ in server.requests if p == "/v0/postings/acme"]
    assert [(q["skip"], q["limit"], q["mode"]) for q in pages] == [
        ("0", "100", "json"), ("100", "100", "json"), ("200", "100", "json")]
    assert LEVER_PAGE_LIMIT == 100


def test_lever_server_ignoring_skip_does_not_loop(tmp_path: Path, server: FakeJobBoards) -> None:
    server.lever["acme"] = [lever_posting(f"id-{i:04d}", f"Role {i}") for i in range(150)]
    server.lever_ignore_skip = True
    res = _source(_settings(tmp_path, server, boards={"ACME": "lever:acme"})).report("ACME", TODAY)
    assert _figs(res.figures)["jobs_open_roles"].value == 100  # the first page, once
    assert server.count("/v0/postings/acme") == 2


def test_429_is_retried_after_retry_after_then_succeeds(tmp_path: Path, server: FakeJobBoards) -> None:
    server.greenhouse["acme"] = _board()
    server.fault(GH_PATH, "429:7")
    sleep = SleepRecorder()
    res = _source(_settings(tmp_path, server), sleep).report("ACME", TODAY)
    assert _figs(res.figures)["jobs_open_roles"].value == 4
    assert 7.0 in sleep.waits
    assert server.count(GH_PATH) == 2


def test_5xx_is_retried(tmp_path: Path, server: FakeJobBoards) -> None:
    server.lever["acme"] = [lever_posting("a", "Role")]
    server.fault("/v0/postings/acme", "503", "badjson")
    res = _source(_settings(tmp_path, server, boards={"ACME": "lever:acme"})).report("ACME", TODAY)
    assert _figs(res.figures)["jobs_open_roles"].value == 1
    assert server.count("/v0/postings/acme") == 3


def test_403_is_a_degraded_line_not_a_crash(tmp_path: Path, server: FakeJobBoards) -> None:
    server.greenhouse["acme"] = _board()
    server.fault(GH_PATH, "403")
    res = _source(_settings(tmp_path, server)).report("ACME", TODAY)
    assert res.figures == ()
    [line] = [d for d in res.degraded if d.capability == "web.jobs"]
    assert line.reason.startswith("unavailable (greenhouse board 'acme'") and "HTTP 403" in line.reason
    assert read_recordings(tmp_path / "home", "ACME") == []


def test_unknown_board_404_names_the_board(tmp_path: Path, server: FakeJobBoards) -> None:
    res = _source(_settings(tmp_path, server, boards={"ACME": "greenhouse:nosuch"})).report("ACME", TODAY)
    assert res.figures == ()
    [line] = res.degraded
    assert line.capability == "web.jobs" and "'nosuch'" in line.reason and "HTTP 404" in line.reason
    assert "EQUIMIND_JOB_BOARDS" in line.reason
    res = _source(_settings(tmp_path, server, boards={"ACME": "lever:ghost"})).report("ACME", TODAY)
    assert "lever has no board 'ghost'" in res.degraded[0].reason


def test_empty_board_is_zero_open_roles_not_degraded(tmp_path: Path, server: FakeJobBoards) -> None:
    server.greenhouse["acme"] = []
    res = _source(_settings(tmp_path, server)).report("ACME", TODAY)
    figs = _figs(res.figures)
    assert figs["jobs_open_roles"].value == 0 and figs["jobs_new_30d"].value == 0
    assert not [d for d in res.degraded if d.capability == "web.jobs"]
    assert not [f for f in figs if f.startswith(("jobs_function_", "jobs_location_"))]


def test_malformed_postings_are_skipped_and_counted(tmp_path: Path, server: FakeJobBoards) -> None:
    bad_date = greenhouse_job(7, "Engineer", first_published="last tuesday")
    no_title = greenhouse_job(8, "")
    server.greenhouse["acme"] = [*_board(), bad_date, no_title, "not a job", {"title": "no id"}]  # type: ignore[list-item]
    res = _source(_settings(tmp_path, server)).report("ACME", TODAY)
    figs = _figs(res.figures)
    assert figs["jobs_open_roles"].value == 4
    assert figs["jobs_open_roles"].inputs["skipped_malformed"] == 4
    assert any(d.capability == "web.jobs.parse" and "4 malformed postings" in d.reason for d in res.degraded)


def test_a_response_of_the_wrong_shape_is_a_parse_error_naming_the_board(tmp_path: Path,
                                                                         server: FakeJobBoards) -> None:
    with pytest.raises(ParseError, match="greenhouse board 'acme'"):
        parse_greenhouse_page({"postings": []}, "acme")
    server.raw[GH_PATH] = b'[{"id": 1}]'
    res = _source(_settings(tmp_path, server)).report("ACME", TODAY)
    assert res.figures == () and "greenhouse board 'acme'" in res.degraded[0].reason
    assert read_recordings(tmp_path / "home", "ACME") == []  # nothing of the wrong shape is recorded


def test_not_configured_names_the_setting(tmp_path: Path, server: FakeJobBoards) -> None:
    res = _source(_settings(tmp_path, server, boards={})).report("nvda", TODAY)
    [line] = res.degraded
    assert str(line) == ("web.jobs: unavailable (no board configured for NVDA — set EQUIMIND_JOB_BOARDS, e.g. "
                         '\'{"NVDA": "greenhouse:BOARD"}\')')
    assert server.requests == []


# ------------------------------------------------------------------------------------------------ the as-of rule
def test_past_as_of_without_history_is_degraded_and_reads_nothing_live(tmp_path: Path,
                                                                      server: FakeJobBoards) -> None:
    server.greenhouse["acme"] = _board()
    res = _source(_settings(tmp_path, server)).report("ACME", date(2025, 6, 30))
    assert res.figures == ()
    [line] = res.degraded
    assert line.capability == "web.jobs"
    assert line.reason.startswith("unavailable (job boards publish only the roles open when read; nothing was "
                                  "retrieved on or before 2025-06-30 — ")
    assert "equimind snapshot record" in line.reason
    assert server.requests == []


def test_past_as_of_uses_the_latest_retrieval_on_or_before_it(tmp_path: Path, server: FakeJobBoards) -> None:
    home = tmp_path / "home"
    _recording(home, datetime(2025, 5, 1, 9, tzinfo=UTC), _jobs(5))
    late = [*_jobs(6), greenhouse_job(900, "Future role", first_published="2025-06-20T12:00:00Z")]
    _recording(home, datetime(2025, 6, 10, 9, tzinfo=UTC), late)  # the one for 2025-06-15
    _recording(home, datetime(2025, 6, 20, 9, tzinfo=UTC), _jobs(9))  # after the as-of date: never used
    res = _source(_settings(tmp_path, server)).report("ACME", date(2025, 6, 15))
    figs = _figs(res.figures)
    assert figs["jobs_open_roles"].value == 6
    assert figs["jobs_open_roles"].as_of == date(2025, 6, 10)
    assert figs["jobs_open_roles"].provenance["retrieved_at"] == "2025-06-10T09:00:00+00:00"
    assert server.requests == []


def test_postings_published_after_as_of_never_count(tmp_path: Path, server: FakeJobBoards) -> None:
    # today's read serves yesterday's as-of date (one day of allowance), but a role first published today does not
    server.greenhouse["acme"] = [*_jobs(3), greenhouse_job(9, "New today", first_published="2025-09-01T08:00:00Z")]
    res = _source(_settings(tmp_path, server)).report("ACME", TODAY - timedelta(days=1))
    opened = _figs(res.figures)["jobs_open_roles"]
    assert opened.value == 3 and opened.inputs["excluded_published_after_as_of"] == 1
    assert opened.as_of == TODAY - timedelta(days=1)
    assert server.count(GH_PATH) == 1


def test_live_failure_falls_back_to_the_stored_retrieval(tmp_path: Path, server: FakeJobBoards) -> None:
    _recording(tmp_path / "home", datetime(2025, 8, 30, 9, tzinfo=UTC), _jobs(5))
    server.fault(GH_PATH, "500", "500", "500")
    res = _source(_settings(tmp_path, server)).report("ACME", TODAY)
    assert _figs(res.figures)["jobs_open_roles"].value == 5
    live = [d for d in res.degraded if d.capability == "web.jobs.live"]
    assert live and "using the stored retrieval read on 2025-08-30" in live[0].reason


# ------------------------------------------------------------------------------------------------ changes
def test_30_and_90_day_change_from_recordings_with_z(tmp_path: Path, server: FakeJobBoards) -> None:
    home = tmp_path / "home"
    _recording(home, datetime(2025, 8, 4, 9, tzinfo=UTC), _jobs(40))  # 28 days before: within ±7 of 30
    _recording(home, datetime(2025, 7, 30, 9, tzinfo=UTC), _jobs(80))  # 33 days: farther
    _recording(home, datetime(2025, 5, 28, 9, tzinfo=UTC), _jobs(25))  # 96 days: within ±7 of 90
    server.greenhouse["acme"] = _jobs(50)
    res = _source(_settings(tmp_path, server)).report("ACME", TODAY)
    figs = _figs(res.figures)
    c30, c90 = figs["jobs_change_30d"], figs["jobs_change_90d"]
    assert c30.unit == "ratio" and c30.value == pytest.approx(50 / 40 - 1)
    assert c30.inputs["old"] == 40 and c30.inputs["new"] == 50
    assert c30.inputs["old_retrieved_at"] == "2025-08-04T09:00:00+00:00"
    assert c30.inputs["z"] == pytest.approx(10 / math.sqrt(90))
    assert c90.value == pytest.approx(1.0) and c90.inputs["z"] == pytest.approx(25 / math.sqrt(75))
    assert not [d for d in res.degraded if d.capability.startswith("web.jobs.change")]


def test_live_runs_build_the_history_that_changes_are_computed_from(tmp_path: Path, server: FakeJobBoards) -> None:
    settings = _settings(tmp_path, server)
    server.greenhouse["acme"] = _jobs(20)
    first = _source(settings, now=NOW - timedelta(days=30)).report("ACME", TODAY - timedelta(days=30))
    assert _figs(first.figures)["jobs_open_roles"].value == 20
    server.greenhouse["acme"] = _jobs(30)
    second = _source(settings).report("ACME", TODAY)
    c30 = _figs(second.figures)["jobs_change_30d"]
    assert (c30.inputs["old"], c30.inputs["new"]) == (20, 30)
    assert len(read_recordings(tmp_path / "home", "ACME")) == 2
    # a later run for the earlier date reads the stored retrieval, not the board
    before = len(server.requests)
    again = _source(settings).report("ACME", TODAY - timedelta(days=30))
    assert _figs(again.figures)["jobs_open_roles"].value == 20 and len(server.requests) == before


def test_product_terms_match_whole_words_in_title_or_text(tmp_path: Path, server: FakeJobBoards) -> None:
    server.greenhouse["acme"] = [
        greenhouse_job(1, "Senior CUDA Engineer"),
        greenhouse_job(2, "Platform Engineer", content_html="<p>Ship the <i>blackwell</i> launch.</p>"),
        greenhouse_job(3, "CUDAx Tooling Engineer"),  # not a whole word
        greenhouse_job(4, "Recruiter"),
    ]
    settings = _settings(tmp_path, server, terms={"acme": ["CUDA", "Blackwell", "Omniverse"]})
    res = _source(settings).report("ACME", TODAY)
    prod = _figs(res.figures)["jobs_product_roles"]
    assert prod.value == 2
    assert prod.inputs == {"CUDA": 1, "Blackwell": 1, "Omniverse": 0}
    assert not [d for d in res.degraded if d.capability == "web.jobs.product_roles"]


# ------------------------------------------------------------------------------------------------ recordings
def test_recording_round_trip(tmp_path: Path, server: FakeJobBoards) -> None:
    server.greenhouse["acme"] = _board()
    root = tmp_path / "snap"
    path = record_board(_settings(tmp_path, server), "acme", root, sleep=SleepRecorder(), now=lambda: NOW)
    assert path == recording_path(root, "ACME", "greenhouse", "acme", NOW)
    assert path.relative_to(root).as_posix() == "web/jobs/ACME/greenhouse-acme-20250901T120000Z.json"
    raw = json.loads(path.read_text())
    assert set(raw) == {"ticker", "kind", "board", "url", "retrieved_at", "pages"}
    assert raw["retrieved_at"] == "2025-09-01T12:00:00+00:00"
    assert raw["pages"] == [{"jobs": _board_as_served(), "meta": {"total": 4}}]  # as served, untouched
    [back] = read_recordings(root, "acme")
    assert back.retrieved_at == NOW and back.kind == "greenhouse" and back.board == "acme"
    assert [p.title for p in back.postings] == [j["title"] for j in _board()]


def _board_as_served() -> list[dict[str, Any]]:
    served: list[dict[str, Any]] = json.loads(json.dumps(_board()))
    return served


def test_no_partial_file_when_the_fetch_fails(tmp_path: Path, server: FakeJobBoards) -> None:
    server.lever["acme"] = [lever_posting(f"id-{i:04d}", f"Role {i}") for i in range(250)]
    root = tmp_path / "snap"
    settings = _settings(tmp_path, server, boards={"ACME": "lever:acme"}, retries=1)
    # page 1 succeeds, page 2 fails every attempt: nothing is written, not even a temp file
    original = server.resolve

    def failing_second_page(path: str, query: dict[str, str]) -> tuple[int, Any]:
        return (500, {"error": "boom"}) if query.get("skip") == "100" else original(path, query)

    server.resolve = failing_second_page  # type: ignore[method-assign]
    with pytest.raises(SourceError, match="HTTP 500"):
        record_board(settings, "ACME", root, sleep=SleepRecorder(), now=lambda: NOW)
    assert not root.exists() or [p for p in root.rglob("*") if p.is_file()] == []
    with pytest.raises(ConfigError, match="EQUIMIND_JOB_BOARDS"):
        record_board(settings, "OTHER", root)


def test_a_corrupt_recording_is_skipped_and_reported(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    root = tmp_path / "snap"
    good = _recording(root, datetime(2025, 8, 1, 9, tzinfo=UTC), _jobs(3))
    bad = good.with_name("greenhouse-acme-20250802T090000Z.json")
    bad.write_text('{"ticker": "ACME", "kind": "greenhouse", "pag')
    wrong = good.with_name("greenhouse-acme-20250803T090000Z.json")
    wrong.write_text(json.dumps({"ticker": "ACME", "kind": "greenhouse", "board": "acme", "url": "u",
                                 "retrieved_at": "2025-08-03T09:00:00Z", "pages": [{"nope": 1}]}))
    with caplog.at_level(logging.WARNING, logger="equimind.sources.jobs"):
        loaded = load_recordings(root, "ACME")
    assert [r.path for r in loaded.retrievals] == [good]
    assert len(loaded.problems) == 2 and bad.name in loaded.problems[0]
    assert "skipped" in caplog.text
    res = SnapshotJobBoards(root).report("ACME", date(2025, 8, 5))
    assert _figs(res.figures)["jobs_open_roles"].value == 3
    assert sum(d.capability == "web.jobs.history" for d in res.degraded) == 2


# ------------------------------------------------------------------------------------------------ snapshot replay
class _NoNetwork(httpx.BaseTransport):
    def handle_request(self, request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"the snapshot source used the network: {request.url}")


def test_snapshot_replay_reads_recordings_without_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_client(*args: object, **kwargs: object) -> None:
        raise AssertionError("the snapshot source built an HTTP client")

    monkeypatch.setattr(jobs_module, "PoliteHttpClient", no_client)
    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", _NoNetwork().handle_request)
    corpus = tmp_path / "corpus"
    _recording(corpus, datetime(2025, 7, 2, 9, tzinfo=UTC), _jobs(10))
    _recording(corpus, datetime(2025, 8, 1, 9, tzinfo=UTC), [*_jobs(12), greenhouse_job(
        1, "CUDA Engineer", first_published="2025-07-20T00:00:00Z")])
    src = SnapshotJobBoards(corpus, product_terms={"acme": ["CUDA"]})
    assert isinstance(src, WebIntelSource)
    res = src.report("acme", date(2025, 8, 1))
    figs = _figs(res.figures)
    assert figs["jobs_open_roles"].value == 13
    assert figs["jobs_open_roles"].provenance["origin"] == "snapshot"
    assert figs["jobs_change_30d"].inputs["old"] == 10 and figs["jobs_new_30d"].value == 1
    assert figs["jobs_product_roles"].value == 1
    early = src.report("ACME", date(2025, 7, 1))
    assert early.figures == () and "nothing was retrieved on or before 2025-07-01" in early.degraded[0].reason
    missing = src.report("MSFT", date(2025, 8, 1))
    [line] = missing.degraded
    assert line.capability == "web.jobs" and "`equimind snapshot record`" in line.reason
    assert "EQUIMIND_JOB_BOARDS" in line.reason
