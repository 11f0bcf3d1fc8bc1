"""Code-activity figures from GitHub's weekly commit statistics (pure: no I/O, no clock).

Input: per repository, commits per week per author login, as GitHub's ``/repos/{owner}/{repo}/stats/contributors``
reports them (weeks start on Sunday 00:00 UTC; merge commits are not counted; only the repository's top 100
contributors are listed). ``parse_contributor_stats`` turns that JSON into ``RepoWeeks.weeks``; it is total: a row it
cannot read is skipped and counted, never raised.

The week rule. A week counts only when it is complete by the as-of date: week start + 7 days <= as_of + 1 day (its
Saturday is on or before as_of), and, when the data was retrieved at a known time, complete by then too (week start +
7 days <= retrieval time). The 13 counted weeks ending at the last such week are "this quarter", the 13 before them
"the prior quarter". A figure's ``as_of`` is the last counted week's end (its Saturday).

Figures (ids):
- ``github_commits_13w``: commits in this quarter over the counted repositories (inputs: the weekly series),
- ``github_contributors_13w``: distinct author logins with at least one commit in this quarter,
- ``github_commits_change_qoq`` / ``github_contributors_change_qoq``: this quarter / the prior - 1 (unit "ratio");
  inputs ``old``, ``new`` and ``z`` = (new - old) / sqrt(new + old), the change in units of Poisson noise, so a rule
  can ask for a change beyond noise. A prior quarter of zero, or data that does not reach back to the prior quarter's
  first week, is a degraded line (``web.github.change_qoq``), never a division by zero or a partial comparison,
- ``github_trending_1`` .. ``_3``: the repositories whose commits in the last 4 counted weeks most exceed their weekly
  average of the 9 weeks before (ratio of weekly rates; at least 5 commits in the 4 weeks; a repository with no
  commits in the 9 weeks before ranks first, ratio None); value = commits in the 4 weeks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from equimind.core.degraded import Degradation
from equimind.core.errors import ParseError
from equimind.core.research import Figure

WEEK = timedelta(days=7)
QUARTER_WEEKS = 13
TREND_WEEKS = 4
TREND_BASE_WEEKS = 9
TREND_MIN_COMMITS = 5
TREND_TOP = 3
STALE_DAYS = 28  # data whose last counted week ends this long before the as-of date is not reported as current
CAPABILITY = "web.github"


@dataclass(frozen=True)
class ParsedStats:
    """Commits per week start (a Sunday) per author login ("" for a row without an account); rows skipped."""

    weeks: dict[date, dict[str, int]]
    skipped_rows: int = 0


@dataclass(frozen=True)
class RepoWeeks:
    """One counted repository: its weekly commits per author, where they were read, and what the trending figure
    cites (html_url, stars)."""

    full_name: str
    weeks: Mapping[date, Mapping[str, int]]
    html_url: str = ""
    stars: int = 0
    stats_url: str = ""


@dataclass
class Windows:
    """The counted weeks for an as-of date: this quarter and the prior one (week starts, oldest first)."""

    this: list[date] = field(default_factory=list)
    prior: list[date] = field(default_factory=list)

    @property
    def end(self) -> date:
        """The last counted week's end (its Saturday)."""
        return self.this[-1] + timedelta(days=6)


def week_start(day: date) -> date:
    """The Sunday on or before ``day`` (GitHub's weeks start on Sunday)."""
    return day - timedelta(days=(day.weekday() + 1) % 7)


def last_complete_week(as_of: date, retrieved_at: datetime | None = None) -> date:
    """The start of the last week complete by ``as_of`` (start + 7 days <= as_of + 1 day) and, when given, by the
    retrieval time (start + 7 days <= retrieved_at: a week still running when the data was read is partial)."""
    limit = as_of + timedelta(days=1)
    if retrieved_at is not None:
        when = retrieved_at if retrieved_at.tzinfo is not None else retrieved_at.replace(tzinfo=UTC)
        limit = min(limit, when.astimezone(UTC).date())
    return week_start(limit - WEEK)


