"""docs/evaluation.md sections of the answer path's correctness (``metrics.answer_correctness`` of an
``eval answers`` result): golden per type, FinanceBench dev answer-bearing share per type. Numbers come only from the
result file."""

from __future__ import annotations

from typing import Any

from equimind.evaluation.report_lco import lco_lines


def _ci(x: dict[str, Any]) -> str:
    lo, hi = x["ci95"]
    return f"{x['share']:.3f} [{lo:.3f}, {hi:.3f}] ({x['k']}/{x['n']})" if x["n"] else "–"


def golden_section(block: dict[str, Any]) -> list[str]:
    out = ["## Direct answers on the golden set (`equimind ask` path, offline answerer)", "",
           f"Every golden question asked at as-of {block.get('as_of')} through the product search (filtered to the "
           "question's tickers) and the offline answerer; numeric: the stated value equals the gold value after "
           "unit/scale normalisation (or a cited span overlaps the gold span); text: a cited span overlaps a gold "
           "span, or a cited quote holds the gold quote's exact words from another filing of the company "
           "(*same_words*), or the answer's sentences hold every content word of a gold answer without numbers "
           "(*gold_words*); comparison: every side answered and judged so; absent: refused. Wilson 95% intervals.",
           "",
           "| type | n | correct | wrong | refused | correct share [95% CI] | false refusals | gold reached |",
           "|---|---|---|---|---|---|---|---|"]
    for qtype, t in block["by_type"].items():
        lo, hi = t["correct_ci95"]
        fr = "–" if t["false_refusal_share"] is None else f"{t['false_refusal_share']:.3f}"
        out.append(f"| {qtype} | {t['n']} | {t['correct']} | {t['wrong']} | {t['refused']} | "
                   f"{t['correct_share']:.3f} [{lo:.3f}, {hi:.3f}] | {fr} | {t['gold_reached']} |")
    judged = block["by_type"].get("all_answerable", {}).get("judged_by") or {}
    if judged:
        strict = sum(n for rule, n in judged.items() if rule in ("span", "value"))
        n = block["by_type"]["all_answerable"]["n"]
        out += ["", "Correct answerable questions by the rule that judged them: "
                + "; ".join(f"{rule}: {k}" for rule, k in judged.items())
                + f". By the span and value rules alone: {strict}/{n} ({strict / n:.3f})."]
    misses = block.get("misses_by_cause") or {}
    if misses:
        out += ["", "Misses by cause: " + "; ".join(f"{cause}: {n}" for cause, n in misses.items()) + "."]
    return [*out, ""]


def financebench_section(block: dict[str, Any]) -> list[str]:
    out = ["## Direct answers on FinanceBench dev (held out; PDFs, no XBRL)", "",
           "Each question asked as a user asks it: the product search over the shared context store with the filter "
           "parsed from the question's words, the company from the same parse, the offline answerer. *On gold page*: "
           "a cited quote lies on a gold evidence page. *Numbers found*: every number of the gold answer is in the "
           "answer or the passages its quotes come from (over questions whose gold answer has a number). "
           "*Answer-bearing*: either. Computed answers (ratios, changes: `question_reasoning` names numerical "
           "reasoning) are shown apart: the answerer computes those it has a formula for (`answer/computed.py`: "
           "ratios, margins, growth, turnover, days, from statement rows here, as these PDFs carry no XBRL) and "
           "only quotes the inputs of the others. Every "
           "question is answerable, so every refusal is a false refusal.", "",
           "| group | n | refused | on gold page | numbers found | answer-bearing |", "|---|---|---|---|---|---|"]
    for group, t in block["by_type"].items():
        out.append(f"| {group} | {t['n']} | {_ci(t['refused'])} | {_ci(t['on_gold_page'])} | "
                   f"{_ci(t['numbers_found'])} | {_ci(t['answer_bearing'])} |")
    reasons: dict[str, int] = {}
    for r in block.get("rows", []):
        if r["refused"]:
            reasons[str(r["refusal"])] = reasons.get(str(r["refusal"]), 0) + 1
    if reasons:
        out += ["", "Refusals by reason (`no_company`: the question names no stored company the filter parse "
                "recognises): " + "; ".join(f"{k}: {n}" for k, n in sorted(reasons.items())) + "."]
    return [*out, ""]


def correctness_sections(env: dict[str, Any]) -> list[str]:
    """The sections present in an ``eval answers`` result (none when it ran neither correctness part)."""
    block = env.get("metrics", {}).get("answer_correctness") or {}
    git = env.get("git") or {}
    made = f"Result of commit `{str(git.get('sha'))[:7]}`{' (dirty tree)' if git.get('dirty') else ''}, " \
           f"created {env.get('created_at')}."
    out: list[str] = []
    after = "research" in ((env.get("config") or {}).get("parts") or [])
    note = (["This golden block ran after the research part over the same store: the research runs' on-demand "
             "fetches (market documents) are in it, so its numbers can differ from a golden-only run."]
            if after else [])
    if "golden" in block:
        out += [*golden_section(block["golden"])[:-1], *note, made, ""]
    if "financebench" in block:
        out += [*financebench_section(block["financebench"])[:-1], made, ""]
    return [*out, *lco_lines(env.get("metrics", {}).get("leave_company_out"), made)]
