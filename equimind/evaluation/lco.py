"""Leave-company-out measurement of the tuning parameters (``equimind.core.tunables``) over judged answer rows.

Every word list, threshold and weight is chosen leave-company-out: fit on the other companies' questions, scored on
the held company's. Folds are companies (FinanceBench ``company``, golden: the question's first ticker); each judged
row carries its ``id`` and ``company``.

1. The answer path answers every question once with every parameter at its default (the plain **dev** figure) and
   once per other candidate value of each parameter, the others at their defaults; the judged rows are cached per
   setting (``Setting``: the non-default values, sorted).
2. For each held company, each parameter's value is the one with the best score over the *other* companies'
   questions, chosen coordinate-wise (each parameter on its own, the others at their defaults), the default winning
   ties. The held company's questions are then scored under the chosen values (answered once more when a fold chose
   a combination of non-default values that was never run).
3. The **leave-company-out** estimate pools the held companies' rows. Beside it: the dev figure and the
   **tuned on all dev** figure (each parameter chosen on every question, scored on the same questions: what a tuner
   reading dev would report). A choice that lifts the tuned-on-all figure but not the leave-company-out one is
   overfitting.

Score of a set of rows = sum over the part's measures of weight x share (FinanceBench: answer-bearing share;
golden: correct share minus false-refusal share). Every measure is reported per group (question type, computed vs
extracted) with Wilson 95 % intervals.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from equimind.core.tunables import Tunable, get, overridden, registered
from equimind.evaluation.answer_probe import wilson

Row = dict[str, Any]
Setting = tuple[tuple[str, Any], ...]  # the non-default values of a run, sorted by name; () = every default
Asker = Callable[[Mapping[str, Any]], list[Row]]  # answers every question under these overrides; judged rows
EPS = 1e-12


@dataclass(frozen=True)
class Measure:
    name: str
    hit: Callable[[Row], bool]
    weight: float  # in the score; 0: reported only


@dataclass(frozen=True)
class PartSpec:
    """How one part's rows are scored and grouped."""

    name: str
    measures: tuple[Measure, ...]
    groups: Callable[[Row], Sequence[str]]
    score_doc: str


def score(spec: PartSpec, rows: Sequence[Row]) -> float:
    if not rows:
        return 0.0
    return sum(m.weight * sum(1 for r in rows if m.hit(r)) for m in spec.measures if m.weight) / len(rows)


def setting_of(values: Mapping[str, Any], tunables: Sequence[Tunable]) -> Setting:
    defaults = {t.name: t.default for t in tunables}
    return tuple(sorted((k, v) for k, v in values.items() if k not in defaults or v != defaults[k]))


class Runs:
    """Judged rows per setting, answered on first use (``ask``) and kept."""

    def __init__(self, ask: Asker, known: Mapping[Setting, Sequence[Row]] | None = None) -> None:
        self.ask = ask
        self._rows: dict[Setting, dict[str, Row]] = {}
        for setting, rows in (known or {}).items():
            self._rows[setting] = {r["id"]: r for r in rows}

    def rows(self, setting: Setting) -> dict[str, Row]:
        if setting not in self._rows:
            self._rows[setting] = {r["id"]: r for r in self.ask(dict(setting))}
        return self._rows[setting]

    def settings_run(self) -> int:
        return len(self._rows)


def choose(spec: PartSpec, runs: Runs, tunables: Sequence[Tunable], ids: Sequence[str]) -> dict[str, Any]:
    """Each tunable's best value over the questions ``ids`` (coordinate-wise, the others at their defaults); a value
    must beat the default strictly, and an earlier candidate wins a tie among the others."""
    chosen: dict[str, Any] = {}
    for t in tunables:
        best, best_score = t.default, score(spec, [runs.rows(())[i] for i in ids])
        for value in t.candidates:
            if value == t.default:
                continue
            rows = runs.rows(((t.name, value),))
            s = score(spec, [rows[i] for i in ids])
            if s > best_score + EPS:
                best, best_score = value, s
        chosen[t.name] = best
    return chosen


def _share(k: int, n: int) -> dict[str, Any]:
    return {"k": k, "n": n, "share": round(k / n, 3) if n else None, "ci95": wilson(k, n)}


def tally(spec: PartSpec, rows: Sequence[Row]) -> dict[str, Any]:
    """Per group: n, each measure's share with its Wilson interval, and the score."""
    groups: dict[str, list[Row]] = {}
    for r in rows:
        for g in spec.groups(r):
            groups.setdefault(g, []).append(r)
    return {g: {"n": len(mine), "score": round(score(spec, mine), 4),
                **{m.name: _share(sum(1 for r in mine if m.hit(r)), len(mine)) for m in spec.measures}}
            for g, mine in sorted(groups.items(), key=lambda kv: (kv[0] != "all", kv[0]))}


