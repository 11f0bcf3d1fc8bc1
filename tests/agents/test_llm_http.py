"""The LLM path over real HTTP: a fake OpenAI-compatible server on 127.0.0.1 with canned chat completions.

Each failure mode has a defined, visible outcome: malformed JSON, a refusal, a timeout and a 429 are retried within
the configured bounds, then recorded in ``degraded`` and ``usage.calls`` while the offline analyst stands in (or, in
strict mode, raised as the matching EquiMind error).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from equimind.core.config import Settings
from equimind.core.errors import RateLimitedError
from equimind.debate.debate import DebateEngine
from equimind.debate.llm_analyst import LLMAnalyst
from equimind.llm.calls import LLMRateLimitedError
from equimind.llm.providers import LLMConfig

AS_OF = date(2025, 9, 1)
Reply = tuple[int, dict[str, str], dict[str, Any], float]  # status, headers, body, delay (s; cut short at teardown)


def _role(body: dict[str, Any]) -> str:
    system = " ".join(str(m.get("content")) for m in body["messages"] if m["role"] in ("system", "developer"))
    return "judge" if "JUDGE" in system else "bull" if "BULL analyst" in system else "bear"


def _args(role: str) -> dict[str, Any]:
    if role == "bull":
        return {"claims": [{"text": "Revenue compounding.", "theme": "growth", "figure_ids": ["fig-rev"]}]}
    if role == "bear":
        return {"claims": [{"text": "Valuation stretched.", "theme": "valuation", "figure_ids": ["fig-pe"]}]}
    return {"winning_side": "balanced", "proposed_rating": "HOLD", "winning_thesis": "Scripted synthesis.",
            "key_risk_ids": [], "key_catalyst_ids": [], "contradictions": [], "reasoning": ["over HTTP"]}


def completion(body: dict[str, Any], arguments: str | None = None, refusal: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if refusal is not None:
        message["refusal"] = refusal
        finish = "stop"
    else:
        name = body["tools"][0]["function"]["name"]
        args = arguments if arguments is not None else json.dumps(_args(_role(body)))
        message["tool_calls"] = [{"id": "call_1", "type": "function", "function": {"name": name, "arguments": args}}]
        finish = "tool_calls"
    return {"id": "chatcmpl-1", "object": "chat.completion", "created": 1_750_000_000, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150}}


@dataclass
class FakeOpenAI:
    """Serves POST /v1/chat/completions; ``behaviour(n, body)`` decides the n-th reply (0-based, thread-safe). A
    reply's delay ends early when ``release`` is set (the fixture sets it at teardown, so no reply outlives a test)."""

    behaviour: Callable[[int, dict[str, Any]], Reply]
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    release: threading.Event = field(default_factory=threading.Event)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    n = len(fake.requests)
                    fake.requests.append(body)
                    fake.headers.append(dict(self.headers))
                status, headers, payload, delay = fake.behaviour(n, body)
                if delay > 0:
                    fake.release.wait(delay)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    for k, v in {"Content-Type": "application/json", **headers}.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and went away

            def log_message(self, format: str, *args: Any) -> None:
                return

        return Handler


@pytest.fixture()
def serve() -> Iterator[Callable[[Callable[[int, dict[str, Any]], Reply]], tuple[FakeOpenAI, str]]]:
    servers: list[ThreadingHTTPServer] = []
    fakes: list[FakeOpenAI] = []

    def start(behaviour: Callable[[int, dict[str, Any]], Reply]) -> tuple[FakeOpenAI, str]:
        fake = FakeOpenAI(behaviour)
        server = ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        fakes.append(fake)
        return fake, f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for f in fakes:
        f.release.set()
    for s in servers:
        s.shutdown()
        s.server_close()


def _engine(base_url: str, corpus, *, timeout: float = 5.0, retries: int = 1,  # type: ignore[no-untyped-def]
            strict: bool = False) -> DebateEngine:
    settings = Settings(provider="openai-compatible", model="fake-model", llm_base_url=base_url,
                        llm_timeout_s=timeout, llm_retries=retries, debate_rounds=0)
    llm = LLMAnalyst.from_settings(settings, api_key=None)
    assert llm is not None
    return DebateEngine(settings, llm, corpus.lookup, strict=strict)


def _offline(corpus):  # type: ignore[no-untyped-def]
    return DebateEngine(Settings(), None, corpus.lookup).run("ACME", "q", AS_OF, corpus.evidence, corpus.figures)


def ok(n: int, body: dict[str, Any]) -> Reply:
    return 200, {}, completion(body), 0.0


def test_happy_path_over_http_counts_tokens(serve, corpus) -> None:  # type: ignore[no-untyped-def]
    fake, url = serve(ok)
    out = _engine(url, corpus).run("ACME", "q", AS_OF, corpus.evidence, corpus.figures)
    assert [c["status"] for c in out.usage["calls"]] == ["ok", "ok", "ok"]
    assert (out.usage["input_tokens"], out.usage["output_tokens"], out.usage["requests"]) == (360, 90, 3)
    assert out.provider == "openai-compatible:fake-model" and len(fake.requests) == 3
    body = fake.requests[0]
    assert body["model"] == "fake-model" and body["temperature"] == 0.0
    assert [t["function"]["name"] for t in body["tools"]] == ["final_result"]  # the output tool only
    user = " ".join(str(m["content"]) for m in body["messages"] if m["role"] == "user")
    assert "<evidence>" in user and "Revenue was $46.7 billion" in user
    assert {k.lower(): v for k, v in fake.headers[0].items()}["authorization"] == "Bearer not-needed"
    # the synthetic figures hold no fundamentals: each required figure is a named missing line
    assert [d.capability for d in out.degraded if not d.capability.startswith("required.")] == ["sentiment_lexicon"]
    assert any(c.text == "Revenue compounding." for c in out.bull_case)
    assert out.rating == _offline(corpus).rating


