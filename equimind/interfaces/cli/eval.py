"""CLI commands of the evaluation harness (registered on ``eval_app``): retrieval, golden, answers, refusals, gate,
all, docs.

Thin adapters over ``equimind.evaluation``: each builds Settings, calls one run function, wraps the result with
provenance (git sha, corpus signature, machine) and writes it as JSON.
"""

from __future__ import annotations

import logging
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer

from equimind.core.config import RETRIEVAL_MODES
from equimind.core.errors import ConfigError
from equimind.evaluation.report import result_envelope, write_json
from equimind.interfaces.cli.app import HomeOpt, build_settings, eval_app, run_guarded

log = logging.getLogger(__name__)

RESULTS_DIR = Path("benchmarks/results")
DEFAULT_CACHE = Path(".equimind_cache/eval")
ALL_ARMS = ",".join(RETRIEVAL_MODES)

OutOpt = Annotated[Path | None, typer.Option("--json", help="Write the result JSON here.")]
CacheOpt = Annotated[Path, typer.Option("--cache", help="Where evaluation stores are cached (re-runs reuse them).")]
VariantsOpt = Annotated[str, typer.Option("--variants", help="Store variants, comma-separated: base (chunk text "
                                          "embedded), context (title | section header), statement (title | section "
                                          "| financial statement), cells (statement, table rows as cells: the "
                                          "product's).")]
ArmsOpt = Annotated[str, typer.Option("--arms", help=f"Comma-separated arms: {', '.join(RETRIEVAL_MODES)}.")]


def _csv(value: str, valid: tuple[str, ...], name: str) -> tuple[str, ...]:
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    bad = [v for v in items if v not in valid]
    if bad or not items:
        raise ConfigError(f"{name} {value!r}: valid values are {', '.join(valid)}")
    return items


def _harness() -> ModuleType:
    """``equimind.evaluation.harness``, imported on first use: numpy and the stores stay out of ``--help``."""
    from equimind.evaluation import harness

    return harness


def _write(out: Path | None, part: dict[str, Any]) -> dict[str, Any]:
    env = result_envelope(part["config"], part["metrics"], corpus=part.get("corpus_signature"))
    if out is not None:
        write_json(out, env)
        typer.echo(f"wrote {out}")
    return env


def _retrieval(benchmark: str, data: Path | None, cache: Path, variants: str, arms: str,
               home: Path | None) -> dict[str, Any]:
    ev = _harness()
    settings = build_settings(home)
    chosen_variants = _csv(variants, ev.STORE_VARIANTS, "--variants")
    chosen_arms = _csv(arms, RETRIEVAL_MODES, "--arms")  # only the variants asked for are built (issue 15)
    if benchmark == "financebench":
        data_dir = data or settings.shared / "benchmarks" / "financebench"
        result: dict[str, Any] = ev.run_financebench(settings, data_dir, cache / "financebench",
                                                     variants=chosen_variants, arms=chosen_arms)
        return result
    if benchmark == "golden":
        corpus = data or settings.corpus_dir
        result = ev.run_golden(settings, corpus, cache / "golden", variants=chosen_variants, arms=chosen_arms)
        return result
    raise ConfigError(f"--benchmark {benchmark!r}: valid values are financebench, golden")


@eval_app.command("retrieval")
def retrieval(
    benchmark: Annotated[str, typer.Option("--benchmark", help="financebench | golden")] = "financebench",
    data: Annotated[Path | None, typer.Option("--data", help="Benchmark folder (default: under ../shared).")] = None,
    out: OutOpt = None,
    cache: CacheOpt = DEFAULT_CACHE,
    variants: VariantsOpt = "base",
    arms: ArmsOpt = ALL_ARMS,
    home: HomeOpt = None,
) -> None:
    """Retrieval metrics (recall/MRR/nDCG@k with bootstrap CIs) per arm, setting and question type."""
    run_guarded(lambda: _write(out, _retrieval(benchmark, data, cache, variants, arms, home)))


@eval_app.command("golden")
def golden(
    corpus: Annotated[Path | None, typer.Option("--corpus", help="Recorded corpus (default ../shared/corpus).")] = None,
    out: OutOpt = None,
    cache: CacheOpt = DEFAULT_CACHE,
    variants: VariantsOpt = "base",
    arms: ArmsOpt = ALL_ARMS,
    home: HomeOpt = None,
) -> None:
    """The golden set over the recorded filings, judged at span level."""
    run_guarded(lambda: _write(out, _retrieval("golden", corpus, cache, variants, arms, home)))


