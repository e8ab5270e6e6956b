"""Fixed-window rate-limit buckets with Discord's headers and 429 bodies.

discord.py learns limits from ``X-RateLimit-*`` headers and only trusts a 429 whose response carries a
``Via`` header (otherwise it assumes a Cloudflare ban), so both are reproduced here.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass, field

from .errors import APIError

#: Route templates (method + path below /api/vN) with their (limit, window seconds) per major parameter.
DEFAULT_ROUTE_LIMITS: dict[str, tuple[int, float]] = {
    "POST /channels/{channel_id}/messages": (5, 5.0),
    "PATCH /channels/{channel_id}/messages/{message_id}": (5, 5.0),
    "DELETE /channels/{channel_id}/messages/{message_id}": (5, 1.0),
    "POST /webhooks/{webhook_id}/{webhook_token}": (5, 2.0),
    "PATCH /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}": (5, 2.0),
    "DELETE /webhooks/{webhook_id}/{webhook_token}/messages/{message_id}": (5, 2.0),
    "POST /users/@me/channels": (10, 10.0),
    "PUT /applications/{application_id}/commands": (2, 4.0),
    "PUT /applications/{application_id}/guilds/{guild_id}/commands": (2, 4.0),
}
DEFAULT_LIMIT: tuple[int, float] = (50, 1.0)
#: Routes not counted against the global limit (Discord exempts interaction endpoints).
GLOBAL_EXEMPT_PREFIXES = ("POST /interactions/", "POST /webhooks/", "PATCH /webhooks/", "DELETE /webhooks/")


@dataclass
class Bucket:
    limit: int
    window: float
    remaining: int = 0
    reset_at: float = 0.0

    def take(self, now: float) -> float | None:
        """Consume one request; returns seconds to wait when exhausted (then nothing is consumed)."""
        if now >= self.reset_at:
            self.remaining = self.limit
            self.reset_at = now + self.window
        if self.remaining <= 0:
            return self.reset_at - now
        self.remaining -= 1
        return None


@dataclass
class RateLimitStats:
    requests: int = 0
    rate_limited: int = 0
    global_rate_limited: int = 0
    by_route: dict[str, int] = field(default_factory=dict)
    limited_by_route: dict[str, int] = field(default_factory=dict)


class RateLimiter:
    """Per (route template, major parameter) buckets plus an optional global per-token limit."""

    def __init__(
        self,
        routes: dict[str, tuple[int, float]] | None = None,
        default: tuple[int, float] = DEFAULT_LIMIT,
        global_per_second: int | None = 50,
    ) -> None:
        self.routes = dict(DEFAULT_ROUTE_LIMITS if routes is None else routes)
        self.default = default
        self.global_per_second = global_per_second
        self._buckets: dict[tuple[str, str], Bucket] = {}
        self._global = Bucket(global_per_second or 1, 1.0)
        self.stats = RateLimitStats()

    def set_route_limit(self, route: str, limit: int, window: float) -> None:
        """Change a route's bucket (e.g. ``"POST /channels/{channel_id}/messages", 3, 1.0``) and reset it."""
        self.routes[route] = (limit, window)
        for key in [k for k in self._buckets if k[0] == route]:
            del self._buckets[key]

    @staticmethod
    def bucket_hash(route: str) -> str:
        return hashlib.sha1(route.encode()).hexdigest()[:32]

    def check(self, route: str, major: str) -> dict[str, str]:
        """Count a request; returns headers to add, or raises a 429 ``APIError``."""
        now = time.monotonic()
        self.stats.requests += 1
        self.stats.by_route[route] = self.stats.by_route.get(route, 0) + 1
        if self.global_per_second and not route.startswith(GLOBAL_EXEMPT_PREFIXES):
            wait = self._global.take(now)
            if wait is not None:
                self.stats.rate_limited += 1
                self.stats.global_rate_limited += 1
                raise self.too_many(wait, is_global=True, route=route)
        limit, window = self.routes.get(route, self.default)
        key = (route, major)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = Bucket(limit, window)
        wait = bucket.take(now)
        headers = self.headers(route, bucket, now)
        if wait is not None:
            self.stats.rate_limited += 1
            self.stats.limited_by_route[route] = self.stats.limited_by_route.get(route, 0) + 1
            err = self.too_many(wait, is_global=False, route=route)
            err.headers.update(headers)
            raise err
        return headers

    def headers(self, route: str, bucket: Bucket, now: float) -> dict[str, str]:
        # Rounded up to the millisecond so a client sleeping exactly this long never wakes early.
        reset_after = math.ceil(max(0.0, bucket.reset_at - now) * 1000) / 1000
        return {
            "X-RateLimit-Limit": str(bucket.limit),
            "X-RateLimit-Remaining": str(bucket.remaining),
            "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
            "X-RateLimit-Reset-After": f"{reset_after:.3f}",
            "X-RateLimit-Bucket": self.bucket_hash(route),
        }

    def too_many(self, retry_after: float, *, is_global: bool, route: str) -> APIError:
        retry_after = math.ceil(max(retry_after, 0.001) * 1000) / 1000
        headers = {
            "Retry-After": str(math.ceil(retry_after)),
            "X-RateLimit-Scope": "global" if is_global else "user",
            "Via": "1.1 google",
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        body = {"retry_after": retry_after, "global": is_global}
        return APIError(429, None, "You are being rate limited.", headers=headers, extra=body)
