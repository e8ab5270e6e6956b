"""The test kit every folder shares: a clock a test moves by hand, waiting until something holds, and the
command a person types for a move. The platform kits (`botkit`, `tgkit`, `dckit`, `relkit`, `webkit`, …)
import these and keep only what is theirs (their fake server, their rig, their users and chats)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable

from bot import vocabulary
from core.actions import Action
from core.game import GameState


class Clock:
    """POSIX time that moves only when the test says so (`advance`, or setting `now`)."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def until(
    check: Callable[[], bool | Awaitable[bool]], seconds: float = 10.0, what: str = "", every: float = 0.01
) -> None:
    """Wait, in the loop's real time, until `check()` (a function or a coroutine function) is true; fail with
    "timed out" (and `what`) past `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while True:
        result = check()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        assert loop.time() < deadline, f"timed out waiting for {what}" if what else "timed out"
        await asyncio.sleep(every)


def typed(action: Action, state: GameState, seat: int) -> str:
    """The command a person types for `action` (`bot.vocabulary.typed`)."""
    return vocabulary.typed(action, vocabulary.Mover.of_state(state, seat))
