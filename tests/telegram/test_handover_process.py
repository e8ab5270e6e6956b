"""SIGTERM with a full queue, with real `thousand telegram` processes against the fake Bot API over
loopback HTTP (`TELEGRAM_API_URL`).

- Redis: the group's send budget is held (as after a 429) when a deal ends, so its result waits; the
  process is sent SIGTERM, hands the waiting messages over and exits 0 within the grace period; a second
  process started after it sends the result once, and no table of the finished deal after the next one's.
- Memory store: nothing can be handed over; the process logs how many messages it lost and exits with
  `EXIT_UNDELIVERED`.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from botprocess import bot_process, wait_ready
from tgkit import Rig, Table, seat_everyone

from adapters.telegram.handover import HANDOVER_PLATFORM
from adapters.telegram.limits import SendLimits
from bot.ops.shutdown import EXIT_OK, EXIT_UNDELIVERED, STOP_WITHIN
from bot.storage import KeyLayout, RedisStore
from core.deal import Phase
from fakes.telegram import FakeChat, FakeTelegram, FakeTelegramServer, FloodLimits

pytestmark = pytest.mark.timeout(240)

ROOT = Path(__file__).resolve().parents[2]
LIMITS = "chat=20/1,group=600/60,global=200/1"
GRACE = 30.0
"""Kubernetes' default termination grace period: the process must be gone well within it."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(
    fake: FakeTelegram, api_url: str, metrics_port: int, redis: tuple[str, str] | None
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "REDIS_", "DISCORD_"))}
    env.update(
        {
            "TELEGRAM_TOKEN": fake.token,
            "TELEGRAM_API_URL": api_url,
            "TELEGRAM_LIMITS": LIMITS,
            "AI_WORKERS": "0",
            "TURN_SECONDS": "0",
            "DEFAULT_AI_LEVEL": "easy",
            "METRICS_HOST": "127.0.0.1",
            "METRICS_PORT": str(metrics_port),
            "LOG_FORMAT": "json",
            "LOG_LEVEL": "INFO",
            "PYTHONPATH": str(ROOT),
        }
    )
    if redis is not None:
        env.update({"REDIS_URL": redis[0], "REDIS_PREFIX": redis[1]})
    return env


async def _sigterm(process: asyncio.subprocess.Process) -> tuple[int, float]:
    """Send SIGTERM; (exit status, seconds until the process was gone)."""
    started = time.monotonic()
    process.send_signal(signal.SIGTERM)
    code = await asyncio.wait_for(process.wait(), GRACE)
    return code, time.monotonic() - started


def _records(log: Path) -> list[dict[str, Any]]:
    out = []
    for line in log.read_text().splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def _group_texts(fake: FakeTelegram, chat: FakeChat, start: str) -> list[tuple[int, str]]:
    return [(m.message_id, m.content) for m in fake.bot_messages(chat) if m.content.startswith(start)]


