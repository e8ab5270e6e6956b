"""Interactions in, neutral commands to the service, answers out, always within Discord's 3 seconds.

Every slash command and button press runs the same way: build the `Command`, start the service call,
and if it has not finished after `ack_after` seconds (computer players thinking, a slow store), defer
(a silent deferral for buttons, "thinking" for commands) so Discord never shows "This interaction
failed"; then hand the messages to the `Outbox`, which answers the interaction first. An unexpected
error still answers, with a short apology.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import discord

from bot.commands import from_payload
from bot.model import ChatRef, Command, Message, Sender, UserRef
from bot.ops.logs import log_context
from bot.ops.metrics import Metrics
from bot.ops.shutdown import GracefulShutdown, ShuttingDown
from bot.service import Service

from . import PLATFORM
from . import i18n as L
from .content import Body
from .delivery import Outbox
from .refs import Refs
from .reply import Kind, Reply
from .suggest import Choice, Suggest, setting_names, setting_values

__all__ = ["Interactions", "chat_of", "user_of"]

log = logging.getLogger("thousand.discord")

T = TypeVar("T")


def chat_of(interaction: discord.Interaction) -> ChatRef:
    """The chat of an interaction: its channel (a guild channel or thread, or the DM with the bot)."""
    channel = interaction.channel
    channel_id = interaction.channel_id or 0
    private = interaction.guild_id is None
    title = getattr(channel, "name", None) or ""
    return ChatRef(PLATFORM, str(channel_id), title if isinstance(title, str) else "", private)


def user_of(interaction: discord.Interaction) -> UserRef:
    """The user, with Manage Server as the admin right (None in DMs, where there is nobody to manage)."""
    user = interaction.user
    admin: bool | None = None
    if interaction.guild_id is not None:
        perms = interaction.permissions
        admin = bool(perms.manage_guild or perms.administrator)
    return UserRef(PLATFORM, str(user.id), user.display_name, str(interaction.locale.value), admin)


@dataclass(frozen=True, slots=True)
class Timing:
    ack_after: float = 1.5
    """Seconds to wait for the service before deferring (Discord's deadline is 3 s from the event)."""
    suggest_timeout: float = 2.0
    """Autocomplete answers within this, with what it has."""


class Interactions:
    """Implements the slash commands, the buttons (`items.ButtonHandler`) and autocomplete."""

    def __init__(
        self,
        service: Service,
        outbox: Outbox,
        refs: Refs,
        *,
        metrics: Metrics | None = None,
        shutdown: GracefulShutdown | None = None,
        timing: Timing | None = None,
    ) -> None:
        self.service = service
        self.outbox = outbox
        self.refs = refs
        self.metrics = metrics
        self.shutdown = shutdown
        self.timing = timing or Timing()
        self.suggest = Suggest(service)
        self.active = 0
        """Interactions being handled right now (answered or not: their sends may still run)."""

    # --- entry points -------------------------------------------------------------------------------

    async def slash(self, interaction: discord.Interaction, name: str, args: tuple[str, ...] = ()) -> None:
        await self._run(
            interaction, "command", lambda: Command(name, args, chat_of(interaction), user_of(interaction))
        )

    async def on_payload(self, interaction: discord.Interaction, payload: str) -> None:
        await self._run(
            interaction,
            "component",
            lambda: from_payload(payload, chat_of(interaction), user_of(interaction)),
        )

    async def on_hand(self, interaction: discord.Interaction, table_id: str) -> None:
        def command() -> Command:
            chat = chat_of(interaction)
            # The button names its table; in the table's channel that is the chat's own table.
            return Command("hand", (), chat, user_of(interaction))

        del table_id  # the channel's table is the one: a table id is per channel
        await self._run(interaction, "component", command)

    async def on_mode(self, interaction: discord.Interaction, dm: bool) -> None:
        """Switch hand delivery; switching to DMs sends the hand there at once."""
        lang = L.language_of(interaction.locale) or "en"
        await self.refs.set_wants_dm(interaction.user.id, dm)
        note = Body(content=L.labels(lang)._(L.DM_ON if dm else L.DM_OFF))
        if not dm or interaction.guild_id is None:
            reply = Reply(interaction, "component")
            try:
                if interaction.guild_id is None:
                    await reply.send_ephemeral(note)
                else:
                    await reply.update(note)
            finally:
                await reply.finish(note.content or "")
            return

        async def answer_first(reply: Reply) -> None:
            await reply.update(note)

        await self._run(
            interaction,
            "component",
            lambda: Command("hand", (), chat_of(interaction), user_of(interaction)),
            before=answer_first,
        )

    async def hand(self, interaction: discord.Interaction, dm: bool | None) -> None:
        """`/thousand hand [dm]`: the hand, after switching where it goes when asked to."""
        if dm is not None:
            await self.refs.set_wants_dm(interaction.user.id, dm)
        await self.slash(interaction, "hand")

    # --- autocomplete -------------------------------------------------------------------------------

    async def card_choices(self, interaction: discord.Interaction, current: str) -> list[Choice]:
        chat, user = chat_of(interaction), user_of(interaction)
        return await self._suggest(self.suggest.cards(chat.key, user.key, current))

    async def bid_choices(self, interaction: discord.Interaction, current: str) -> list[int]:
        chat, user = chat_of(interaction), user_of(interaction)
        return await self._suggest(self.suggest.bids(chat.key, user.key, current))

    async def option_choices(self, interaction: discord.Interaction, current: str) -> list[Choice]:
        return setting_names(current)

    async def value_choices(self, interaction: discord.Interaction, current: str) -> list[Choice]:
        option = getattr(interaction.namespace, "option", None)
        return setting_values(option if isinstance(option, str) else "", current)

    async def _suggest(self, work: Awaitable[list[T]]) -> list[T]:
        try:
            result = await asyncio.wait_for(work, self.timing.suggest_timeout)
        except Exception:
            log.warning("autocomplete failed", exc_info=True)
            result = []
        if self.metrics is not None:
            self.metrics.update_handled(PLATFORM, "autocomplete", "ok" if result else "empty")
        return result

    # --- the common path ----------------------------------------------------------------------------

    async def _run(
        self,
        interaction: discord.Interaction,
        kind: Kind,
        make: Callable[[], Command],
        *,
        before: Callable[[Reply], object] | None = None,
    ) -> None:
        reply = Reply(interaction, kind)
        outcome = "ok"
        lang = L.language_of(interaction.locale) or "en"
        self.active += 1
        try:
            async with self._intake():
                command = make()
                with (
                    self._in_flight(),
                    log_context(
                        platform=PLATFORM,
                        chat_id=command.chat.chat_id,
                        user_id=command.user.user_id,
                        shard_id=_shard(interaction),
                    ),
                ):
                    if before is not None:
                        first = before(reply)
                        if asyncio.iscoroutine(first):
                            await first
                    messages = await self._call(command, reply)
                    if any(m.kind == "error" and isinstance(m.audience, Sender) for m in messages):
                        outcome = "refused"
                    await self.outbox.deliver(messages, reply)
        except ShuttingDown:
            outcome = "unavailable"
            await self._apologize(reply, L.labels(lang)._(L.RESTARTING))
        except Exception:
            outcome = "error"
            log.exception("interaction failed")
            await self._apologize(reply, L.labels(lang)._(L.FAILED))
        finally:
            self.active -= 1
            if self.metrics is not None:
                self.metrics.update_handled(PLATFORM, "button" if kind == "component" else "command", outcome)

    async def _call(self, command: Command, reply: Reply) -> list[Message]:
        """The service call, deferring the interaction when it runs past `ack_after`."""
        start = time.perf_counter()
        task = asyncio.ensure_future(self.service.handle(command))
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timing.ack_after)
            if not done:
                await reply.defer()
            messages = await task
        finally:
            if not task.done():
                task.cancel()
        if self.metrics is not None:
            refused = any(m.kind == "error" for m in messages if isinstance(m.audience, Sender))
            self.metrics.command_handled(
                command.name, "refused" if refused else "ok", time.perf_counter() - start
            )
        return messages

    async def _apologize(self, reply: Reply, text: str) -> None:
        try:
            if not reply.answered or reply.thinking:
                await reply.send_ephemeral(Body(content=text))
            else:
                await reply.finish(text)
        except discord.HTTPException:
            log.warning("could not answer an interaction after an error", exc_info=True)

    def _intake(self) -> _Intake:
        return _Intake(self.shutdown)

    def _in_flight(self) -> _InFlight:
        return _InFlight(self.metrics)


def _shard(interaction: discord.Interaction) -> int | None:
    guild_id = interaction.guild_id
    client = interaction.client
    count = client.shard_count
    if guild_id is None or not count:
        return None
    return (guild_id >> 22) % count


class _Intake:
    """`GracefulShutdown.update()` when there is one, else nothing."""

    def __init__(self, shutdown: GracefulShutdown | None) -> None:
        self._cm = shutdown.update() if shutdown is not None else None

    async def __aenter__(self) -> None:
        if self._cm is not None:
            await self._cm.__aenter__()

    async def __aexit__(self, *exc: object) -> None:
        if self._cm is not None:
            await self._cm.__aexit__(None, None, None)


class _InFlight:
    def __init__(self, metrics: Metrics | None) -> None:
        self._metrics = metrics

    def __enter__(self) -> None:
        if self._metrics is not None:
            self._metrics.in_flight.inc()

    def __exit__(self, *exc: object) -> None:
        if self._metrics is not None:
            self._metrics.in_flight.dec()
