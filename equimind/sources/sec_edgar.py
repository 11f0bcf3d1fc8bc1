"""SEC EDGAR: ticker → CIK, submissions (the filing list), primary documents and XBRL companyfacts.

A thin client over ``PoliteHttpClient`` rather than edgartools: edgartools keeps a module-level HTTP manager with its
own cache location and rate limiter (not injectable, not under EQUIMIND_HOME), and hides the URLs we must replay in
tests. The JSON is parsed by the pure ``parse_*`` functions below, which the snapshot reader shares, so live and
recorded data go through the same code.

Endpoints (https://www.sec.gov/search-filings/edgar-application-programming-interfaces):
  {sec_base_url}/files/company_tickers.json
  {sec_data_url}/submissions/CIK##########.json  (+ older pages named in filings.files)
  {sec_data_url}/api/xbrl/companyfacts/CIK##########.json
  {sec_base_url}/Archives/edgar/data/{cik}/{accession without dashes}/{primary document}
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any

import httpx

from equimind.core.config import Settings
from equimind.core.documents import Origin, Source
from equimind.core.errors import ConfigError, NotFoundError, ParseError
from equimind.lexicon.forms import PERIODIC_FORMS
from equimind.sources.base import CompanyFacts, CompanyProfile, FilingRef, TickerInfo, XbrlFact, normalise_ticker
from equimind.sources.http import HttpPolicy, PoliteHttpClient

log = logging.getLogger(__name__)

_IDENTITY = re.compile(r"^\S.*\s+\S+@\S+\.\S+$")
SEC_MAX_RPS = 10.0
DAY_S = 86_400.0


def check_identity(identity: str | None) -> str:
    """The SEC User-Agent identity, or ConfigError saying how to set it."""
    if not identity or not _IDENTITY.match(identity.strip()):
        raise ConfigError(
            "SEC EDGAR requires a declared identity (User-Agent) for live requests; got "
            f"{identity!r}. Set EQUIMIND_SEC_IDENTITY=\"Your Name you@example.com\" or use --snapshot DIR"
        )
    return identity.strip()


def pad_cik(cik: str | int) -> str:
    digits = str(cik).strip().lstrip("CIK")
    if not digits.isdigit():
        raise NotFoundError(f"{cik!r} is not a CIK; a CIK is up to 10 digits")
    return digits.zfill(10)


def document_url(base_url: str, cik: str, accession: str, primary_document: str) -> str:
    return f"{base_url}/Archives/edgar/data/{int(cik)}/{accession.replace('-', '')}/{primary_document}"


# ---------------------------------------------------------------------------------------------- pure parsers


def parse_ticker_map(obj: Any) -> dict[str, TickerInfo]:
    """company_tickers.json ({"0": {"cik_str", "ticker", "title"}, ...}) → {TICKER: TickerInfo}."""
    if not isinstance(obj, Mapping):
        raise ParseError("company_tickers.json: expected a JSON object of {index: {cik_str, ticker, title}}")
    out: dict[str, TickerInfo] = {}
    for row in obj.values():
        try:
            ticker = str(row["ticker"]).upper()
            out.setdefault(ticker, TickerInfo(ticker=ticker, cik=pad_cik(row["cik_str"]), name=str(row["title"])))
        except (KeyError, TypeError) as e:
            raise ParseError(f"company_tickers.json: malformed row {row!r}") from e
    return out


def _day(value: Any) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def parse_filing_rows(
    cols: Mapping[str, Sequence[Any]], *, cik: str, ticker: str | None, company: str | None,
    base_url: str, origin: Origin,
) -> list[FilingRef]:
    """Column-oriented submissions data (``filings.recent`` or an older page) → FilingRefs."""
    try:
        n = len(cols["accessionNumber"])
        out = []
        for i in range(n):
            filed = _day(cols["filingDate"][i])
            if filed is None:
                continue
            acc, primary = str(cols["accessionNumber"][i]), str(cols["primaryDocument"][i])
            out.append(FilingRef(
                cik=cik, ticker=ticker, company=company, accession=acc, form=str(cols["form"][i]), filed=filed,
                period_end=_day(cols["reportDate"][i]), primary_document=primary,
                url=document_url(base_url, cik, acc, primary), origin=origin,
            ))
        return out
    except (KeyError, IndexError, TypeError) as e:
        raise ParseError(f"submissions for CIK {cik}: unexpected layout ({e})") from e


def parse_submissions(obj: Any, *, ticker: str | None, base_url: str, origin: Origin) -> list[FilingRef]:
    """The ``filings.recent`` block of a submissions response → FilingRefs (newest first as SEC serves them)."""
    if not isinstance(obj, Mapping) or "filings" not in obj:
        raise ParseError("submissions JSON has no 'filings' block; was the response truncated?")
    cik = pad_cik(obj.get("cik", "0"))
    return parse_filing_rows(obj["filings"]["recent"], cik=cik, ticker=ticker, company=obj.get("name"),
                             base_url=base_url, origin=origin)


def older_pages(obj: Mapping[str, Any]) -> list[tuple[str, date | None]]:
    """(file name, filingTo) of the older submissions pages listed in ``filings.files``."""
    return [(str(f["name"]), _day(f.get("filingTo"))) for f in obj.get("filings", {}).get("files", [])]


def select_filings(refs: Iterable[FilingRef], forms: Sequence[str], until: date | None) -> list[FilingRef]:
    wanted = {f.upper() for f in forms}
    chosen = [r for r in refs if (not wanted or r.form.upper() in wanted) and (until is None or r.filed <= until)]
    return sorted(chosen, key=lambda r: (r.filed, r.accession), reverse=True)


def parse_company_facts(obj: Any, *, ticker: str | None, origin: Origin, location: str) -> CompanyFacts:
    """companyfacts JSON → CompanyFacts. Entries without a value, end date, accession or filed date are skipped."""
    if not isinstance(obj, Mapping) or not isinstance(obj.get("facts"), Mapping):
        raise ParseError(f"companyfacts at {location}: no 'facts' object; was the response truncated?")
    facts: dict[str, tuple[XbrlFact, ...]] = {}
    for taxonomy, concepts in obj["facts"].items():
        for concept, body in concepts.items():
            rows = [
                f for unit, entries in body.get("units", {}).items() for e in entries
                if (f := _fact(taxonomy, concept, unit, e)) is not None
            ]
            facts[f"{taxonomy}:{concept}"] = tuple(rows)
    return CompanyFacts(cik=pad_cik(obj.get("cik", "0")), entity_name=str(obj.get("entityName", "")),
                        ticker=ticker, facts=facts, origin=origin, location=location)


def _fact(taxonomy: str, concept: str, unit: str, e: Mapping[str, Any]) -> XbrlFact | None:
    end, filed, val = _day(e.get("end")), _day(e.get("filed")), e.get("val")
    if end is None or filed is None or not isinstance(val, int | float) or not e.get("accn"):
        return None
    return XbrlFact(taxonomy=taxonomy, concept=concept, unit=unit, value=float(val), start=_day(e.get("start")),
                    end=end, accession=str(e["accn"]), filed=filed, form=str(e.get("form", "")),
                    fy=e.get("fy"), fp=e.get("fp"), frame=e.get("frame"))


def profile_from_submissions(obj: Mapping[str, Any], ticker: str, origin: Origin) -> CompanyProfile:
    keys = ("cik", "sic", "sicDescription", "fiscalYearEnd", "stateOfIncorporation", "category", "tickers",
            "exchanges", "entityType")
    return CompanyProfile(ticker=ticker, name=str(obj.get("name", ticker)), source=Source.SEC_EDGAR, origin=origin,
                          fields={k: obj[k] for k in keys if k in obj and obj[k] not in ("", None)})


# ---------------------------------------------------------------------------------------------- live client


class SecEdgarClient:
    """Live SEC EDGAR. Refuses to start without ``settings.sec_identity``; at most 10 requests/s."""

    name = "sec_edgar"

    def __init__(self, settings: Settings, *, transport: httpx.BaseTransport | None = None,
                 http: PoliteHttpClient | None = None) -> None:
        identity = check_identity(settings.sec_identity)
        if not 0 < settings.sec_max_rps <= SEC_MAX_RPS:
            raise ConfigError(f"EQUIMIND_SEC_MAX_RPS must be in (0, {SEC_MAX_RPS}] (SEC's fair-access limit); "
                              f"got {settings.sec_max_rps}")
        self.base_url = settings.sec_base_url.rstrip("/")
        self.data_url = settings.sec_data_url.rstrip("/")
        policy = HttpPolicy(max_rps=settings.sec_max_rps, timeout_s=settings.http_timeout_s,
                            retries=settings.http_retries)
        self.http = http or PoliteHttpClient(source_name=self.name, user_agent=identity,
                                             cache_dir=settings.http_cache_path, policy=policy, transport=transport)
        self._tickers: dict[str, TickerInfo] | None = None

    def close(self) -> None:
        self.http.close()

    # TickerResolver
    def ticker_map(self) -> dict[str, TickerInfo]:
        if self._tickers is None:
            obj = self.http.get_json(f"{self.base_url}/files/company_tickers.json", max_age_s=7 * DAY_S)
            self._tickers = parse_ticker_map(obj)
        return self._tickers

    def resolve(self, ticker: str) -> TickerInfo:
        t = normalise_ticker(ticker)
        info = self.ticker_map().get(t)
        if info is None:
            raise NotFoundError(f"SEC has no CIK for ticker {t!r}; check the symbol (SEC uses e.g. BRK-B)")
        return info

    # submissions
    def submissions(self, cik: str) -> dict[str, Any]:
        obj = self.http.get_json(f"{self.data_url}/submissions/CIK{pad_cik(cik)}.json", max_age_s=DAY_S)
        if not isinstance(obj, dict):
            raise ParseError(f"submissions for CIK {cik}: expected a JSON object")
        return obj

    def filings(self, ticker: str, *, forms: Sequence[str] = PERIODIC_FORMS,
                until: date | None = None) -> list[FilingRef]:
        info = self.resolve(ticker)
        obj = self.submissions(info.cik)
        refs = parse_submissions(obj, ticker=info.ticker, base_url=self.base_url, origin=Origin.LIVE)
        oldest = min((r.filed for r in refs), default=None)
        if until is not None and oldest is not None and until < oldest:
            for name, _ in older_pages(obj):
                page = self.http.get_json(f"{self.data_url}/submissions/{name}", max_age_s=DAY_S)
                refs += parse_filing_rows(page, cik=info.cik, ticker=info.ticker, company=info.name,
                                          base_url=self.base_url, origin=Origin.LIVE)
        return select_filings(refs, forms, until)

    def primary_document(self, ref: FilingRef) -> str:
        if ref.url is None:
            raise NotFoundError(f"filing {ref.form} of {ref.filed} has no known accession/URL to download")
        body = self.http.get_bytes(ref.url)  # archives are immutable: cached forever
        return body.decode("utf-8", errors="replace")

    # FactsSource
    def company_facts(self, ticker: str) -> CompanyFacts:
        info = self.resolve(ticker)
        url = f"{self.data_url}/api/xbrl/companyfacts/CIK{info.cik}.json"
        obj = self.http.get_json(url, max_age_s=DAY_S)
        return parse_company_facts(obj, ticker=info.ticker, origin=Origin.LIVE, location=url)

    # ProfileSource
    def profile(self, ticker: str) -> CompanyProfile:
        info = self.resolve(ticker)
        return profile_from_submissions(self.submissions(info.cik), info.ticker, Origin.LIVE)


def load_json_file(path: str) -> Any:
    """Read a recorded JSON response (ParseError on a truncated/corrupt file)."""
    try:
        with open(path, "rb") as f:
            return json.load(f)
    except ValueError as e:
        raise ParseError(f"{path} is not valid JSON ({e})") from e
