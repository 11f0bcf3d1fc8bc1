"""The trace: which settings enter the config hash, the corpus signature cached per docstore state, traced copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from equimind import __version__
from equimind.core.config import Settings
from equimind.core.documents import FilterSpec
from equimind.core.search import SearchResult
from equimind.security.trace import (
    CONFIG_HASH_EXCLUDED,
    CONFIG_HASH_FIELDS,
    Trace,
    Tracer,
    config_hash,
    corpus_signature,
    traced,
)


class FakeStore:
    """An IndexedIds whose documents and stamp the test sets; counts the full id reads."""

    def __init__(self, ids: list[str]) -> None:
        self.ids, self.generation, self.reads = ids, 0, 0

    def index_stamp(self) -> str:
        return f"instance:{self.generation}"

    def indexed_doc_ids(self) -> tuple[str, list[str]]:
        self.reads += 1
        return self.index_stamp(), list(self.ids)


def test_every_setting_is_either_hashed_or_excluded_on_purpose() -> None:
    hashed, excluded = set(CONFIG_HASH_FIELDS), set(CONFIG_HASH_EXCLUDED)
    assert not hashed & excluded
    assert hashed | excluded == set(Settings.model_fields)  # a new setting needs a decision here


@pytest.mark.parametrize("update", [
    {"top_k": 5}, {"retrieval_mode": "bm25"}, {"rrf_bm25_weight": 0.5}, {"rrf_bm25_weight_line_items": 0.5},
    {"rrf_dense_weight": 0.7}, {"rrf_k": 30},
    {"child_tokens": 150}, {"parent_tokens": 900}, {"embed_model": "other-model"}, {"rerank_model": "other/reranker"},
    {"provider": "openai"}, {"model": "gpt-x"}, {"collapse_parents": True}, {"auto_filter": False},
    {"debate_rounds": 2}, {"max_iterations": 2}, {"hnsw_ef_search": 80}, {"snapshot": Path("/recorded")},
])
def test_a_result_changing_setting_changes_the_hash(tmp_path: Path, update: dict[str, object]) -> None:
    base = Settings(home=tmp_path)
    assert config_hash(Settings(home=tmp_path, **update)) != config_hash(base)  # type: ignore[arg-type]


@pytest.mark.parametrize("update", [
    {"home": Path("/elsewhere")}, {"audit_key": "another-key-0123456789"}, {"openai_api_key": "sk-secret"},
    {"http_timeout_s": 3.0}, {"sec_identity": "Someone someone@example.com"}, {"embed_batch_size": 8},
    {"snapshot": Path("/another/recording")},
])
def test_paths_secrets_and_transport_settings_do_not(tmp_path: Path, update: dict[str, object]) -> None:
    reference = Settings(home=tmp_path, snapshot=Path("/recorded"))
    other = Settings(**{"home": tmp_path, "snapshot": Path("/recorded"), **update})  # type: ignore[arg-type]
    assert config_hash(other) == config_hash(reference)


def test_the_text_format_and_a_plain_str_provider_hash_as_expected(tmp_path: Path) -> None:
    s = Settings(home=tmp_path)
    assert config_hash(s, "chunk-text-v0") != config_hash(s, "title-section-v1")
    assert config_hash(s.model_copy(update={"provider": "offline"})) == config_hash(s)  # str or enum: same value


def test_the_signature_is_re_hashed_only_when_the_store_changed(tmp_path: Path) -> None:
    store = FakeStore(["b", "a"])
    tracer = Tracer(Settings(home=tmp_path), store)
    first, second = tracer.trace(), tracer.trace()
    assert store.reads == 1  # the second trace reused the cached signature
    assert first.corpus_signature == second.corpus_signature == corpus_signature(["a", "b"])
    assert first.request_id != second.request_id and len(first.request_id) == 32
    assert first.version == __version__ and first.config_hash == config_hash(Settings(home=tmp_path))
    store.ids.append("c")
    store.generation += 1  # what the docstore does when a document becomes indexed
    third = tracer.trace()
    assert store.reads == 2 and third.corpus_signature == corpus_signature(["a", "b", "c"])
    assert Tracer(Settings(home=tmp_path), None).corpus_signature() == corpus_signature([])


def test_traced_copies_the_result_and_adds_the_trace(tmp_path: Path) -> None:
    class TracedResult(SearchResult):
        trace: Trace

    result = SearchResult(query="q", mode="bm25", filters={"tickers": ["NVDA"]}, hits=[], timings_ms={"total": 1.0})
    trace = Tracer(Settings(home=tmp_path), FakeStore(["a"])).trace("r" * 32)
    out = traced(TracedResult, result, trace)
    assert out.model_dump(exclude={"trace"}) == result.model_dump() and out.trace == trace
    assert out.model_dump(mode="json")["trace"]["request_id"] == "r" * 32
    assert FilterSpec().is_empty()
