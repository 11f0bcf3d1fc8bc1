"""The offline debate on real filings: NVIDIA's 10-K (2025-02-26) and 10-Q (2025-08-27) from the recorded corpus.

The filings' text is extracted ad hoc with html.parser (the real parser is another stage's job); evidence nodes are
passages cut at section headings, as the retriever would hand them over.
"""

from __future__ import annotations

import re
from datetime import date
from html.parser import HTMLParser
from pathlib import Path

import pytest

from equimind.core.config import Settings
from equimind.core.documents import Source, sha256_hex
from equimind.core.research import Figure
from equimind.core.search import EvidenceNode
from equimind.debate.debate import DebateEngine
from equimind.lexicon.lm_lists import load_lexicon

pytestmark = pytest.mark.integration


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.skip += tag in ("script", "style", "ix:header")
        if tag in ("p", "div", "tr", "br", "li"):
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        self.skip -= tag in ("script", "style", "ix:header") and self.skip > 0

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def _text(path: Path) -> str:
    p = _Text()
    p.feed(path.read_text(encoding="utf-8", errors="replace"))
    return re.sub(r"\n\s*\n+", "\n", re.sub(r"[ \t\xa0]+", " ", "".join(p.parts)))


class _Lookup:
    def __init__(self, docs: dict[str, str]) -> None:
        self.docs = docs

    def get_document_text(self, doc_id: str) -> str:
        return self.docs[doc_id]


def _nodes(doc_id: str, text: str, form: str, filed: date, anchors: list[tuple[str, str]]) -> list[EvidenceNode]:
    out = []
    for anchor, section in anchors:
        start = text.index(anchor)
        end = min(len(text), start + 4000)
        out.append(EvidenceNode(id=sha256_hex(doc_id, str(start)), doc_id=doc_id, start=start, end=end,
                                text=text[start:end], ticker="NVDA", company="NVIDIA", source=Source.SEC_EDGAR,
                                form=form, filed_at=filed, section=section, score=1.0, doc_sha256=sha256_hex(text)))
    return out


def test_offline_debate_on_nvidia_filings(corpus_dir: Path) -> None:
    q = _text(corpus_dir / "sec/filings/NVDA/nvda-10-q-2025-08-27.html")
    k = _text(corpus_dir / "sec/filings/NVDA/nvda-10-k-2025-02-26.html")
    qid, kid = sha256_hex("nvda-10q", q), sha256_hex("nvda-10k", k)
    risk = "Government actions, including trade protection"
    evidence = (_nodes(qid, q, "10-Q", date(2025, 8, 27), [("Recent Developments, Future Objectives", "Item 2. MD&A"),
                                                          ("Second Quarter of Fiscal Year 2026 Summary",
                                                           "Item 2. MD&A"), (risk, "Item 1A. Risk Factors")])
                + _nodes(kid, k, "10-K", date(2025, 2, 26), [("Fiscal Year 2025 Summary", "Item 7. MD&A"),
                                                            (risk, "Item 1A. Risk Factors")]))
    figures = [Figure(id="f-rsi", name="rsi_14", value=72.0, unit="", as_of=date(2025, 8, 29), formula="rsi")]
    engine = DebateEngine(Settings(), None, _Lookup({qid: q, kid: k}),
                          lexicon=load_lexicon(corpus_dir / "sentiment"))
    out = engine.run("NVDA", "Should I own NVIDIA?", date(2025, 9, 1), evidence, figures)
    assert out.rating is not None and not out.refused and out.dropped_claims == 0
    bull = " ".join(c.text for c in out.bull_case)
    bear = " ".join(c.text for c in out.bear_case)
    assert "Revenue was $46.7 billion, up 56% from a year ago" in bull
    assert "Export controls" in bear and "RSI(14) at 72 is overbought" in bear
    for c in (*out.bull_case, *out.bear_case):
        for cit in c.citations:
            assert (q if cit.doc_id == qid else k)[cit.start:cit.end] == cit.quote
    again = engine.run("NVDA", "Should I own NVIDIA?", date(2025, 9, 1), list(reversed(evidence)), figures)
    assert again == out
