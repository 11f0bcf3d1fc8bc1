"""The LLM answerer over real HTTP: the project's fake OpenAI-compatible server on 127.0.0.1 with canned chat
completions (tests/agents/test_llm_http.py). A good reply is verified; malformed JSON and a timeout fall back to the
offline extractive answerer, visibly."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

import pytest

from equimind.answer.answerer import Answerer
from equimind.answer.llm_answer import LLMAnswerer
from equimind.answer.record import Method, Support
from equimind.core.config import Settings
from equimind.llm.providers import LLMConfig
from tests.agents.test_llm_http import completion, serve  # noqa: F401  (serve is a fixture)
from tests.answer.asking import ask
from tests.answer.test_llm_answer import QUESTION, ROW, table_hits  # noqa: F401  (table_hits is a fixture)

pytestmark = pytest.mark.integration
AS_OF = date(2025, 9, 30)
HEADER = ("| Revenue by End Market: | Year Ended Jan 26, 2025 (In millions) | Year Ended Jan 28, 2024 | "
          "Year Ended Jan 29, 2023 |")


def _llm(base_url: str, timeout: float = 5.0, retries: int = 1) -> LLMAnswerer:
    settings = Settings(provider="openai-compatible", model="fake-model", llm_base_url=base_url,
                        llm_timeout_s=timeout, llm_retries=retries)
    return LLMAnswerer.from_config(LLMConfig.from_settings(settings, api_key=None))


def test_reply_over_http_is_verified(serve: Any, nvda_services: Any, table_hits: Any) -> None:  # noqa: F811
    args = {"sentences": [{"text": "Data Center revenue was $115,186 million in fiscal 2025.",
                           "quotes": [{"passage_id": "P1", "quote": ROW}, {"passage_id": "P1", "quote": HEADER}]}]}
    fake, url = serve(lambda n, body: (200, {}, completion(body, json.dumps(args)), 0.0))
    ans = ask(Answerer(nvda_services.docstore, None, _llm(url)), QUESTION, "NVDA", AS_OF, table_hits)
    assert ans.support is Support.SUPPORTED and ans.sentences[0].method is Method.LLM
    assert [q.text for q in ans.sentences[0].quotes] == [ROW, HEADER]
    assert "<passages>" in json.dumps(fake.requests[0]["messages"])


@pytest.mark.parametrize("behaviour", ["malformed", "timeout"])
def test_malformed_or_slow_reply_falls_back(serve: Any, nvda_services: Any, table_hits: Any,  # noqa: F811
                                           behaviour: str) -> None:
    def reply(n: int, body: dict[str, Any]) -> Any:
        if behaviour == "timeout":
            return 200, {}, completion(body, json.dumps({"sentences": []})), 2.0
        return 200, {}, completion(body, "{not json"), 0.0

    fake, url = serve(reply)
    llm = _llm(url, timeout=0.5, retries=0)
    ans = ask(Answerer(nvda_services.docstore, None, llm), QUESTION, "NVDA", AS_OF, table_hits)
    failure = "timeout" if behaviour == "timeout" else "malformed_output"
    assert any(d.startswith(f"llm ({failure})") for d in ans.degraded), ans.degraded
    assert ans.sentences and ans.sentences[0].method is Method.EXTRACTIVE
    assert fake.requests  # the call really went over HTTP
