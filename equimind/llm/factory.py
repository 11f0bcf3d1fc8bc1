"""Builds the optional LLM pieces of a research run from Settings (offline analyst when provider is 'offline')."""

from __future__ import annotations

from typing import Any

from equimind.core.config import ProviderName, Settings
from equimind.llm.providers import LLMConfig, build_model, resolve_api_key


def _is_offline(settings: Settings) -> bool:
    return settings.provider is ProviderName.OFFLINE


def _config(settings: Settings) -> Any:
    key = resolve_api_key(settings.provider, settings.api_key_env())
    return LLMConfig.from_settings(settings, api_key=key)


def model_for_settings(settings: Settings) -> tuple[Any, str | None]:
    """(pydantic-ai Model or None, degradation reason or None). A missing key raises ConfigError naming it."""
    if _is_offline(settings):
        return None, None

    return build_model(_config(settings)), None
