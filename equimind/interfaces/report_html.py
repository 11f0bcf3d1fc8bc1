"""The printable research report: one self-contained HTML page (inline CSS, the price chart as an inline PNG) with
the rating, conviction, thesis, the judge's risks and catalysts, every bull and bear claim with its quotes (document
id, character span, SHA-256 of the document), the figures with their provenance, the "since" block and the degraded
lines; and its PDF, printed by headless Chromium (``--print-to-pdf``). Used by ``equimind report RUN_ID`` and
``GET /api/v1/report/{run_id}``. Every value from the result is HTML-escaped.
"""

from __future__ import annotations

import base64
import html
import io
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from equimind.core.errors import ConfigError

if TYPE_CHECKING:
    from equimind.app.engine import EquiMindEngine

CSS = """
body { font: 13px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #111; margin: 2rem auto;
       max-width: 60rem; padding: 0 1rem; }
h1 { font-size: 1.5rem; margin-bottom: 0.2rem; } h2 { font-size: 1.1rem; margin-top: 1.6rem;
     border-bottom: 1px solid #ccc; } .muted { color: #555; } .rating { font-size: 1.2rem; font-weight: 700; }
.claim { margin: 0.6rem 0; } blockquote { margin: 0.3rem 0 0.3rem 1rem; padding-left: 0.6rem;
     border-left: 3px solid #999; color: #333; } .cite { font: 11px monospace; color: #555; }
table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #ddd; padding: 3px 6px;
     text-align: left; vertical-align: top; font-size: 12px; } .degraded li { color: #8a5300; }
img.chart { max-width: 100%; }
@media print { body { margin: 0; } h2 { break-after: avoid; } .claim { break-inside: avoid; } }
"""


def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value))


def _num(value: Any, digits: int = 2) -> str:
    return "n/a" if value is None else f"{float(value):,.{digits}f}"


def _claims(title: str, claims: Sequence[Mapping[str, Any]], figures: Mapping[str, Mapping[str, Any]]) -> str:
    out = [f"<h2>{_e(title)} ({len(claims)})</h2>"]
    if not claims:
        out.append('<p class="muted">none</p>')
    for c in claims:
        out.append(f'<div class="claim"><b>{_e(c.get("text"))}</b> <span class="muted">strength '
                   f'{_num(c.get("strength"))}</span>')
        for q in c.get("citations") or []:
            out.append(f'<blockquote>{_e(q.get("quote"))}<br><span class="cite">doc {_e(str(q.get("doc_id"))[:12])} '
                       f'chars {_e(q.get("start"))}–{_e(q.get("end"))} · sha256 '
                       f'{_e(str(q.get("doc_sha256"))[:12])}</span></blockquote>')
        for fid in c.get("figure_ids") or []:
            f = figures.get(fid)
            if f is not None:
                out.append(f'<div class="cite">figure {_e(f.get("name"))} = {_num(f.get("value"), 4)} '
                           f'{_e(f.get("unit"))} (as of {_e(f.get("as_of"))})</div>')
        out.append("</div>")
    return "\n".join(out)


def _provenance(p: Mapping[str, Any]) -> str:
    keys = ("source", "concept", "form", "accession", "filed", "period", "series", "url")
    shown = [f"{k}: {p[k]}" for k in keys if p.get(k) not in (None, "")]
    return "; ".join(shown) or "; ".join(f"{k}: {v}" for k, v in list(p.items())[:4])


