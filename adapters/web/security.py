"""Headers and checks every answer of the web table gets: the CSP, origin and Host checks, the client's
address behind a trusted proxy, rate limits.

The page is a Telegram Mini App inside Telegram's frame, so `frame-ancestors` lists Telegram's web client
(Web A and Web K both live on https://web.telegram.org; the phone and desktop apps open a Mini App in a
web view, not a frame); the one external thing a page may load is Telegram's `telegram-web-app.js`
(script-src names that file exactly); everything else is same-origin only and no inline script can run
(docs/WEB.md).
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from aiohttp import web

TELEGRAM_SCRIPT: Final = "https://telegram.org/js/telegram-web-app.js"
CSP: Final = (
    f"default-src 'none'; script-src 'self' {TELEGRAM_SCRIPT}; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'self' https://web.telegram.org"
)
SERVER: Final = "thousand"
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


async def security_headers(request: web.Request, response: web.StreamResponse) -> None:
    """CSP and friends on every answer, errors and event streams included: an `on_response_prepare`
    signal, so the headers are set before they are sent (a middleware would set them after a stream's
    handler has already sent its headers). The Server header names no library version."""
    response.headers["Content-Security-Policy"] = CSP
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["Server"] = SERVER
    if request.path.startswith("/api/") and "Cache-Control" not in response.headers:
        response.headers["Cache-Control"] = "no-store"


def origin_of(url: str) -> str | None:
    """scheme://host[:port] of a URL, lower-cased, default ports dropped; None when it is not a URL
    with a host and a valid port (`http://127.0.0.1:99999`, a lone surrogate, ...)."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not host or not scheme or not url.isascii():
        return None
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def loopback_host(request: web.Request) -> bool:
    """Whether the request was addressed to this machine by a loopback name (the Host header): without
    PUBLIC_URL the server trusts the Host for its own origin, so it answers only loopback names (a DNS
    rebinding page naming another host is refused)."""
    try:
        host = urlsplit(f"http://{request.host}").hostname or ""
    except ValueError:
        return False
    return host.lower() in LOOPBACK_HOSTS


def trusted_networks(
    specs: Iterable[str],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The reverse proxies whose `X-Forwarded-For` is believed (addresses or networks; ValueError for a
    spelling that is neither)."""
    return tuple(ipaddress.ip_network(s.strip(), strict=False) for s in specs if s.strip())


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def client_address(
    request: web.Request, trusted: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]
) -> str:
    """The client's address: the peer's, unless the peer is a trusted proxy; then the right-most address
    of `X-Forwarded-For` that is not itself a trusted proxy (what a client writes further left is not
    believed). A header from anyone else is ignored."""
    peer = request.remote or "?"
    address = _address(peer)
    if address is None or not any(address in net for net in trusted):
        return peer
    for hop in reversed(",".join(request.headers.getall("X-Forwarded-For", [])).split(",")):
        found = _address(hop)
        if found is None:
            return peer
        if not any(found in net for net in trusted):
            return str(found)
    return peer


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
    return allowed is not None and origin_of(origin) == allowed


@dataclass
class RateLimiter:
    """A token bucket per key (a signed-in user, a failing address): `rate` a second, bursts of `burst`.

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
