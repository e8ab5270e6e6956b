"""`thousand discord`: one bot process (some or all shards), or `--sync` to register the commands.

    thousand discord                          # all shards Discord recommends, in this process
    thousand discord --shards 4 --shard-ids 0,1   # this process runs shards 0 and 1 of 4
    thousand discord --sync                   # register /thousand with Discord, then exit

Several processes share one Redis (`REDIS_URL`): a guild's interactions always reach the process that
runs its shard, and everything a process remembers (message ids, tokens, preferences, send budgets,
turn deadlines) is in Redis, so any of them may fire a timer or edit what another one sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import discord

from bot.model import Message
from bot.ops.config import shard_ids as parse_shard_ids
from bot.ops.runtime import Runtime, prepare
from bot.ops.shutdown import ShutdownReport
from bot.public.process import ProcessPublic
from bot.settings import Settings

from . import NAME, handover
from .client import BotConfig, ThousandBot

__all__ = ["DiscordProcess", "ShardPlan", "main", "shard_plan"]

log = logging.getLogger("thousand.discord")


@dataclass(frozen=True, slots=True)
class ShardPlan:
    """How many shards the bot has and which of them this process runs (None: Discord decides / all)."""

    count: int | None = None
    ids: tuple[int, ...] | None = None


def shard_plan(settings: Settings, shards: int | None, shard_ids: str | None) -> ShardPlan:
    """The command line's `--shards`/`--shard-ids`, else DISCORD_SHARD_COUNT/DISCORD_SHARD_IDS.

    Raises ValueError with a one-line reason (ids without a count, an id beyond the count...)."""
    count = shards if shards is not None else settings.discord_shard_count
    text = shard_ids if shard_ids is not None else settings.discord_shard_ids
    if count is not None and count < 1:
        raise ValueError("the shard count must be at least 1")
    ids = parse_shard_ids(text, count)
    return ShardPlan(count, ids)


class DiscordProcess:
    """The runtime and the bot of one process. `run()` until SIGTERM; `sync()` registers the commands."""

    def __init__(
        self,
        settings: Settings,
        plan: ShardPlan | None = None,
        *,
        config: BotConfig | None = None,
        runtime: Runtime | None = None,
        **client_options: Any,
    ) -> None:
        token = settings.discord_token
        if token is None:
            raise ValueError("DISCORD_TOKEN is not set")
        self.token = token.get_secret_value()
        self.settings = settings
        self.plan = plan or ShardPlan()
        # relay="dc": with Redis, a public table's messages for people of other platforms are handed over
        # to their processes, and theirs for Discord people come here (bot.relay).
        self.runtime = runtime or Runtime(settings, platform=NAME, relay="dc")
        if self.plan.count is not None:
            client_options.setdefault("shard_count", self.plan.count)
        if self.plan.ids is not None:
            client_options.setdefault("shard_ids", list(self.plan.ids))
        self.bot = ThousandBot(self.runtime, config=config, **client_options)
        self.public: ProcessPublic | None = None
        self._public_started = False

    async def run(self, *, signals: bool = True) -> ShutdownReport:
        """Connect and serve until the process is asked to stop (or the gateway fails for good)."""
        await self.runtime.start(deliver=self.bot.deliver, signals=signals)
        # After the runtime's start: its flush hook must run before the store closes (newest first).
        handover.install(self.bot).start()
        # Public tables: /thousand play, the matcher, the queue's status messages (by DM). Started once the
        # client is ready (it sends the DMs, and the heartbeat says Discord people can be seated); stopped
        # with the intake.
        public = self.public = ProcessPublic(self.runtime, self.bot.deliver, "dc")
        starting = asyncio.create_task(self._start_public(public), name="discord-public")

        async def stop_public() -> None:
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            if self._public_started:
                await public.stop()

        self.runtime.shutdown.on_stop_intake("public tables", stop_public)
        if self.settings.public_url:
            # The web table in this process too (WEB_LISTEN): its moves' messages go out through this bot.
            from adapters.web.main import start_web

            async def deliver(messages: list[Message]) -> None:
                await self.bot.deliver(messages)

            # Its Play now queues on this process's public tables, which then heartbeat `web` too.
            await start_web(self.runtime, deliver, public=public)
        client = asyncio.create_task(self.bot.start(self.token), name="discord-client")

        def client_ended(task: asyncio.Task[None]) -> None:
            if task.cancelled():
                return
            exc = task.exception()
            if exc is not None:
                log.error("the Discord client stopped: %s", type(exc).__name__, exc_info=exc)
                self.runtime.shutdown.request_stop("discord client stopped")
            elif not self.runtime.shutdown.stopping.is_set():
                self.runtime.shutdown.request_stop("discord client closed")

        client.add_done_callback(client_ended)
        report = await self.runtime.run_until_stopped()
        with contextlib.suppress(asyncio.CancelledError, discord.DiscordException, asyncio.TimeoutError):
            await asyncio.wait_for(client, 10)
        if client.done() and not client.cancelled() and client.exception() is not None:
            report.failed_hooks.append("discord client")
        return report

    async def _start_public(self, public: ProcessPublic) -> None:
        # (`wait_until_ready` needs the client set up by `start`, which runs in its own task.)
        while not self.bot.is_ready():
            if self.runtime.shutdown.stopping.is_set():
                return
            await asyncio.sleep(0.1)
        await public.start()
        self._public_started = True

    async def sync(self, guild_id: int | None = None) -> int:
        """Log in over HTTP only (no gateway), register the commands, log out; returns how many."""
        try:
            await self.bot.login(self.token)
            guild = discord.Object(guild_id) if guild_id is not None else None
            synced = await self.bot.sync_commands(guild)
            return len(synced)
        finally:
            await self.bot.close()
            await self.runtime.service.close()
            await self.runtime.store.close()


def main(
    *,
    shards: int | None = None,
    shard_ids: str | None = None,
    sync: bool = False,
    sync_guild: int | None = None,
    members_intent: bool = False,
    env_file: Path | str | None = ".env",
) -> int:
    """The body of `thousand discord`; returns the exit status (2: bad settings)."""
    settings = prepare("discord", env_file)
    try:
        plan = shard_plan(settings, shards, shard_ids)
    except ValueError as exc:
        print(f"thousand discord: --shard-ids: {exc}", file=sys.stderr)
        return 2
    process = DiscordProcess(settings, plan, config=BotConfig(members_intent=members_intent))
    if sync or sync_guild is not None:
        count = asyncio.run(process.sync(sync_guild))
        where = f"guild {sync_guild}" if sync_guild is not None else "all guilds (global)"
        print(f"thousand discord: {count} command(s) registered for {where}")
        return 0
    report = asyncio.run(process.run())
    # 0, 1 (a stop hook failed) or 3 (channel messages lost: nothing could take them), see bot.ops.shutdown.
    return report.exit_code
