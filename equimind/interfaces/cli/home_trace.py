"""The trace of a CLI result (``app.emit_json``): the home's docstore read for the corpus signature, the settings
hashed as the engine hashes them. Imported by ``app`` inside ``emit_json`` only: the docstore loads numpy."""

from __future__ import annotations

from equimind.core.config import Settings
from equimind.ingest.embed_format import PRODUCT_FORMAT
from equimind.security.trace import Trace, Tracer
from equimind.store.open import open_docstore


def home_trace(settings: Settings) -> Trace:
    """The trace of a result over ``settings``'s home now (no docstore yet: the signature of no documents, and
    nothing is created). The embedding-text format is the product one, as ``Services`` uses by default."""
    if not settings.docstore_url and not settings.docstore_path.is_file():
        return Tracer(settings, None, PRODUCT_FORMAT.value).trace()
    store = open_docstore(settings)
    try:
        return Tracer(settings, store, PRODUCT_FORMAT.value).trace()
    finally:
        store.close()
