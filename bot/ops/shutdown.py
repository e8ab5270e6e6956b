"""Graceful shutdown: on SIGTERM stop taking updates, finish the ones in flight, flush, exit.

Nothing of a game lives only in a process: every command ends with a compare-and-set save to the store
and turn deadlines are claimed with a lease. So a process may stop at any moment without losing a game;
what a graceful stop adds is that no update is half handled (a user's press answered, its messages sent)
and that an orchestrator's rolling restart is invisible to players.

The order, run by `GracefulShutdown.shutdown()`:

1. `stopping` is set: readiness turns false (the load balancer stops sending webhooks), `update()` refuses
   new work with `ShuttingDown`.
2. Intake hooks run, in the order registered: the adapters stop polling, close the webhook listener or
   the gateway, and the timer poller stops claiming deadlines.
3. Updates in flight are awaited, up to `drain_timeout` (a second signal cuts the wait short).
4. Flush hooks run, most recently registered first (send queues, then the store, then logs).

The whole sequence ends within `stop_within` seconds of the stop request (25 s: Kubernetes kills after
its default 30 s grace period, and the 5 s left cover the interpreter's exit): the drain gets what is
left after `FLUSH_RESERVE` for the hooks, and each hook at most what is left of the whole. A send queue
that cannot deliver in time hands its messages over to the store for the next process (see
`adapters/telegram/outbox.py`); messages that nothing could take (the memory store) are reported with
`undelivered()` and make the exit status `EXIT_UNDELIVERED`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_UNDELIVERED",
    "FLUSH_RESERVE",
    "STOP_WITHIN",
    "GracefulShutdown",
    "Hook",
    "ShutdownReport",
    "ShuttingDown",
]

log = logging.getLogger(__name__)

Hook = Callable[[], Awaitable[None]]

STOP_WITHIN: Final = 25.0
"""Seconds from the stop request to the end of the sequence: within Kubernetes' default grace period
(30 s, `terminationGracePeriodSeconds`), with room to exit."""
FLUSH_RESERVE: Final = 10.0
"""Seconds of `STOP_WITHIN` kept for the flush hooks: the drain of updates in flight ends before."""
HOOK_FLOOR: Final = 0.5
"""A hook gets at least this long, even when the sequence ran out of time (closing a connection)."""

EXIT_OK: Final = 0
"""Stopped cleanly: every queued message was delivered or handed over to the store."""
EXIT_FAILED: Final = 1
"""A stop hook failed or hung (logged), nothing known lost."""
EXIT_UNDELIVERED: Final = 3
"""Messages still queued at the stop were lost (logged with their count): the store dies with the
process (memory) or refused them. Takes precedence over `EXIT_FAILED`."""


class ShuttingDown(Exception):
    """New work offered after the process began to stop; the caller should refuse it (HTTP 503 for a
    webhook, leave it unacknowledged for a queue) so that another process takes it."""


@dataclass(slots=True)
class ShutdownReport:
    reason: str
    drained: bool
    abandoned: int
    seconds: float
    failed_hooks: list[str] = field(default_factory=list)
    undelivered: int = 0
    """Messages queued at the stop that were neither delivered nor handed over (see `undelivered()`)."""

    @property
    def exit_code(self) -> int:
        """The process's exit status: `EXIT_UNDELIVERED`, `EXIT_FAILED` or `EXIT_OK`."""
        if self.undelivered:
            return EXIT_UNDELIVERED
        return EXIT_FAILED if self.failed_hooks else EXIT_OK


