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

__all__ = ["GracefulShutdown", "Hook", "ShutdownReport", "ShuttingDown"]

log = logging.getLogger(__name__)

Hook = Callable[[], Awaitable[None]]


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


class GracefulShutdown:
    """Tracks updates in flight and runs the stop sequence once. One per process."""

    def __init__(self, *, drain_timeout: float = 20.0, hook_timeout: float = 10.0) -> None:
        """`drain_timeout`: how long to wait for updates in flight (keep it under the orchestrator's
        grace period, 30 s by default in Kubernetes); `hook_timeout`: how long one hook may take."""
        if drain_timeout < 0 or hook_timeout <= 0:
            raise ValueError("drain_timeout must be >= 0 and hook_timeout > 0")
        self.drain_timeout = drain_timeout
        self.hook_timeout = hook_timeout
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
        log.info("stop requested (%s): taking no new updates", reason, extra={"event": "shutdown"})
        self.stopping.set()

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
        report = ShutdownReport(self.reason, drained, abandoned, time.monotonic() - start, failed)
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
        try:
            await asyncio.wait({idle, force}, timeout=self.drain_timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            idle.cancel()
            force.cancel()
        return self._idle.is_set()

    async def _run_hook(self, stage: str, name: str, hook: Hook, failed: list[str]) -> None:
        try:
            await asyncio.wait_for(hook(), self.hook_timeout)
        except TimeoutError:
            failed.append(name)
            log.error(
                "%s hook %r took over %.1fs", stage, name, self.hook_timeout, extra={"event": "shutdown"}
            )
        except Exception:
            failed.append(name)
            log.exception("%s hook %r failed", stage, name, extra={"event": "shutdown"})

    @property
    def report(self) -> ShutdownReport | None:
        """The finished sequence's report, once `shutdown()` completed."""
        return self._report
