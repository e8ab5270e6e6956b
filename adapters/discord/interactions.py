"""Interactions in, neutral commands to the service, answers out, always within Discord's 3 seconds.

Every slash command and button press runs the same way, inside `Runtime.update()` (so a stopping process
finishes it): build the `Command`, start the service call (`Runtime.handle`: counted, timed, logged),
and if it has not finished after `ack_after` seconds (computer players thinking, a slow store), defer
(a silent deferral for buttons, "thinking" for commands) so Discord never shows "This interaction
failed"; then hand the messages to the `Outbox`, which answers the interaction first. An unexpected
error still answers, with a short apology.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TypeVar

import discord

from bot.commands import from_payload
from bot.model import ChatRef, Command, Message, Private, UserRef
from bot.ops.logs import log_context
from bot.ops.runtime import Runtime, ShuttingDown
from bot.render_queue import QUEUE_KEY

from . import NAME, PLATFORM
from . import i18n as L
from .content import Body, render
from .delivery import ANSWER_BY, Outbox
from .refs import Refs
from .reply import Kind, Reply
from .suggest import Choice, Suggest, setting_names, setting_values

__all__ = ["Interactions", "chat_of", "chat_title", "user_of"]

log = logging.getLogger("thousand.discord")

T = TypeVar("T")

Screen = Callable[["Reply", list[Message]], Awaitable[list[Message] | None]]
"""Looks at a command's messages before they are delivered: the ones to deliver, or None for none."""

LANGUAGE_TIMEOUT = 0.5
"""Seconds the adapter waits for a person's language before falling back to their Discord locale."""


def chat_title(channel: object) -> str:
    """How private messages name a channel's table: `Card room · #thousand` (the guild and the channel)."""
    name = getattr(channel, "name", None)
    if not isinstance(name, str) or not name:
        return ""
    guild = getattr(channel, "guild", None)
    guild_name = getattr(guild, "name", None)
    return f"{guild_name} · #{name}" if isinstance(guild_name, str) and guild_name else f"#{name}"


