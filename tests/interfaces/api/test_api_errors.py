"""The one exception → HTTP status table: the route error handler and the research stream's ``error`` events agree."""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.requests import Request

from equimind.core.errors import (
    ConfigError,
    EquiMindError,
    InsufficientEvidence,
    NotFoundError,
    ParseError,
    RateLimitedError,
    SourceError,
    StoreUnavailable,
)
from equimind.interfaces.api.errors import STATUS_TABLE, ApiError, on_error, status_for, stream_error

EXPECTED = [(NotFoundError, 404), (InsufficientEvidence, 422), (ConfigError, 422), (RateLimitedError, 503),
            (SourceError, 503), (StoreUnavailable, 503), (ParseError, 502)]


def _route_response(exc: Exception) -> tuple[int, dict[str, object], dict[str, str]]:
    request = Request({"type": "http", "method": "POST", "path": "/api/v1/research", "headers": [],
                       "query_string": b""})
    res = asyncio.run(on_error(request, exc))
    return res.status_code, json.loads(bytes(res.body)), dict(res.headers)


@pytest.mark.parametrize(("cls", "status"), EXPECTED, ids=[c.__name__ for c, _ in EXPECTED])
def test_route_and_stream_give_the_same_status(cls: type[Exception], status: int) -> None:
    exc = cls(f"{cls.__name__} happened; do X")
    code, _, _ = _route_response(exc)
    event = stream_error(exc)
    assert code == status and event["status"] == status
    assert event["detail"] == str(exc)  # a known error names itself in the stream, as in the route's body


def test_every_class_in_the_table_is_covered() -> None:
    assert set(STATUS_TABLE) == {cls for cls, _ in EXPECTED}


def test_parse_error_is_a_bad_gateway_with_a_hint() -> None:
    code, body, _ = _route_response(ParseError("10-K of ZZZ: no Item 1A"))
    assert code == 502 and body == {"detail": "10-K of ZZZ: no Item 1A",
                                    "hint": "a source returned a document that could not be parsed"}


def test_the_most_specific_class_wins() -> None:
    code, _, headers = _route_response(RateLimitedError("SEC says slow down"))
    assert code == 503 and headers.get("retry-after") == "60"
    assert status_for(RateLimitedError("x")) is STATUS_TABLE[RateLimitedError]
    code, _, headers = _route_response(SourceError("SEC unreachable"))
    assert code == 503 and "retry-after" not in headers


def test_a_shared_store_outage_is_a_503_to_retry() -> None:
    code, body, headers = _route_response(StoreUnavailable("the PostgreSQL store at db:5432/x is unavailable"))
    assert code == 503 and headers.get("retry-after") == "5" and "PostgreSQL store" in str(body["detail"])


def test_config_errors_use_the_validation_shape() -> None:
    code, body, _ = _route_response(InsufficientEvidence("only 1 passage"))
    assert code == 422 and body == {"detail": [{"loc": ["request"], "msg": "only 1 passage",
                                                "type": "insufficient_evidence"}]}


@pytest.mark.parametrize("exc", [EquiMindError("secret internals"), RuntimeError("secret internals")])
def test_anything_else_is_a_500_without_internals(exc: Exception) -> None:
    code, body, _ = _route_response(exc)
    event = stream_error(exc)
    assert code == 500 and event["status"] == 500
    assert "secret" not in json.dumps(body) and "secret" not in str(event["detail"])


def test_api_error_keeps_its_own_status() -> None:
    code, body, _ = _route_response(ApiError(404, "no stored documents for ticker(s) ZZZ", "stored: NVDA"))
    assert code == 404 and body == {"detail": "no stored documents for ticker(s) ZZZ", "hint": "stored: NVDA"}
