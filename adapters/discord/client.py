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

from bot.model import Message
from bot.ops.runtime import Runtime

from . import NAME
from .budget import CHANNEL_LIMIT, CHANNEL_WINDOW, ChannelBudget
from .delivery import Outbox
from .i18n import CommandTranslator
from .interactions import Interactions, Timing
from .items import DYNAMIC_ITEMS
from .refs import TOKEN_LIFETIME, Refs
from .tree import build_group

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


class ThousandBot(discord.AutoShardedClient):
    def __init__(self, runtime: Runtime, *, config: BotConfig | None = None, **options: Any) -> None:
        options.setdefault("intents", discord.Intents(guilds=True))
        options.setdefault("allowed_mentions", discord.AllowedMentions.none())
        options.setdefault("member_cache_flags", discord.MemberCacheFlags.none())
        options.setdefault("chunk_guilds_at_startup", False)
        super().__init__(**options)
        self.config = config or BotConfig()
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
        self.outbox = Outbox(self, self.refs, self.budget, runtime.metrics)
        self.buttons = Interactions(
            runtime, self.outbox, self.refs, timing=Timing(ack_after=self.config.ack_after)
        )
        self.tree: app_commands.CommandTree[ThousandBot] = app_commands.CommandTree(self)
        self.tree.add_command(build_group(self.buttons))
        self._ready_shards: set[int] = set()
        runtime.shutdown.on_stop_intake("discord gateway", self.stop_intake)
        runtime.shutdown.on_flush("discord client", self.close)

    # --- lifecycle ----------------------------------------------------------------------------------

    async def setup_hook(self) -> None:
        await self.tree.set_translator(CommandTranslator())
        self.add_dynamic_items(*DYNAMIC_ITEMS)

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
