"""Processes come and go; games stay in the store.

- A bot process stopped mid-deal and started again: the game goes on where it was, the new process edits
  the table message the old one sent (the references are in the store), nothing is lost or doubled.
- Two processes in webhook mode behind a load balancer on one Redis, updates spread between them: a whole
  game with every action applied exactly once.
- The real `thousand telegram` in a subprocess against the fake over loopback HTTP (`TELEGRAM_API_URL`)
  and Redis, killed with SIGKILL mid-deal and started again: the game is finished.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from pathlib import Path

import aiohttp
from aiohttp import web
from botprocess import bot_process, wait_ready
from tgkit import Rig, Table, VirtualClock, seat_everyone

from adapters.telegram.app import Webhook
from bot.snapshot import decode_action
from bot.storage import RedisStore
from core.deal import Phase
from fakes.telegram import FakeTelegram, FakeTelegramServer, FloodLimits

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def _to_mid_deal(table: Table) -> int:
    """Play until a deal is in its play phase with a trick taken; the deal's number."""
    for _ in range(200):
        _, state = await table.state()
        assert state is not None
        if state.deal.phase == Phase.PLAY and state.deal.tricks >= 1:
            return state.deal.number
        await table.move()
    raise AssertionError("no deal reached its play phase")


async def _actions(table: Table) -> list[str]:
    doc = await table.doc()
    assert doc.game is not None
    return doc.game.actions


async def test_a_restarted_process_goes_on_with_the_game(rig: Rig) -> None:
    fake = rig.fake
    people = [fake.add_user(n) for n in ("Alice", "Bob", "Carol")]
    chat = rig.group("Cards", people)
    table = await seat_everyone(rig, chat, people)
    deal = await _to_mid_deal(table)
    heading = f"Deal {deal + 1} ·"
    tables_before = [m.message_id for m in fake.bot_messages(chat) if m.content.startswith(heading)]
    await rig.stop()
    await rig.start()
    for _ in range(6):
        await table.move()
    # The new process edited the deal's table message the old one had sent.
    assert [
        m.message_id for m in fake.bot_messages(chat) if m.content.startswith("Deal 1 ·")
    ] == tables_before
    assert fake.message(chat, tables_before[0]).history
    await table.play_out()
    assert (await table.doc()).status == "finished"
    assert len(await _actions(table)) == table.moves + await table.played_for_them()
    assert fake.stats.too_many_requests == 0 and rig.watch.leaks == []


class Balancer:
    """A round-robin HTTP proxy in front of the processes' webhook listeners, as a load balancer is."""

    def __init__(self, targets: list[str]) -> None:
        self.targets = targets
        self.forwarded: list[tuple[int, int]] = []
        """(target index, update id) of every update passed on."""
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        self.port = _free_port()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        self._session = aiohttp.ClientSession()
        return f"http://127.0.0.1:{self.port}/telegram"

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        body = await request.read()
        index = len(self.forwarded) % len(self.targets)
        update = await request.json()
        self.forwarded.append((index, update["update_id"]))
        headers = {
            k: v for k, v in request.headers.items() if k.lower().startswith(("x-telegram", "content-type"))
        }
        async with self._session.post(self.targets[index], data=body, headers=headers) as answer:
            return web.Response(status=answer.status, body=await answer.read())

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()


async def test_two_webhook_processes_on_one_redis(redis_url: str, redis_prefix: str) -> None:
    clock = VirtualClock()
    fake = FakeTelegram(clock=clock)
    rig = Rig(store=RedisStore.from_url(redis_url, prefix=redis_prefix), clock=clock, fake=fake)
    ports = [_free_port(), _free_port()]
    balancer = Balancer([f"http://127.0.0.1:{p}/telegram" for p in ports])
    url = await balancer.start()
    try:
        for port in ports:
            bot = rig.make_bot(RedisStore.from_url(redis_url, prefix=redis_prefix))
            webhook = Webhook(url, "127.0.0.1", port, secret="sh4red-secret")
            await bot.start(webhook=webhook, signals=False)
            rig.bots.append(bot)
        assert fake.webhook_url == url
        people = [fake.add_user(n) for n in ("Alice", "Bob", "Carol")]
        chat = rig.group("Cards", people)
        table = await seat_everyone(rig, chat, people)
        await table.play_out()
        assert (await table.doc()).status == "finished"
        # Every update went to one process exactly once, and both processes took their share.
        ids = [u for _, u in balancer.forwarded]
        assert sorted(ids) == list(range(1, rig.last_update_id() + 1))
        assert {i for i, _ in balancer.forwarded} == {0, 1}
        assert sum(b.adapter.updates for b in rig.bots) == len(ids)
        # Every move the people made was applied once: none lost, none doubled.
        assert len(await _actions(table)) == table.moves + await table.played_for_them()
        assert all(a.status == 200 for a in fake.webhook_attempts)
        assert fake.stats.too_many_requests == 0 and rig.watch.leaks == []
    finally:
        await rig.close()
        await balancer.stop()


# --------------------------------------------------------------------------- a real process, killed


def _env(fake: FakeTelegram, api_url: str, redis_url: str, prefix: str, metrics_port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "REDIS_", "DISCORD_"))}
    env.update(
        {
            "TELEGRAM_TOKEN": fake.token,
            "TELEGRAM_API_URL": api_url,
            "TELEGRAM_LIMITS": "chat=20/1,group=600/60,global=200/1",
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": prefix,
            "AI_WORKERS": "0",
            "TURN_SECONDS": "0",
            "DEFAULT_AI_LEVEL": "easy",
            "METRICS_HOST": "127.0.0.1",
            "METRICS_PORT": str(metrics_port),
            "LOG_FORMAT": "console",
            "LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
        }
    )
    return env


async def test_thousand_telegram_killed_mid_deal_and_started_again(
    redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    limits = FloodLimits(chat_rate=20, chat_burst=20, group_per_period=600, global_rate=200, global_burst=200)
    fake = FakeTelegram(limits=limits)
    rig = Rig(store=RedisStore.from_url(redis_url, prefix=redis_prefix), fake=fake)
    log = tmp_path / "bot.log"
    async with FakeTelegramServer(fake) as server:
        port = _free_port()
        env = _env(fake, server.root_url, redis_url, redis_prefix, port)
        people = [fake.add_user(n) for n in ("Alice", "Bob", "Carol")]
        chat = rig.group("Cards", people)
        async with bot_process(env, log) as first:
            await wait_ready(port, first)
            table = await seat_everyone(rig, chat, people)
            await _to_mid_deal(table)
            os.kill(first.pid, signal.SIGKILL)
            await first.wait()
        async with bot_process(env, log) as second:
            await wait_ready(port, second)
            await table.play_out()
            assert (await table.doc()).status == "finished"
            second.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(second.wait(), 30) == 0, log.read_text()[-3000:]
    assert len(await _actions(table)) == table.moves + await table.played_for_them()
    seats = {decode_action(a)[0] for a in await _actions(table)}
    assert seats == {0, 1, 2}
    assert fake.stats.too_many_requests == 0 and rig.watch.leaks == []
    await rig.close()