def windows(as_of: date, retrieved_at: datetime | None = None) -> Windows:
    last = last_complete_week(as_of, retrieved_at)
    starts = [last - WEEK * i for i in range(2 * QUARTER_WEEKS - 1, -1, -1)]
    return Windows(this=starts[QUARTER_WEEKS:], prior=starts[:QUARTER_WEEKS])


def parse_contributor_stats(obj: Any) -> ParsedStats:
    """GitHub ``stats/contributors`` JSON (None for a 204, an empty repository) → commits per week per login.

    Total over rows: a row without a readable ``weeks`` list (or with an unreadable week) is skipped as a whole and
    counted. A body that is not a list at all (e.g. the ``{}`` of a 202) raises ParseError: there is nothing to count.
    """
    if obj is None:
        return ParsedStats({}, 0)
    if not isinstance(obj, list):
        raise ParseError(f"stats/contributors is not a list of contributors (got {type(obj).__name__})")
    weeks: dict[date, dict[str, int]] = {}
    skipped = 0
    for row in obj:
        try:
            author = row.get("author")
            login = str(author["login"]) if isinstance(author, dict) and author.get("login") else ""
            parsed: list[tuple[date, int]] = []
            for wk in row["weeks"]:
                commits = int(wk["c"])
                if commits < 0:
                    raise ValueError("negative commit count")
                parsed.append((week_start(datetime.fromtimestamp(int(wk["w"]), UTC).date()), commits))
        except (AttributeError, KeyError, TypeError, ValueError, OverflowError, OSError):
            skipped += 1
            continue
        for start, commits in parsed:
            if commits:
                per_author = weeks.setdefault(start, {})
                per_author[login] = per_author.get(login, 0) + commits
            else:
                weeks.setdefault(start, {})
    return ParsedStats(weeks, skipped)


def _commits(repo: RepoWeeks, starts: Sequence[date]) -> int:
    return sum(sum(repo.weeks.get(s, {}).values()) for s in starts)


def _logins(repos: Sequence[RepoWeeks], starts: Sequence[date]) -> set[str]:
    return {login for r in repos for s in starts for login, c in r.weeks.get(s, {}).items() if c > 0 and login}


def poisson_z(old: float, new: float) -> float:
    """(new - old) / sqrt(new + old): the change in units of the noise of two Poisson counts (0 when both are 0)."""
    total = new + old
    return (new - old) / math.sqrt(total) if total > 0 else 0.0


