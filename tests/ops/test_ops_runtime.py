"""Metrics and health endpoints scraped while a game is played through the runtime, on a real Redis.

The "platform" here is the test itself sending neutral commands (the adapters wire their own update
counters to the same `Metrics`); everything else is what a bot process runs: the metered store, the
service, the activity sampler, the timer loop, and the HTTP listener for /metrics, /livez and /readyz.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from opskit import SHORT_GAME, Reader
from prometheus_client.parser import text_string_to_metric_families
from redis_server import RedisServer, free_port

from bot.commands import SECRET_MOVES, parse_text
from bot.handlers import Handlers
from bot.model import ChatRef, Message, UserRef
from bot.ops.runtime import Runtime
from bot.service import Service
from bot.settings import Settings
from bot.storage import RedisStore, Store

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]

CHAT = ChatRef("loop", "-100", "Ops test")
ALA = UserRef("loop", "1", "Ala", "en", True)
BARTEK = UserRef("loop", "2", "Bartek", "en", False)


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def settings_for(redis_url: str, prefix: str, **values: Any) -> Settings:
    base: dict[str, Any] = {
        "redis_url": redis_url,
        "redis_prefix": prefix,
        "ai_workers": 0,
        "charts": False,
        "turn_seconds": 0,
        "default_ai_level": "easy",
        "metrics_host": "127.0.0.1",
        "metrics_port": free_port(),
        "drain_seconds": 5,
    }
    base.update(values)
    return Settings(_env_file=None, **base)  # type: ignore[call-arg]


async def scrape(session: aiohttp.ClientSession, runtime: Runtime) -> Samples:
    assert runtime.server is not None
    async with session.get(f"http://127.0.0.1:{runtime.server.port}/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = await response.text()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


async def probe(session: aiohttp.ClientSession, runtime: Runtime, path: str) -> tuple[int, Any]:
    assert runtime.server is not None
    async with session.get(f"http://127.0.0.1:{runtime.server.port}{path}") as response:
        return response.status, await response.json()


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


def make_runtime(settings: Settings, clock: Clock | None = None, **options: Any) -> Runtime:
    factory: Callable[[Store, Settings], Service] | None = None
    if clock is not None:
        tick_clock = clock

        def factory(store: Store, s: Settings) -> Service:
            return Service(store, s, handlers=Handlers, clock=tick_clock)

    return Runtime(settings, platform="loop", service_factory=factory, **options)


async def say(runtime: Runtime, user: UserRef, text: str) -> list[Message]:
    command = parse_text(text, CHAT, user)
    assert command is not None
    if command.name in SECRET_MOVES:  # cards given or laid down are typed privately, never in the group
        command = parse_text(text, ChatRef(user.platform, user.user_id, user.name, True), user)
        assert command is not None
    async with runtime.update():
        return await runtime.handle(command, kind="command")


async def test_metrics_and_probes_during_a_game(
    redis_url: str, redis_prefix: str, session: aiohttp.ClientSession
) -> None:
    runtime = make_runtime(settings_for(redis_url, redis_prefix), sample_interval=0.05)
    await runtime.start(signals=False, timers=False)
    try:
        status, body = await probe(session, runtime, "/readyz")
        assert status == 503 and body["checks"] == {"store": "ok", "loop": "not connected yet"}
        runtime.health.set_connected("loop", True)
        assert (await probe(session, runtime, "/readyz"))[0] == 200
        assert await probe(session, runtime, "/livez") == (200, {"status": "alive"})

        sent: dict[tuple[str, str], int] = {}

        async def send(text: str, expect: str = "ok") -> None:
            messages = await say(runtime, ALA, text)
            errors = [m.text for m in messages if m.kind == "error"]
            assert bool(errors) == (expect == "refused"), (text, errors)
            name = text.split()[0].lstrip("/")
            sent[(name, expect)] = sent.get((name, expect), 0) + 1

        for text in SHORT_GAME:
            await send(text)
        await send("/bid 5", "refused")  # below the minimum: refused, nothing stored
        reader = Reader(runtime.store, CHAT.key)
        rng = random.Random(7)
        halfway: Samples | None = None
        at_half = 0
        while (move := await reader.next_move(rng)) is not None:
            await send(move)
            if halfway is None and sum(sent.values()) >= 20:
                halfway = await scrape(session, runtime)  # mid-game: the numbers so far
                at_half = sum(sent.values())
        _, doc = await reader.doc()
        assert doc.status == "finished"

        assert halfway is not None
        assert total(halfway, "thousand_commands_total") == at_half < sum(sent.values())
        await asyncio.sleep(0.1)  # one activity sample
        final = await scrape(session, runtime)
        for (name, outcome), count in sent.items():
            assert value(final, "thousand_commands_total", command=name, outcome=outcome) == count, name
        commands = sum(sent.values())
        assert total(final, "thousand_commands_total") == commands
        assert total(final, "thousand_command_duration_seconds_count") == commands
        assert value(final, "thousand_command_duration_seconds_bucket", command="play", le="+Inf") == sum(
            c for (n, _), c in sent.items() if n == "play"
        )
        assert total(final, "thousand_updates_total", platform="loop", kind="command") == commands
        assert value(final, "thousand_updates_total", platform="loop", kind="command", outcome="refused") == 1
        assert value(final, "thousand_updates_in_flight") == 0
        assert value(final, "thousand_active_tables") == 1
        assert value(final, "thousand_active_players") == 1
        assert value(final, "thousand_cas_conflicts_total") == 0
    finally:
        await runtime.stop()


async def test_conflicts_between_two_processes_are_counted(redis_url: str, redis_prefix: str) -> None:
    # Two runtimes on one Redis are two bot processes. B loads the lobby, then A saves a join first: B's
    # save is refused (a conflict, counted), B reloads and saves again; both joins are kept.
    first = make_runtime(settings_for(redis_url, redis_prefix, metrics_port=0))
    second = make_runtime(settings_for(redis_url, redis_prefix, metrics_port=0))
    await say(first, ALA, "/new polish")
    await second.store.ping()
    a_saved = asyncio.Event()
    a_save, b_save = first.store.inner.save, second.store.inner.save

    async def save_then_signal(*args: Any, **kwargs: Any) -> int:
        version = await a_save(*args, **kwargs)
        a_saved.set()
        return version

    b_waiting = asyncio.Event()

    async def save_after_a(*args: Any, **kwargs: Any) -> int:
        b_waiting.set()
        await a_saved.wait()
        return await b_save(*args, **kwargs)

    first.store.inner.save = save_then_signal  # type: ignore[method-assign]
    second.store.inner.save = save_after_a  # type: ignore[method-assign]
    bartek_joins = asyncio.create_task(say(second, BARTEK, "/join"))
    await asyncio.wait_for(b_waiting.wait(), 10)  # B has loaded the lobby and waits to save
    celina = UserRef("loop", "3", "Celina", "en")
    for replies in (await say(first, celina, "/join"), await bartek_joins):
        assert not [m.text for m in replies if m.kind == "error"]
    _, doc = await Reader(first.store, CHAT.key).doc()
    assert [seat.name for seat in doc.seats] == ["Ala", "Celina", "Bartek"]
    assert second.metrics.cas_conflicts._value.get() == 1
    assert first.metrics.cas_conflicts._value.get() == 0
    for runtime in (first, second):
        await runtime.store.close()
        await runtime.activity.close()


async def test_timers_fired_and_delivered(redis_url: str, redis_prefix: str) -> None:
    clock = Clock()
    delivered: list[Message] = []

    async def deliver(messages: list[Message]) -> None:
        delivered.extend(messages)

    runtime = make_runtime(settings_for(redis_url, redis_prefix, metrics_port=0), clock, tick_interval=0.02)
    for text in ("/new polish", "/set turn 15", "/add_ai easy", "/add_ai easy", "/start"):
        assert not [m for m in await say(runtime, ALA, text) if m.kind == "error"], text
    await runtime.start(deliver, signals=False)
    try:
        clock.now += 16  # the warning and the deadline of Ala's turn both fall due
        for _ in range(100):
            if runtime.metrics.timers_fired.labels("fired")._value.get() >= 1 and delivered:
                break
            await asyncio.sleep(0.02)
        assert runtime.metrics.timers_fired.labels("fired")._value.get() >= 1
        assert delivered, "the timer's messages reach the adapter's deliver callback"
    finally:
        await runtime.stop()


async def test_readiness_follows_redis_and_the_platform(
    redis_factory: Callable[..., RedisServer], redis_prefix: str, session: aiohttp.ClientSession
) -> None:
    server = redis_factory(appendonly=True)
    runtime = make_runtime(settings_for(server.url, redis_prefix))
    await runtime.start(signals=False, timers=False)
    try:
        runtime.health.set_connected("loop", True)
        assert (await probe(session, runtime, "/readyz"))[0] == 200
        server.stop()
        status, body = await probe(session, runtime, "/readyz")
        assert status == 503
        assert body["checks"]["store"] != "ok" and body["checks"]["loop"] == "ok"
        # The reason names the failure, not where Redis is (host and port stay in the logs).
        assert body["checks"]["store"].startswith("StorageUnavailable"), body
        assert str(server.port) not in body["checks"]["store"] and "127.0.0.1" not in body["checks"]["store"]
        assert (await probe(session, runtime, "/livez"))[0] == 200  # Redis away is no reason to restart
        messages = await say(runtime, ALA, "/new polish")
        assert [m.kind for m in messages] == ["error"]
        samples = await scrape(session, runtime)
        assert value(samples, "thousand_commands_total", command="new", outcome="unavailable") == 1
        assert value(samples, "thousand_storage_unavailable_total") >= 1
        server.start()
        assert (await probe(session, runtime, "/readyz"))[0] == 200
        runtime.health.set_connected("loop", False, "gateway closed")
        status, body = await probe(session, runtime, "/readyz")
        assert status == 503 and body["checks"]["loop"] == "gateway closed"
        runtime.health.set_connected(
            "loop", False, f"proxy http://u:pw-9999@10.1.2.3:3128 said no ({server.url})"
        )
        status, body = await probe(session, runtime, "/readyz")
        assert status == 503 and body["checks"]["loop"] == "proxy *** said no (***)"
    finally:
        await runtime.stop()


async def test_not_ready_while_stopping(
    redis_url: str, redis_prefix: str, session: aiohttp.ClientSession
) -> None:
    runtime = make_runtime(settings_for(redis_url, redis_prefix))
    await runtime.start(signals=False, timers=False)
    runtime.health.set_connected("loop", True)
    seen: list[tuple[int, Any]] = []
    release = asyncio.Event()

    async def in_flight() -> None:
        async with runtime.update():
            await release.wait()
            await say(runtime, ALA, "/new polish")  # taken before the stop: finished during the drain

    task = asyncio.create_task(in_flight())
    await asyncio.sleep(0)
    stopping = asyncio.create_task(runtime.stop("test"))
    # Wait for the stop to have begun (its first intake hook marks the process draining) rather than a
    # fixed pause, which a busy machine can outlast; the update in flight holds the drain meanwhile.
    await asyncio.wait_for(runtime.shutdown.stopping.wait(), timeout=30)
    async with asyncio.timeout(30):
        while not runtime.health.draining:
            await asyncio.sleep(0.01)
    assert not stopping.done() and not task.done()
    seen.append(await probe(session, runtime, "/readyz"))
    release.set()
    report = await stopping
    await task
    assert seen[0][0] == 503 and seen[0][1]["checks"]["shutdown"] == "stopping"
    assert report.drained
    fresh = RedisStore.from_url(redis_url, prefix=redis_prefix)
    stored = await fresh.load(CHAT.key)  # the update taken before the stop was finished and saved
    await fresh.close()
    assert stored is not None and stored.version == 1