async def _until(condition: Any, timeout: float, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def _near_the_end_of_a_deal(table: Table) -> int:
    """Play until the deal is in its last two tricks; the deal's number."""
    for _ in range(300):
        _, state = await table.state()
        assert state is not None
        if state.deal.phase == Phase.PLAY and state.deal.tricks >= 6:
            return state.deal.number
        await table.move()
    raise AssertionError("no deal came near its end")


async def _to_the_next_deal(table: Table, deal: int) -> None:
    for _ in range(40):
        doc, state = await table.state()
        if doc.status != "game" or state is None or state.deal.number != deal:
            return
        await table.move()
    raise AssertionError("the deal did not end")


async def test_sigterm_with_a_deal_result_waiting_hands_it_over_and_the_next_process_sends_it_once(
    redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    limits = FloodLimits(chat_rate=20, chat_burst=20, group_per_period=600, global_rate=200, global_burst=200)
    fake = FakeTelegram(limits=limits)
    store = RedisStore.from_url(redis_url, prefix=redis_prefix)
    rig = Rig(store=store, fake=fake)
    log = tmp_path / "bot.log"
    keys = KeyLayout(redis_prefix)
    async with FakeTelegramServer(fake) as server:
        port = _free_port()
        env = _env(fake, server.root_url, port, (redis_url, redis_prefix))
        people = [fake.add_user(n) for n in ("Alice", "Bob", "Carol")]
        chat = rig.group("Cards", people)
        async with bot_process(env, log) as first:
            await wait_ready(port, first)
            table = await seat_everyone(rig, chat, people)
            deal = await _near_the_end_of_a_deal(table)
            # The group's budget is spent (as after a 429) for every process: what comes for it waits.
            sends = SendLimits.parse(LIMITS)
            held = sends.hold_keys(fake.token.split(":", 1)[0], chat.id)
            for key in held:
                await store.hold_sends(key, 600)
            await _to_the_next_deal(table, deal)
            await rig.settle()
            await asyncio.sleep(1.0)
            heading = f"Deal {deal + 1}: result"
            assert _group_texts(fake, chat, heading) == []  # waiting for the group's budget
            code, took = await _sigterm(first)
        log_text = log.read_text()
        assert code == EXIT_OK, log_text[-3000:]
        assert took < STOP_WITHIN, took
        handed = [r for r in _records(log) if r.get("outcome") == "handed_over"]
        assert len(handed) == 1 and handed[0]["count"] >= 1, log_text[-3000:]
        assert not [r for r in _records(log) if r.get("outcome") == "lost"]
        assert await store.call("ZCARD", keys.handover_index(HANDOVER_PLATFORM)) >= 1
        assert _group_texts(fake, chat, heading) == []
        # The budget is back by the time the next process starts (a rolling restart's next pod).
        await store.call("DEL", *(keys.send_hold(k) for k in held))
        async with bot_process(env, log) as second:
            await wait_ready(port, second)
            await _until(lambda: _group_texts(fake, chat, heading), 20, "the deal's result")
            await rig.settle()
            await asyncio.sleep(2.5)  # more looks for handed-over messages: nothing comes twice
            results = _group_texts(fake, chat, heading)
            assert len(results) == 1, results
            # No table of the finished deal came after the next deal's.
            old_tables = [i for i, _ in _group_texts(fake, chat, f"Deal {deal + 1} ·")]
            new_tables = [i for i, _ in _group_texts(fake, chat, f"Deal {deal + 2} ·")]
            if new_tables:
                assert max(old_tables, default=0) < min(new_tables)
            # The game goes on with the second process.
            for _ in range(3):
                await table.move()
            await rig.settle()
            code, took = await _sigterm(second)
            assert code == EXIT_OK and took < STOP_WITHIN, log.read_text()[-3000:]
    assert await store.call("ZCARD", keys.handover_index(HANDOVER_PLATFORM)) == 0
    assert fake.stats.too_many_requests == 0 and rig.watch.leaks == []
    await rig.close()


async def test_sigterm_with_the_memory_store_logs_the_lost_messages_and_exits_with_their_code(
    tmp_path: Path,
) -> None:
    fake = FakeTelegram()
    rig = Rig(fake=fake)
    log = tmp_path / "bot.log"
    async with FakeTelegramServer(fake) as server:
        port = _free_port()
        env = _env(fake, server.root_url, port, None)
        alice = fake.add_user("Alice")
        chat = rig.group("Cards", [alice, fake.add_user("Bob")])
        async with bot_process(env, log) as process:
            await wait_ready(port, process)
            rig.acted()
            await rig.say(chat, alice, "/new polish")
            await _until(lambda: fake.bot_messages(chat), 20, "the lobby")
            # Telegram floods the bot: every new message is refused with retry_after 60 s.
            fake.faults.flood_next(50, retry_after=60, methods=["sendMessage"])
            fake.user_sends(chat, alice, "/rules")
            fake.user_sends(chat, alice, "/help")
            await _until(lambda: not fake.pending_updates, 20, "the bot to take the updates")
            await _until(lambda: fake.faults.injected >= 1, 20, "the refused send")
            await asyncio.sleep(1.0)
            code, took = await _sigterm(process)
    log_text = log.read_text()
    assert code == EXIT_UNDELIVERED, log_text[-3000:]
    assert took < STOP_WITHIN, took
    lost = [r for r in _records(log) if r.get("outcome") == "lost"]
    assert len(lost) == 1 and lost[0]["count"] == 2, log_text[-3000:]
    stopped = [r for r in _records(log) if r.get("outcome") == "undelivered"]
    assert stopped and stopped[0]["count"] == 2
    await rig.close()
