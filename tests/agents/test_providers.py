"""Provider selection, key resolution and model construction (no network: building a model sends nothing)."""

from __future__ import annotations

import pytest

from equimind.core.config import ProviderName, Settings
from equimind.core.errors import ConfigError
from equimind.debate.llm_analyst import LLMAnalyst
from equimind.llm.providers import (
    LLMConfig,
    build_model,
    model_settings,
    parse_provider,
    resolve_api_key,
)


def test_parse_provider_aliases_and_errors() -> None:
    assert parse_provider("OpenAI") is ProviderName.OPENAI
    assert parse_provider("google") is ProviderName.GEMINI
    assert parse_provider("openai_compatible") is ProviderName.OPENAI_COMPATIBLE
    with pytest.raises(ConfigError, match="choose one of: offline, openai, anthropic"):
        parse_provider("watsonx")


def test_resolve_api_key_reads_only_the_mapping_given() -> None:
    env = {"OPENAI_API_KEY": " sk-1 ", "GOOGLE_API_KEY": "g-2", "DEEPSEEK_API_KEY": ""}
    assert resolve_api_key("openai", env) == "sk-1"
    assert resolve_api_key("gemini", env) == "g-2"  # GEMINI_API_KEY first, then GOOGLE_API_KEY
    assert resolve_api_key("deepseek", env) is None
    assert resolve_api_key("offline", env) is None


@pytest.mark.parametrize("provider, var", [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY"),
                                           ("gemini", "GEMINI_API_KEY"), ("deepseek", "DEEPSEEK_API_KEY"),
                                           ("openrouter", "OPENROUTER_API_KEY")])
def test_missing_key_names_the_variable(provider: str, var: str) -> None:
    with pytest.raises(ConfigError) as err:
        LLMConfig.from_settings(Settings(provider=provider), api_key=None)
    assert str(err.value) == f"{var} is not set; export it or use --provider offline"


def test_keyless_providers_and_base_url_rules() -> None:
    cfg = LLMConfig.from_settings(Settings(provider="ollama"), api_key=None)
    assert cfg.base_url == "http://localhost:11434/v1" and cfg.model == "llama3.2"
    with pytest.raises(ConfigError, match="EQUIMIND_LLM_BASE_URL"):
        LLMConfig.from_settings(Settings(provider="openai-compatible", model="m"), api_key=None)
    with pytest.raises(ConfigError, match="no model given"):
        LLMConfig.from_settings(Settings(provider="openai-compatible", llm_base_url="http://x/v1"), api_key=None)
    with pytest.raises(ConfigError, match="offline"):
        LLMConfig.from_settings(Settings(provider="offline"), api_key=None)


def test_overrides_win_over_settings_and_key_is_not_printed() -> None:
    cfg = LLMConfig.from_settings(Settings(provider="openai", model="a"), api_key="sk-secret",
                                  provider="anthropic", model="claude-x")
    assert (cfg.provider, cfg.model, cfg.label) == (ProviderName.ANTHROPIC, "claude-x", "anthropic:claude-x")
    assert "sk-secret" not in repr(cfg)


@pytest.mark.parametrize("provider, cls", [
    ("openai", "OpenAIChatModel"), ("anthropic", "AnthropicModel"), ("gemini", "GoogleModel"),
    ("deepseek", "OpenAIChatModel"), ("ollama", "OllamaModel"), ("openrouter", "OpenRouterModel"),
])
def test_build_model_per_provider(provider: str, cls: str) -> None:
    cfg = LLMConfig.from_settings(Settings(provider=provider), api_key="k-test")
    model = build_model(cfg)
    assert type(model).__name__ == cls and model.model_name == cfg.model


def test_openai_compatible_base_url_is_used() -> None:
    cfg = LLMConfig.from_settings(Settings(provider="openai-compatible", model="m", llm_base_url="http://127.0.0.1:9/v1"),
                                  api_key=None)
    model = build_model(cfg)
    assert type(model).__name__ == "OpenAIChatModel" and model.base_url.startswith("http://127.0.0.1:9/v1")


def test_model_settings_bound_time_and_retries() -> None:
    cfg = LLMConfig.from_settings(Settings(provider="openai", llm_timeout_s=7.0, llm_retries=2), api_key="k")
    ms = model_settings(cfg)
    assert ms["temperature"] == 0.0 and ms["timeout"] == 7.0 and ms["max_retries"] == 2
    assert ms["request_timeout"] == pytest.approx(7.0 * 3 + 5.0)


def test_analyst_from_settings() -> None:
    assert LLMAnalyst.from_settings(Settings(), api_key=None) is None  # provider offline: no LLM
    analyst = LLMAnalyst.from_settings(Settings(provider="openai"), api_key="k-test")
    assert analyst is not None and analyst.label.startswith("openai:")
    assert set(analyst.prompt_hashes) == {"bull@v1", "bear@v1", "judge@v1"}
