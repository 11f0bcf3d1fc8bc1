"""The ``trace`` every MCP tool result, API JSON body and CLI ``--json`` output carries: which request produced it,
with which EquiMind, over which documents and under which result-changing settings.

``Trace`` = {request_id (uuid4 hex), version (``equimind.__version__``), corpus_signature, config_hash}. Two results
with equal ``corpus_signature`` and ``config_hash`` came from the same indexed documents and the same settings; their
``request_id`` always differs.

- **corpus_signature**: sha256 over the sorted, de-duplicated ids of the *indexed* documents (``corpus_signature``;
  the evaluation reports use the same function for the documents a run saw). ``Tracer`` caches it per docstore
  state (the docstore's index stamp, which changes whenever a document becomes indexed or is deleted), so a result
  costs one small ``meta`` read unless the store changed.
- **config_hash**: sha256 of the canonical JSON of ``CONFIG_HASH_FIELDS`` (the settings that change results), the
  data mode (snapshot or live: not the snapshot's path) and the embedding-text format. Paths, URLs, timeouts,
  retries and secrets (API keys, the audit key) are left out (``CONFIG_HASH_EXCLUDED``); a test checks that every
  Settings field is in exactly one of the two lists, so a new setting needs a decision.
"""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from collections.abc import Callable, Iterable
from enum import Enum
from hashlib import sha256
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from equimind import __version__
from equimind.core.documents import sha256_hex

if TYPE_CHECKING:
    from equimind.core.config import Settings

CONFIG_HASH_FIELDS: tuple[str, ...] = (
    # what is embedded and how documents are cut
    "embed_model", "embed_backend", "child_tokens", "parent_tokens", "first_answer_indexing",
    # the vector index (HNSW parameters change approximate neighbours)
    "hnsw_space", "hnsw_m", "hnsw_ef_construction", "hnsw_ef_search",
    # retrieval: legs, fusion, rerank, filters, result size
    "retrieval_mode", "dense_top_k", "bm25_top_k", "rrf_k", "rrf_dense_weight", "rrf_bm25_weight",
    "rrf_bm25_weight_line_items",
    "collapse_parents", "auto_filter", "query_shaping", "rerank_model", "rerank_top_n", "top_k",
    # the agents: provider, model and the research loop's limits
    "provider", "model", "debate_rounds", "max_iterations", "context_token_budget", "decay_per_day",
    # web intelligence: which job boards and GitHub organisations are read, and which terms make a product role
    "job_boards", "github_orgs", "product_terms",
)
CONFIG_HASH_EXCLUDED: tuple[str, ...] = (
    # paths (where state lives, not what it says); snapshot enters the hash only as the mode "snapshot" | "live"
    "home", "shared", "snapshot", "models_dir", "onnx_cache_dir", "gate_policy",
    # where live data comes from and how patiently (the documents it yields are in corpus_signature)
    "sec_identity", "sec_base_url", "sec_data_url", "sec_max_rps", "http_timeout_s", "http_retries",
    "fred_base_url", "worldbank_base_url", "fred_graph_url", "yahoo_endpoint", "chroma_url", "docstore_url",
    "feed_poll_s", "llm_base_url", "lbma_base_url", "greenhouse_base_url", "lever_base_url", "github_api_url",
    "llm_timeout_s", "llm_retries", "embed_batch_size", "embed_threads",
    # secrets
    "fred_api_key", "openai_api_key", "anthropic_api_key", "gemini_api_key", "deepseek_api_key",
    "openrouter_api_key", "ollama_api_key", "audit_key", "github_token",
)

M = TypeVar("M", bound=BaseModel)


