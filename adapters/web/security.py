"""Headers and checks every answer of the web table gets: the CSP, origin checks, body and rate limits.

The page is a Telegram Mini App inside Telegram's frame, so `frame-ancestors` lists Telegram's web
clients; the one external thing a page may load is Telegram's `telegram-web-app.js` (script-src names
that file exactly); everything else is same-origin only and no inline script can run (docs/WEB.md).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from aiohttp import web

TELEGRAM_SCRIPT: Final = "https://telegram.org/js/telegram-web-app.js"
CSP: Final = (
    f"default-src 'none'; script-src 'self' {TELEGRAM_SCRIPT}; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'self' https://web.telegram.org https://*.telegram.org"
)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def security_headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    """CSP and friends on every answer, errors included."""
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        response = exc
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    if request.path.startswith("/api/") and "Cache-Control" not in response.headers:
        response.headers["Cache-Control"] = "no-store"
    if isinstance(response, web.HTTPException):
        raise response
    return response


def origin_of(url: str) -> str:
    """scheme://host[:port] of a URL, lower-cased, default ports dropped."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = parts.port
    scheme = parts.scheme.lower()
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def same_origin(request: web.Request, public_url: str | None, *, allow_missing: bool = False) -> bool:
    """Whether the request comes from this server's own pages: its Origin is PUBLIC_URL's origin when set,
    else the origin the request was addressed to (its Host; the terminal's 127.0.0.1 server).

    `allow_missing`: a browser sends no Origin on a same-origin GET (an EventSource), so a GET without one
    passes unless the browser says it is cross-site (`Sec-Fetch-Site`); a POST must always carry it."""
    if request.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
        return False
    origin = request.headers.get("Origin")
    if origin is None and allow_missing:
        return True
    if not origin or origin == "null":
        return False
    allowed = origin_of(public_url) if public_url else origin_of(f"{request.scheme}://{request.host}")
    return origin_of(origin) == allowed


@dataclass
class RateLimiter:
    """A token bucket per key (client address, session): `rate` a second, bursts of `burst`.

    Buckets live in the process (a limit per process is enough against a flood from one client; the
    table's compare-and-set keeps the game correct whatever gets through). Old buckets are dropped."""

    rate: float = 20.0
    burst: float = 40.0
    max_keys: int = 50_000
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[str, tuple[float, float]] = field(default_factory=dict)

    def allow(self, key: str) -> bool:
        now = self.clock()
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return False
        self._buckets[key] = (tokens - 1.0, now)
        if len(self._buckets) > self.max_keys:
            self._prune(now)
        return True

    def _prune(self, now: float) -> None:
        full = self.burst / self.rate
        for key, (_, last) in list(self._buckets.items()):
            if now - last > full:
                del self._buckets[key]
