"""`equimind report RUN_ID` and GET /api/v1/report/{run_id} (issue 31, the report view): a stored research run as one
self-contained HTML page (rating, conviction, thesis, claims with their quotes and spans, figures with provenance, the
price chart from the recorded prices, the degraded lines; every value escaped) and as a PDF printed by headless
Chromium. The first page of the PDF is rendered to test-artifacts/web/report-page1.png when pdftoppm exists."""

from __future__ import annotations

import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from equimind.core.config import Settings
from equimind.core.research import Citation, Claim, Degradation, Figure, Rating, Recommendation, Speaker
from equimind.interfaces.cli.main import app
from equimind.interfaces.report_html import render_report_html
from equimind.memory.store import MemoryStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from interfaces_fakes import fake_services

runner = CliRunner()
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "web"
QUOTE = "Data Center revenue was a record, up 56% from a year ago <driven by Blackwell>."


def _rec() -> Recommendation:
    cite = Citation(doc_id="a" * 64, start=100, end=100 + len(QUOTE), quote=QUOTE, doc_sha256="b" * 64)
    growth = Figure(id="f-growth", name="revenue_growth_yoy", value=0.556, unit="ratio", as_of=date(2025, 8, 27),
                    formula="revenue / revenue_prior - 1", provenance={"source": "sec_xbrl", "concept": "Revenues",
                                                                       "accession": "0001045810-25-000209"})
    return Recommendation(
        ticker="NVDA", question="Should I invest in NVIDIA?", as_of=date(2025, 9, 30), rating=Rating.BUY,
        conviction=0.7, thesis="Bull case prevails <b>not bold</b> & stays cited.",
        bull_case=[Claim(speaker=Speaker.BULL, text="Data center growth", citations=[cite],
                         figure_ids=["f-growth"], strength=0.8)],
        bear_case=[Claim(speaker=Speaker.BEAR, text="Export controls", strength=0.4)], figures=[growth],
        degraded=[Degradation(capability="news", reason="unavailable (none recorded)")])


def test_the_html_carries_every_part_escaped() -> None:
    page = render_report_html({**_rec().model_dump(mode="json"), "run_id": 7}, None, "no price bars")
    assert "<b>not bold</b>" not in page and "&lt;b&gt;not bold&lt;/b&gt;" in page  # escaped, never markup
    assert "&lt;driven by Blackwell&gt;" in page and "chars 100–" in page and "sha256 bbbbbbbbbbbb" in page
    assert "BUY" in page and "conviction 0.70" in page and "research run 7" in page
    assert "revenue_growth_yoy" in page and "accession: 0001045810-25-000209" in page
    assert "news: unavailable (none recorded)" in page and "chart: unavailable (no price bars)" in page
    assert "<script" not in page and "http" not in page.split("<body>")[1]  # self-contained: nothing to fetch


@pytest.mark.integration
def test_report_command_writes_html_and_pdf_and_the_api_serves_it(tmp_path: Path, corpus_dir: Path) -> None:
    home = tmp_path / "home"
    store = MemoryStore(home / "memory.sqlite")
    run, _ = store.record_research(_rec())
    html_path, pdf_path = tmp_path / "r.html", tmp_path / "r.pdf"
    res = runner.invoke(app, ["report", str(run.id), "--html", str(html_path), "--pdf", str(pdf_path),
                              "--snapshot", str(corpus_dir), "--home", str(home)])
    assert res.exit_code == 0, res.stderr
    page = html_path.read_text()
    assert 'src="data:image/png;base64,' in page  # the price chart from the recorded NVDA prices, inline
    assert pdf_path.read_bytes()[:5] == b"%PDF-" and pdf_path.stat().st_size > 20_000
    if shutil.which("pdftoppm"):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", "-singlefile", str(pdf_path),
                        str(ARTIFACTS / "report-page1")], check=True, timeout=60)
    missing = runner.invoke(app, ["report", "999", "--home", str(home)])
    assert missing.exit_code == 2 and "no research run 999" in missing.stderr
    settings = Settings(home=home, snapshot=corpus_dir, shared=corpus_dir.parent)
    from equimind.interfaces.api.app import create_app

    with TestClient(create_app(settings, fake_services(settings))) as client:
        got = client.get(f"/api/v1/report/{run.id}")
        assert got.status_code == 200 and got.headers["content-type"].startswith("text/html")
        assert "Data center growth" in got.text and "data:image/png;base64," in got.text
        assert client.get("/api/v1/report/999").status_code == 404


def test_the_terminal_prints_thesis_markers_and_filing_text_literally() -> None:
    from rich.console import Console

    from equimind.interfaces.cli import render, render_report

    rec = _rec().model_copy(update={"thesis": "Bull (1) Revenue grew 55.6% [figure revenue_growth_yoy] [bold]x[/bold]"})
    rec = rec.model_copy(update={"bear_case": [Claim(speaker=Speaker.BEAR, text="Quote “[red]flagged[/red]”",
                                                     strength=0.4)]})
    out = Console(record=True, width=200)
    saved = render_report.console
    render_report.console = out
    try:
        render_report.recommendation(rec)
    finally:
        render_report.console = saved
    text = out.export_text()
    assert "[figure revenue_growth_yoy]" in text and "[bold]x[/bold]" in text and "[red]flagged[/red]" in text
    assert render.console is not out
