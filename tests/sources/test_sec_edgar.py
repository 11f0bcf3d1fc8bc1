"""SecEdgarClient end to end through its real HTTP code against a local server replaying recorded SEC responses."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

import pytest
from market_replay import ReplayServer, SleepRecorder

from equimind.core.config import Settings
from equimind.core.documents import Origin
from equimind.core.errors import ConfigError, NotFoundError, ParseError
from equimind.sources.base import FactsSource, FilingIndexSource, ProfileSource
from equimind.sources.http import HttpPolicy, PoliteHttpClient
from equimind.sources.market_snapshot import SnapshotSec
from equimind.sources.sec_edgar import SecEdgarClient, check_identity

IDENTITY = "EquiMind Tests tests@example.com"
NVDA_FACTS = "/api/xbrl/companyfacts/CIK0001045810.json"


@pytest.fixture()
def server(corpus_dir: Path):  # type: ignore[no-untyped-def]
    with ReplayServer(corpus_dir) as s:
        yield s


def _settings(tmp_path: Path, url: str, **kw: object) -> Settings:
    return Settings(home=tmp_path / "home", sec_identity=IDENTITY, sec_base_url=url, sec_data_url=url,
                    **kw)  # type: ignore[arg-type]


def _client(tmp_path: Path, server: ReplayServer, sleep: SleepRecorder | None = None) -> SecEdgarClient:
    s = _settings(tmp_path, server.url)
    http = PoliteHttpClient(source_name="sec_edgar", user_agent=IDENTITY, cache_dir=s.http_cache_path,
                            policy=HttpPolicy(max_rps=10.0, timeout_s=5.0, retries=3), sleep=sleep or SleepRecorder())
    return SecEdgarClient(s, http=http)


@pytest.mark.parametrize("identity", [None, "", "bob", "no-email-here please"])
def test_live_client_refuses_to_start_without_identity(tmp_path: Path, identity: str | None) -> None:
    s = Settings(home=tmp_path, sec_identity=identity)
    with pytest.raises(ConfigError, match=re.escape('EQUIMIND_SEC_IDENTITY="Your Name you@example.com"')):
        SecEdgarClient(s)


def test_rate_above_sec_limit_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="10"):
        SecEdgarClient(Settings(home=tmp_path, sec_identity=IDENTITY, sec_max_rps=25))
    assert check_identity(" Jane Doe jane@example.org ") == "Jane Doe jane@example.org"


def test_client_satisfies_the_source_protocols(tmp_path: Path, server: ReplayServer) -> None:
    c = _client(tmp_path, server)
    assert isinstance(c, FactsSource) and isinstance(c, FilingIndexSource) and isinstance(c, ProfileSource)


def test_ticker_to_cik_and_identity_header(tmp_path: Path, server: ReplayServer) -> None:
    c = _client(tmp_path, server)
    info = c.resolve("nvda")
    assert (info.cik, info.name) == ("0001045810", "NVIDIA CORP")
    assert c.resolve("BRK.B").cik == "0001067983"
    with pytest.raises(NotFoundError, match="no CIK"):
        c.resolve("ZZZZZZ")
    assert server.requests[0][1] == "/files/company_tickers.json"
    assert server.requests[0][2]["User-Agent"] == IDENTITY
    assert server.count("/files/company_tickers.json") == 1  # the map is fetched once


def test_filings_list_and_primary_document_download(tmp_path: Path, server: ReplayServer, corpus_dir: Path) -> None:
    c = _client(tmp_path, server)
    tenk = c.filings("NVDA", forms=["10-K"], until=date(2025, 6, 30))
    assert tenk[0].accession == "0001045810-25-000023" and tenk[0].filed == date(2025, 2, 26)
    assert tenk[0].period_end == date(2025, 1, 26)
    assert tenk[0].url == f"{server.url}/Archives/edgar/data/1045810/000104581025000023/nvda-20250126.htm"
    assert all(r.filed <= date(2025, 6, 30) and r.form == "10-K" for r in tenk)
    assert [r.filed for r in tenk] == sorted((r.filed for r in tenk), reverse=True)
    html = c.primary_document(tenk[0])
    assert html == (corpus_dir / "sec/filings/NVDA/nvda-10-k-2025-02-26.html").read_text(encoding="utf-8")


def test_older_submission_pages_are_followed_when_needed(tmp_path: Path, server: ReplayServer) -> None:
    c = _client(tmp_path, server)
    old = c.filings("TSLA", forms=["10-K"], until=date(2012, 12, 31))
    assert old and all(r.filed <= date(2012, 12, 31) for r in old)
    assert server.count("/submissions/CIK0001318605-submissions-001.json") == 1
    c.filings("TSLA", forms=["10-K"], until=date(2025, 1, 31))  # recent enough: no second page
    assert server.count("/submissions/CIK0001318605-submissions-001.json") == 1


def test_companyfacts_live_equals_snapshot_parse(tmp_path: Path, server: ReplayServer, corpus_dir: Path) -> None:
    live = _client(tmp_path, server).company_facts("NVDA")
    snap = SnapshotSec(corpus_dir).company_facts("NVDA")
    assert live.origin is Origin.LIVE and snap.origin is Origin.SNAPSHOT
    assert live.entity_name == "NVIDIA CORP" and live.cik == "0001045810"
    assert live.facts == snap.facts
    assert live.location.endswith(NVDA_FACTS)


def test_500_then_success_on_companyfacts(tmp_path: Path, server: ReplayServer) -> None:
    sleep = SleepRecorder()
    server.fault(NVDA_FACTS, "500")
    cf = _client(tmp_path, server, sleep).company_facts("NVDA")
    assert cf.get("us-gaap:Revenues")
    assert sleep.waits == [0.5]


def test_truncated_companyfacts_fails_and_caches_nothing(tmp_path: Path, server: ReplayServer) -> None:
    server.fault(NVDA_FACTS, "badjson", "badjson", "badjson", "badjson")
    c = _client(tmp_path, server)
    with pytest.raises(ParseError):
        c.company_facts("NVDA")
    cached = c.http.cache_file_for(f"{server.url}{NVDA_FACTS}")
    assert cached is not None and not cached.exists()
    cf = c.company_facts("NVDA")  # the next call fetches again and now succeeds
    assert cf.get("us-gaap:NetIncomeLoss") and cached.exists()


def test_profile_from_submissions(tmp_path: Path, server: ReplayServer) -> None:
    p = _client(tmp_path, server).profile("AAPL")
    assert p.name == "Apple Inc." and p.fields["sic"] == "3571" and p.fields["fiscalYearEnd"] == "0926"
