"""What each command does to a table. Each handler checks who may do it, then changes the table.

Handlers run inside `Service.run` (load → handler → compare-and-set); they raise `Refusal` for
anything not allowed or malformed, and only change `ctx.doc` / `ctx.state` when the command is valid,
so a refused command never stores anything. They are grouped by concern (`lobby`, `moves`,
`management`, `information`, with the shared checks in `base`) and combined here into one registry.
They know the service only through `bot.ports.TableService`.
"""

from __future__ import annotations

import random

from bot.commands import COMMANDS, MOVE_COMMANDS, QUEUE_COMMANDS, SAFETY_COMMANDS
from bot.context import Context
from bot.handlers import rights
from bot.handlers.lobby import LobbyHandlers
from bot.handlers.management import ManagementHandlers
from bot.handlers.moves import MoveHandlers
from bot.handlers.public import PublicHandlers
from bot.ports import Handler, TableService

__all__ = ["Handlers"]


class Handlers(LobbyHandlers, MoveHandlers, ManagementHandlers, PublicHandlers):
    """The registry: each command name's handler (`for_command`), and the timers' handlers."""

    def __init__(self, svc: TableService, rng: random.Random) -> None:
        super().__init__(svc, rng)
        self.flow.on_won = self.record_stats
        self._table: dict[str, Handler] = {
            "new": self.new,
            "join": self.join,
            "leave": self.leave,
            "add_ai": self.add_ai,
            "remove_ai": self.remove_ai,
            "start": self.start,
            "again": self.again,
            "hand": self.hand,
            "table": self.show_table,
            "score": self.score,
            "rules": self.rules,
            "set": self.set,
            "lang": self.lang,
            "kick": self.kick,
            "back": self.back,
            "end": self.end,
            "export": self.export,
            "review": self.review,
            "stats": self.stats,
            "top": self.top,
            "title": self.title,
            "unreachable": self.unreachable,
            "say": self.say,
        }
        for name in MOVE_COMMANDS:
            self._table[name] = self._move_handler(name)
        # The queue's commands are about the sender, not a table: `bot.handlers.queue.QueueDesk`.
        elsewhere = {"help"} | QUEUE_COMMANDS | SAFETY_COMMANDS
        missing = set(COMMANDS) - set(self._table) - elsewhere
        assert not missing, missing

    def for_command(self, name: str) -> Handler:
        """The command's handler, behind the check every command passes first: who may reach the table
        from the chat the command came from (`rights.check_reach`)."""
        handler = self._table[name]

        async def checked(ctx: Context) -> None:
            rights.check_reach(ctx)
            await handler(ctx)

        return checked