class Trace(BaseModel):
    """Where a result came from: compare two results' corpus_signature and config_hash to know whether they saw the
    same indexed documents under the same result-changing settings."""

    model_config = ConfigDict(frozen=True)

    request_id: str = Field(description="uuid4 hex; for the REST API also the X-Request-ID response header.")
    version: str = Field(description="EquiMind version that produced the result.")
    corpus_signature: str = Field(description="sha256 over the sorted ids of the indexed documents.")
    config_hash: str = Field(description="sha256 of the result-changing settings (models, chunk sizes, fusion "
                                         "weights, retrieval mode, provider, top-k, ...; no paths or secrets).")
    feed_position: int | None = Field(default=None, description="The docstore change-feed position the result "
                                      "was served from: this process's search indexes (else the position the corpus "
                                      "signature was read at).")


class IndexedIds(Protocol):
    """What the tracer reads from the docstore (``equimind.store.docstore.DocStore``)."""

    def index_stamp(self) -> str: ...

    def indexed_doc_ids(self) -> tuple[str, list[str]]: ...


def new_request_id() -> str:
    return uuid.uuid4().hex


def corpus_signature(doc_ids: Iterable[str]) -> str:
    """sha256 over the sorted, de-duplicated document ids (newline-joined): equal for equal sets of documents."""
    return sha256_hex(*sorted(set(doc_ids)))


def config_inputs(settings: Settings, text_format: str | None = None) -> dict[str, Any]:
    """The values ``config_hash`` hashes (JSON-ready)."""
    values: dict[str, Any] = {}
    for name in CONFIG_HASH_FIELDS:
        value = getattr(settings, name)
        # an Enum by its value: a copy made with model_copy(update={"provider": "openai"}) holds a plain str
        values[name] = value.value if isinstance(value, Enum) else value
    values["data_mode"] = "snapshot" if settings.snapshot is not None else "live"
    values["text_format"] = text_format
    return values


def config_hash(settings: Settings, text_format: str | None = None) -> str:
    raw = json.dumps(config_inputs(settings, text_format), sort_keys=True, separators=(",", ":"))
    return sha256(raw.encode("utf-8")).hexdigest()


class Tracer:
    """Builds the ``Trace`` of results over one docstore under one Settings. Thread-safe; the corpus signature is
    re-hashed only when the docstore's index stamp changed."""

    def __init__(self, settings: Settings, store: IndexedIds | None, text_format: str | None = None,
                 served: Callable[[], int | None] | None = None) -> None:
        """``served``: the feed position this process's search indexes are at (None before its first search); a
        trace names it as ``feed_position`` when given, else the store's position its signature was read at."""
        self.config_hash = config_hash(settings, text_format)
        self._store = store
        self._served = served
        self._lock = threading.Lock()
        self._cached: tuple[str, str] | None = None  # (index stamp, signature)

    def corpus_signature(self) -> str:
        """The signature of the indexed documents now (an absent store: the signature of no documents)."""
        return self._signed()[1]

    def _signed(self) -> tuple[str | None, str]:
        """(index stamp, corpus signature) from one read of the store."""
        if self._store is None:
            return None, corpus_signature(())
        stamp = self._store.index_stamp()
        with self._lock:
            if self._cached is not None and self._cached[0] == stamp:
                return self._cached
        stamp, ids = self._store.indexed_doc_ids()  # ids and stamp from one read snapshot
        signature = corpus_signature(ids)
        with self._lock:
            self._cached = (stamp, signature)
        return stamp, signature

    def trace(self, request_id: str | None = None) -> Trace:
        stamp, signature = self._signed()
        position = self._served() if self._served is not None else None
        if position is None and stamp is not None:
            with contextlib.suppress(IndexError, ValueError):
                position = int(stamp.rsplit(":", 1)[1])
        return Trace(request_id=request_id or new_request_id(), version=__version__, corpus_signature=signature,
                     config_hash=self.config_hash, feed_position=position)


def traced(cls: type[M], result: BaseModel, trace: Trace) -> M:
    """``result`` as ``cls`` (a subclass of its type with a ``trace`` field), its values copied as they are."""
    values = {name: getattr(result, name) for name in type(result).model_fields}
    return cls.model_construct(_fields_set={*result.model_fields_set, "trace"}, **values, trace=trace)