def activity_figures(repos: Sequence[RepoWeeks], as_of: date, *, retrieved_at: datetime | None,
                     provenance: Mapping[str, Any]) -> tuple[list[Figure], list[Degradation]]:
    """The code-activity figures (module docstring) of ``repos`` at ``as_of``; ``provenance`` is the source's
    (source, orgs, url, retrieved_at, origin, repos_counted, caveats) and goes on every figure."""
    degraded: list[Degradation] = []
    if not repos:
        return [], [Degradation(capability=CAPABILITY, reason="no repository could be counted")]
    win = windows(as_of, retrieved_at)
    end = win.end
    if (as_of - end).days > STALE_DAYS:  # only when the data was retrieved well before the as-of date
        when = f" (retrieved {retrieved_at:%Y-%m-%d})" if retrieved_at is not None else ""
        return [], [Degradation(capability=CAPABILITY, reason=(
            f"the GitHub data ends with the week of {win.this[-1]}{when}, more than {STALE_DAYS} days before "
            f"{as_of}; record it again"))]
    prov = dict(provenance)
    period = f"the {QUARTER_WEEKS} complete weeks {win.this[0]} to {end}"
    weekly = {s.isoformat(): sum(_commits(r, [s]) for r in repos) for s in win.this}
    weekly_people = {s.isoformat(): len(_logins(repos, [s])) for s in win.this}
    new_c = sum(weekly.values())
    new_p = len(_logins(repos, win.this))
    figures = [
        Figure(id="github_commits_13w", name=f"GitHub commits, last {QUARTER_WEEKS} weeks", value=float(new_c),
               unit="commits", as_of=end,
               formula=f"Sum of the commits GitHub counts (merge commits excluded) in {period}, over the counted "
                       "public repositories of the company's organisations.",
               inputs={"weekly": weekly}, provenance=prov),
        Figure(id="github_contributors_13w", name=f"GitHub contributors active, last {QUARTER_WEEKS} weeks",
               value=float(new_p), unit="contributors", as_of=end,
               formula=f"Number of distinct author logins with at least one commit in {period}, over the counted "
                       "public repositories.",
               inputs={"weekly": weekly_people}, provenance=prov),
    ]
    earliest = min((s for r in repos for s in r.weeks), default=None)
    old_c = sum(_commits(r, win.prior) for r in repos)
    old_p = len(_logins(repos, win.prior))
    prior = f"the prior {QUARTER_WEEKS} weeks ({win.prior[0]} to {win.prior[-1] + timedelta(days=6)})"
    if earliest is None or earliest > win.prior[0]:
        degraded.append(Degradation(capability=f"{CAPABILITY}.change_qoq", reason=(
            f"the weekly data starts {earliest or 'nowhere'}, after the prior quarter's first week {win.prior[0]}; "
            "a partial quarter is not compared")))
    else:
        for key, label, old, new in (("commits", "commits", old_c, new_c), ("contributors", "active contributors",
                                                                            old_p, new_p)):
            if old == 0:
                degraded.append(Degradation(capability=f"{CAPABILITY}.change_qoq", reason=(
                    f"no {label} in {prior}; a change from zero is not a ratio")))
                continue
            figures.append(Figure(
                id=f"github_{key}_change_qoq", name=f"GitHub {label}, change on the prior {QUARTER_WEEKS} weeks",
                value=new / old - 1, unit="ratio", as_of=end,
                formula=f"{label.capitalize()} in {period} divided by those in {prior}, minus 1; z = (new - old) / "
                        "sqrt(new + old) is the change in units of Poisson noise.",
                inputs={"old": old, "new": new, "z": poisson_z(old, new)}, provenance=prov))
    figures += trending(repos, win, prov)
    return figures, degraded


def trending(repos: Sequence[RepoWeeks], win: Windows, provenance: Mapping[str, Any]) -> list[Figure]:
    """Up to three ``github_trending_N`` figures (module docstring for the rule)."""
    recent, base = win.this[-TREND_WEEKS:], win.this[-(TREND_WEEKS + TREND_BASE_WEEKS):-TREND_WEEKS]
    ranked: list[tuple[float, int, RepoWeeks, float | None, float]] = []
    for r in repos:
        c4 = _commits(r, recent)
        avg = _commits(r, base) / TREND_BASE_WEEKS
        if c4 < TREND_MIN_COMMITS:
            continue
        ratio = (c4 / TREND_WEEKS) / avg if avg > 0 else None
        if ratio is not None and ratio <= 1.0:
            continue
        ranked.append((math.inf if ratio is None else ratio, c4, r, ratio, avg))
    ranked.sort(key=lambda t: (-t[0], -t[1], t[2].full_name))
    out = []
    for i, (_, c4, r, ratio, avg) in enumerate(ranked[:TREND_TOP], start=1):
        prov = {**provenance, "url": r.stats_url or provenance.get("url"), "repository": r.full_name}
        out.append(Figure(
            id=f"github_trending_{i}", name=f"Trending repository: {r.full_name}", value=float(c4), unit="commits",
            as_of=win.end,
            formula=(f"Commits to {r.full_name} in the {TREND_WEEKS} complete weeks {recent[0]} to {win.end}; ranked "
                     f"{i} by the ratio of its weekly commits in those weeks to its weekly average over the "
                     f"{TREND_BASE_WEEKS} weeks before (at least {TREND_MIN_COMMITS} commits; no commits before "
                     "ranks first)."),
            inputs={"ratio": ratio, "prior_weekly_average": avg, "html_url": r.html_url, "stars": r.stars},
            provenance=prov))
    return out
