"""What a bot process runs around the service: checked settings, logs, the store, metrics, health
endpoints, the timer loop, and the graceful stop. An adapter's `main` is then only its platform.

    settings = prepare("telegram")                  # exits with one line per bad setting
    runtime = Runtime(settings, platform="telegram")
    runtime.shutdown.on_stop_intake("polling", application.updater.stop)
    await runtime.start(deliver=send_messages)      # health server, signals, timers
    ...  # on each update:
    async with runtime.update():                    # refuses (ShuttingDown) once stopping
        messages = await runtime.handle(command, kind="button")
        await send(messages)                        # finished before the process exits
    runtime.health.set_connected("telegram", True)  # when the platform session is up (and False when lost)
    await runtime.run_until_stopped()               # SIGTERM: stop intake, drain, flush, return

`handle` raises `ShuttingDown` once the process is stopping: answer the platform so that the update is
delivered again to another process (webhook: HTTP 503), or drop it (polling: the offset is not
confirmed, so the next process gets it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Final

from bot.handlers import Handlers
from bot.model import ChatRef, Command, Message, Sender, UserRef
from bot.ops.activity import Activity, LocalActivity, RedisActivity
from bot.ops.config import ConfigError, Platform, secrets_of, startup_settings
from bot.ops.health import Health, HealthServer
from bot.ops.logs import Redactor, configure_logging, log_context
from bot.ops.metered import MeteredStore, Probe, probe
from bot.ops.metrics import Metrics
from bot.ops.shutdown import GracefulShutdown, ShutdownReport, ShuttingDown
from bot.presence import Presence
from bot.relay.base import platform_of
from bot.relay.factory import ProcessRelay, process_relay
from bot.service import Service
from bot.settings import Settings
from bot.storage import MemoryStore, RedisStore, Retention, Store

__all__ = ["Deliver", "Runtime", "ShuttingDown", "open_store", "outcome_of", "prepare", "retention_of"]

log = logging.getLogger("thousand.runtime")

Deliver = Callable[[list[Message]], Awaitable[None]]
"""Sends messages the timers produced (a turn played for an absent player, a warning) to the platform."""

ServiceFactory = Callable[[Store, Settings], Service]

_SAMPLE_SECONDS: Final = 15.0


def _service(store: Store, settings: Settings) -> Service:
    """The service with the command handlers: wired here, since the two never import each other. With the
    web table configured, players watching it do not get their hands redrawn on each move."""
    web = settings.public_url is not None or settings.telegram_webapp_url is not None
    return Service(store, settings, handlers=Handlers, presence=Presence(store) if web else None)


def prepare(platform: Platform | None, env_file: Path | str | None = ".env") -> Settings:
    """Settings checked for `platform`, and logging set up from them. On a bad setting: one line per
    problem on stderr, exit status 2 (before anything connects anywhere)."""
    try:
        settings = startup_settings(platform, env_file)
    except ConfigError as exc:
        for line in exc.problems:
            print(f"thousand: {line}", file=sys.stderr)
        raise SystemExit(2) from None
    configure_logging(settings.log_level, settings.log_format, secrets=secrets_of(settings))
    return settings


def retention_of(settings: Settings) -> Retention:
    """How long user indexes, statistics and boards live. A user's index outlives two idle game TTLs
    after a join (a game's save extends it when needed, see `Retention`)."""
    return Retention(
        user_index_seconds=2 * settings.game_ttl,
        stats_seconds=settings.stats_ttl,
        board_max=settings.rating_board_max,
    )


def open_store(settings: Settings) -> Store:
    """Redis when REDIS_URL is set, else the memory store (one process; games end with it)."""
    retention = retention_of(settings)
    if settings.redis_url:
        return RedisStore.from_url(
            settings.redis_url,
            prefix=settings.redis_prefix,
            cluster=settings.redis_cluster,
            retention=retention,
            deadline_shards=settings.redis_deadline_shards,
            wait_replicas=settings.redis_wait_replicas,
            wait_timeout_ms=settings.redis_wait_timeout_ms,
        )
    log.warning("REDIS_URL is not set: games are kept in memory and lost when this process stops")
    return MemoryStore(retention=retention)


def outcome_of(messages: list[Message], seen: Probe) -> str:
    """ok, refused (a rule or permission said no: the sender got an error), or unavailable."""
    if seen.unavailable:
        return "unavailable"
    if any(m.kind == "error" and isinstance(m.audience, Sender) for m in messages):
        return "refused"
    return "ok"


def _table_of(command: Command) -> str | None:
    if command.table_id:
        return command.table_id
    return None if command.chat.private else command.chat.key


class Runtime:
    """One per process. See the module docstring for the order of calls."""

    def __init__(
        self,
        settings: Settings,
        *,
        platform: str,
        store: Store | None = None,
        service_factory: ServiceFactory | None = None,
        metrics: Metrics | None = None,
        activity: Activity | None = None,
        tick_interval: float = 1.0,
        sample_interval: float = _SAMPLE_SECONDS,
        relay: str | None = None,
    ) -> None:
        """`relay`: the platform code (`tg`, `dc`) whose messages this process shows; with Redis, the
        others' are handed over to their platforms' processes and theirs come here (`bot.relay`: public
        tables seat people of several platforms)."""
        self.settings = settings
        self.platform = platform
        self.relay_platform = relay
        self.relay: ProcessRelay | None = None
        self.metrics = metrics or Metrics()
        self.store = MeteredStore(store if store is not None else open_store(settings), self.metrics)
        self.service = (service_factory or _service)(self.store, settings)
        if activity is None:
            activity = (
                RedisActivity.from_url(
                    settings.redis_url, cluster=settings.redis_cluster, prefix=settings.redis_prefix
                )
                if settings.redis_url and isinstance(self.store.inner, RedisStore)
                else LocalActivity()
            )
        self.activity = activity
        self.tick_interval = tick_interval
        self.sample_interval = sample_interval
        self.health = Health(redactor=Redactor(secrets_of(settings)))
        self.health.add_check("store", self.store.ping)
        self.health.add_component(platform)
        self.shutdown = GracefulShutdown(drain_timeout=settings.drain_seconds)
        self.server: HealthServer | None = None
        if settings.metrics_port:
            self.server = HealthServer(
                self.health, self.metrics, host=settings.metrics_host, port=settings.metrics_port
            )
        self._deliver: Deliver | None = None
        self._tasks: list[asyncio.Task[None]] = []

        async def not_ready() -> None:
            self.health.mark_draining()

        # First of all intake hooks: the load balancer stops sending while the adapter closes its intake.
        self.shutdown.on_stop_intake("readiness", not_ready)

    # --- start and stop -----------------------------------------------------------------------------

    async def start(
        self, deliver: Deliver | None = None, *, signals: bool = True, timers: bool = True
    ) -> None:
        """Listen for probes and scrapes, catch SIGTERM/SIGINT, run the timer loop (its messages go to
        `deliver`) and the activity sampler."""
        self._deliver = deliver
        if self.relay_platform is not None:
            self.relay = process_relay(self.settings, self.relay_platform, self._deliver_one)
        if self.relay is not None:
            self.shutdown.on_flush("relay", self.relay.close)
            consumer = self.relay.consumer.run(self.shutdown.stopping)
            self._tasks.append(asyncio.create_task(consumer, name="thousand-relay"))
        if self.server is not None:
            await self.server.start()
            self.shutdown.on_flush("health server", self.server.stop)
        self.shutdown.on_flush("store", self.store.close)
        self.shutdown.on_flush("activity", self.activity.close)
        self.shutdown.on_flush("service", self.service.close)
        if signals:
            self.shutdown.install_signal_handlers()
        if timers:
            self._tasks.append(asyncio.create_task(self._timer_loop(), name="thousand-timers"))
        self._tasks.append(asyncio.create_task(self._sample_loop(), name="thousand-activity"))
        self.shutdown.on_stop_intake("background tasks", self._stop_tasks)
        log.info("started", extra={"event": "start", "platform": self.platform})

    async def run_until_stopped(self) -> ShutdownReport:
        """Wait for SIGTERM (or `stop()`), then stop intake, finish updates in flight, flush."""
        return await self.shutdown.wait()

    async def stop(self, reason: str = "stop") -> ShutdownReport:
        return await self.shutdown.shutdown(reason)

    async def _stop_tasks(self) -> None:
        # A tick in flight holds an update slot: it is waited for by the drain, not cut here. The loops
        # see `stopping` and end at their next wait.
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.shutdown.stopping.wait(), seconds)

    # --- updates ------------------------------------------------------------------------------------

    def update(self) -> AbstractAsyncContextManager[None]:
        """Wrap one platform update from taking it to its last send: `async with runtime.update():`.
        Raises `ShuttingDown` when stopping; once entered, the stop waits for it (up to DRAIN_SECONDS)."""
        return self.shutdown.update()

    async def handle(self, command: Command, *, kind: str = "command") -> list[Message]:
        """Run one command through the service, counted, timed and logged with its table and chat.

        `kind` labels the platform update (command, button, interaction, autocomplete...). Raises
        `ShuttingDown` when the process no longer takes updates."""
        table_id = _table_of(command)
        async with self.shutdown.update():
            with (
                log_context(
                    table_id=table_id,
                    chat_id=command.chat.chat_id,
                    platform=self.platform,
                    private=command.chat.private,
                ),
                self.metrics.update_in_flight(),
                probe() as seen,
            ):
                start = time.perf_counter()
                outcome = "error"
                try:
                    messages = await self.route(await self.service.handle(command))
                    outcome = outcome_of(messages, seen)
                    return messages
                except Exception:
                    log.exception("command %s failed", command.name, extra={"command": command.name})
                    raise
                finally:
                    seconds = time.perf_counter() - start
                    self.metrics.command_handled(command.name, outcome, seconds)
                    self.metrics.update_handled(self.platform, kind, outcome)
                    self.activity.touch(table_id, command.user.key)
                    log.debug(
                        "handled %s",
                        command.name,
                        extra={
                            "command": command.name,
                            "outcome": outcome,
                            "duration_ms": round(seconds * 1000),
                        },
                    )

    async def route(self, messages: list[Message]) -> list[Message]:
        """With a relay: the messages this process's platform shows (returned, to send as usual), the
        others handed over to their platforms' processes. A web page reads its table itself: messages for
        `web` people are not handed over. A hand-over that fails is logged: the table's next message shows
        it as it is."""
        relay, own_platform = self.relay, self.relay_platform
        if relay is None or own_platform is None:
            return messages
        own = [m for m in messages if platform_of(m) == own_platform]
        if len(own) == len(messages):
            return messages
        others = [m for m in messages if platform_of(m) not in (own_platform, "web")]
        try:
            if others:
                await relay.relay.hand_over(others)
            for message in own:  # a table of several platforms: a late relayed older copy is dropped
                await relay.guard.note(message)
        except Exception:
            log.exception("handing %d message(s) over to other platforms failed", len(others))
        return own

    async def _deliver_one(self, message: Message) -> None:
        """A message another platform's process handed over, shown here (raising leaves it pending)."""
        if self._deliver is None:
            raise RuntimeError("no delivery configured")
        await self._deliver([message])

    async def move_chat(self, old: ChatRef, new: ChatRef) -> tuple[str, ...] | None:
        """A chat changed its platform id: its table follows (`Service.move_chat`). Raises `ShuttingDown`
        when the process no longer takes updates."""
        async with self.shutdown.update():
            with log_context(table_id=old.key, chat_id=old.chat_id, platform=self.platform):
                return await self.service.move_chat(old, new)

    async def language_of(self, user: UserRef, chat_key: str | None = None) -> str:
        """The language the bot writes to `user` in privately (`Service.language_of`)."""
        return await self.service.language_of(user, chat_key)

    async def tick_once(self) -> list[Message]:
        """Fire the due deadlines once and deliver what they cause; the timer loop calls this."""
        async with self.shutdown.update():
            with probe() as seen:
                try:
                    messages = await self.route(await self.service.tick())
                except Exception:
                    self.metrics.timer_fired("error")
                    raise
                for _ in range(seen.claimed):
                    self.metrics.timer_fired("fired")
                if messages and self._deliver is not None:
                    try:
                        await self._deliver(messages)
                    except Exception:
                        self.metrics.platform_error(self.platform, "deliver")
                        log.exception("delivering %d timer message(s) failed", len(messages))
                return messages

    async def _timer_loop(self) -> None:
        """Ticks every `tick_interval`; at start and every `deadline_sweep_seconds` the deadline index is
        repaired first (`Service.sweep_deadlines`), so a table whose index entry was lost still fires."""
        next_sweep = 0.0
        while not self.shutdown.stopping.is_set():
            try:
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + self.service.settings.deadline_sweep_seconds
                    await self.service.sweep_deadlines()
                await self.tick_once()
            except ShuttingDown:
                return
            except Exception:
                log.exception("timer tick failed")
            await self._pause(self.tick_interval)

    async def _sample_loop(self) -> None:
        while not self.shutdown.stopping.is_set():
            try:
                tables, players = await self.activity.sample()
                self.metrics.set_active(tables, players)
            except Exception as exc:  # a missed sample only leaves the gauges as they were
                log.warning("activity sample failed: %s", exc)
            await self._pause(self.sample_interval)
