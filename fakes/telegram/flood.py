"""Telegram's flood control: per chat, per group and overall, answered with 429 and retry_after.

Telegram documents roughly one message per second per chat (short bursts tolerated), 20 messages
per minute per group and about 30 messages per second overall. The fake models each limit as a
token bucket (capacity = burst, steady refill), the same model as aiolimiter, which PTB's
AIORateLimiter uses; a client that paces itself correctly therefore sees no 429 at all. A request
is admitted when its budget would be there within `tolerance` seconds: the client's clock and the
server's never agree to the millisecond (network delay, scheduling), and Telegram's limits are
approximate anyway; a burst that really exceeds a limit is refused all the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from .errors import ApiError

_EPSILON = 1e-9


@dataclass(frozen=True)
class FloodLimits:
    """Rates in messages per second, bursts in messages. Edits count like sends."""

    chat_rate: float = 1.0
    chat_burst: int = 3
    group_per_period: int = 20
    group_period: float = 60.0
    global_rate: float = 30.0
    global_burst: int = 30
    paid_rate: float = 1000.0
    """Sends with `allow_paid_broadcast` (0.1 Stars each) draw on their own bot-wide budget, 1000/s
    (Bot API, sendMessage); the per-chat and per-group limits stay the same."""
    tolerance: float = 0.05
    enabled: bool = True

    @classmethod
    def disabled(cls) -> FloodLimits:
        return cls(enabled=False)


class TokenBucket:
    def __init__(self, capacity: float, refill_per_second: float, now: float) -> None:
        self.capacity = capacity
        self.rate = refill_per_second
        self.tokens = capacity
        self.stamp = now

    def _refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_time(self, now: float) -> float:
        """Seconds until one token is available (0 when one is available now)."""
        self._refill(now)
        missing = 1.0 - self.tokens
        return 0.0 if missing <= _EPSILON else missing / self.rate

    def take(self, now: float) -> None:
        self._refill(now)
        self.tokens -= 1.0


class FloodControl:
    """Admits or rejects each outgoing message; counts rejections."""

    def __init__(self, limits: FloodLimits, clock: Callable[[], float]) -> None:
        self.limits = limits
        self._clock = clock
        self._global = TokenBucket(limits.global_burst, limits.global_rate, clock())
        self._paid = TokenBucket(limits.paid_rate, limits.paid_rate, clock())
        self._chats: dict[int, TokenBucket] = {}
        self._groups: dict[int, TokenBucket] = {}
        self.rejected = 0

    def check(self, chat_id: int, is_group: bool, paid: bool = False) -> None:
        """Consume one message of every applicable budget, or raise ApiError(429) consuming none. A paid
        broadcast takes from the paid bot-wide budget instead of the free one."""
        if not self.limits.enabled:
            return
        now = self._clock()
        limits = self.limits
        buckets = [self._paid if paid else self._global]
        if chat_id not in self._chats:
            self._chats[chat_id] = TokenBucket(limits.chat_burst, limits.chat_rate, now)
        buckets.append(self._chats[chat_id])
        if is_group:
            if chat_id not in self._groups:
                rate = limits.group_per_period / limits.group_period
                self._groups[chat_id] = TokenBucket(limits.group_per_period, rate, now)
            buckets.append(self._groups[chat_id])
        wait = max(bucket.wait_time(now) for bucket in buckets)
        if wait > limits.tolerance:
            self.rejected += 1
            raise ApiError.too_many_requests(max(1, math.ceil(wait)))
        for bucket in buckets:
            bucket.take(now)
