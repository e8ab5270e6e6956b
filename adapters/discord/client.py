"""`ThousandBot`: the discord.py client of the bot (sharded), its command tree and buttons.

Structure as in discord.py's examples: a `Client` with an `app_commands.CommandTree`, the `/thousand`
group added to it, dynamic items registered in `setup_hook` (so buttons sent by any process, before
any restart, are routed by their custom id). The commands are synced only on request (`sync_commands`,
`thousand discord --sync`), never at every start.

Around it is the process's `bot.ops.runtime.Runtime` (service, metered store, metrics, health, timers,
graceful stop): the bot reports its shards to the health checks, closes its gateway first when the
process stops (so no new interaction arrives while the ones in flight finish) and closes its HTTP
session last.

Intents: only GUILDS. Interactions arrive whatever the intents, and the bot reads no messages and no
member lists, so it needs no privileged intent.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import discord
from discord import app_commands

from bot.model import ChatRef, Command, Message, Sender, UserRef
from bot.ops.runtime import Runtime, ShuttingDown

from . import NAME, PLATFORM
from .budget import CHANNEL_LIMIT, CHANNEL_WINDOW, ChannelBudget
from .delivery import Outbox
from .i18n import FAILED, CommandTranslator, labels, language_of
from .interactions import Interactions, Timing, chat_title
from .items import DYNAMIC_ITEMS
from .refs import TOKEN_LIFETIME, Refs
from .tree import build_group
from .weblink import web_link_of

__all__ = ["BotConfig", "ThousandBot"]

log = logging.getLogger("thousand.discord")


@dataclass(frozen=True, slots=True)
class BotConfig:
    """Knobs of the adapter; the defaults are production values (tests shorten the times)."""

    ack_after: float = 1.5
    """Defer an interaction whose service call has not finished after this many seconds."""
    channel_limit: int = CHANNEL_LIMIT
    channel_window: float = CHANNEL_WINDOW
    channel_ttl: float = 7 * 24 * 3600.0
    """How long message references of a channel are kept after their last change."""
    pref_ttl: float = 365 * 24 * 3600.0
    token_lifetime: float = TOKEN_LIFETIME
    members_intent: bool = False
    """Ask for the privileged Server Members intent (enable it in the Developer Portal first): then a
    player who leaves the server is reported to the service (`unreachable`: a computer plays their seat
    until they come back), instead of missing their turns one by one."""


class ThousandBot(discord.AutoShardedClient):
    def __init__(self, runtime: Runtime, *, config: BotConfig | None = None, **options: Any) -> None:
        config = config or BotConfig()
        options.setdefault("intents", discord.Intents(guilds=True, members=config.members_intent))
        options.setdefault("allowed_mentions", discord.AllowedMentions.none())
        options.setdefault("member_cache_flags", discord.MemberCacheFlags.none())
        options.setdefault("chunk_guilds_at_startup", False)
        super().__init__(**options)
        self.config = config
        self.runtime = runtime
        store = runtime.store
        self.refs = Refs(
            store,
            channel_ttl=self.config.channel_ttl,
            pref_ttl=self.config.pref_ttl,
            token_lifetime=self.config.token_lifetime,
        )
        self.budget = ChannelBudget(
            store, runtime.metrics, limit=self.config.channel_limit, window=self.config.channel_window
        )
        self.outbox = Outbox(
            self, self.refs, self.budget, runtime.metrics, web_link=web_link_of(runtime.settings)
        )
        self.buttons = Interactions(
            runtime, self.outbox, self.refs, timing=Timing(ack_after=self.config.ack_after)
        )
        self.tree: app_commands.CommandTree[ThousandBot] = app_commands.CommandTree(self)
        self.tree.add_command(build_group(self.buttons))
        self.tree.error(self._tree_error)
        self._ready_shards: set[int] = set()
        runtime.shutdown.on_stop_intake("discord gateway", self.stop_intake)
        runtime.shutdown.on_flush("discord client", self.close)

    # --- lifecycle ----------------------------------------------------------------------------------

    async def setup_hook(self) -> None:
        await self.tree.set_translator(CommandTranslator())
        self.add_dynamic_items(*DYNAMIC_ITEMS)

    async def _tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        """A command the tree cannot run (registered by an older version, options that changed): answer
        anyway, so that nobody sees "This interaction failed"."""
        log.warning("application command failed: %s", type(error).__name__, exc_info=error)
        self.runtime.metrics.update_handled(NAME, "command", "error")
        if interaction.response.is_done() or interaction.type is discord.InteractionType.autocomplete:
            return
        lang = language_of(interaction.locale) or "en"
        with contextlib.suppress(discord.HTTPException):
            await interaction.response.send_message(labels(lang)._(FAILED), ephemeral=True)

    async def deliver(self, messages: Sequence[Message]) -> None:
        """Send what the timers caused (the runtime's timer loop calls this)."""
        await self.outbox.deliver(messages)

    async def sync_commands(
        self, guild: discord.abc.Snowflake | None = None
    ) -> list[app_commands.AppCommand]:
        """Register the commands with Discord (globally, or in one guild for testing)."""
        if guild is not None:
            self.tree.copy_global_to(guild=guild)
        return await self.tree.sync(guild=guild)

    async def stop_intake(self) -> None:
        """Close every shard's gateway (HTTP stays usable, so the interactions in flight still finish)."""
        for shard in list(self.shards.values()):
            with contextlib.suppress(Exception):
                await shard.disconnect()

    @property
    def idle(self) -> bool:
        """No interaction and no timer firing is being handled (their sends included)."""
        return self.runtime.shutdown.in_flight == 0

    # --- what happens in the guilds ---------------------------------------------------------------

    async def on_guild_channel_update(
        self, before: discord.abc.GuildChannel, after: discord.abc.GuildChannel
    ) -> None:
        """A renamed channel: its table takes the new title (private messages name the game by it)."""
        if before.name != after.name:
            await self.system("title", after.id, chat_title(after))

    async def on_guild_update(self, before: discord.Guild, after: discord.Guild) -> None:
        """A renamed guild: the tables in its channels take the new title."""
        if before.name == after.name:
            return
        for channel in after.text_channels:
            if await self.runtime.store.table_for_chat(f"{PLATFORM}:{channel.id}") is not None:
                await self.system("title", channel.id, chat_title(channel))

    async def on_raw_member_remove(self, payload: discord.RawMemberRemoveEvent) -> None:
        """Someone left the guild (needs the members intent): a computer plays their seats there."""
        user = payload.user
        ref = UserRef(PLATFORM, str(user.id), user.display_name)
        for table_id in sorted(await self.runtime.store.tables_for_user(ref.key)):
            platform, _, chat_id = table_id.partition(":")
            channel = self.get_channel(int(chat_id)) if platform == PLATFORM and chat_id.isdigit() else None
            guild = getattr(channel, "guild", None)
            if channel is not None and guild is not None and guild.id == payload.guild_id:
                await self.system("unreachable", channel.id, chat_title(channel), ref)

    async def system(self, name: str, channel_id: int, title: str, user: UserRef | None = None) -> None:
        """A command the adapter sends on its own (`title`, `unreachable`); its refusals go to nobody."""
        if user is None:
            me = self.user
            user = UserRef(PLATFORM, str(me.id if me is not None else 0), me.name if me is not None else NAME)
        command = Command(name, (), ChatRef(PLATFORM, str(channel_id), title), user)
        try:
            async with self.runtime.update():
                messages = await self.runtime.handle(command, kind="member")
                await self.outbox.deliver([m for m in messages if not isinstance(m.audience, Sender)])
        except ShuttingDown:
            log.info("%s not sent: stopping", name)
        except Exception:
            log.exception("system command %s failed", name)

    # --- readiness ----------------------------------------------------------------------------------

    def _set_health(self) -> None:
        expected = set(self.shard_ids) if self.shard_ids is not None else set(range(self.shard_count or 1))
        missing = expected - self._ready_shards
        detail = f"shards not connected: {sorted(missing)}" if missing else ""
        self.runtime.health.set_connected(NAME, not missing, detail)

    async def on_shard_ready(self, shard_id: int) -> None:
        self._ready_shards.add(shard_id)
        self._set_health()

    async def on_shard_resumed(self, shard_id: int) -> None:
        self._ready_shards.add(shard_id)
        self._set_health()

    async def on_shard_disconnect(self, shard_id: int) -> None:
        self._ready_shards.discard(shard_id)
        self._set_health()
