"""``equimind snapshot record`` against one loopback server serving the recorded corpus as SEC, Yahoo and FRED
(tests/snapshot_replay.py): the live clients' real HTTP code runs end to end, and what lands on disk is compared
with the recorded corpus it came from. Bad input: unknown ticker, --out a file, --since in the future or malformed,
no SEC identity, an unreachable host, a failing download on a re-run."""

from __future__ import annotations

import csv
import json
import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from snapshot_replay import SnapshotReplayServer
from typer.testing import CliRunner

from equimind.interfaces.cli.main import app

pytestmark = pytest.mark.integration

runner = CliRunner()
RECORDED = ("sec/company_tickers.json", "sec/submissions/CIK0001045810.json", "sec/companyfacts/CIK0001045810.json",
            "sec/filings/NVDA/nvda-10-k-2025-02-26.html", "sec/filings/NVDA/nvda-10-q-2025-08-27.html",
            "prices/NVDA.csv", "macro/CPIAUCSL.csv", "macro/GDPC1.csv", "macro/VIXCLS.csv",
            "sentiment/LM_negative.txt")
NOT_SERVED = ("0001045810-25-000116", "0001045810-25-000230", "0001045810-26-000021")  # in submissions, not recorded


@pytest.fixture(scope="module")
def server(corpus_dir: Path) -> Iterator[SnapshotReplayServer]:
    with SnapshotReplayServer(corpus_dir) as srv:
        yield srv


def env_for(url: str, tmp: Path, identity: str | None = "EquiMind Tests tests@example.com") -> dict[str, str | None]:
    return {"EQUIMIND_HOME": str(tmp / "home"), "EQUIMIND_SEC_IDENTITY": identity, "EQUIMIND_SEC_BASE_URL": url,
            "EQUIMIND_SEC_DATA_URL": url, "EQUIMIND_YAHOO_ENDPOINT": url, "EQUIMIND_FRED_GRAPH_URL": url,
            "EQUIMIND_LBMA_BASE_URL": url, "EQUIMIND_WORLDBANK_BASE_URL": url,
            "EQUIMIND_SNAPSHOT": None, "EQUIMIND_HTTP_RETRIES": "1"}


def record(env: dict[str, str | None], out: Path, *extra: str, tickers: str = "NVDA") -> tuple[int, str, str]:
    res = runner.invoke(app, ["snapshot", "record", "--tickers", tickers, "--out", str(out), "--since", "2025-01-01",
                              "--prices-since", "2022-11-01", *extra], env=env)
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def recorded(server: SnapshotReplayServer, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int, str, str]:
    tmp = tmp_path_factory.mktemp("record")
    # gold and the World Bank panel: small fixtures in the documented formats (the corpus records neither)
    server.extra["/json/gold_pm.json"] = ("application/json", json.dumps(
        [{"d": "2025-11-06", "v": [3977.45, 3040.2, 3452.1]}]).encode())
    for code in ("NY.GDP.MKTP.KD.ZG", "FP.CPI.TOTL.ZG"):
        server.extra[f"/v2/country/all/indicator/{code}"] = ("application/json", json.dumps(
            [{"page": 1, "pages": 1}, [{"country": {"id": "US", "value": "United States"}, "date": "2024",
                                        "value": 2.8}]]).encode())
    code, out, err = record(env_for(server.url, tmp), tmp / "snap", tickers="NVDA,ZZZZQ")
    return tmp / "snap", code, out, err


def test_record_writes_the_served_bytes_in_the_snapshot_layout(recorded: tuple[Path, int, str, str],
                                                              corpus_dir: Path) -> None:
    snap, _code, out, _err = recorded
    for rel in RECORDED:
        assert (snap / rel).read_bytes() == (corpus_dir / rel).read_bytes(), rel
    with (snap / "sec/filings/manifest.csv").open(newline="") as f:
        mine = list(csv.DictReader(f))
    with (corpus_dir / "sec/filings/manifest.csv").open(newline="") as f:
        shipped = [r for r in csv.DictReader(f) if r["ticker"] == "NVDA"]
    assert mine == shipped
    assert "NVDA prices: " in out and "753 daily bars 2022-11-08 → 2025-11-07" in out
    assert not list(snap.rglob("*.part"))


def test_failures_are_named_and_the_rest_still_records(recorded: tuple[Path, int, str, str]) -> None:
    snap, code, out, err = recorded
    assert code == 1
    assert "FAILED ticker ZZZZQ: SEC has no CIK for ticker 'ZZZZQ'" in err
    for accession in NOT_SERVED:  # listed by SEC's submissions, but the replay server has no such document
        assert f"({accession}): sec_edgar:" in err and "HTTP 404" in err
    assert "4 failure(s)" in out
    assert json.loads((snap / "macro" / "lbma_gold_pm.json").read_text())[0]["v"][0] == 3977.45
    assert (snap / "macro" / "worldbank" / "FP.CPI.TOTL.ZG.json").is_file()
    assert "NVDA web intelligence: no job board or GitHub organisation configured" in out
    readme = (snap / "README.md").read_text()
    assert "EquiMind 0.1.0" in readme and "FAILED ticker ZZZZQ" in readme and "Single vintages" in readme
    assert "| `prices/NVDA.csv` | 753 daily bars 2022-11-08 → 2025-11-07 |" in readme


