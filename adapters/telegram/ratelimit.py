"""Every Bot API call of the bot passes here (PTB's `rate_limiter=` hook), whichever process makes it.

Sends and edits first take one send from the shared buckets of `SendLimits` through the store's
`acquire_sends` (one atomic step in Redis for the chat, its group and the whole bot), waiting as long as
the store says. A 429 holds the chat's buckets for the full `retry_after` through `hold_sends`, so no
process sends to that chat again before Telegram allows it, and the call is retried only after that.
Network failures (connection errors, timeouts, 5xx pages) are retried with exponential backoff and
jitter; Telegram's refusals (400, 403) are not retried: they are answers, not accidents.

A send whose answer was lost (a timeout after Telegram accepted it) is sent again, so in that rare case a
message can appear twice; losing a hand or a table message would be worse.

A call says how urgent it is with PTB's `rate_limit_args` (`SendArgs`): a send less urgent than a table
update also spends from the smaller `low` buckets (see `limits`), and one that is waiting gives way
(`Preempted`, nothing sent) when its outbox says a more urgent message of the chat came meanwhile.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import random
import warnings
from collections.abc import Callable, Coroutine
from typing import Any

from telegram._utils.types import JSONDict
from telegram.error import BadRequest, NetworkError, RetryAfter, TimedOut
from telegram.ext import BaseRateLimiter

from adapters.telegram.clock import Clock, SystemClock
from adapters.telegram.limits import Preempted, SendArgs, SendLimits, Skipped, is_budgeted
from bot.ops.metrics import Metrics
from bot.storage import Store

__all__ = ["SharedRateLimiter", "retry_after_seconds"]

log = logging.getLogger("thousand.telegram.ratelimit")

PLATFORM = "telegram"


def retry_after_seconds(exc: RetryAfter) -> float:
    """`retry_after` in seconds, whichever type PTB's deprecation period hands out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value: Any = exc.retry_after
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value or 0)


class SharedRateLimiter(BaseRateLimiter[SendArgs]):
    """PTB rate limiter over the store's shared send budget.

    `rate_limit_args` (PTB's per-call extra, a `SendArgs`): the call's priority, whether it is still
    wanted while it waits, and the most 429s to sit out before giving up.
    """

    def __init__(
        self,
        store: Store,
        bot_id: str,
        *,
        limits: SendLimits | None = None,
        clock: Clock | None = None,
        metrics: Metrics | None = None,
        max_floods: int = 4,
        network_retries: int = 4,
        backoff_base: float = 0.5,
        backoff_cap: float = 8.0,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.store = store
        self.bot_id = bot_id
        self.limits = limits or SendLimits()
        self.clock: Clock = clock or SystemClock()
        self.metrics = metrics
        self.max_floods = max_floods
        self.network_retries = network_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self._rng = rng
        self.floods = 0
        """429 answers seen by this limiter (for tests and benchmarks)."""
        self.waits = 0
        """Sends that had to wait for the budget."""
        self.preempted = 0
        """Waiting sends that gave way to a more urgent one of their chat."""
        self.skipped = 0
        """Optional sends dropped because the budget was short."""

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    def _now(self) -> float | None:
        return self.clock.now() if self.clock.explicit else None

    async def _acquire(self, chat_id: int | str | None, args: SendArgs) -> None:
        buckets = self.limits.buckets(self.bot_id, chat_id, args.priority)
        waited = 0.0
        while True:
            if args.wake is not None:
                args.wake.clear()  # before asking: a message queued from here on wakes the pause below
            if args.still_wanted is not None and not args.still_wanted():
                self.preempted += 1
                raise Preempted
            wait = await self.store.acquire_sends(buckets, self._now())
            if wait <= 0:
                break
            if args.optional:
                self.skipped += 1
                raise Skipped
            waited += wait
            await self._pause(wait, args.wake)
        if waited > 0:
            self.waits += 1
            if self.metrics is not None:
                self.metrics.rate_limited(PLATFORM, waited)

    async def _pause(self, seconds: float, wake: asyncio.Event | None) -> None:
        """Sleep, or less if `wake` is set meanwhile (then the caller asks `still_wanted` again)."""
        if wake is None:
            await self.clock.sleep(seconds)
            return
        sleeper = asyncio.ensure_future(self.clock.sleep(seconds))
        waker = asyncio.ensure_future(wake.wait())
        try:
            await asyncio.wait((sleeper, waker), return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            waker.cancel()

    async def _hold(self, chat_id: int | str | None, seconds: float) -> None:
        for key in self.limits.hold_keys(self.bot_id, chat_id):
            await self.store.hold_sends(key, seconds, self._now())

    def _backoff(self, attempt: int) -> float:
        ceiling = min(self.backoff_cap, self.backoff_base * 2.0 ** (attempt - 1))
        return ceiling * (0.5 + self._rng() / 2)

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | JSONDict | list[JSONDict]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: SendArgs | None,
    ) -> bool | JSONDict | list[JSONDict]:
        budgeted = is_budgeted(endpoint)
        raw_chat = data.get("chat_id")
        chat_id: int | str | None = raw_chat if isinstance(raw_chat, int | str) else None
        call = rate_limit_args if isinstance(rate_limit_args, SendArgs) else SendArgs()
        max_floods = self.max_floods if call.max_floods is None else call.max_floods
        floods = 0
        failures = 0
        while True:
            if budgeted:
                await self._acquire(chat_id, call)
            try:
                return await callback(*args, **kwargs)
            except RetryAfter as exc:
                seconds = retry_after_seconds(exc)
                floods += 1
                self.floods += 1
                if self.metrics is not None:
                    self.metrics.too_many_requests(PLATFORM)
                log.warning(
                    "429 from Telegram for %s: holding the chat's sends for %.0f s",
                    endpoint,
                    seconds,
                    extra={"event": "flood", "retry_after": seconds},
                )
                if budgeted:
                    # Held for every process, so none sends to this chat early; `_acquire` then waits.
                    await self._hold(chat_id, seconds)
                if floods > max_floods:
                    raise
                if not budgeted:
                    await self.clock.sleep(seconds)
            except BadRequest:
                raise
            except NetworkError as exc:
                failures += 1
                if self.metrics is not None:
                    self.metrics.platform_error(
                        PLATFORM, "timeout" if isinstance(exc, TimedOut) else "network"
                    )
                if failures > self.network_retries:
                    raise
                delay = self._backoff(failures)
                log.info(
                    "network error on %s (%s); retry %d in %.1f s",
                    endpoint,
                    exc,
                    failures,
                    delay,
                    extra={"event": "retry"},
                )
                await self.clock.sleep(delay)