def render_report_html(result: Mapping[str, Any], chart_png: bytes | None = None,
                       chart_note: str | None = None) -> str:
    """The report of one research result (``MemoryStore.report``'s dict, or a Recommendation's JSON)."""
    figures = {str(f.get("id")): f for f in result.get("figures") or []}
    judge = result.get("judge") or {}
    rating = result.get("rating") or ("REFUSED" if result.get("refused") else "none")
    parts = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        f"<title>EquiMind report: {_e(result.get('ticker'))} as of {_e(result.get('as_of'))}</title>",
        f"<style>{CSS}</style></head><body>",
        f"<h1>{_e(result.get('ticker'))}: {_e(result.get('question'))}</h1>",
        f'<p class="muted">as of {_e(result.get("as_of"))} · provider {_e(result.get("provider"))}'
        + (f" · research run {_e(result.get('run_id'))}" if result.get("run_id") is not None else "") + "</p>",
        f'<p><span class="rating">{_e(rating)}</span> · conviction {_num(result.get("conviction"))}</p>',
        f"<h2>Thesis</h2><p>{_e(result.get('thesis'))}</p>",
    ]
    if result.get("refusal_reason"):
        parts.append(f"<p><b>Refused:</b> {_e(result.get('refusal_reason'))}</p>")
    for key, label in (("key_risks", "Key risks"), ("key_catalysts", "Key catalysts")):
        items = judge.get(key) or []
        if items:
            parts.append(f"<h2>{label}</h2><ul>" + "".join(f"<li>{_e(i)}</li>" for i in items) + "</ul>")
    since = result.get("since")
    if since:
        parts.append(f"<h2>Since {_e(since.get('since'))}</h2><p>{_e(since.get('rating_from'))} → "
                     f"{_e(since.get('rating_to'))}, conviction {_num(since.get('conviction_from'))} → "
                     f"{_num(since.get('conviction_to'))}; {len(since.get('evidence_entered') or [])} evidence "
                     f"entered, {len(since.get('evidence_left') or [])} left</p>")
    parts.append("<h2>Price</h2>")
    if chart_png:
        parts.append(f'<img class="chart" alt="closing prices up to the as-of date" '
                     f'src="data:image/png;base64,{base64.b64encode(chart_png).decode("ascii")}">')
    else:
        parts.append(f'<p class="muted">chart: unavailable ({_e(chart_note or "no price data")})</p>')
    parts.append(_claims("Bull case", result.get("bull_case") or [], figures))
    parts.append(_claims("Bear case", result.get("bear_case") or [], figures))
    parts.append("<h2>Figures</h2><table><tr><th>figure</th><th>value</th><th>as of</th><th>provenance</th></tr>")
    for f in figures.values():
        parts.append(f"<tr><td>{_e(f.get('name'))}</td><td>{_num(f.get('value'), 4)} {_e(f.get('unit'))}</td>"
                     f"<td>{_e(f.get('as_of'))}</td><td>{_e(_provenance(f.get('provenance') or {}))}</td></tr>")
    parts.append("</table>")
    degraded = [d if isinstance(d, str) else f"{d.get('capability')}: {d.get('reason')}"
                for d in result.get("degraded") or []]
    if chart_note and not chart_png:
        degraded.append(f"chart: unavailable ({chart_note})")
    parts.append('<h2>Degraded</h2><ul class="degraded">' + ("".join(f"<li>{_e(d)}</li>" for d in degraded)
                                                             or "<li>none</li>") + "</ul>")
    parts.append("</body></html>")
    return "\n".join(parts)


def report_page(engine: EquiMindEngine, run_id: int) -> str:
    """The report of stored research run ``run_id`` with its price chart (or the reason there is none)."""
    result, series, why = engine.report(run_id)
    chart = None
    if series is not None and series.close:
        chart = price_chart_png(series.dates, series.close, f"{result['ticker']} close to {result['as_of']} "
                                f"({series.source})")
    return render_report_html(result, chart, why)


def price_chart_png(days: Sequence[Any], closes: Sequence[float], title: str) -> bytes:
    """A small line chart of closes (matplotlib, Agg canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 2.8), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(list(days), list(closes), color="tab:blue", linewidth=1.4)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.autofmt_xdate()
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def chromium() -> str:
    """The Chromium that prints PDFs: $EQUIMIND_CHROMIUM, else /usr/bin/chromium, else chromium on PATH."""
    for candidate in (os.environ.get("EQUIMIND_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).exists():
            return candidate
    raise ConfigError("PDF export prints with headless Chromium, which is not installed: apt-get install chromium "
                      "(or set EQUIMIND_CHROMIUM), or export HTML with --html")


def html_to_pdf(page: str, pdf_path: Path, timeout_s: float = 120.0) -> Path:
    """Print ``page`` (self-contained HTML) to ``pdf_path`` with headless Chromium; ConfigError naming the fix."""
    pdf_path = Path(pdf_path).resolve()
    pdf_path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="equimind-report-") as tmp:
        src = Path(tmp) / "report.html"
        src.write_text(page, encoding="utf-8")
        cmd = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp}/profile", "--no-pdf-header-footer", f"--print-to-pdf={pdf_path}",
               src.as_uri()]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0 or not pdf_path.is_file() or pdf_path.stat().st_size == 0:
        tail = (done.stderr or "").strip().splitlines()[-3:]
        raise ConfigError(f"Chromium could not print the report to {pdf_path} (exit {done.returncode}: "
                          f"{' '.join(tail)}); export HTML with --html instead")
    return pdf_path
