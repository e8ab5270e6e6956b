"""Public tables in a bot process of any platform: the queue's commands (`/play` in the private chat,
`/thousand play` on Discord, `/cancel`, the status message's buttons), the matcher forming tables, and
delivery of what they produce.

    public = ProcessPublic(runtime, bot.adapter.deliver, "tg")
    await public.start()       # after the bot started; main.py registers `stop` with the shutdown

It puts together what `bot` provides: the queue (`RedisQueue` on the runtime's Redis store, else a
`MemoryQueue`: one process), `PublicRuntime` (the heartbeat of `tg`, the matcher loop, `public_seats`)
on the runtime's relay (Redis: the runtime already runs this platform's consumer) or, without Redis, a
`MemoryRelay` showing everything here, and the `QueueDesk` whose status messages it refreshes.
The web page served by the same process (`start_web(..., public=public)`) uses its queue and beats
`web` through it (`add_platform`); `thousand web` alone runs one of its own for platform `web`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence

from bot.handlers.public_safety import ladder_ratings
from bot.handlers.queue import QueueDesk
from bot.matchmaking import MatchConfig, MatchQueue, MemoryQueue, RedisQueue
from bot.matchmaking.model import Match
from bot.model import Message
from bot.ops.runtime import Runtime
from bot.public.builder import build_match
from bot.public.runtime import PublicRuntime
from bot.relay.base import Relay
from bot.relay.memory import MemoryRelay
from bot.storage import RedisStore

__all__ = ["ProcessPublic"]

log = logging.getLogger("thousand.public.process")


class ProcessPublic:
    def __init__(
        self,
        runtime: Runtime,
        deliver: Callable[[list[Message]], Awaitable[None]],
        platform: str,
        *,
        also: Sequence[str] = (),
        queue: MatchQueue | None = None,
        match_every: float = 0.25,
        refresh_every: float = 2.0,
    ) -> None:
        service = runtime.service
        config = MatchConfig.from_settings(runtime.settings)
        if queue is None:
            inner = runtime.store.inner
            queue = (
                RedisQueue(inner, config=config)
                if isinstance(inner, RedisStore)
                else MemoryQueue(config, clock=service.clock)
            )
        self.queue = queue
        self._deliver = deliver
        relay: Relay = (
            runtime.relay.relay if runtime.relay is not None else MemoryRelay({platform: self._deliver_one})
        )
        self.relay = relay
        self.public = PublicRuntime(service, queue, relay, platform, also=also, match_every=match_every)

        async def build(match: Match) -> list[Message]:
            return (await build_match(service, queue, match))[1]

        self.desk = QueueDesk(queue, runtime.store, service.language_of, build, clock=service.clock)
        self.refresh_every = refresh_every
        self._service = service
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _deliver_one(self, message: Message) -> None:
        await self._deliver([message])

    async def dispatch(self, messages: Sequence[Message]) -> None:
        """Deliver what public tables produced outside a command (a table built from the web page):
        this platform's messages here, the others' through their processes, none for `web` people."""
        await self.public.dispatch(messages)

    async def add_platform(self, platform: str) -> None:
        """Heartbeat `platform` too: the web page served by this process (`adapters.web.main.start_web`),
        so that the queue matches its players."""
        await self.public.add_platform(platform)

    async def start(self) -> None:
        """Take `/play` and `/cancel`, beat, match, and keep the waiting players' status up to date."""
        self._service.queue_commands = self.desk.handle
        await self.public.start()
        if self._service.ladder is not None:  # set by the start: people are matched by public rating
            self.desk.rating = ladder_ratings(self._service.ladder)
        self._task = asyncio.create_task(
            self.desk.run(self._stop, self.dispatch, self.refresh_every), name="queue-status"
        )

    async def stop(self) -> None:
        """Stop the loops; the queue's entries of players waiting here expire by themselves
        (`PUBLIC_ENTRY_SECONDS`) unless another process takes their next command. The desk keeps
        answering: an update still in flight during the drain gets its real answer."""
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.public.stop()
        if isinstance(self.queue, MemoryQueue):
            await self.queue.close()
