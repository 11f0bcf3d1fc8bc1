"""Which docstore a process opens: PostgreSQL when ``EQUIMIND_DOCSTORE_URL`` is set, else SQLite under home."""

from __future__ import annotations

from typing import TYPE_CHECKING

from equimind.core.errors import ConfigError
from equimind.store.docstore import DocStore
from equimind.store.docstore_pg import PgDocStore
from equimind.store.pg import is_postgres_url, redacted

if TYPE_CHECKING:
    from equimind.core.config import Settings


def open_docstore(settings: Settings) -> DocStore:
    """The docstore the settings name (``settings.docstore_url``, else ``settings.docstore_path``)."""
    url = settings.docstore_url
    if url:
        if not is_postgres_url(url):
            raise ConfigError(f"EQUIMIND_DOCSTORE_URL must be a postgresql://user:password@host:port/database URL, "
                              f"got scheme {url.split(':', 1)[0]!r}; unset it to use SQLite under EQUIMIND_HOME")
        return PgDocStore(url)
    return DocStore(settings.docstore_path)


def docstore_label(settings: Settings) -> str:
    """What a trace names as the docstore: ``sqlite:<path>`` or ``postgresql:<host:port/db>`` (no password)."""
    if settings.docstore_url:
        return f"postgresql:{redacted(settings.docstore_url)}"
    return f"sqlite:{settings.docstore_path}"
