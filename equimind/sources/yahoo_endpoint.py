"""Point yfinance at another base URL (``Settings.yahoo_endpoint``): a loopback replay in tests, or a gateway.

yfinance builds its URLs from constants (``https://query2.finance.yahoo.com/v8/finance/chart/...``,
``https://query1.finance.yahoo.com/v1/test/getcrumb``, ``https://fc.yahoo.com``, ``https://finance.yahoo.com/xhr/ncp``)
and offers no setting for them, but it accepts a caller's ``requests.Session`` (``yf.Ticker(..., session=...)``,
documented; ``yfinance/_http.py`` lists requests and curl_cffi sessions as supported). requests in turn lets a
session mount a transport adapter per URL prefix. So the session built here mounts, for each Yahoo host, an adapter
that sends the request to the same path and query under the configured base URL. Everything above the transport —
yfinance's cookie/crumb handshake, its chart parsing, time zones and adjustment, then ``YahooFinance.history`` —
is the product's own code path, unchanged.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from equimind.core.errors import ConfigError

YAHOO_HOSTS: tuple[str, ...] = ("query1.finance.yahoo.com", "query2.finance.yahoo.com", "fc.yahoo.com",
                                "finance.yahoo.com", "guce.yahoo.com", "consent.yahoo.com")


def rebase_url(url: str, base_url: str) -> str:
    """``url``'s path and query under ``base_url`` (scheme and host replaced)."""
    parts = urlsplit(url)
    query = f"?{parts.query}" if parts.query else ""
    return f"{base_url.rstrip('/')}{parts.path or '/'}{query}"


def redirected_session(base_url: str) -> Any:
    """A ``requests.Session`` that sends every request for a Yahoo host to ``base_url`` (same path and query)."""
    import requests
    from requests.adapters import HTTPAdapter

    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"EQUIMIND_YAHOO_ENDPOINT {base_url!r} is not an http(s) base URL; "
                          "use e.g. http://127.0.0.1:8080 or unset it to reach Yahoo itself")

    class RebaseAdapter(HTTPAdapter):
        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
            request.url = rebase_url(str(request.url), base_url)
            return super().send(request, *args, **kwargs)

    session = requests.Session()
    adapter = RebaseAdapter()
    for host in YAHOO_HOSTS:
        for scheme in ("https", "http"):
            session.mount(f"{scheme}://{host}", adapter)
    return session