def test_a_ticker_without_sec_data_or_news_is_named_and_prices_still_record(server: SnapshotReplayServer,
                                                                          tmp_path: Path) -> None:
    code, out, err = record(env_for(server.url, tmp_path), tmp_path / "snap", tickers="AMD")
    assert code == 1  # the corpus has AMD's prices but not its SEC submissions or companyfacts
    assert "AMD submissions (CIK 0000002488)" in err and "AMD XBRL companyfacts (CIK 0000002488)" in err
    assert "AMD prices: " in out and "AMD news: Yahoo Finance served no headlines; no news file written" in out
    assert (tmp_path / "snap" / "prices" / "AMD.csv").is_file()
    assert not (tmp_path / "snap" / "news" / "yahoo" / "AMD_news.csv").exists()
    assert "note: AMD news: Yahoo Finance served no headlines" in (tmp_path / "snap" / "README.md").read_text()


def test_news_is_the_live_stream_in_the_documented_layout(recorded: tuple[Path, int, str, str],
                                                          corpus_dir: Path) -> None:
    snap = recorded[0]
    with (snap / "news/yahoo/NVDA_news.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["symbol", "publishedDate", "title", "site", "url", "text"]
    assert len(rows) == 100  # --news-limit default
    with (corpus_dir / "news/fmp/NVDA_news.csv").open(newline="") as f:
        fmp = {r["url"]: r for r in csv.DictReader(f)}
    eastern = ZoneInfo("America/New_York")
    for row in rows:
        when = datetime.fromisoformat(row["publishedDate"])
        assert when.utcoffset() == timedelta(0)
        source = fmp[row["url"]]
        assert (row["title"], row["site"], row["text"]) == (source["title"], source["site"], source["text"])
        assert when == datetime.fromisoformat(source["publishedDate"]).replace(tzinfo=eastern).astimezone(UTC)


def test_rerun_updates_in_place_and_keeps_what_a_failed_download_had(server: SnapshotReplayServer,
                                                                    tmp_path: Path, corpus_dir: Path) -> None:
    env = env_for(server.url, tmp_path)
    snap = tmp_path / "snap"
    assert record(env, snap)[0] == 1  # the three unrecorded filings
    manifest = (snap / "sec/filings/manifest.csv").read_bytes()
    facts = "/api/xbrl/companyfacts/CIK0001045810.json"
    server.fault(facts, "404")
    (tmp_path / "home" / "http_cache").rename(tmp_path / "old_cache")  # make the re-run ask the server again
    code, _out, err = record(env, snap)
    assert code == 1 and "NVDA XBRL companyfacts (CIK 0001045810)" in err
    assert (snap / "sec/filings/manifest.csv").read_bytes() == manifest  # merged, not duplicated
    assert (snap / "sec/companyfacts/CIK0001045810.json").read_bytes() == (
        corpus_dir / "sec/companyfacts/CIK0001045810.json").read_bytes()  # the earlier recording is kept
    with (snap / "news/yahoo/NVDA_news.csv").open(newline="") as f:
        assert len(list(csv.DictReader(f))) == 100  # the same headlines again: merged by URL
    assert not list(snap.rglob("*.part"))


def test_out_pointing_at_a_file_is_refused(server: SnapshotReplayServer, tmp_path: Path) -> None:
    target = tmp_path / "a_file"
    target.write_text("keep me")
    code, _out, err = record(env_for(server.url, tmp_path), target)
    assert code == 2 and f"--out {target} is a file" in err
    assert target.read_text() == "keep me"


@pytest.mark.parametrize(("since", "message"), [
    ((datetime.now(UTC).date() + timedelta(days=3)).isoformat(), "is in the future"),
    ("2025-13-01", "is not a date; use YYYY-MM-DD"),
])
def test_bad_since_is_refused(server: SnapshotReplayServer, tmp_path: Path, since: str, message: str) -> None:
    res = runner.invoke(app, ["snapshot", "record", "--tickers", "NVDA", "--out", str(tmp_path / "s"),
                              "--since", since], env=env_for(server.url, tmp_path))
    assert res.exit_code == 2 and message in res.stderr and "--since" in res.stderr
    assert not (tmp_path / "s").exists()


def test_without_an_sec_identity_it_refuses_with_the_fix(server: SnapshotReplayServer, tmp_path: Path) -> None:
    code, _out, err = record(env_for(server.url, tmp_path, identity=None), tmp_path / "s")
    assert code == 2 and 'EQUIMIND_SEC_IDENTITY="Your Name you@example.com"' in err
    assert not (tmp_path / "s").exists()


def test_unreachable_network_names_the_host_and_the_fix(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    code, _out, err = record(env_for(dead, tmp_path), tmp_path / "s")
    host = dead.removeprefix("http://")
    assert code == 2 and f"cannot reach {host}" in err
    assert "Check the network or proxy" in err and "EQUIMIND_SEC_BASE_URL" in err
    assert "FAILED" in (tmp_path / "s" / "README.md").read_text()
