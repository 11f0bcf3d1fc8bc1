"""The leave-company-out tables (``metrics.leave_company_out`` of an ``eval answers`` result): printed by the CLI and
written into docs/evaluation.md. Numbers come only from the result."""

from __future__ import annotations

import json
from typing import Any

METHOD = ("Every tuning parameter (`equimind/core/tunables.py`: a named threshold, weight or word list, registered "
          "by the module that reads it) is chosen leave-company-out. Folds are companies (FinanceBench: the "
          "question's `company`; golden: its first ticker). Every question is answered once per candidate value "
          "(the others at their defaults) through the same store and engine; for each held company, each "
          "parameter takes the candidate value with the best score on the other companies' questions "
          "(coordinate-wise, the default winning ties), and the held company's questions are scored with it; the "
          "estimate pools the held companies. *Dev*: every parameter at its default. *Tuned on all dev*: chosen and "
          "scored on the same questions (what a tuner reading dev would report). A change that lifts dev or "
          "tuned-on-all but not leave-company-out is overfitting. Score: FinanceBench, the answer-bearing share; "
          "golden, the correct share minus the false-refusal share. Wilson 95% intervals.")
COMMAND = ("    equimind eval answers --parts financebench --leave-company-out [--tunables NAME,NAME] \\\n"
           "        --json benchmarks/results/eval_answers_lco.json")


def _ci(x: dict[str, Any]) -> str:
    if not x["n"]:
        return "–"
    lo, hi = x["ci95"]
    return f"{x['share']:.3f} [{lo:.3f}, {hi:.3f}] ({x['k']}/{x['n']})"


def _value(v: Any) -> str:
    return json.dumps(v) if not isinstance(v, str) else v


def part_lines(block: dict[str, Any]) -> list[str]:
    """One part: the score, each measure per group under the three figures, and each fold's choice."""
    out = [f"### {block['part']}: {block['score']} ({block['questions']} questions, "
           f"{len(block['folds'])} company folds)", "",
           f"Score: dev {block['dev_score']:.3f}; tuned on all dev {block['tuned_on_all_score']:.3f} "
           f"({_choices(block['tuned_on_all_values'])}); leave-company-out {block['lco_score']:.3f}. "
           f"{block['note'][0].upper()}{block['note'][1:]}.", "",
           "| group | measure | n | dev (defaults) | tuned on all dev | leave-company-out |",
           "|---|---|---|---|---|---|"]
    for group, dev in block["dev"].items():
        best, lco = block["tuned_on_all"].get(group, {}), block["lco"].get(group, {})
        for measure in (k for k in dev if k not in ("n", "score")):
            out.append(f"| {group} | {measure} | {dev['n']} | {_ci(dev[measure])} | {_ci(best[measure])} | "
                       f"{_ci(lco[measure])} |")
    out += ["", "| held company | n | chosen (non-default) | held score, defaults | held score, chosen |",
            "|---|---|---|---|---|"]
    for f in block["folds"]:
        out.append(f"| {f['company']} | {f['n']} | {_choices(f['changed']) or 'defaults'} | "
                   f"{f['held_score_default']:.3f} | {f['held_score']:.3f} |")
    sweep = "; ".join(f"{name}: " + ", ".join(f"{_value(c['value'])}{'*' if c['default'] else ''} -> {c['score']:.3f}"
                                               for c in cands) for name, cands in block["sweep"].items())
    if sweep:
        out += ["", f"Score of each candidate over every question (* = default): {sweep}."]
    if "seconds" in block:
        out += ["", f"Settings answered: {block['settings_answered']} (the dev run's rows reused); "
                    f"{block['seconds']:.0f} s beyond the dev run."]
    return [*out, ""]


def _choices(values: dict[str, Any]) -> str:
    return ", ".join(f"{k} = {_value(v)}" for k, v in values.items())


def made(env: dict[str, Any]) -> str:
    """Which commit and when the result was made (its dev column is that commit's, not necessarily the one of the
    sections above)."""
    git = env.get("git") or {}
    return f"Result of commit `{str(git.get('sha'))[:7]}`{' (dirty tree)' if git.get('dirty') else ''}, " \
           f"created {env.get('created_at')}."


def lco_lines(block: dict[str, Any] | None, provenance: str = "") -> list[str]:
    """The whole leave-company-out section (none when the result has no such block)."""
    if not block:
        return []
    names = ", ".join(f"`{n}`" for n in block.get("tunables", [])) or "none registered"
    out = ["## Leave-company-out estimate (answer correctness)", "", METHOD, "", COMMAND, "",
           f"Tunables measured: {names}.", ""]
    for part in block.get("parts", {}).values():
        out += part_lines(part)
    if not block.get("parts"):
        out += ["No correctness part ran (`--parts golden` or `financebench`): nothing to measure.", ""]
    return [*out, provenance, ""] if provenance else out
