"""A bot process sent SIGTERM in the middle of a deal, with an update in flight; a new process finishes
the game. The process is tests/ops/neutral_bot.py: the ops Runtime on Redis, taking neutral commands
over loopback HTTP as a webhook adapter takes updates (the platform adapters plug into the same hooks).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from opskit import SHORT_GAME, Reader
from prometheus_client.parser import text_string_to_metric_families
from redis_server import RedisServer, free_port

from bot.snapshot import GameCache
from bot.storage import RedisStore
from core.deal import Phase

BOT = Path(__file__).with_name("neutral_bot.py")
TABLE = "loop:-100"
ALA = {"chat": "-100", "user": "1", "name": "Ala"}


class BotProcess:
    def __init__(self, redis_url: str, prefix: str, log: Path) -> None:
        self.loop_port = free_port()
        self.metrics_port = free_port()
        self.log = log
        env = {k: v for k, v in os.environ.items() if not k.isupper() or k in ("PATH", "HOME", "LANG")}
        env.update(
            REDIS_URL=redis_url,
            REDIS_PREFIX=prefix,
            LOOP_PORT=str(self.loop_port),
            METRICS_HOST="127.0.0.1",
            METRICS_PORT=str(self.metrics_port),
            AI_WORKERS="0",
            CHARTS="false",
            TURN_SECONDS="0",
            DEFAULT_AI_LEVEL="easy",
            DRAIN_SECONDS="10",
            LOG_FORMAT="json",
            LOG_LEVEL="INFO",
        )
        self._log_file = log.open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(BOT)], env=env, stdout=self._log_file, stderr=subprocess.STDOUT
        )

    async def ready(self, http: aiohttp.ClientSession, timeout: float = 20.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            assert self.process.poll() is None, self.log.read_text()
            try:
                async with http.get(f"http://127.0.0.1:{self.metrics_port}/readyz") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
        raise AssertionError(f"bot not ready in {timeout}s:\n{self.log.read_text()}")

    async def wait_in_flight(self, http: aiohttp.ClientSession, timeout: float = 10.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            async with http.get(f"http://127.0.0.1:{self.loop_port}/in-flight") as response:
                if (await response.json())["in_flight"] >= 1:
                    return
            await asyncio.sleep(0.01)
        raise AssertionError("the update never got in flight")

    async def wait_not_ready(self, http: aiohttp.ClientSession, timeout: float = 10.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            async with http.get(f"http://127.0.0.1:{self.metrics_port}/readyz") as response:
                if response.status == 503:
                    assert (await response.json())["checks"]["shutdown"] == "stopping"
                    return
            await asyncio.sleep(0.01)
        raise AssertionError("still ready after SIGTERM")

    async def post(self, http: aiohttp.ClientSession, text: str, delay: float = 0.0) -> tuple[int, Any]:
        body = {**ALA, "text": text, "delay": delay}
        async with http.post(f"http://127.0.0.1:{self.loop_port}/update", json=body) as response:
            return response.status, await response.json()

    async def send(self, http: aiohttp.ClientSession, text: str, delay: float = 0.0) -> list[dict[str, str]]:
        status, body = await self.post(http, text, delay)
        assert status == 200, body
        errors = [m["text"] for m in body["messages"] if m["kind"] == "error"]
        assert not errors, (text, errors)
        messages: list[dict[str, str]] = body["messages"]
        return messages

    async def metrics(self, http: aiohttp.ClientSession) -> dict[str, float]:
        async with http.get(f"http://127.0.0.1:{self.metrics_port}/metrics") as response:
            text = await response.text()
        out: dict[str, float] = {}
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                out[sample.name] = out.get(sample.name, 0.0) + sample.value
        return out

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log_file.close()


@pytest.fixture
def bots(tmp_path: Path) -> Iterator[Callable[[str, str], BotProcess]]:
    started: list[BotProcess] = []

    def start(redis_url: str, prefix: str) -> BotProcess:
        bot = BotProcess(redis_url, prefix, tmp_path / f"bot-{len(started)}.log")
        started.append(bot)
        return bot

    yield start
    for bot in started:
        bot.stop()


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def test_sigterm_mid_deal_then_a_new_process_finishes_the_game(
    redis_factory: Callable[..., RedisServer],
    bots: Callable[[str, str], BotProcess],
    http: aiohttp.ClientSession,
) -> None:
    server = redis_factory(appendonly=True)
    store = RedisStore.from_url(server.url, prefix="sigterm")
    reader = Reader(store, TABLE)
    rng = random.Random(11)
    first = bots(server.url, "sigterm")
    await first.ready(http)
    for text in SHORT_GAME:
        await first.send(http, text)
    sent = len(SHORT_GAME)

    # Into the card play of the first deal, a trick or more done.
    while True:
        state = await reader.state()
        assert state is not None and state.deal_number == 0
        if state.deal.phase == Phase.PLAY and state.deal.trick_history:
            break
        move = await reader.next_move(rng)
        assert move is not None
        await first.send(http, move)
        sent += 1
    scraped = await first.metrics(http)
    assert scraped["thousand_commands_total"] == sent
    assert scraped["thousand_updates_total"] == sent

    version, doc = await reader.doc()
    assert doc.game is not None
    actions = len(doc.game.actions)
    move = await reader.next_move(rng)
    assert move is not None and move.startswith("/play ")
    in_flight = asyncio.create_task(first.send(http, move, delay=1.5))
    await first.wait_in_flight(http)  # the update is taken and held
    first.process.send_signal(signal.SIGTERM)
    await first.wait_not_ready(http)
    status, body = await first.post(http, "/score")  # a new update during the drain is refused
    assert (status, body) == (503, {"error": "stopping"})
    replies = await in_flight  # the one in flight is finished and answered
    assert any(m["audience"] == "group" for m in replies)
    assert await asyncio.to_thread(first.process.wait, 15) == 0
    stopped = [r for r in first.records() if str(r["msg"]).startswith("stopped in")]
    assert stopped and stopped[0]["outcome"] == "drained"
    assert any(r["msg"].startswith("stop requested (SIGTERM)") for r in first.records())

    version_after, doc = await reader.doc()
    assert version_after == version + 1  # the move was saved, once
    assert doc.game is not None and len(doc.game.actions) > actions

    second = bots(server.url, "sigterm")
    await second.ready(http)
    while (move := await reader.next_move(rng)) is not None:
        await second.send(http, move)
    _, doc = await reader.doc()
    assert doc.status == "finished" and doc.game is not None
    final = GameCache().state(doc.serial, doc.game.spec, doc.game.actions)  # a fresh replay of the record
    assert final.finished and final.winner is not None
    assert max(final.tally.totals) >= 200
    events = [json.loads(e) for e in await store.read_events(TABLE)]
    assert [e["v"] for e in events] == list(range(1, len(events) + 1))  # nothing lost, nothing doubled
    second.process.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(second.process.wait, 15) == 0
    await store.close()