def test_malformed_json_is_retried_then_falls_back(serve, corpus) -> None:  # type: ignore[no-untyped-def]
    fake, url = serve(lambda n, body: (200, {}, completion(body, arguments='{"claims": [{"text": '), 0.0))
    out = _engine(url, corpus, retries=1).run("ACME", "q", AS_OF, corpus.evidence, corpus.figures)
    assert len(fake.requests) == 6  # three agents x (one try + one output retry)
    reasons = {d.capability: d.reason for d in out.degraded}
    assert "structured output never validated" in reasons["llm:bull"] and "llm:judge" in reasons
    assert [c["status"] for c in out.usage["calls"]] == ["malformed_output"] * 3
    assert out.usage["input_tokens"] == 720  # tokens of failed attempts are still accounted
    offline = _offline(corpus)
    assert (out.rating, out.score) == (offline.rating, offline.score)


def test_refusal_is_recorded_not_retried_forever(serve, corpus) -> None:  # type: ignore[no-untyped-def]
    fake, url = serve(lambda n, body: (200, {}, completion(body, refusal="I can't help with that."), 0.0))
    out = _engine(url, corpus).run("ACME", "q", AS_OF, corpus.evidence, corpus.figures)
    assert [c["status"] for c in out.usage["calls"]] == ["refused"] * 3
    assert len(fake.requests) == 3  # a refusal is final: no retry
    assert all(len(c["detail"]) < 400 for c in out.usage["calls"])
    assert all("refused" in d.reason for d in out.degraded if d.capability.startswith("llm:"))
    assert out.rating == _offline(corpus).rating


def test_timeout_is_retried_then_falls_back(serve, corpus) -> None:  # type: ignore[no-untyped-def]
    # the server holds every reply until the test ends: only the client's own 0.25 s timeout ends a call (a client
    # that waited for the reply would record "ok"), so no wall-clock bound is needed
    fake, url = serve(lambda n, body: (200, {}, completion(body), 300.0))
    out = _engine(url, corpus, timeout=0.25, retries=1).run("ACME", "q", AS_OF, corpus.evidence, corpus.figures)
    assert [c["status"] for c in out.usage["calls"]] == ["timeout"] * 3
    assert len(fake.requests) == 6  # one SDK retry per agent
    assert {h.get("x-stainless-read-timeout") for h in fake.headers} == {"0.25"}  # the configured timeout, each try
    assert "timed out" in {d.capability: d.reason for d in out.degraded}["llm:bear"]
    assert out.rating == _offline(corpus).rating


def _rate_limited(n: int, body: dict[str, Any]) -> Reply:
    return 429, {"retry-after-ms": "5"}, {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}, 0.0


def test_429_is_retried_then_falls_back(serve, corpus) -> None:  # type: ignore[no-untyped-def]
    fake, url = serve(_rate_limited)
    out = _engine(url, corpus, retries=1).run("ACME", "q", AS_OF, corpus.evidence, corpus.figures)
    assert len(fake.requests) == 6
    assert [c["status"] for c in out.usage["calls"]] == ["rate_limited"] * 3
    assert "rate limited (429)" in {d.capability: d.reason for d in out.degraded}["llm:bull"]


def test_429_then_success_recovers(serve, corpus) -> None:  # type: ignore[no-untyped-def]
    fake, url = serve(lambda n, body: _rate_limited(n, body) if n == 0 else ok(n, body))
    out = _engine(url, corpus, retries=1).run("ACME", "q", AS_OF, corpus.evidence, corpus.figures)
    assert len(fake.requests) == 4 and [c["status"] for c in out.usage["calls"]] == ["ok"] * 3
    assert not any(d.capability.startswith("llm:") for d in out.degraded)


def test_429_in_strict_mode_raises_rate_limited(serve, corpus) -> None:  # type: ignore[no-untyped-def]
    # Bull and bear ask concurrently and the first error ends the run, so on a busy machine the other side's request
    # could be cancelled before it is sent. The server answers 429 only once both requests are in (or after 120 s,
    # when the count below then fails): what is counted is what the run sent, not which thread ran first.
    both_in = threading.Event()

    def rate_limited_once_both_asked(n: int, body: dict[str, Any]) -> Reply:
        if n == 1:
            both_in.set()
        both_in.wait(120)
        return _rate_limited(n, body)

    fake, url = serve(rate_limited_once_both_asked)
    with pytest.raises(LLMRateLimitedError) as err:
        _engine(url, corpus, retries=0, strict=True).run("ACME", "q", AS_OF, corpus.evidence, corpus.figures)
    assert isinstance(err.value, RateLimitedError) and err.value.record.status == "rate_limited"
    assert "429" in str(err.value) and len(fake.requests) == 2  # retries=0: one attempt per side, then the error
    assert sorted(_role(b) for b in fake.requests) == ["bear", "bull"]  # no judge call after the error


def test_config_labels_the_endpoint(serve) -> None:  # type: ignore[no-untyped-def]
    _, url = serve(ok)
    cfg = LLMConfig.from_settings(Settings(provider="openai-compatible", llm_base_url=url, model="m"), api_key=None)
    assert cfg.label == "openai-compatible:m" and cfg.base_url == url