def _folds(spec: PartSpec, runs: Runs, tunables: Sequence[Tunable]) -> tuple[list[dict[str, Any]], list[Row]]:
    base = runs.rows(())
    companies = sorted({str(r["company"]) for r in base.values()})
    folds: list[dict[str, Any]] = []
    held_rows: list[Row] = []
    for company in companies:
        held = [i for i, r in base.items() if r["company"] == company]
        train = [i for i, r in base.items() if r["company"] != company]
        chosen = choose(spec, runs, tunables, train)
        rows = runs.rows(setting_of(chosen, tunables))
        mine = [rows[i] for i in held]
        held_rows += mine
        folds.append({"company": company, "n": len(held), "chosen": chosen,
                      "changed": dict(setting_of(chosen, tunables)),
                      "held_score_default": round(score(spec, [base[i] for i in held]), 4),
                      "held_score": round(score(spec, mine), 4)})
    return folds, held_rows


def _sweep(spec: PartSpec, runs: Runs, tunables: Sequence[Tunable]) -> dict[str, list[dict[str, Any]]]:
    """Each tunable's score per candidate over every question (the others at their defaults)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for t in tunables:
        out[t.name] = [{"value": v, "default": v == t.default,
                        "score": round(score(spec, list(runs.rows(setting_of({t.name: v}, tunables)).values())), 4)}
                       for v in t.candidates]
    return out


def _note(tunables: Sequence[Tunable], folds: Sequence[dict[str, Any]]) -> str:
    if not tunables:
        return "no tunables registered (or named): the leave-company-out estimate is the dev figure"
    if all(not f["changed"] for f in folds):
        return "every fold chose the defaults: the leave-company-out estimate equals the dev figure"
    moved = sum(1 for f in folds if f["changed"])
    return f"{moved} of {len(folds)} folds chose a non-default value"


def leave_company_out(spec: PartSpec, tunables: Sequence[Tunable], ask: Asker,
                      known: Mapping[Setting, Sequence[Row]] | None = None) -> dict[str, Any]:
    """The part's leave-company-out block (module docstring). ``ask`` answers and judges every question under the
    given overrides, each row with ``id`` and ``company``; ``known``: rows already judged (e.g. ``{(): dev rows}``)."""
    runs = Runs(ask, known)
    for t in tunables:  # every candidate once over every question: the cache the folds choose from
        for value in t.candidates:
            runs.rows(setting_of({t.name: value}, tunables))
    folds, held_rows = _folds(spec, runs, tunables)
    base = list(runs.rows(()).values())
    best = choose(spec, runs, tunables, [r["id"] for r in base])
    best_rows = list(runs.rows(setting_of(best, tunables)).values())
    return {
        "part": spec.name, "folds_by": "company", "score": spec.score_doc, "questions": len(base),
        "tunables": {t.name: {"default": t.default, "candidates": list(t.candidates), "doc": t.doc}
                     for t in tunables},
        "dev_score": round(score(spec, base), 4),
        "tuned_on_all_score": round(score(spec, best_rows), 4),
        "lco_score": round(score(spec, held_rows), 4),
        "tuned_on_all_values": best,
        "note": _note(tunables, folds),
        "dev": tally(spec, base), "tuned_on_all": tally(spec, best_rows), "lco": tally(spec, held_rows),
        "sweep": _sweep(spec, runs, tunables), "folds": folds, "settings_answered": runs.settings_run(),
    }


FINANCEBENCH = PartSpec(
    "financebench",
    (Measure("answer_bearing", lambda r: bool(r.get("on_gold_page") or r.get("numbers_found")), 1.0),
     Measure("refused", lambda r: bool(r.get("refused")), 0.0)),
    lambda r: ["all", f"type:{r['type']}", "computed" if r.get("computed") else "extracted"],
    "answer-bearing share")

GOLDEN = PartSpec(
    "golden",
    (Measure("correct", lambda r: r.get("verdict") == "correct", 1.0),
     Measure("false_refusal", lambda r: r.get("verdict") == "refused" and r.get("type") != "absent", -1.0)),
    lambda r: ["all", f"type:{r['type']}", *(["answerable"] if r["type"] != "absent" else [])],
    "correct share minus false-refusal share")


def chosen_tunables(names: Sequence[str]) -> list[Tunable]:
    """The tunables named (every registered one when none is named); an unknown name is an error."""
    return [get(n) for n in names] if names else list(registered().values())


def with_company(rows: Sequence[Row], company: Mapping[str, str]) -> list[Row]:
    """The rows, each with its fold (``company``) when it does not carry one."""
    return [r if "company" in r else {**r, "company": company.get(r["id"], "?")} for r in rows]


def asker(answer: Callable[[], list[Row]], company: Mapping[str, str]) -> Callable[[Mapping[str, Any]], list[Row]]:
    def ask(values: Mapping[str, Any]) -> list[Row]:
        with overridden(values):
            return with_company(answer(), company)

    return ask
