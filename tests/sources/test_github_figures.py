"""The code-activity figures (sources/github_figures.py): the week rule, the quarter comparison with its Poisson z,
the trending ranking, and parsing that skips what it cannot read."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

import pytest

from equimind.core.errors import ParseError
from equimind.sources.github_figures import (
    RepoWeeks,
    activity_figures,
    last_complete_week,
    parse_contributor_stats,
    windows,
)

AS_OF = date(2025, 6, 30)  # a Monday: the week of Sunday 2025-06-22 (to Saturday 06-28) is the last complete one
LAST = date(2025, 6, 22)
PROV = {"source": "github", "origin": "live"}


def _weeks(n: int, end: date = LAST) -> list[date]:
    return [end - timedelta(days=7 * i) for i in range(n - 1, -1, -1)]


def _repo(name: str, commits: dict[date, dict[str, int]], first: date = date(2024, 1, 7)) -> RepoWeeks:
    weeks: dict[date, dict[str, int]] = {first: {}}
    weeks.update(commits)
    return RepoWeeks(f"acme/{name}", weeks, html_url=f"https://github.com/acme/{name}", stars=3,
                     stats_url=f"http://api/repos/acme/{name}/stats/contributors")


def _by_id(figures: list) -> dict:  # type: ignore[type-arg]
    return {f.id: f for f in figures}


def test_a_week_counts_only_when_complete_by_the_as_of_date_and_the_retrieval() -> None:
    assert last_complete_week(AS_OF) == LAST
    assert last_complete_week(date(2025, 6, 28)) == LAST  # its Saturday is the as-of date: complete
    assert last_complete_week(date(2025, 6, 27)) == date(2025, 6, 15)
    retrieved = datetime(2025, 6, 28, 12, tzinfo=UTC)  # the week of 06-22 was still running when read
    assert last_complete_week(date(2025, 7, 31), retrieved) == date(2025, 6, 15)
    win = windows(AS_OF)
    assert win.this == _weeks(13) and win.prior == _weeks(13, LAST - timedelta(days=7 * 13))
    assert win.end == date(2025, 6, 28)


def test_quarter_totals_and_change_with_poisson_z() -> None:
    this, prior = _weeks(13), _weeks(13, LAST - timedelta(days=91))
    a = _repo("a", {**{w: {"ann": 2} for w in this}, **{w: {"ann": 1, "bob": 1} for w in prior},
                    LAST + timedelta(days=7): {"late": 500}})  # the week after the as-of date must not count
    b = _repo("b", {this[0]: {"cy": 4, "ann": 1}, prior[0]: {"dee": 6}})
    figures, degraded = activity_figures([a, b], AS_OF, retrieved_at=datetime(2025, 8, 1, tzinfo=UTC),
                                         provenance=PROV)
    f = _by_id(figures)
    assert degraded == []
    assert f["github_commits_13w"].value == 26 + 5
    assert f["github_commits_13w"].as_of == date(2025, 6, 28)
    assert f["github_commits_13w"].inputs["weekly"][this[0].isoformat()] == 2 + 5
    assert len(f["github_commits_13w"].inputs["weekly"]) == 13
    assert f["github_contributors_13w"].value == 2  # ann, cy
    change = f["github_commits_change_qoq"]
    assert change.unit == "ratio" and change.value == pytest.approx(31 / 32 - 1)
    assert change.inputs == {"old": 32, "new": 31, "z": pytest.approx((31 - 32) / math.sqrt(63))}
    people = f["github_contributors_change_qoq"]
    assert people.inputs["old"] == 3 and people.inputs["new"] == 2  # ann, bob, dee before
    assert people.inputs["z"] == pytest.approx(-1 / math.sqrt(5))
    assert all(fig.provenance["source"] == "github" and fig.formula for fig in figures)


def test_a_prior_quarter_of_zero_or_too_short_history_degrades_the_change() -> None:
    this = _weeks(13)
    quiet_before = _repo("a", {w: {"ann": 1} for w in this})
    figures, degraded = activity_figures([quiet_before], AS_OF, retrieved_at=None, provenance=PROV)
    assert "github_commits_change_qoq" not in _by_id(figures)
    assert "github_commits_13w" in _by_id(figures)
    assert degraded and all(d.capability == "web.github.change_qoq" for d in degraded)
    assert "from zero" in degraded[0].reason
    young = RepoWeeks("acme/young", {w: {"ann": 1} for w in this})  # no week before this quarter at all
    figures, degraded = activity_figures([young], AS_OF, retrieved_at=None, provenance=PROV)
    assert [d.capability for d in degraded] == ["web.github.change_qoq"]
    assert "partial quarter" in degraded[0].reason


def test_trending_ranks_by_recent_rate_over_the_nine_weeks_before() -> None:
    this = _weeks(13)
    recent, base = this[-4:], this[-13:-4]
    hot = _repo("hot", {**{w: {"a": 1} for w in base}, **{w: {"a": 5} for w in recent}})  # 5/wk over 1/wk: 5x
    warm = _repo("warm", {**{w: {"a": 2} for w in base}, **{w: {"a": 4} for w in recent}})  # 2x
    new = _repo("new", {recent[-1]: {"b": 6}})  # nothing in the 9 weeks before: ranks first
    small = _repo("small", {recent[-1]: {"c": 4}})  # fewer than 5 commits: not trending
    cooling = _repo("cooling", {**{w: {"a": 5} for w in base}, **{w: {"a": 1} for w in recent}})
    figures, _ = activity_figures([cooling, small, warm, hot, new], AS_OF, retrieved_at=None, provenance=PROV)
    f = _by_id(figures)
    assert [f[f"github_trending_{i}"].name for i in (1, 2, 3)] == [
        "Trending repository: acme/new", "Trending repository: acme/hot", "Trending repository: acme/warm"]
    assert f["github_trending_1"].inputs["ratio"] is None and f["github_trending_1"].value == 6
    hot_fig = f["github_trending_2"]
    assert hot_fig.value == 20 and hot_fig.inputs["ratio"] == pytest.approx(5.0)
    assert hot_fig.inputs["prior_weekly_average"] == pytest.approx(1.0)
    assert hot_fig.inputs["html_url"] == "https://github.com/acme/hot" and hot_fig.inputs["stars"] == 3
    assert hot_fig.provenance["url"] == "http://api/repos/acme/hot/stats/contributors"


def test_data_retrieved_long_before_the_as_of_date_is_not_reported_as_current() -> None:
    repo = _repo("a", {w: {"ann": 1} for w in _weeks(30)})
    figures, degraded = activity_figures([repo], date(2025, 12, 31), retrieved_at=datetime(2025, 7, 1, tzinfo=UTC),
                                         provenance=PROV)
    assert figures == [] and "record it again" in degraded[0].reason


def test_parsing_is_total_over_rows() -> None:
    w = int(datetime(2025, 6, 22, tzinfo=UTC).timestamp())
    body = [
        {"author": {"login": "ann"}, "total": 3, "weeks": [{"w": w, "a": 1, "d": 1, "c": 3}]},
        {"author": None, "total": 2, "weeks": [{"w": w, "a": 1, "d": 1, "c": 2}]},  # a deleted account
        {"author": {"login": "bad"}, "weeks": [{"w": "x", "c": 1}]},
        {"author": {"login": "neg"}, "weeks": [{"w": w, "c": -1}]},
        "not a row",
    ]
    parsed = parse_contributor_stats(body)
    assert parsed.skipped_rows == 3
    assert parsed.weeks == {LAST: {"ann": 3, "": 2}}
    assert parse_contributor_stats(None).weeks == {}  # 204: an empty repository
    with pytest.raises(ParseError):
        parse_contributor_stats({})  # the body of a 202
