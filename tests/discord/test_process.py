"""`thousand discord` as a process: `--sync` registers the commands over HTTP only, a run serves its
shards and reports readiness, a stop finishes the interaction in flight, and bad shard options or a
missing token stop it before it connects anywhere."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dckit import World, settings
from test_deadline import slow_down

from adapters.discord.main import DiscordProcess, ShardPlan, shard_plan
from fakes.discord import FakeDiscord

ROOT = Path(__file__).resolve().parents[2]


async def test_sync_registers_the_commands_without_the_gateway(fake: FakeDiscord) -> None:
    process = DiscordProcess(settings(discord_token=fake.token), connector=fake.connector())
    assert await process.sync() == 1
    assert fake.commands.find(None, "thousand") is not None
    assert fake.gateway.stats.identifies == 0


async def test_run_serves_and_stops_after_the_interaction_in_flight(fake: FakeDiscord, world: World) -> None:
    process = DiscordProcess(
        settings(discord_token=fake.token),
        ShardPlan(2, (0, 1)),
        connector=fake.connector(),
        guild_ready_timeout=0.05,
    )
    bot = process.bot
    running = asyncio.create_task(process.run(signals=False))
    await fake.wait_until(bot.is_ready, timeout=10)
    await fake.wait_until(lambda: process.runtime.health._components["discord"] == "ok")
    ready, checks = await process.runtime.health.readiness()
    assert ready, checks
    assert sorted(s.shard_id for s in fake.live_sessions()) == [0, 1]
    # Public tables run here as in `thousand telegram`: the queue's commands taken once the client is ready,
    # and the runtime shows what other platforms' processes hand over to Discord (relay "dc").
    assert process.runtime.relay_platform == "dc"
    await fake.wait_until(lambda: process.runtime.service.queue_commands is not None, timeout=10)
    assert process.public is not None
    await bot.sync_commands()

    slow_down(bot, 1.5, {"rules"})
    it = await fake.slash(world.users[0], world.channel, "thousand", "rules")
    await it.response()  # deferred: the service call is still running
    process.runtime.shutdown.request_stop("test")
    report = await asyncio.wait_for(running, 15)
    assert report.drained and report.abandoned == 0 and not report.failed_hooks
    answer = await it.original_message()
    assert not answer.loading  # the interaction in flight was finished before the process stopped
    assert bot.is_closed() and fake.live_sessions() == []
    ready, checks = await process.runtime.health.readiness()
    assert not ready and checks["shutdown"] == "stopping"


def test_shard_plan() -> None:
    assert shard_plan(settings(), None, None) == ShardPlan(None, None)
    assert shard_plan(settings(), 4, "0-1") == ShardPlan(4, (0, 1))
    assert shard_plan(settings(discord_shard_count=3, discord_shard_ids="2"), None, None) == ShardPlan(
        3, (2,)
    )
    assert shard_plan(settings(discord_shard_count=3), 2, "1") == ShardPlan(2, (1,))  # the command line wins
    with pytest.raises(ValueError, match="DISCORD_SHARD_COUNT"):
        shard_plan(settings(), None, "0")
    with pytest.raises(ValueError, match="does not exist"):
        shard_plan(settings(), 2, "2")


def run_cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "SYSTEMROOT")}
    return subprocess.run(
        [sys.executable, "-c", "from adapters.cli import main; main()", "discord", *args],
        cwd=tmp_path,
        env={**base, "PYTHONPATH": str(ROOT), "METRICS_PORT": "0", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_refuses_bad_settings_before_connecting(tmp_path: Path) -> None:
    missing = run_cli(tmp_path)
    assert missing.returncode == 2 and "DISCORD_TOKEN: missing" in missing.stderr
    token = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gabcde.abcdefghijklmnopqrstuvwxyz0123"
    ids = run_cli(tmp_path, "--shard-ids", "1", DISCORD_TOKEN=token)
    assert ids.returncode == 2 and "DISCORD_SHARD_COUNT must be set" in ids.stderr
    assert token not in ids.stderr + ids.stdout