@eval_app.command("answers")
def answers(
    corpus: Annotated[Path | None, typer.Option("--corpus", help="Recorded corpus (default ../shared/corpus).")] = None,
    out: OutOpt = None,
    cache: CacheOpt = DEFAULT_CACHE,
    tickers: Annotated[str | None, typer.Option("--tickers", help="Only these tickers' questions (research).")] = None,
    parts: Annotated[str, typer.Option("--parts", help="research (pipeline checks), golden (answer correctness per "
                                       "type), financebench (answer-bearing share; builds its context store on "
                                       "first use, 20-40 min), comma-separated.")] = "research,golden,financebench",
    data: Annotated[Path | None, typer.Option("--data", help="FinanceBench folder (default: under ../shared).")] = None,
    home: HomeOpt = None,
    lco: Annotated[bool, typer.Option("--leave-company-out", help="Also measure the tuning parameters "
                                      "leave-company-out over the correctness parts (each question answered once "
                                      "per candidate value).")] = False,
    tunables: Annotated[str | None, typer.Option("--tunables", help="With --leave-company-out: only these tuning "
                                                 "parameters, comma-separated (default: every registered one).")
                        ] = None,
) -> None:
    """Answers: the research pipeline's checks (citation validity, refusals, look-ahead, determinism) and the answer
    path's correctness on the golden set and FinanceBench dev."""

    def body() -> dict[str, Any]:
        ev = _harness()
        settings = build_settings(home)
        chosen = tuple(t.strip().upper() for t in (tickers or "").split(",") if t.strip())
        fb = (data or settings.shared / "benchmarks" / "financebench", cache / "financebench")
        names = tuple(t.strip() for t in (tunables or "").split(",") if t.strip()) if lco else None
        result = ev.run_answers(settings, corpus or settings.corpus_dir, cache / "answers", tickers=chosen,
                                parts=_csv(parts, ev.ANSWER_PARTS, "--parts"), financebench=fb,
                                leave_company_out=names)
        env = _write(out, result)
        for line in ev.lco_lines(env["metrics"].get("leave_company_out")):
            typer.echo(line)
        return env

    run_guarded(body)


@eval_app.command("refusals")
def refusals(
    out: OutOpt = None,
    cache: CacheOpt = DEFAULT_CACHE,
    data: Annotated[Path | None, typer.Option("--data", help="FinanceBench folder (default: under ../shared).")] = None,
    home: HomeOpt = None,
) -> None:
    """The answerability check alone (ADR 0006) over every golden question and every FinanceBench dev question."""

    def body() -> dict[str, Any]:
        settings = build_settings(home)
        data_dir = data or settings.shared / "benchmarks" / "financebench"
        result = _write(out, _harness().run_refusals(cache / "answers", cache / "financebench" / "base", data_dir))
        for name, part in result["metrics"].items():
            shown = {k: v for k, v in part.items() if k != "rows"}
            typer.echo(f"{name}: {shown}")
        return result

    run_guarded(body)


@eval_app.command("gate")
def gate(
    baseline: Annotated[Path | None, typer.Option("--baseline", help="Committed baseline JSON.")] = None,
    out: OutOpt = None,
    cache: CacheOpt = DEFAULT_CACHE,
    update: Annotated[bool, typer.Option("--update-baseline", help="Write the measured values as the new "
                                         "baseline instead of checking.")] = False,
    home: HomeOpt = None,
) -> None:
    """CI regression gate: the fast golden subset vs the committed baseline (noise floor: one question of n)."""

    def body() -> None:
        ev = _harness()
        settings = build_settings(home)
        result = ev.run_gate(settings, settings.corpus_dir, cache / "gate", baseline or ev.default_baseline_path(),
                             update=update)
        _write(out, result)
        for line in result["metrics"]["lines"]:
            typer.echo(line)
        if not result["metrics"]["passed"]:
            raise typer.Exit(1)

    run_guarded(body)


@eval_app.command("all")
def all_(
    results: Annotated[Path, typer.Option("--results", help="Folder for the result JSON files.")] = RESULTS_DIR,
    docs: Annotated[Path, typer.Option("--docs", help="Evaluation report to regenerate.")] = Path(
        "docs/evaluation.md"),
    cache: CacheOpt = DEFAULT_CACHE,
    home: HomeOpt = None,
) -> None:
    """Everything: FinanceBench (base + context stores), the golden set, answer checks; then docs/evaluation.md."""

    def body() -> None:
        ev = _harness()
        arms = ",".join(RETRIEVAL_MODES)
        _write(results / "eval_financebench.json", _retrieval("financebench", None, cache, "base,context", arms, home))
        _write(results / "eval_golden.json", _retrieval("golden", None, cache, "base,context", arms, home))
        settings = build_settings(home)
        fb = (settings.shared / "benchmarks" / "financebench", cache / "financebench")
        _write(results / "eval_answers.json", ev.run_answers(settings, settings.corpus_dir, cache / "answers",
                                                             parts=ev.ANSWER_PARTS, financebench=fb))
        _write(results / "eval_refusals.json", ev.run_refusals(cache / "answers", cache / "financebench" / "base",
                                                               settings.shared / "benchmarks" / "financebench"))
        docs.write_text(ev.render_markdown(results), encoding="utf-8")
        typer.echo(f"wrote {docs}")

    run_guarded(body)


@eval_app.command("docs")
def docs_(
    results: Annotated[Path, typer.Option("--results", help="Folder holding the result JSON files.")] = RESULTS_DIR,
    docs: Annotated[Path, typer.Option("--docs", help="Evaluation report to regenerate.")] = Path(
        "docs/evaluation.md"),
) -> None:
    """Regenerate docs/evaluation.md from existing result files (no evaluation is run)."""

    def body() -> None:
        docs.write_text(_harness().render_markdown(results), encoding="utf-8")
        typer.echo(f"wrote {docs}")

    run_guarded(body)
