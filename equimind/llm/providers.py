"""LLM provider factory on pydantic-ai: OpenAI, Anthropic, Gemini, DeepSeek, Ollama, OpenRouter, any OpenAI-compatible
base URL, and ``offline`` (no LLM: the deterministic analyst).

Keys are passed in. Library code never reads os.environ: the entrypoint calls ``resolve_api_key(provider, os.environ)``
and hands the key to ``LLMConfig.from_settings``. A provider that needs a key and gets none raises ConfigError naming
the variable. pydantic-ai and the provider SDKs are imported lazily, inside ``build_model``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from equimind.core.config import ProviderName, Settings, provider_name
from equimind.core.errors import ConfigError

if TYPE_CHECKING:
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings


@dataclass(frozen=True)
class ProviderInfo:
    """What a provider needs: key variables (first wins), whether a key is required, defaults."""

    key_vars: tuple[str, ...]
    key_required: bool
    default_model: str | None
    default_base_url: str | None = None


PROVIDERS: dict[ProviderName, ProviderInfo] = {
    ProviderName.OFFLINE: ProviderInfo((), False, None),
    ProviderName.OPENAI: ProviderInfo(("OPENAI_API_KEY",), True, "gpt-6-luna"),
    ProviderName.ANTHROPIC: ProviderInfo(("ANTHROPIC_API_KEY",), True, "claude-sonnet-5-5"),
    ProviderName.GEMINI: ProviderInfo(("GEMINI_API_KEY", "GOOGLE_API_KEY"), True, "gemini-3.8-flash"),
    ProviderName.DEEPSEEK: ProviderInfo(("DEEPSEEK_API_KEY",), True, "deepseek-flash"),
    ProviderName.OLLAMA: ProviderInfo(("OLLAMA_API_KEY",), False, "llama3.2", "http://localhost:11434/v1"),
    ProviderName.OPENROUTER: ProviderInfo(("OPENROUTER_API_KEY",), True, "openai/gpt-6-luna"),
    ProviderName.OPENAI_COMPATIBLE: ProviderInfo(("OPENAI_API_KEY",), False, None),
}
_PLACEHOLDER_KEY = "not-needed"  # local OpenAI-compatible servers ignore the key, but the SDK wants one


def parse_provider(value: str | ProviderName) -> ProviderName:
    """'OpenAI' -> ProviderName.OPENAI (a --provider override); an unknown name raises ConfigError listing the valid
    ones. ``Settings.provider`` is parsed once, when the settings are built."""
    try:
        return provider_name(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def resolve_api_key(provider: str | ProviderName, env: Mapping[str, str]) -> str | None:
    """The provider's API key from ``env`` (the entrypoint passes os.environ), or None."""
    for var in PROVIDERS[parse_provider(provider)].key_vars:
        value = env.get(var, "").strip()
        if value:
            return value
    return None


@dataclass(frozen=True)
class LLMConfig:
    """Everything needed to build one chat model. ``api_key`` is never printed."""

    provider: ProviderName
    model: str
    base_url: str | None
    timeout_s: float
    retries: int
    api_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings, *, api_key: str | None, provider: str | None = None,
                      model: str | None = None) -> LLMConfig:
        """Validate the choice (provider/model overrides win over settings, as --provider/--model do)."""
        name = parse_provider(provider) if provider else settings.provider
        if name is ProviderName.OFFLINE:
            raise ConfigError("provider 'offline' uses no LLM; build the DebateEngine without an LLM analyst")
        info = PROVIDERS[name]
        if info.key_required and not api_key:
            raise ConfigError(f"{info.key_vars[0]} is not set; export it or use --provider offline")
        base_url = settings.llm_base_url or info.default_base_url
        if name is ProviderName.OPENAI_COMPATIBLE and not base_url:
            raise ConfigError("EQUIMIND_LLM_BASE_URL is not set; the openai-compatible provider needs the server's "
                              "base URL (e.g. http://127.0.0.1:8000/v1) or use --provider offline")
        chosen = model or settings.model or info.default_model
        if not chosen:
            raise ConfigError(f"no model given for provider {name.value}; pass --model or set EQUIMIND_MODEL")
        if settings.llm_timeout_s <= 0 or settings.llm_retries < 0:
            raise ConfigError("llm_timeout_s must be > 0 and llm_retries >= 0 (EQUIMIND_LLM_TIMEOUT_S, "
                              "EQUIMIND_LLM_RETRIES)")
        return cls(provider=name, model=chosen, base_url=base_url, timeout_s=settings.llm_timeout_s,
                   retries=settings.llm_retries, api_key=api_key)

    @property
    def label(self) -> str:
        return f"{self.provider.value}:{self.model}"


def model_settings(config: LLMConfig) -> ModelSettings:
    """Deterministic sampling, a per-attempt timeout, an overall deadline and bounded SDK retries."""
    from pydantic_ai.settings import ModelSettings

    return ModelSettings(temperature=0.0, timeout=config.timeout_s, max_retries=config.retries,
                         request_timeout=config.timeout_s * (config.retries + 1) + 5.0)


def build_model(config: LLMConfig) -> Model:
    """The pydantic-ai Model for ``config`` (no network I/O happens here)."""
    name = config.provider
    if name is ProviderName.ANTHROPIC:
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        return AnthropicModel(config.model, provider=AnthropicProvider(api_key=config.api_key,
                                                                       base_url=config.base_url))
    if name is ProviderName.GEMINI:
        from pydantic_ai.models.google import GoogleModel
        from pydantic_ai.providers.google import GoogleProvider

        return GoogleModel(config.model, provider=GoogleProvider(api_key=config.api_key, base_url=config.base_url))
    return _openai_family(config)


def _openai_family(config: LLMConfig) -> Model:
    from pydantic_ai.models.ollama import OllamaModel
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.models.openrouter import OpenRouterModel
    from pydantic_ai.providers.deepseek import DeepSeekProvider
    from pydantic_ai.providers.ollama import OllamaProvider
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.providers.openrouter import OpenRouterProvider

    name = config.provider
    if name is ProviderName.OLLAMA:
        return OllamaModel(config.model, provider=OllamaProvider(base_url=config.base_url,
                                                                 api_key=config.api_key or _PLACEHOLDER_KEY))
    if name is ProviderName.OPENROUTER and not config.base_url:
        return OpenRouterModel(config.model, provider=OpenRouterProvider(api_key=config.api_key))
    if name is ProviderName.DEEPSEEK and not config.base_url:
        return OpenAIChatModel(config.model, provider=DeepSeekProvider(api_key=config.api_key))
    if name in (ProviderName.OPENAI, ProviderName.OPENAI_COMPATIBLE, ProviderName.OPENROUTER,
                ProviderName.DEEPSEEK):
        key = config.api_key or _PLACEHOLDER_KEY
        return OpenAIChatModel(config.model, provider=OpenAIProvider(base_url=config.base_url, api_key=key))
    raise ConfigError(f"provider {name.value} has no model builder")  # pragma: no cover - enum is exhaustive
