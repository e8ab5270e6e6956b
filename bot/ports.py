"""What the service and the command handlers need of each other, so neither imports the other.

`Service` satisfies `TableService`; `bot.handlers.Handlers` satisfies `CommandHandlers` and is handed to
the service where it is built (`Service(store, settings, handlers=Handlers)`).
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.context import Context
from bot.gameflow import GameFlow
from bot.matchmaking.ladder_store import LadderStore
from bot.model import Command, Message
from bot.settings import Settings
from bot.storage import Store
from bot.table import ChatSettings

__all__ = ["CommandHandlers", "Handler", "HandlersFactory", "TableService"]

Handler = Callable[[Context], Awaitable[None]]
"""One step on a loaded table, run between the load and the compare-and-set."""


class TableService(Protocol):
    """The service as the handlers see it: storage, settings, the game flow, and running a step on
    another table (a language chosen in a private chat reaches the user's seats in groups)."""

    @property
    def store(self) -> Store: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def flow(self) -> GameFlow: ...

    @property
    def ladder(self) -> LadderStore | None:
        """The public ladder, where this process keeps public tables (else None)."""

    async def chat_settings(self, chat_key: str) -> tuple[int, ChatSettings]: ...

    async def save_chat_settings(self, chat_key: str, version: int, settings: ChatSettings) -> None: ...

    async def touch_chat_settings(self, chat_key: str) -> None: ...

    async def run(self, table_id: str, command: Command, handler: Handler) -> list[Message]: ...


class CommandHandlers(Protocol):
    """The handlers as the service sees them: one per command name, and the three the timers fire."""

    def for_command(self, name: str) -> Handler: ...

    async def close_idle_lobby(self, ctx: Context) -> None: ...

    async def turn_missed(self, ctx: Context) -> None: ...

    async def turn_warning(self, ctx: Context) -> None: ...


HandlersFactory = Callable[[TableService, random.Random], CommandHandlers]
"""Builds the handlers for a service (with the random source that seeds its games)."""
