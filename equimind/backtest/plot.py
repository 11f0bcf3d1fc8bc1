"""Backtest artefacts: the equity-curve PNG (matplotlib, Agg canvas, no display) and the Markdown report."""

from __future__ import annotations

from pathlib import Path

from equimind.backtest.models import BacktestReport, HorizonRow


def plot_equity(report: BacktestReport, path: Path) -> Path:
    """Growth of 1: ratings portfolio, long-short, equal-weight benchmark (bold) and each ticker's buy-and-hold."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 5.5), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    days = [float(p.day.toordinal()) for p in report.equity_curve]
    for t in report.request.tickers:
        ax.plot(days, [p.tickers.get(t, float("nan")) for p in report.equity_curve], linewidth=0.8, alpha=0.45,
                linestyle="--", label=f"{t} buy-and-hold")
    ax.plot(days, [p.benchmark for p in report.equity_curve], color="black", linewidth=2.0,
            label="equal-weight benchmark")
    ax.plot(days, [p.ratings for p in report.equity_curve], color="tab:blue", linewidth=2.2, marker="o",
            label="ratings portfolio (long BUY, short SELL, cash HOLD)")
    ax.plot(days, [p.long_short for p in report.equity_curve], color="tab:red", linewidth=2.0, marker="s",
            label="long-short (BUY side minus SELL side)")
    ax.axhline(1.0, color="grey", linewidth=0.6)
    every = max(1, len(days) // 12)  # at most ~12 labelled decision days
    ax.set_xticks(days[::every], [p.day.isoformat() for p in report.equity_curve][::every])
    req = report.request
    ax.set_title(f"EquiMind walk-forward backtest {req.start} to {req.end} ({req.frequency.value}), "
                 f"{report.n_rated} decisions", fontsize=11)
    ax.set_ylabel("growth of 1 (total return, no costs)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.autofmt_xdate()
    fig.text(0.01, 0.01, f"run {report.run_id}; prices through {report.data_end}; small sample: see the report's "
             "caveats", fontsize=7, color="grey")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(path), format="png")
    return path


def plot_reliability(report: BacktestReport, path: Path) -> Path:
    """Reliability diagram per horizon: each conviction bucket's stated probability (0.5 + 0.5 x its mean conviction)
    against its observed hit rate, with its Wilson interval and decision count; the diagonal is perfect calibration."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    horizons = list(report.calibration)
    fig = Figure(figsize=(4.2 * max(1, len(horizons)), 4.4), dpi=110)
    FigureCanvasAgg(fig)
    for i, h in enumerate(horizons, 1):
        block = report.calibration[h]
        ax = fig.add_subplot(1, max(1, len(horizons)), i)
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="--", label="perfect calibration")
        cells = [c for c in block["buckets"] if c["n"]]
        xs = [0.5 + 0.5 * c["mean_conviction"] for c in cells]  # the probability a conviction states
        ys = [c["rate"] for c in cells]
        lo = [c["rate"] - c["ci"][0] for c in cells]
        hi = [c["ci"][1] - c["rate"] for c in cells]
        ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", color="tab:blue", capsize=3, label="hit rate (95% Wilson CI)")
        for x, y, c in zip(xs, ys, cells, strict=True):
            ax.annotate(f"n={c['n']}", (x, y), textcoords="offset points", xytext=(5, 5), fontsize=7)
        ax.set_xlim(0.45, 1.0)
        ax.set_ylim(0, 1)
        skill = block.get("brier_skill")
        ax.set_title(f"{h}m: n={block['n']}, Brier skill "
                     f"{'n/a' if skill is None else f'{skill:+.2f}'}", fontsize=9)
        ax.set_xlabel("stated probability 0.5 + 0.5 x conviction (bucket mean)")
        ax.set_ylabel("share of directional calls that were right")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6, loc="upper left")
    fig.text(0.01, 0.01, f"run {report.run_id}; small samples: read each horizon's verdict in the report",
             fontsize=7, color="grey")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(path), format="png")
    return path


CALIBRATION_HEADER = ["horizon", "group", "n", "hit rate [95% Wilson CI]", "mean conviction"]


def calibration_rows(report: BacktestReport) -> list[list[str]]:
    """The calibration table as strings: per horizon, each conviction bucket then each rating level."""
    rows = []
    for h, block in report.calibration.items():
        for kind, cells in (("conviction", block["buckets"]), ("rating", block["by_rating"])):
            for c in cells:
                rate = "n/a" if c["rate"] is None else f"{c['rate']:.2f}{_ci(tuple(c['ci']) if c['ci'] else None)}"
                rows.append([f"{h}m", f"{kind} {c['label']}", str(c["n"]), rate, _num(c["mean_conviction"])])
    return rows