def chat_of(interaction: discord.Interaction) -> ChatRef:
    """The chat of an interaction: its channel (a guild channel or thread, or the DM with the bot)."""
    channel_id = interaction.channel_id or 0
    private = interaction.guild_id is None
    title = "" if private else chat_title(interaction.channel)
    return ChatRef(PLATFORM, str(channel_id), title, private)


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
        runtime: Runtime,
        outbox: Outbox,
        refs: Refs,
        *,
        timing: Timing | None = None,
    ) -> None:
        self.runtime = runtime
        self.outbox = outbox
        self.refs = refs
        self.timing = timing or Timing()
        self.suggest = Suggest(runtime.service)

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
        """My hand: the presser's hand at the table of this channel (the button's table: one per channel)."""
        del table_id
        await self._run(
            interaction, "component", lambda: Command("hand", (), chat_of(interaction), user_of(interaction))
        )

    async def on_mode(self, interaction: discord.Interaction, dm: bool) -> None:
        """Switch hand delivery; switching to DMs sends the hand there at once."""
        lang = await self._language(interaction)
        note = Body(content=L.labels(lang)._(L.DM_ON if dm else L.DM_OFF))

        async def switch(reply: Reply) -> None:
            await self.refs.set_wants_dm(interaction.user.id, dm)
            pressed = interaction.message
            if interaction.guild_id is not None and pressed is not None and pressed.flags.ephemeral:
                await reply.update(note)  # the switch is on the presser's own ephemeral hand
            else:
                # In a DM, or a forged m| press on a channel message (the table): the note is the
                # presser's alone and the pressed message stays as it is.
                await reply.send_ephemeral(note)

        if not dm or interaction.guild_id is None:
            await self._run(interaction, "component", None, before=switch)
            return
        await self._run(
            interaction,
            "component",
            lambda: Command("hand", (), chat_of(interaction), user_of(interaction)),
            before=switch,
        )

    async def direct(self, interaction: discord.Interaction, name: str, args: tuple[str, ...] = ()) -> None:
        """A command about the person rather than a channel's table: the queue (`queue`, `cancel`), a
        public table's phrase, block, unblock and report. Given in a guild channel too, it runs as from
        the person's DM with the bot (their private chat, where the status, the public table and its
        hand come) and is answered ephemerally.

        `queue`: the new status message is sent by DM before anything else; when the person cannot be
        sent DMs they are taken out of the queue at once and told why (a public game is played in DMs).
        Otherwise the answer shows the status, without its buttons, and says that it lives in the DM.
        The person's rights in the guild channel mean nothing in their DM: the command carries none."""
        user = replace(user_of(interaction), is_admin=None)
        chat: list[ChatRef] = []

        async def make() -> Command:
            chat.append(await self._dm_chat(interaction))
            return Command(name, args, chat[0], user)

        async def screen(reply: Reply, messages: list[Message]) -> list[Message] | None:
            status = next(
                (
                    m
                    for m in messages
                    if m.key == QUEUE_KEY
                    and m.notify
                    and isinstance(m.audience, Private)
                    and m.audience.user.key == user.key
                ),
                None,
            )
            if name != "queue" or status is None:
                return messages
            lab = L.labels(status.language)
            watchdog = asyncio.create_task(reply.defer_by(ANSWER_BY))
            try:
                sent = await self.outbox.direct.send(status)
            except discord.HTTPException:
                log.warning("the queue's status could not be sent by DM", exc_info=True)
                sent = False
            finally:
                watchdog.cancel()
            if not sent:
                await self.runtime.handle(Command("cancel", (), chat[0], user))
                log.info("not queued: DMs closed", extra={"event": "queue_dm_closed"})
                await reply.send_ephemeral(Body(content=lab._(L.QUEUE_NEEDS_DM)))
                return None
            shown = render(replace(status, buttons=()), in_place=True)
            text = "\n\n".join(t for t in (shown.content or "", lab._(L.QUEUE_BY_DM)) if t)
            await reply.send_ephemeral(Body(content=text))
            return [m for m in messages if m is not status]

        await self._run(interaction, "command", make, screen=screen)

    async def note(self, interaction: discord.Interaction, text: str) -> None:
        """Answer with one of the adapter's own notes (a msgid of `i18n`), in the person's language."""

        async def say(reply: Reply) -> None:
            await reply.send_ephemeral(Body(content=L.labels(await self._language(interaction))._(text)))

        await self._run(interaction, "command", None, before=say)

    async def _dm_chat(self, interaction: discord.Interaction) -> ChatRef:
        """The person's private chat with the bot: the DM the interaction came from, else their DM channel
        (created if needed; discord.py keeps it once known)."""
        if interaction.guild_id is None and interaction.channel_id is not None:
            return ChatRef(PLATFORM, str(interaction.channel_id), "", True)
        channel = await interaction.user.create_dm()
        return ChatRef(PLATFORM, str(channel.id), "", True)

    async def hand(self, interaction: discord.Interaction, dm: bool | None) -> None:
        """`/thousand hand [dm]`: the hand, after switching where it goes when asked to."""

        async def switch(reply: Reply) -> None:
            if dm is not None:
                await self.refs.set_wants_dm(interaction.user.id, dm)

        await self._run(
            interaction,
            "command",
            lambda: Command("hand", (), chat_of(interaction), user_of(interaction)),
            before=switch,
        )

    # --- autocomplete -------------------------------------------------------------------------------

    async def card_choices(self, interaction: discord.Interaction, current: str) -> list[Choice]:
        chat, user = chat_of(interaction), user_of(interaction)
        return await self._suggest(self.suggest.cards(chat.key, user.key, current))

    async def bid_choices(self, interaction: discord.Interaction, current: str) -> list[int]:
        chat, user = chat_of(interaction), user_of(interaction)
        return await self._suggest(self.suggest.bids(chat.key, user.key, current))

    async def contract_choices(self, interaction: discord.Interaction, current: str) -> list[int]:
        chat, user = chat_of(interaction), user_of(interaction)
        return await self._suggest(self.suggest.contracts(chat.key, user.key, current))

    async def option_choices(self, interaction: discord.Interaction, current: str) -> list[Choice]:
        return setting_names(current)

    async def value_choices(self, interaction: discord.Interaction, current: str) -> list[Choice]:
        option = getattr(interaction.namespace, "option", None)
        return setting_values(option if isinstance(option, str) else "", current)

    async def _suggest(self, work: Awaitable[list[T]]) -> list[T]:
        try:
            result = await asyncio.wait_for(work, self.timing.suggest_timeout)
            outcome = "ok"
        except Exception:
            log.warning("autocomplete failed", exc_info=True)
            result, outcome = [], "error"
        self.runtime.metrics.update_handled(NAME, "autocomplete", outcome)
        return result

    # --- the common path ----------------------------------------------------------------------------

    async def _run(
        self,
        interaction: discord.Interaction,
        kind: Kind,
        make: Callable[[], Command | Awaitable[Command]] | None,
        *,
        before: Callable[[Reply], Awaitable[None]] | None = None,
        screen: Screen | None = None,
    ) -> None:
        """One interaction: `before` (answers that need no service call), then the command's service call
        and its messages. Counted and timed by the runtime (`Runtime.handle`)."""
        reply = Reply(interaction, kind)
        lang = L.language_of(interaction.locale) or "en"
        label = "button" if kind == "component" else "command"
        try:
            async with self.runtime.update():
                with log_context(
                    platform=NAME,
                    chat_id=str(interaction.channel_id or ""),
                    user_id=str(interaction.user.id),
                    shard_id=_shard(interaction),
                    private=interaction.guild_id is None,
                ):
                    if before is not None:
                        await before(reply)
                    if make is None:
                        self.runtime.metrics.update_handled(NAME, label, "ok")
                        return
                    made = make()
                    command = made if isinstance(made, Command) else await made
                    messages: list[Message] | None = await self._call(command, reply, label)
                    if screen is not None and messages is not None:
                        messages = await screen(reply, messages)
                    if messages is not None:
                        await self.outbox.deliver(messages, reply)
        except ShuttingDown:
            self.runtime.metrics.update_handled(NAME, label, "unavailable")
            await self._apologize(reply, L.labels(lang)._(L.RESTARTING))
        except Exception:
            log.exception("interaction failed")
            self.runtime.metrics.update_handled(NAME, label, "error")
            await self._apologize(reply, L.labels(lang)._(L.FAILED))
        finally:
            if not reply.responded:
                # Never leave an interaction unanswered ("This interaction failed").
                with contextlib.suppress(discord.HTTPException):
                    await reply.finish(L.labels(await self._language(interaction))._(L.DONE))

    async def _language(self, interaction: discord.Interaction) -> str:
        """The person's language for the adapter's own notes to them: their `lang` choice, else Discord's
        locale (`Service.language_of`); the locale alone when the store does not answer at once. (The
        apologies for a restart or an error use the locale only: the store may be what failed.)"""
        fallback = L.language_of(interaction.locale) or "en"
        try:
            found = self.runtime.language_of(user_of(interaction), chat_of(interaction).key)
            return await asyncio.wait_for(found, LANGUAGE_TIMEOUT)
        except Exception:
            log.info("no language from the store for %s", interaction.user.id, exc_info=True)
            return fallback

    async def _call(self, command: Command, reply: Reply, label: str) -> list[Message]:
        """The service call, deferring the interaction when it runs past `ack_after`."""
        task = asyncio.ensure_future(self.runtime.handle(command, kind=label))
        try:
            done, _ = await asyncio.wait({task}, timeout=self.timing.ack_after)
            if not done:
                await reply.defer()
            return await task
        finally:
            if not task.done():
                task.cancel()

    async def _apologize(self, reply: Reply, text: str) -> None:
        try:
            if not reply.answered or reply.thinking:
                await reply.send_ephemeral(Body(content=text))
            else:
                await reply.finish(text)
        except discord.HTTPException:
            log.warning("could not answer an interaction after an error", exc_info=True)


def _shard(interaction: discord.Interaction) -> int | None:
    guild_id = interaction.guild_id
    count = interaction.client.shard_count
    if guild_id is None or not count:
        return None
    return (guild_id >> 22) % count
