"""Measuring delays through the real bot: a discrete-event clock and a recorder of the fake's answers.

`SimClock`: sleepers wake in the order of their deadlines, and time jumps to the earliest deadline only
when nothing else can run.

`tgkit.VirtualClock` moves time as soon as anyone sleeps, which is right for playing a game quickly but
wrong for measuring how long a message waited: one queue sleeping 40 s for its budget would make every
other chat's next message look 40 s late. Here a sleeper's wait ends at its own deadline, and what other
tasks do meanwhile takes no time (handling an update, a call to the fake), so the times the fake records
are the times a real deployment would show if its own work were instant.

"Nothing else can run" is the event loop's ready queue being empty (asyncio's `_ready`, read only): every
task is then waiting for a sleeper of this clock, a real timer (the fake's long poll, the test's own
polling) or another task. Tests using it must not wait for threads (no computer players in a thread).
"""

from __future__ import annotations

import asyncio
import heapq
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from tgkit import BASE_TIME, Rig

from fakes.telegram import FakeChat, FakeUser
from fakes.telegram.fake import ApiResponse
from fakes.telegram.models import UploadedFile

__all__ = ["Recorder", "Sent", "SimClock"]


class SimClock:
    """POSIX time that moves only when every task waits; a drop-in for `tgkit.VirtualClock`."""

    explicit = True

    def __init__(self, start: float = BASE_TIME) -> None:
        self.t = start
        self._heap: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = 0
        self._driver: asyncio.Task[None] | None = None

    def now(self) -> float:
        return self.t

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        loop = asyncio.get_running_loop()
        if self._driver is None or self._driver.done():
            self._driver = loop.create_task(self._drive(), name="sim-clock")
        future: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._heap, (self.t + seconds, self._seq, future))
        self._seq += 1
        await future

    async def _drive(self) -> None:
        loop = asyncio.get_running_loop()
        ready: deque[Any] | None = getattr(loop, "_ready", None)
        assert ready is not None, "SimClock needs asyncio's default event loop"
        while True:
            await asyncio.sleep(0)
            while self._heap and self._heap[0][2].done():
                heapq.heappop(self._heap)  # its sleeper was cancelled
            if not self._heap:
                await asyncio.sleep(0.001)  # nobody sleeps on this clock: wait in real time
                continue
            if ready:
                continue  # something can still run at this moment
            self.t = max(self.t, self._heap[0][0])
            while self._heap and self._heap[0][0] <= self.t:
                _, _, future = heapq.heappop(self._heap)
                if not future.done():
                    future.set_result(None)

    async def close(self) -> None:
        if self._driver is not None:
            self._driver.cancel()
            await asyncio.gather(self._driver, return_exceptions=True)


@dataclass
class Sent:
    at: float
    method: str
    chat_id: str
    message_id: int | None
    text: str
    status: int


@dataclass
class Recorder:
    """Every Bot API call the fake answered, with the clock's time, the message it made or changed and
    its text."""

    calls: list[Sent] = field(default_factory=list)

    def install(self, rig: Rig) -> None:
        original = rig.fake.handle
        clock = rig.clock

        async def handle(
            token: str, method: str, params: Any, files: dict[str, UploadedFile] | None = None
        ) -> ApiResponse:
            response = await original(token, method, params, files)
            if method.lower() != "getupdates":
                result = response.json().get("result") if response.status == 200 else None
                message_id = params.get("message_id")
                if isinstance(result, dict) and "message_id" in result:
                    message_id = result["message_id"]
                text = str(params.get("text") or params.get("caption") or "")
                chat_id = str(params.get("chat_id"))
                self.calls.append(Sent(clock(), method, chat_id, _int(message_id), text, response.status))
            return response

        rig.fake.handle = handle  # type: ignore[method-assign]

    def after(self, t: float, chat: FakeChat | FakeUser, methods: tuple[str, ...]) -> list[Sent]:
        return [
            c
            for c in self.calls
            if c.at >= t and c.chat_id == str(chat.id) and c.method in methods and c.status == 200
        ]


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None