def calibration_lines(report: BacktestReport) -> list[str]:
    """Per horizon: Brier against the two no-skill baselines, the monotone map's decision, the verdict."""
    out = []
    for h, b in report.calibration.items():
        mono = b["monotone_map"]
        out.append(f"{h}m: Brier {_num(b['brier'], 3)} reading p = 0.5 + 0.5 x conviction (literal p = conviction: "
                   f"{_num(b.get('brier_literal'), 3)}; coin flip {_num(b['brier_coin_flip'], 3)}, "
                   f"climatology {_num(b['brier_climatology'], 3)}, skill {_num(b['brier_skill'], 3)}); monotone "
                   f"map: {mono['reason']}. {b['verdict']}")
    return out


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{100 * v:+.1f}%"


def _num(v: float | None, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v:.{digits}f}"


def _ci(ci: tuple[float, float] | None, pct: bool = False) -> str:
    if ci is None:
        return ""
    lo, hi = ci
    return f" [{100 * lo:+.1f}%, {100 * hi:+.1f}%]" if pct else f" [{lo:.2f}, {hi:.2f}]"


ACCURACY_HEADER = ["horizon", "n scored", "hit rate (n) [95% CI]", "base rate up", "IC [95% CI]",
                   "long-short (dates) [95% CI]"]
RETURNS_HEADER = ["horizon", "mean position", "mean buy&hold", "mean EW bench", "hit vs bench", "IC x conv"]
TABLE_HEADER = ACCURACY_HEADER + RETURNS_HEADER[1:]


def accuracy_rows(rows: list[HorizonRow]) -> list[list[str]]:
    return [[f"{r.horizon_months}m", f"{r.n_scored} (+{r.n_pending} pending)",
             f"{_num(r.hit_rate)} ({r.n_directional}){_ci(r.hit_rate_ci)}", _num(r.base_rate_up),
             _num(r.ic) + _ci(r.ic_ci), f"{_pct(r.long_short_mean)} ({r.n_dates}){_ci(r.long_short_ci, True)}"]
            for r in rows]


def return_rows(rows: list[HorizonRow]) -> list[list[str]]:
    return [[f"{r.horizon_months}m", _pct(r.mean_position_return), _pct(r.mean_buy_and_hold),
             _pct(r.mean_benchmark), _num(r.hit_rate_vs_benchmark), _num(r.ic_conviction)] for r in rows]


def table_rows(rows: list[HorizonRow]) -> list[list[str]]:
    """The report table as strings (accuracy columns, then return columns): the Markdown file's table."""
    return [a + r[1:] for a, r in zip(accuracy_rows(rows), return_rows(rows), strict=True)]


def markdown_report(report: BacktestReport) -> str:
    req = report.request
    lines = [f"# Backtest {report.run_id}", "",
             f"Universe {', '.join(req.tickers)}; {req.frequency.value} decisions {req.start} to {req.end} "
             f"({len(report.schedule)} days); horizons {', '.join(f'{h}m' for h in req.horizons)}; corpus "
             f"{report.snapshot} (prices through {report.data_end}). Question: \"{req.question}\".", "",
             "| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    lines += ["| " + " | ".join(row) + " |" for row in table_rows(report.table)]
    lines += ["", "## Decisions", "", "| day | ticker | rating | conviction | close | "
              + " | ".join(f"{h}m return" for h in req.horizons) + " |", "|" + "---|" * (5 + len(req.horizons))]
    for d in report.decisions:
        rets = " | ".join(_pct(d.forward_returns.get(h)) for h in req.horizons)
        lines.append(f"| {d.decided_at} | {d.ticker} | {d.rating.value if d.rating else 'REFUSED'} | "
                     f"{d.conviction:.2f} | {d.close:.2f} | {rets} |")
    if report.calibration:
        lines += ["", "## Calibration: is a higher conviction right more often?", "",
                  "| " + " | ".join(CALIBRATION_HEADER) + " |", "|" + "---|" * len(CALIBRATION_HEADER)]
        lines += ["| " + " | ".join(row) + " |" for row in calibration_rows(report)]
        lines += [""] + [f"- {line}" for line in calibration_lines(report)]
        if report.calibration_plot_path:
            lines += ["", f"![reliability]({Path(report.calibration_plot_path).name})"]
    lines += ["", "## Caveats", ""] + [f"- {c}" for c in report.caveats]
    for r in report.table:
        lines += [f"- {r.horizon_months}m {c}" for c in r.caveats]
    if report.plot_path:
        lines += ["", f"![equity curve]({Path(report.plot_path).name})"]
    return "\n".join(lines) + "\n"
