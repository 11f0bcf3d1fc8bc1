"""Builds the optional LLM pieces of a research run from Settings (offline analyst when provider is 'offline')."""

from __future__ import annotations

from typing import Any

from equimind.config import Settings


def _is_offline(settings: Settings) -> bool:
    from equimind.agents.providers import ProviderName, parse_provider

    return parse_provider(settings.provider) is ProviderName.OFFLINE


def _config(settings: Settings) -> Any:
    from equimind.agents.providers import LLMConfig, resolve_api_key

    key = resolve_api_key(settings.provider, settings.api_key_env())
    return LLMConfig.from_settings(settings, api_key=key)


def model_for_settings(settings: Settings) -> tuple[Any, str | None]:
    """(pydantic-ai Model or None, degradation reason or None). A missing key raises ConfigError naming it."""
    if _is_offline(settings):
        return None, None
    from equimind.agents.providers import build_model

    return build_model(_config(settings)), None
