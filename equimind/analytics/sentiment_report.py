"""The sentiment block of the market report: headline tone and the risk-factor shift between two filings.

Risk factors: the latest periodic filing filed on or before the as-of date whose primary document has a substantive
"Item 1A. Risk Factors" section is compared with the next older such filing (often the 10-K a 10-Q updates); the
basis ("10-Q 2025-08-27 vs 10-K 2025-02-26") is stated. At most ``MAX_FILINGS_TRIED`` documents are opened.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import date
from typing import Any

from pydantic import BaseModel, Field

from equimind.core.degraded import Degradation
from equimind.core.errors import EquiMindError
from equimind.core.research import Figure
from equimind.lexicon.forms import DOMESTIC_PERIODIC_FORMS
from equimind.lexicon.lm_lists import Lexicon
from equimind.lexicon.sentiment import compare_sections, extract_risk_factors, headline_tone, top_words
from equimind.sources.base import FilingIndexSource, FilingRef, NewsItem
from equimind.sources.filing_text import html_to_text

log = logging.getLogger(__name__)

MAX_FILINGS_TRIED = 8
MIN_RISK_CHARS = 2000  # shorter Item 1A sections only say "no material changes"
RISK_FORMS = DOMESTIC_PERIODIC_FORMS


class SentimentBlock(BaseModel):
    figures: list[Figure] = Field(default_factory=list)
    headlines: list[dict[str, Any]] = Field(default_factory=list)
    risk_factors: dict[str, Any] | None = None


def _filing_info(ref: FilingRef) -> dict[str, Any]:
    return {"form": ref.form, "filed": ref.filed, "accession": ref.accession, "url": ref.url,
            "local_path": ref.local_path, "period_end": ref.period_end}


def _form_family(form: str) -> str:
    """10-K, 10-K405 and their amendments are one family; 10-Q and 10-Q/A another."""
    return "10-Q" if form.upper().startswith("10-Q") else "10-K"


def _risk_sections(filings: FilingIndexSource, ticker: str, as_of: date) -> list[tuple[FilingRef, str]]:
    """The newest filing's Item 1A and the newest earlier one of the same form family: a 10-Q's risk factors update
    the 10-K's and are not like for like with them (a 10-Q against a 10-K measured a shorter, different text)."""
    found: list[tuple[FilingRef, str]] = []
    tried = 0
    for ref in filings.filings(ticker, forms=RISK_FORMS, until=as_of):
        if tried >= MAX_FILINGS_TRIED or len(found) == 2:
            break
        if found and _form_family(ref.form) != _form_family(found[0][0].form):
            continue
        try:
            html = filings.primary_document(ref)
        except EquiMindError as e:
            log.debug("risk factors: skip %s %s (%s)", ref.form, ref.filed, e)
            continue
        finally:
            tried += 1
        section = extract_risk_factors(html_to_text(html))
        if section is not None and len(section) >= MIN_RISK_CHARS:
            found.append((ref, section))
    return found


def _risk_block(filings: FilingIndexSource, ticker: str, as_of: date, lex: Lexicon,
                degraded: list[Degradation]) -> tuple[dict[str, Any] | None, list[Figure]]:
    try:
        found = _risk_sections(filings, ticker, as_of)
    except EquiMindError as e:
        degraded.append(Degradation(capability="sentiment.risk_factors", reason=f"unavailable ({e})"))
        return None, []
    if len(found) < 2:
        have = ", ".join(f"{r.form} {r.filed}" for r, _ in found) or "none"
        degraded.append(Degradation(
            capability="sentiment.risk_factors",
            reason=f"needs two filings of one form with an Item 1A section filed by {as_of} (a 10-Q's risk "
                   f"factors are compared with the previous 10-Q's, a 10-K's with the previous 10-K's); found: "
                   f"{have}"))
        return None, []
    (cur_ref, cur), (prev_ref, prev) = found
    shift = compare_sections(cur, prev, lex)
    basis = f"{cur_ref.form} {cur_ref.filed} vs {prev_ref.form} {prev_ref.filed}"
    prov = {"source": "sec_edgar", "lexicon": "Loughran-McDonald", "current": _filing_info(cur_ref),
            "previous": _filing_info(prev_ref), "basis": basis}
    figs = [
        Figure(id="risk_factors_negative_per_1000", name="Risk factors: negative words per 1,000 (latest filing)",
               value=shift.current.negative_per_1000, unit="per 1000 words", as_of=cur_ref.filed,
               formula="1000 * LM negative words / words in Item 1A", provenance=prov),
        Figure(id="risk_factors_negative_change", name="Risk factors: change in negative density vs previous",
               value=shift.negative_per_1000_change, unit="per 1000 words", as_of=cur_ref.filed,
               formula="negative_per_1000(current) - negative_per_1000(previous)", provenance=prov),
    ]
    block = {
        "basis": basis, "current": {**_filing_info(cur_ref), "words": shift.current.words,
                                    "negative_per_1000": shift.current.negative_per_1000, "tone": shift.current.tone},
        "previous": {**_filing_info(prev_ref), "words": shift.previous.words,
                     "negative_per_1000": shift.previous.negative_per_1000, "tone": shift.previous.tone},
        "rising_negative_words": [{"word": w, "per_10k_before": a, "per_10k_now": b}
                                  for w, a, b in shift.rising_negative_words],
        "top_negative_words": [{"word": w, "count": c} for w, c in top_words(shift.current)],
        "new_negative_sentences": shift.new_negative_sentences,
    }
    return block, figs


def build_sentiment(ticker: str, as_of: date, news: Sequence[NewsItem], filings: FilingIndexSource | None,
                    lex: Lexicon | None, degraded: list[Degradation]) -> SentimentBlock | None:
    """Headline tone (news published on or before ``as_of``) and the risk-factor shift; None if nothing."""
    if lex is None:
        return None
    figures: list[Figure] = []
    dated = [n for n in news if n.published_at.date() <= as_of]
    scores, mean = headline_tone([(n.title, n.published_at.date().isoformat()) for n in dated], lex)
    if mean is not None:
        figures.append(Figure(
            id="news_tone", name="News headline tone (LM, mean)", value=mean, unit="tone [-1, 1]",
            as_of=max(n.published_at.date() for n in dated), formula="mean((pos - neg) / (pos + neg)) per headline",
            inputs={"headlines": len(dated)},
            provenance={"source": ", ".join(sorted({n.source.value for n in dated})),
                        "origin": ", ".join(sorted({n.origin.value for n in dated})), "lexicon": "Loughran-McDonald"}))
    elif news:
        degraded.append(Degradation(capability="sentiment.news",
                                    reason=f"no headline published on or before {as_of}"))
    risk = None
    if filings is not None:
        risk, figs = _risk_block(filings, ticker, as_of, lex, degraded)
        figures += figs
    if not figures and risk is None:
        return None
    return SentimentBlock(figures=figures, risk_factors=risk,
                          headlines=[{"title": s.title, "published": s.published, "tone": s.tone} for s in scores])