class GracefulShutdown:
    """Tracks updates in flight and runs the stop sequence once. One per process."""

    def __init__(
        self, *, drain_timeout: float = 20.0, hook_timeout: float = 10.0, stop_within: float = STOP_WITHIN
    ) -> None:
        """`drain_timeout`: how long to wait for updates in flight (cut to `stop_within -
        FLUSH_RESERVE`); `hook_timeout`: how long one hook may take; `stop_within`: the whole sequence,
        from the stop request (keep it under the orchestrator's grace period, 30 s in Kubernetes)."""
        if drain_timeout < 0 or hook_timeout <= 0 or stop_within <= 0:
            raise ValueError("drain_timeout must be >= 0, hook_timeout and stop_within > 0")
        self.drain_timeout = drain_timeout
        self.hook_timeout = hook_timeout
        self.stop_within = stop_within
        self._requested_at: float | None = None
        self._undelivered = 0
        self.stopping = asyncio.Event()
        self.reason = ""
        self._force = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._in_flight = 0
        self._intake: list[tuple[str, Hook]] = []
        self._flush: list[tuple[str, Hook]] = []
        self._report: ShutdownReport | None = None
        self._running: asyncio.Task[ShutdownReport] | None = None
        self._inside: contextvars.ContextVar[bool] = contextvars.ContextVar(
            "thousand_in_update", default=False
        )

    # --- wiring -------------------------------------------------------------------------------------

    def on_stop_intake(self, name: str, hook: Hook) -> None:
        """Run `hook` first when stopping: it must make the process take no new updates."""
        self._intake.append((name, hook))

    def on_flush(self, name: str, hook: Hook) -> None:
        """Run `hook` after the in-flight updates finished (flush hooks run last registered first)."""
        self._flush.append((name, hook))

    def install_signal_handlers(
        self,
        loop: asyncio.AbstractEventLoop | None = None,
        signals: Iterable[signal.Signals] = (signal.SIGTERM, signal.SIGINT),
    ) -> None:
        """SIGTERM/SIGINT request a stop; a second one stops waiting for updates in flight."""
        loop = loop or asyncio.get_running_loop()
        for sig in signals:
            loop.add_signal_handler(sig, self.request_stop, sig.name)

    # --- state --------------------------------------------------------------------------------------

    @property
    def accepting(self) -> bool:
        return not self.stopping.is_set()

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def request_stop(self, reason: str = "requested") -> None:
        """Begin stopping (idempotent; asking twice cuts the drain short)."""
        if self.stopping.is_set():
            log.warning("second stop request (%s): not waiting for updates in flight", reason)
            self._force.set()
            return
        self.reason = reason
        self._requested_at = time.monotonic()
        log.info("stop requested (%s): taking no new updates", reason, extra={"event": "shutdown"})
        self.stopping.set()

    def remaining(self) -> float:
        """Seconds left of `stop_within` (all of it before the stop request); never negative."""
        if self._requested_at is None:
            return self.stop_within
        return max(0.0, self.stop_within - (time.monotonic() - self._requested_at))

    def undelivered(self, count: int) -> None:
        """A flush hook reports `count` messages it could neither deliver nor hand over: they are in the
        report and the exit status (`EXIT_UNDELIVERED`)."""
        if count > 0:
            self._undelivered += count

    @asynccontextmanager
    async def update(self) -> AsyncIterator[None]:
        """Wrap the handling of one update, from taking it to the last message sent for it. Raises
        `ShuttingDown` (before the block) once stopping. Nested use in the same task is part of the outer
        update: an update taken before the stop request is finished, whatever it calls."""
        if self._inside.get():
            yield
            return
        if self.stopping.is_set():
            raise ShuttingDown(self.reason)
        self._in_flight += 1
        self._idle.clear()
        token = self._inside.set(True)
        try:
            yield
        finally:
            self._inside.reset(token)
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    # --- the sequence -------------------------------------------------------------------------------

    async def wait(self) -> ShutdownReport:
        """Wait for a stop request, then run the stop sequence; returns its report."""
        await self.stopping.wait()
        return await self.shutdown()

    async def shutdown(self, reason: str | None = None) -> ShutdownReport:
        """Run the stop sequence once (concurrent callers share it) and return what happened."""
        if not self.stopping.is_set():
            self.request_stop(reason or "shutdown")
        if self._running is None:
            self._running = asyncio.ensure_future(self._sequence())
        return await asyncio.shield(self._running)

    async def _sequence(self) -> ShutdownReport:
        start = time.monotonic()
        failed: list[str] = []
        for name, hook in self._intake:
            await self._run_hook("intake", name, hook, failed)
        drained = await self._drain()
        abandoned = self._in_flight
        if not drained:
            log.error(
                "%d update(s) still in flight after %.1fs; stopping anyway (their commands were either saved "
                "or not: a table is never half written)",
                abandoned,
                self.drain_timeout,
                extra={"event": "shutdown", "count": abandoned},
            )
        for name, hook in reversed(self._flush):
            await self._run_hook("flush", name, hook, failed)
        report = ShutdownReport(
            self.reason, drained, abandoned, time.monotonic() - start, failed, self._undelivered
        )
        if report.undelivered:
            log.error(
                "stopped in %.2fs with %d message(s) lost (exit status %d)",
                report.seconds,
                report.undelivered,
                EXIT_UNDELIVERED,
                extra={"event": "shutdown", "outcome": "undelivered", "count": report.undelivered},
            )
        else:
            log.info(
                "stopped in %.2fs (drained=%s)",
                report.seconds,
                drained,
                extra={"event": "shutdown", "outcome": "drained" if drained else "abandoned"},
            )
        self._report = report
        return report

    async def _drain(self) -> bool:
        if self._idle.is_set():
            return True
        log.info("waiting for %d update(s) in flight", self._in_flight, extra={"event": "shutdown"})
        idle = asyncio.ensure_future(self._idle.wait())
        force = asyncio.ensure_future(self._force.wait())
        timeout = min(self.drain_timeout, max(0.0, self.remaining() - FLUSH_RESERVE))
        try:
            await asyncio.wait({idle, force}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            idle.cancel()
            force.cancel()
        return self._idle.is_set()

    async def _run_hook(self, stage: str, name: str, hook: Hook, failed: list[str]) -> None:
        timeout = min(self.hook_timeout, max(HOOK_FLOOR, self.remaining()))
        try:
            await asyncio.wait_for(hook(), timeout)
        except TimeoutError:
            failed.append(name)
            log.error("%s hook %r took over %.1fs", stage, name, timeout, extra={"event": "shutdown"})
        except Exception:
            failed.append(name)
            log.exception("%s hook %r failed", stage, name, extra={"event": "shutdown"})

    @property
    def report(self) -> ShutdownReport | None:
        """The finished sequence's report, once `shutdown()` completed."""
        return self._report
