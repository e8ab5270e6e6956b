"""Delivery across platforms through a real redis-server: streams per platform, consumer groups, a
consumer killed mid-stream, retries shown once, and never an older version after a newer one."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis_server import LocalRedisCluster

from bot.model import Message, Private, UserRef
from bot.relay.memory import MemoryRelay
from bot.relay.redis_relay import GROUP, Claim, Guard, RedisRelay, RelayConsumer, stream_key

ROOT = Path(__file__).resolve().parents[2]
ALA = UserRef("tg", "101", "Ala", "pl")
BORIS = UserRef("dc", "202", "Boris", "ru")
DASZA = UserRef("dc", "203", "Dasza", "ru")
EVE = UserRef("web", "303", "Eve", "en")


def msg(user: UserRef, text: str, *, key: str | None = "table:s1:1", version: int | None = 1) -> Message:
    return Message(
        Private(user), text, key, version=version, serial="s1", kind="table", language=user.language or "en"
    )


class Screen:
    """What a platform showed: every delivery in order."""

    def __init__(self) -> None:
        self.shown: list[Message] = []

    async def __call__(self, message: Message) -> None:
        self.shown.append(message)

    @property
    def texts(self) -> list[str]:
        return [m.text for m in self.shown]


@pytest.fixture
async def client(redis_url: str) -> AsyncIterator[Redis]:
    c = Redis.from_url(redis_url)
    yield c
    await c.aclose()


async def test_own_platform_here_the_others_through_their_streams(client: Redis) -> None:
    tg, dc, web = Screen(), Screen(), Screen()
    relay = RedisRelay(client, "tg", tg)
    messages = [msg(ALA, "a"), msg(BORIS, "b"), msg(EVE, "e"), msg(DASZA, "d")]
    await relay.dispatch(messages)
    assert tg.texts == ["a"]
    assert await client.xlen(stream_key("dc")) == 2 and await client.xlen(stream_key("web")) == 1
    assert not await client.exists(stream_key("tg"))
    for platform in ("dc", "web"):
        ttl = await client.ttl(stream_key(platform))
        assert 0 < ttl <= 86_400
    dc_consumer = RelayConsumer(client, "dc", dc, name="dc-1")
    web_consumer = RelayConsumer(client, "web", web, name="web-1")
    for consumer in (dc_consumer, web_consumer):
        await consumer.ensure_group()
        await consumer.poll(block_ms=100)
    assert dc.texts == ["b", "d"] and web.texts == ["e"]
    assert dc.shown[0] == messages[1]  # field for field
    assert (await client.xpending(stream_key("dc"), GROUP))["pending"] == 0


async def test_a_consumer_killed_mid_stream_leaves_its_entries_to_the_other(client: Redis) -> None:
    """Consumer A reads ten entries and hangs for good in the middle of the fourth (a process killed while
    the platform call was in flight: no release, no ack). B takes over what A left pending once it is
    idle long enough, waits out A's lease on the fourth, and every message is shown exactly once.

    Nothing here hangs on the machine being idle: "not idle long enough yet" is asked with an idle time
    no pause can reach, the lease is long beside the steps taken under it, and its end is waited for
    (each poll's outcome checked), not slept through."""
    producer = RedisRelay(client, "tg", Screen())
    await producer.dispatch([msg(BORIS, f"m{i}", key=f"k{i}", version=i + 1) for i in range(10)])
    hung = asyncio.Event()
    a_screen = Screen()

    async def a_deliver(message: Message) -> None:
        if message.text == "m3":
            hung.set()
            await asyncio.Future()  # never returns: the process is gone
        await a_screen(message)

    lease = 3.0
    guard = Guard(client, lease_ms=int(lease * 1000))
    a = RelayConsumer(client, "dc", a_deliver, name="dc-a", guard=guard, min_idle_ms=200)
    b_screen = Screen()
    b = RelayConsumer(client, "dc", b_screen, name="dc-b", guard=guard, min_idle_ms=600_000)
    await a.ensure_group()
    killed = asyncio.create_task(a.poll(block_ms=100))
    await asyncio.wait_for(hung.wait(), 30)
    leased_at = time.monotonic()  # A's lease on m3 was taken just before
    assert a_screen.texts == ["m0", "m1", "m2"]
    pending = await client.xpending(stream_key("dc"), GROUP)
    assert pending["pending"] == 7 and {c["name"] for c in pending["consumers"]} == {b"dc-a"}
    try:
        assert await b.poll(block_ms=10) == 0  # nothing new, and A's entries are not idle long enough
        assert b_screen.texts == []
        b.min_idle_ms = 200
        await asyncio.sleep(0.25)
        await b.poll(block_ms=10)  # takes over m3..m9: m3's lease is A's, the rest are shown
        took_over = time.monotonic()
        if took_over - leased_at < lease:
            assert b_screen.texts == [f"m{i}" for i in range(4, 10)]
        # A's lease on m3 runs out, and m3 is idle again: B shows it then, not before.
        while "m3" not in b_screen.texts:
            assert time.monotonic() - leased_at < lease + 30, "m3 was never taken over"
            await asyncio.sleep(0.1)
            await b.poll(block_ms=10)
            assert "m3" not in b_screen.texts or time.monotonic() - leased_at >= lease * 0.9
        assert sorted(a_screen.texts + b_screen.texts) == sorted(f"m{i}" for i in range(10))
        assert len(a_screen.texts + b_screen.texts) == 10
        assert (await client.xpending(stream_key("dc"), GROUP))["pending"] == 0
    finally:
        killed.cancel()


async def test_a_retried_entry_is_not_shown_twice(client: Redis) -> None:
    """A shows an entry and dies before its XACK: B claims the entry and does not show it again."""
    await RedisRelay(client, "tg", Screen()).dispatch([msg(BORIS, "once")])
    a_screen, b_screen = Screen(), Screen()
    a = RelayConsumer(client, "dc", a_screen, name="dc-a", min_idle_ms=100)
    await a.ensure_group()

    async def dead_ack(*args: object) -> int:
        raise ConnectionError("process killed before XACK")

    a.client = Redis(connection_pool=client.connection_pool)
    a.client.xack = dead_ack  # type: ignore[method-assign]
    with pytest.raises(ConnectionError):
        await a.poll(block_ms=100)
    assert a_screen.texts == ["once"]
    b = RelayConsumer(client, "dc", b_screen, name="dc-b", min_idle_ms=100)
    await asyncio.sleep(0.15)
    assert await b.poll(block_ms=10) == 1
    assert b_screen.texts == [] and b.skipped == 1
    assert (await client.xpending(stream_key("dc"), GROUP))["pending"] == 0


async def test_an_older_version_after_a_newer_one_is_dropped(client: Redis) -> None:
    """Two processes applied moves 5 and 4 of one table; 4's hand-over arrives last: never shown. The same
    version again (a `/table` asking for the table anew) is shown; another key or reader is not affected."""
    producer = RedisRelay(client, "tg", Screen())
    await producer.dispatch([msg(BORIS, "v5", version=5)])
    await producer.dispatch([msg(BORIS, "v4", version=4), msg(DASZA, "dasza v4", version=4)])
    await producer.dispatch(
        [msg(BORIS, "v5 again", version=5), msg(BORIS, "hand v4", key="hand:x", version=4)]
    )
    screen = Screen()
    consumer = RelayConsumer(client, "dc", screen, name="dc-1")
    await consumer.ensure_group()
    await consumer.poll(block_ms=100)
    assert screen.texts == ["v5", "dasza v4", "v5 again", "hand v4"]
    assert (await client.xpending(stream_key("dc"), GROUP))["pending"] == 0


async def test_an_older_version_is_dropped_between_direct_and_relayed_delivery(client: Redis) -> None:
    """A Discord process showed version 7 itself; a Telegram process's hand-over of version 6 for the same
    Discord reader comes later through the stream: dropped."""
    shown = Screen()
    await RedisRelay(client, "dc", shown).dispatch([msg(BORIS, "v7", version=7)])
    await RedisRelay(client, "tg", Screen()).dispatch([msg(BORIS, "v6", version=6)])
    consumer = RelayConsumer(client, "dc", shown, name="dc-1")
    await consumer.ensure_group()
    await consumer.poll(block_ms=100)
    assert shown.texts == ["v7"]


async def test_a_slot_being_shown_elsewhere_waits(client: Redis) -> None:
    guard = Guard(client, lease_ms=5_000)
    first, second = msg(BORIS, "v1", version=1), msg(BORIS, "v2", version=2)
    assert await guard.claim(first, "e1", "dc-a") is Claim.GO
    assert await guard.claim(second, "e2", "dc-b") is Claim.BUSY
    await guard.commit(first, "e1", "dc-a")
    assert await guard.claim(first, "e1", "dc-b") is Claim.DONE
    assert await guard.claim(second, "e2", "dc-b") is Claim.GO


async def test_a_failed_delivery_stays_pending_and_is_shown_later(client: Redis) -> None:
    await RedisRelay(client, "tg", Screen()).dispatch([msg(BORIS, "later")])
    screen = Screen()
    calls = 0

    async def flaky(message: Message) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise TimeoutError("platform timed out")
        await screen(message)

    consumer = RelayConsumer(client, "dc", flaky, name="dc-1", min_idle_ms=50)
    await consumer.ensure_group()
    await consumer.poll(block_ms=100)
    assert screen.texts == [] and consumer.failed == 1
    await asyncio.sleep(0.1)
    await consumer.poll(block_ms=10)
    assert screen.texts == ["later"]


async def test_every_key_has_a_lifetime(client: Redis) -> None:
    await RedisRelay(client, "tg", Screen()).dispatch(
        [msg(ALA, "own"), msg(BORIS, "b"), msg(BORIS, "free", key=None)]
    )
    consumer = RelayConsumer(client, "dc", Screen(), name="dc-1")
    await consumer.ensure_group()
    await consumer.poll(block_ms=100)
    keys = [k.decode() for k in await client.keys("*")]
    assert keys and all(k.startswith("thousand:{r") for k in keys)
    kinds = {k.rsplit("}:", 1)[1].split(":")[0] for k in keys}
    assert kinds == {"out", "shown", "done"}  # no lease left behind
    for key in keys:
        assert await client.ttl(key) > 0, key


async def test_a_stream_a_consumer_created_has_a_lifetime(client: Redis) -> None:
    consumer = RelayConsumer(client, "web", Screen(), name="web-1")
    await consumer.ensure_group()
    assert 0 < await client.ttl(stream_key("web")) <= 86_400
    await consumer.ensure_group()  # again: the group exists, nothing changes
    assert await consumer.poll(block_ms=10) == 0


async def test_entries_too_old_are_acknowledged_unshown(client: Redis) -> None:
    await RedisRelay(client, "tg", Screen()).dispatch([msg(BORIS, "stale")])
    screen = Screen()
    loop = asyncio.get_running_loop()
    consumer = RelayConsumer(client, "dc", screen, name="dc-1", max_age=60, clock=lambda: 1e12 + loop.time())
    await consumer.ensure_group()
    await consumer.poll(block_ms=100)
    assert screen.texts == [] and consumer.skipped == 1
    assert (await client.xpending(stream_key("dc"), GROUP))["pending"] == 0


async def test_memory_relay_is_direct_and_drops_an_older_version() -> None:
    tg, dc = Screen(), Screen()
    relay = MemoryRelay({"tg": tg, "dc": dc})
    await relay.dispatch([msg(ALA, "a2", version=2), msg(BORIS, "b2", version=2)])
    await relay.dispatch([msg(ALA, "a1", version=1), msg(ALA, "a2 again", version=2), msg(EVE, "nobody")])
    assert tg.texts == ["a2", "a2 again"] and dc.texts == ["b2"]
    assert relay.dropped == 2


async def test_a_process_killed_mid_deal_is_taken_over_by_the_other(
    client: Redis, redis_url: str, tmp_path: Path
) -> None:
    """Two processes of one platform: the first is SIGKILLed while showing the fourth of ten messages (its
    lease held, its entries unacknowledged); this process, the second consumer, takes over the rest."""
    await RedisRelay(client, "tg", Screen()).dispatch(
        [msg(BORIS, f"m{i}", key=f"k{i}", version=i + 1) for i in range(10)]
    )
    out = tmp_path / "shown.txt"
    worker = Path(__file__).with_name("relay_worker.py")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(worker),
        redis_url,
        str(out),
        "--die-at",
        "m3",
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert await asyncio.wait_for(proc.wait(), 20) == -signal.SIGKILL
    first = out.read_text().split()
    assert first == ["m0", "m1", "m2"]
    screen = Screen()
    guard = Guard(client, lease_ms=400)
    survivor = RelayConsumer(client, "dc", screen, name="dc-survivor", guard=guard, min_idle_ms=200)
    for _ in range(40):
        await survivor.poll(block_ms=50)
        if (await client.xpending(stream_key("dc"), GROUP))["pending"] == 0:
            break
        await asyncio.sleep(0.05)
    assert sorted(first + screen.texts) == sorted(f"m{i}" for i in range(10))
    assert len(first + screen.texts) == 10


async def test_on_a_redis_cluster(redis_cluster: LocalRedisCluster, redis_prefix: str) -> None:
    """Each script's keys share one hash slot, a stream is one key: the relay runs on Redis Cluster."""
    client = RedisCluster.from_url(redis_cluster.url)
    try:
        screen = Screen()
        await RedisRelay(client, "tg", Screen(), prefix=redis_prefix).dispatch(
            [msg(BORIS, f"m{i}", key=f"k{i % 3}", version=10 - i) for i in range(6)]
        )
        consumer = RelayConsumer(client, "dc", screen, name="dc-1", prefix=redis_prefix)
        await consumer.ensure_group()
        await consumer.poll(block_ms=100)
        assert screen.texts == ["m0", "m1", "m2"]  # m3..m5 are older versions of the same keys
        assert consumer.skipped == 3
    finally:
        await client.aclose()


async def test_a_message_an_adapter_showed_itself_drops_a_later_older_copy(client: Redis) -> None:
    """The runtime sends its own platform's messages the usual way and only notes them (`Guard.note`)."""
    await Guard(client).note(msg(BORIS, "v7", version=7))
    await RedisRelay(client, "tg", Screen()).dispatch(
        [msg(BORIS, "v6", version=6), msg(BORIS, "v7 again", version=7)]
    )
    screen = Screen()
    consumer = RelayConsumer(client, "dc", screen, name="dc-1")
    await consumer.ensure_group()
    await consumer.poll(block_ms=100)
    assert screen.texts == ["v7 again"]
