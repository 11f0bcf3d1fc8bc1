"""One exception tree; each branch is a different reaction for the caller. Messages name the fix."""

from __future__ import annotations


class EquiMindError(Exception):
    """Base of every error EquiMind raises on purpose."""


class SourceError(EquiMindError):
    """A data source is unreachable, refused the request or rate-limited us. Retry later or use --snapshot."""


class RateLimitedError(SourceError):
    """The source answered 429 and retries were exhausted."""


class StoreUnavailable(EquiMindError):
    """A shared store (the PostgreSQL docstore, a Chroma server) cannot be reached. Requests recover on their own
    once it is back; the message names the store."""


class NotFoundError(EquiMindError):
    """The thing asked for does not exist (unknown ticker, document id, path)."""


class ParseError(EquiMindError):
    """A document could not be parsed (unreadable PDF, malformed HTML/JSON)."""


class ConfigError(EquiMindError):
    """A setting or argument is invalid; the message names the valid values."""


class InsufficientEvidence(EquiMindError):
    """Not enough verified evidence to answer; the answer is a refusal, never a guess."""
