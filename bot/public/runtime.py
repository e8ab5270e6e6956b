"""What a bot process of any platform runs for public tables, in one object an adapter starts and stops.

- the relay (`bot.relay`): `dispatch` shows this platform's messages here and hands the others over;
- the relay's consumer of this platform's stream, as a background task (Redis only);
- the matchmaker's loop: this platform's heartbeat (`MatchQueue.heartbeat`, so its players are matched)
  and that of the platforms it also serves (`also`, `add_platform`: the web page served by this process
  heartbeats `web`), then `build_matches` every `match_every` seconds, the new tables' messages dispatched;
- `Service.public_seats`: people who no longer sit at a public table may queue again (a finished game
  rated on the ladder first); `Service.safety_commands` (`/block`, `/report`) and `Service.ladder`;
  `Service.rematch`: a won public game's offer to play again (`bot.public.again`).

An adapter builds it where it builds its service, passes every list of messages the service returns (and
the timers') to `dispatch`, and calls `start()` at startup and `stop()` at shutdown. Trouble in a loop is
logged and the loop goes on: public tables must never take the process down.

Messages for `web` people are dropped by `dispatch`: the web page reads its table itself (as
`Runtime.route` drops them), so they are neither handed to a stream nobody reads nor warned about.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import Final

from bot.handlers.public_safety import public_safety_for
from bot.handlers.queue import seated_where
from bot.matchmaking.base import MatchQueue
from bot.model import Message
from bot.public.again import PublicRematch
from bot.public.builder import build_matches, free_seats
from bot.relay.base import Relay, platform_of
from bot.relay.redis_relay import RelayConsumer
from bot.service import Service

__all__ = ["PublicRuntime"]

log = logging.getLogger("thousand.public")

WEB_PLATFORM: Final = "web"


class PublicRuntime:
    def __init__(
        self,
        service: Service,
        queue: MatchQueue,
        relay: Relay,
        platform: str,
        *,
        also: Sequence[str] = (),
        consumer: RelayConsumer | None = None,
        match_every: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.service = service
        self.queue = queue
        self.relay = relay
        self.platform = platform
        self.platforms: list[str] = [platform, *(p for p in also if p != platform)]
        """Every platform this process beats for (its own first)."""
        self.consumer = consumer
        self.match_every = match_every
        self.clock = clock
        self.heartbeat_every = queue.config.heartbeat_seconds / 3
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self.built = 0

    async def dispatch(self, messages: Sequence[Message]) -> None:
        shown = [m for m in messages if platform_of(m) != WEB_PLATFORM]
        if shown:
            await self.relay.dispatch(shown)

    async def add_platform(self, platform: str) -> None:
        """Beat for `platform` too from now on (the web page, started after this runtime)."""
        if platform not in self.platforms:
            self.platforms.append(platform)
            if self._tasks:
                await self.queue.heartbeat(platform)

    async def _beat(self) -> None:
        for platform in list(self.platforms):
            await self.queue.heartbeat(platform)

    async def start(self) -> None:
        # /block, /report and the ladder (`bot.handlers.public_safety`): a public game's end is rated and
        # its players remembered for blocking and reporting, then their seats are freed (`free_seats`).
        safety = public_safety_for(
            self.service, self.queue, language_of=self.service.language_of, clock=self.service.clock
        )
        self.service.ladder = safety.ladder
        self.service.safety_commands = safety.handle
        self.service.public_seats = safety.seats_freed(free_seats(self.queue))
        # Play again with the same people, when all agree (`bot.public.again`).
        store = self.service.store
        self.service.rematch = PublicRematch(
            self.service, self.queue, seated_elsewhere=lambda key: seated_where(store, key)
        )
        await self._beat()
        if self.consumer is not None:
            self._tasks.append(asyncio.create_task(self.consumer.run(self._stop), name="relay-consumer"))
        self._tasks.append(asyncio.create_task(self._match_loop(), name="public-matcher"))

    async def _match_loop(self) -> None:
        beat = self.clock()
        while not self._stop.is_set():
            try:
                if self.clock() - beat >= self.heartbeat_every:
                    beat = self.clock()
                    await self._beat()
                messages = await build_matches(self.service, self.queue)
                self.built += sum(1 for m in messages if m.kind == "table")
                if messages:
                    await self.dispatch(messages)
            except Exception:
                log.exception("public tables: the matcher's round failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.match_every)

    async def stop(self, timeout: float = 5.0) -> None:
        """Stop the loops (the consumer finishes the entry in hand; what it did not ack, another process
        of the platform takes over)."""
        self._stop.set()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=timeout)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        self._tasks = []
