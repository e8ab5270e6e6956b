"""`ThousandBot`: the discord.py client of the bot (sharded), its command tree, buttons and timer loop.

Structure as in discord.py's examples: a `Client` with an `app_commands.CommandTree`, the `/thousand`
group added to it, dynamic items registered in `setup_hook` (so buttons sent by any process, before
any restart, are routed by their custom id). The commands are synced only on request (`sync_commands`,
`thousand discord --sync`), never at every start.

Intents: only GUILDS. Interactions arrive whatever the intents, and the bot reads no messages and no
member lists, so it needs no privileged intent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any

import discord
from discord import app_commands

from bot.ops.health import Health
from bot.ops.metrics import Metrics
from bot.ops.shutdown import GracefulShutdown, ShuttingDown
from bot.service import Service
from bot.storage import Store

from . import PLATFORM
from .budget import CHANNEL_LIMIT, CHANNEL_WINDOW, ChannelBudget
from .delivery import Outbox
from .i18n import CommandTranslator
from .interactions import Interactions, Timing
from .items import DYNAMIC_ITEMS
from .refs import TOKEN_LIFETIME, Refs
from .tree import build_group

__all__ = ["BotConfig", "ThousandBot"]

log = logging.getLogger("thousand.discord")

HEALTH_COMPONENT = PLATFORM


@dataclass(frozen=True, slots=True)
class BotConfig:
    """Knobs of the adapter; the defaults are production values (tests shorten the times)."""

    ack_after: float = 1.5
    tick_interval: float = 1.0
    """Longest sleep of the timer loop between two looks at the deadlines."""
    channel_limit: int = CHANNEL_LIMIT
    channel_window: float = CHANNEL_WINDOW
    channel_ttl: float = 7 * 24 * 3600.0
    pref_ttl: float = 365 * 24 * 3600.0
    token_lifetime: float = TOKEN_LIFETIME
    timers: bool = True


class ThousandBot(discord.AutoShardedClient):
    def __init__(
        self,
        service: Service,
        store: Store,
        *,
        config: BotConfig | None = None,
        metrics: Metrics | None = None,
        health: Health | None = None,
        shutdown: GracefulShutdown | None = None,
        **options: Any,
    ) -> None:
        options.setdefault("intents", discord.Intents(guilds=True))
        options.setdefault("allowed_mentions", discord.AllowedMentions.none())
        options.setdefault("member_cache_flags", discord.MemberCacheFlags.none())
        options.setdefault("chunk_guilds_at_startup", False)
        super().__init__(**options)
        self.config = config or BotConfig()
        self.service = service
        self.store = store
        self.metrics = metrics
        self.health = health
        self.shutdown = shutdown
        self.refs = Refs(
            store,
            channel_ttl=self.config.channel_ttl,
            pref_ttl=self.config.pref_ttl,
            token_lifetime=self.config.token_lifetime,
        )
        self.budget = ChannelBudget(
            store, metrics, limit=self.config.channel_limit, window=self.config.channel_window
        )
        self.outbox = Outbox(self, self.refs, self.budget, metrics)
        self.buttons = Interactions(
            service,
            self.outbox,
            self.refs,
            metrics=metrics,
            shutdown=shutdown,
            timing=Timing(ack_after=self.config.ack_after),
        )
        self.tree: app_commands.CommandTree[ThousandBot] = app_commands.CommandTree(self)
        self.tree.add_command(build_group(self.buttons))
        self._timer_task: asyncio.Task[None] | None = None
        self._ticking = False
        self._ready_shards: set[int] = set()
        if health is not None:
            health.add_component(HEALTH_COMPONENT)

    # --- lifecycle ----------------------------------------------------------------------------------

    async def setup_hook(self) -> None:
        await self.tree.set_translator(CommandTranslator())
        self.add_dynamic_items(*DYNAMIC_ITEMS)
        if self.config.timers:
            self._timer_task = asyncio.create_task(self._timers(), name="thousand-discord-timers")

    async def sync_commands(
        self, guild: discord.abc.Snowflake | None = None
    ) -> list[app_commands.AppCommand]:
        """Register the commands with Discord (globally, or in one guild for testing)."""
        if guild is not None:
            self.tree.copy_global_to(guild=guild)
        return await self.tree.sync(guild=guild)

    async def stop_intake(self) -> None:
        """Stop taking work: the timer loop ends and every shard's gateway closes (HTTP stays usable, so
        the updates in flight still finish)."""
        await self.stop_timers()
        for shard in list(self.shards.values()):
            with contextlib.suppress(Exception):
                await shard.disconnect()

    async def stop_timers(self) -> None:
        task, self._timer_task = self._timer_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def close(self) -> None:
        await self.stop_timers()
        await super().close()

    # --- readiness ----------------------------------------------------------------------------------

    def _set_health(self) -> None:
        if self.health is None:
            return
        expected = set(self.shard_ids) if self.shard_ids is not None else set(range(self.shard_count or 1))
        missing = expected - self._ready_shards
        detail = f"shards not connected: {sorted(missing)}" if missing else ""
        self.health.set_connected(HEALTH_COMPONENT, not missing, detail)

    async def on_shard_ready(self, shard_id: int) -> None:
        self._ready_shards.add(shard_id)
        self._set_health()

    async def on_shard_resumed(self, shard_id: int) -> None:
        self._ready_shards.add(shard_id)
        self._set_health()

    async def on_shard_disconnect(self, shard_id: int) -> None:
        self._ready_shards.discard(shard_id)
        self._set_health()

    # --- timers -------------------------------------------------------------------------------------

    async def _timers(self) -> None:
        """Fire due turn deadlines (any process may; each fires once) and deliver what they cause."""
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("timer tick failed")
            await asyncio.sleep(await self._sleep_time())

    @property
    def idle(self) -> bool:
        """No interaction or timer firing is being handled (their sends included)."""
        return self.buttons.active == 0 and not self._ticking

    async def tick(self) -> None:
        self._ticking = True
        try:
            await self._tick()
        finally:
            self._ticking = False

    async def _tick(self) -> None:
        messages = await self.service.tick()
        if not messages:
            return
        if self.shutdown is None:
            await self.outbox.deliver(messages)
            return
        try:
            async with self.shutdown.update():
                await self.outbox.deliver(messages)
        except ShuttingDown:
            await self.outbox.deliver(messages)

    async def _sleep_time(self) -> float:
        try:
            when = await self.service.next_wakeup()
        except Exception:
            return self.config.tick_interval
        if when is None:
            return self.config.tick_interval
        return max(0.02, min(self.config.tick_interval, when - time.time()))
