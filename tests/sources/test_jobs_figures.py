"""The hiring figures (``equimind.sources.jobs_figures``) as pure functions over hand-built board retrievals: ids, the
top-5 breakdowns, window boundaries, the as-of exclusion, the choice of the comparison retrieval, the Poisson z and
the whole-word product match. No I/O."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta

import pytest

from equimind.sources.jobs_figures import (
    BoardRetrieval,
    JobPosting,
    change_figures,
    choose_retrieval,
    count_figures,
    hiring_figures,
    nearest_retrieval,
    product_figure,
    provenance,
    slug,
    term_pattern,
)

AS_OF = date(2025, 9, 1)


def _p(i: int, *, function: str = "Engineering", location: str = "Austin, TX",
       published: date | None = date(2025, 1, 1), title: str = "Engineer", text: str = "",
       field: str = "first_published") -> JobPosting:
    when = datetime(published.year, published.month, published.day, 12, tzinfo=UTC) if published else None
    return JobPosting(id=str(i), title=title, function=function, location=location, first_published=when,
                      url=f"https://example.test/{i}", text=text, published_field=field)  # type: ignore[arg-type]


def _r(day: date, postings: list[JobPosting], *, board: str = "acme", skipped: int = 0) -> BoardRetrieval:
    return BoardRetrieval(ticker="ACME", kind="greenhouse", board=board, url=f"https://x.test/{board}",
                          retrieved_at=datetime(day.year, day.month, day.day, 9, tzinfo=UTC),
                          postings=tuple(postings), skipped=skipped)


def _by_id(figures: list) -> dict:  # type: ignore[type-arg]
    return {f.id: f for f in figures}


def test_slug() -> None:
    assert slug("Engineering") == "engineering"
    assert slug("R&D / Hardware") == "r_d_hardware"
    assert slug("Santa Clara, CA") == "santa_clara_ca"
    assert slug("—") == "unspecified"


def test_top_five_functions_and_locations_with_full_breakdown() -> None:
    postings = [_p(i, function=f"F{i % 7}", location=f"L{i % 3}") for i in range(7 * 3)]
    postings += [_p(100 + i, function="F6") for i in range(4)]
    figs = _by_id(count_figures(_r(AS_OF, postings), AS_OF, "live"))
    opened = figs["jobs_open_roles"]
    assert opened.value == 25
    assert list(opened.inputs["by_function"]) == ["F6", "F0", "F1", "F2", "F3", "F4", "F5"]  # by count, then name
    assert len(opened.inputs["by_location"]) == 4
    functions = sorted(k for k in figs if k.startswith("jobs_function_"))
    assert functions == ["jobs_function_f0", "jobs_function_f1", "jobs_function_f2", "jobs_function_f3",
                         "jobs_function_f6"]
    assert figs["jobs_function_f6"].value == 7 and figs["jobs_function_f6"].name == "Open roles: F6"
    assert figs["jobs_location_austin_tx"].value == 4


def test_colliding_slugs_get_distinct_ids() -> None:
    figs = _by_id(count_figures(_r(AS_OF, [_p(1, function="R&D"), _p(2, function="R D")]), AS_OF, "live"))
    assert {"jobs_function_r_d", "jobs_function_r_d_2"} <= set(figs)


def test_new_windows_are_half_open_and_exclude_postings_after_as_of() -> None:
    postings = [_p(1, published=AS_OF - timedelta(days=30)),  # on the boundary: out of the 30-day window
                _p(2, published=AS_OF - timedelta(days=29)), _p(3, published=AS_OF),
                _p(4, published=AS_OF - timedelta(days=89)), _p(5, published=None),
                _p(6, published=AS_OF + timedelta(days=1))]  # after the as-of date: never counts
    figs = _by_id(count_figures(_r(AS_OF + timedelta(days=1), postings), AS_OF, "live"))
    assert figs["jobs_open_roles"].value == 5
    assert figs["jobs_open_roles"].inputs["excluded_published_after_as_of"] == 1
    assert figs["jobs_open_roles"].as_of == AS_OF  # a read of the next day is not dated after the as-of date
    assert figs["jobs_new_30d"].value == 2
    assert figs["jobs_new_90d"].value == 4 and figs["jobs_new_90d"].inputs["undated"] == 1


def test_choose_retrieval_is_the_latest_on_or_before_as_of() -> None:
    rs = [_r(date(2025, 8, 1), []), _r(date(2025, 8, 20), []), _r(date(2025, 9, 2), [])]
    assert choose_retrieval(rs, AS_OF) is rs[1]
    assert choose_retrieval(rs, date(2025, 8, 20)) is rs[1]
    assert choose_retrieval(rs, date(2025, 7, 31)) is None


def test_nearest_retrieval_within_seven_days_same_board_earlier_only() -> None:
    current = _r(AS_OF, [])
    target = AS_OF - timedelta(days=30)
    a, b = _r(target - timedelta(days=3), []), _r(target + timedelta(days=3), [])
    assert nearest_retrieval([b, a], current, target) is a  # a tie goes to the earlier one
    far = _r(target - timedelta(days=8), [])
    other = _r(target, [], board="other")
    later = _r(AS_OF + timedelta(days=1), [])
    assert nearest_retrieval([far, other, later], current, target) is None


def test_change_ratio_and_poisson_z() -> None:
    current = _r(AS_OF, [_p(i) for i in range(30)])
    old = _r(AS_OF - timedelta(days=31), [_p(i) for i in range(20)])
    figures, degraded = change_figures(current, [old], AS_OF, "snapshot")
    [c30] = figures
    assert c30.id == "jobs_change_30d" and c30.unit == "ratio"
    assert c30.value == pytest.approx(0.5)
    assert c30.inputs["z"] == pytest.approx(10 / math.sqrt(50))
    assert c30.provenance["compared_with"]["retrieved_at"] == old.retrieved_at.isoformat()
    [missing] = degraded
    assert missing.capability == "web.jobs.change_90d"
    assert missing.reason.startswith("needs a board retrieval from about 2025-06-03 (±7 days)")


def test_change_from_an_empty_board_is_undefined_not_infinite() -> None:
    current = _r(AS_OF, [_p(1)])
    figures, degraded = change_figures(current, [_r(AS_OF - timedelta(days=30), [])], AS_OF, "live")
    assert figures == []
    assert any("relative change is undefined" in d.reason for d in degraded)


def test_term_pattern_is_whole_word_and_case_insensitive() -> None:
    assert term_pattern("CUDA").search("senior cuda engineer")
    assert not term_pattern("CUDA").search("CUDAx tooling")
    assert not term_pattern("AI").search("email campaigns")
    assert term_pattern("C++").search("Senior C++ Engineer")
    assert term_pattern("Data Center").search("data center networking")


def test_product_figure_counts_each_role_once() -> None:
    r = _r(AS_OF, [_p(1, title="CUDA Engineer", text="Blackwell bring-up"), _p(2, title="Recruiter"),
                   _p(3, title="Engineer", text="blackwell")])
    fig, missing = product_figure(r, AS_OF, ["CUDA", "Blackwell"], "live")
    assert missing is None and fig is not None
    assert fig.value == 2 and fig.inputs == {"CUDA": 1, "Blackwell": 2}
    fig, missing = product_figure(r, AS_OF, [], "live")
    assert fig is None and missing is not None and "EQUIMIND_PRODUCT_TERMS" in missing.reason


def test_provenance_names_the_date_field_and_the_fallback() -> None:
    r = _r(AS_OF, [_p(1), _p(2, field="updated_at")])
    prov = provenance(r, "live")
    assert {k: prov[k] for k in ("source", "board", "url", "retrieved_at", "origin")} == {
        "source": "greenhouse", "board": "acme", "url": "https://x.test/acme",
        "retrieved_at": "2025-09-01T09:00:00+00:00", "origin": "live"}
    assert prov["published_field"] in ("first_published", "updated_at")
    assert "1 of 2 postings have no first_published" in prov["published_field_note"]


def test_hiring_figures_ids_and_shared_provenance() -> None:
    current = _r(AS_OF, [_p(1, title="CUDA Engineer")], skipped=2)
    figures, degraded = hiring_figures(current, [_r(AS_OF - timedelta(days=90), [_p(9)])], AS_OF, ["CUDA"], "live")
    ids = {f.id for f in figures}
    assert ids == {"jobs_open_roles", "jobs_function_engineering", "jobs_location_austin_tx", "jobs_new_30d",
                   "jobs_new_90d", "jobs_change_90d", "jobs_product_roles"}
    assert all(f.provenance["retrieved_at"] == current.retrieved_at.isoformat() for f in figures)
    assert all(f.formula and f.as_of == AS_OF for f in figures)
    assert {d.capability for d in degraded} == {"web.jobs.change_30d", "web.jobs.parse"}
