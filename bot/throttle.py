"""A budget of commands per person and chat, so that one member cannot bury a game under answers.

One member typing `/rules` a hundred times in a group would otherwise get a hundred answers, each
waiting for the group's 20 messages a minute, and the table's next update would come minutes later. So
each person has `command_limit` commands per chat in every `command_window` seconds (a fixed window kept
in the store, so every process of the bot counts on one budget; `Store.count_hit`). The first command
over the budget gets one short translated answer to its sender only ("slow down"); the rest of the
window gets nothing at all, and nothing is loaded, changed or sent for them.

Moves are never turned away: the player who must act can always act, however much they typed before. A
move that the service refuses (not your turn, a card not in the hand...) is charged after the fact, and
over the budget a typed move's refusal is left unsaid, so a flood of wrong moves is as quiet as a flood
of /rules. A pressed button's refusal is always said: a press is answered anyway (Telegram's callback
answer, Discord's interaction response), the refusal rides in that answer, and a blank answer would tell
the person that a move which was not made was done.
Asking for one's hand is part of playing (on Discord a player opens it with "My hand" every turn) and is
not counted either; its answer goes only to the asker, and the adapters keep one hand per person.
Commands that adapters send on their own (a renamed group, an unreachable player) and the service's
timers are never counted.

When the store cannot count (Redis down), commands go through: the game matters more than the budget.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import math
from collections.abc import Awaitable, Callable

from bot.commands import MOVE_COMMANDS, SYSTEM_COMMANDS
from bot.i18n import negotiate, translator
from bot.model import Command, Message, Sender
from bot.storage import StorageError, Store

__all__ = ["THROTTLED_KIND", "CommandThrottle", "Verdict"]

log = logging.getLogger("thousand.throttle")

THROTTLED_KIND = "throttled"
"""`Message.kind` of the "slow down" answer: adapters show it only to its sender, privately or
ephemerally, and drop it when they cannot."""

_EXEMPT = frozenset({*SYSTEM_COMMANDS, "timer", "hand"})


class Verdict(enum.Enum):
    ALLOW = "allow"
    WARN = "warn"
    """The first command over the budget in this window: answered with one "slow down"."""
    SILENT = "silent"
    """Over the budget again: no answer at all."""


class CommandThrottle:
    """Counts commands per person and chat in the store. `limit` 0 turns the budget off."""

    def __init__(
        self,
        store: Store,
        *,
        limit: int,
        window: float,
        default_language: str = "en",
        language: Callable[[Command], Awaitable[str]] | None = None,
    ) -> None:
        """`language`: the language to tell a person to slow down in (the service's `language_of`: their
        own choice first); without it, their platform's, else `default_language`."""
        self.store = store
        self.limit = limit
        self.window = window
        self.default_language = default_language
        self._language = language
        self.warned = 0
        self.silenced = 0

    @staticmethod
    def key(command: Command) -> str:
        return f"cmd:{command.chat.key}:{command.user.key}"

    def _counted(self, command: Command) -> bool:
        return self.limit > 0 and command.name not in _EXEMPT and command.user.platform != "timer"

    async def _charge(self, command: Command) -> tuple[Verdict, float]:
        try:
            count, left = await self.store.count_hit(self.key(command), self.window)
        except StorageError:
            log.warning("command budget not counted (store unavailable): %s let through", command.name)
            return Verdict.ALLOW, 0.0
        if count <= self.limit:
            return Verdict.ALLOW, left
        first = count == self.limit + 1
        if first:
            self.warned += 1
        else:
            self.silenced += 1
        log.info(
            "%s over the command budget in %s (%d in %.0f s): %s",
            command.user.key,
            command.chat.key,
            count,
            self.window,
            "told to slow down" if first else "ignored",
            extra={"event": "throttled", "command": command.name},
        )
        return (Verdict.WARN if first else Verdict.SILENT), left

    async def before(self, command: Command) -> list[Message] | None:
        """None: handle the command. Otherwise what to answer instead of handling it (maybe nothing)."""
        if not self._counted(command) or command.name in MOVE_COMMANDS:
            return None
        verdict, left = await self._charge(command)
        if verdict is Verdict.ALLOW:
            return None
        return [await self.slow_down(command, left)] if verdict is Verdict.WARN else []

    async def after(self, command: Command, messages: list[Message]) -> list[Message]:
        """A refused move is charged now; over the budget, a typed move's refusal is not sent (a pressed
        button's is: it answers the press, which is answered anyway)."""
        if not self._counted(command) or command.name not in MOVE_COMMANDS:
            return messages
        refusals = [m for m in messages if m.kind == "error" and isinstance(m.audience, Sender)]
        if not refusals:
            return messages
        verdict, left = await self._charge(command)
        if verdict is Verdict.ALLOW or command.source == "button":
            return messages
        refused = {id(m) for m in refusals}
        kept = [m for m in messages if id(m) not in refused]
        return [await self.slow_down(command, left), *kept] if verdict is Verdict.WARN else kept

    async def slow_down(self, command: Command, seconds_left: float) -> Message:
        lang = negotiate(command.user.language) or self.default_language
        if self._language is not None:
            with contextlib.suppress(StorageError):  # else the platform's language will do
                lang = await self._language(command)
        t = translator(lang)
        n = max(1, math.ceil(seconds_left))
        text = t._(
            "Slow down, please: too many commands. I will answer yours again in {seconds} s "
            "(moves in the game still count)."
        ).format(seconds=n)
        return Message(Sender(command.user, command.chat), text, language=t.lang, kind=THROTTLED_KIND)
