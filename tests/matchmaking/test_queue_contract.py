"""One contract, both queues: `MemoryQueue` on a fake clock, `RedisQueue` on a real redis-server and on a
real 3-node Redis Cluster. Times are passed explicitly (`now`), so waiting is simulated the same way on
both; only key lifetimes (entry expiry) run on Redis's real clock, with sub-second lifetimes.

The safety properties each broke once on purpose (see docs/TESTING.md): double seating, a blocked pair
matched, a cancelled player seated, a player of a platform with no live process matched."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest
from kit import Clock
from redis_server import LocalRedisCluster

from bot.matchmaking import (
    CancelOutcome,
    JoinOutcome,
    MatchConfig,
    MatchQueue,
    MemoryQueue,
    Options,
    Player,
    RedisQueue,
)


@dataclass
class Backend:
    name: str
    queue: MatchQueue
    advance: Callable[[float], Awaitable[None]]
    another: Callable[[], MatchQueue]
    extra: list[MatchQueue] = field(default_factory=list)

    def second(self) -> MatchQueue:
        queue = self.another()
        if queue is not self.queue:
            self.extra.append(queue)
        return queue


@pytest.fixture
def config() -> MatchConfig:
    return MatchConfig()


T0 = time.time()


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
async def backend(
    request: pytest.FixtureRequest, redis_prefix: str, config: MatchConfig
) -> AsyncIterator[Backend]:
    if request.param == "memory":
        clock = Clock(time.time())

        async def advance(seconds: float) -> None:
            clock.now += seconds

        memory = MemoryQueue(config, clock=clock)
        backend = Backend("memory", memory, advance, lambda: memory)
    else:
        cluster = request.param == "redis-cluster"
        if cluster:
            local: LocalRedisCluster = request.getfixturevalue("redis_cluster")
            url = local.url
        else:
            url = request.getfixturevalue("redis_url")

        def open_queue() -> MatchQueue:
            return RedisQueue.from_url(url, prefix=redis_prefix, cluster=cluster, config=config)

        backend = Backend(request.param, open_queue(), asyncio.sleep, open_queue)
    for platform in ("tg", "dc", "web"):
        await backend.queue.heartbeat(platform)
    yield backend
    for queue in {id(q): q for q in [backend.queue, *backend.extra]}.values():
        await queue.close()


def player(n: int, platform: str = "tg") -> Player:
    return Player(platform, str(n), f"Player {n}", "en")


THREE = Options("polish", 3, "normal")


async def now_of(backend: Backend) -> float:
    if isinstance(backend.queue, MemoryQueue):
        return backend.queue._clock()
    return time.time()


async def test_join_twice_is_refused_and_status_counts_the_pool(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    assert (await q.join(player(1), 1500, THREE, now)).outcome is JoinOutcome.QUEUED
    assert (await q.join(player(1), 1500, THREE, now)).outcome is JoinOutcome.ALREADY_QUEUED
    await q.join(player(2), 1600, THREE, now)
    await q.join(player(3), 1500, Options("polish", 4, "normal"), now)
    status = await q.status(player(1).key, now + 10)
    assert status.queued and status.waiting == 2 and status.waited == pytest.approx(10)
    assert not status.computers_offered
    assert (await q.status(player(1).key, now + 61)).computers_offered
    assert not (await q.status(player(9).key, now)).queued


async def test_close_ratings_form_one_table_exactly_once(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    for n, rating in enumerate((1500, 1540, 1480, 2400)):
        await q.join(player(n, ("tg", "dc", "web", "tg")[n]), rating, THREE, now)
    matches = await q.match(now + 1)
    assert len(matches) == 1
    match = matches[0]
    assert sorted(e.player.key for e in match.players) == ["dc:1", "tg:0", "web:2"]
    assert match.spread == 60 and match.computers == 0 and match.preset == "polish"
    assert await q.match(now + 1) == []
    assert (await q.get_match(match.match_id)) == match
    for key in ("tg:0", "dc:1", "web:2"):
        assert await q.seated_at(key) == match.match_id
        status = await q.status(key, now + 2)
        assert not status.queued and status.match_id == match.match_id
        cancelled = await q.cancel(key)
        assert cancelled.outcome is CancelOutcome.MATCHED and cancelled.match_id == match.match_id
        platform, user_id = key.split(":")
        rejoin = await q.join(player(int(user_id), platform), 1500, THREE, now + 3)
        assert rejoin.outcome is JoinOutcome.SEATED and rejoin.table_id == match.match_id
    assert (await q.status("tg:3", now + 2)).queued  # the far one keeps waiting
    await q.unseat("tg:0")
    assert (await q.join(player(0), 1500, THREE, now + 3)).outcome is JoinOutcome.QUEUED


async def test_a_cancelled_player_is_never_seated(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    for n in range(3):
        await q.join(player(n), 1500, THREE, now)
    assert (await q.cancel("tg:1")).outcome is CancelOutcome.CANCELLED
    assert (await q.cancel("tg:1")).outcome is CancelOutcome.NOT_QUEUED
    assert await q.match(now + 1) == []
    await q.join(player(3), 1500, THREE, now + 2)
    [match] = await q.match(now + 3)
    assert "tg:1" not in {e.player.key for e in match.players}
    assert await q.seated_at("tg:1") is None


async def test_blocked_players_are_never_at_one_table(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    await q.block("tg:0", "tg:1")
    assert await q.blocked_by("tg:0") == {"tg:1"}
    for n in range(3):
        await q.join(player(n), 1500, THREE, now)
    assert await q.match(now + 1) == []  # 0 and 1 are two of only three
    await q.join(player(3), 1500, THREE, now + 2)
    [match] = await q.match(now + 3)
    seated = {e.player.key for e in match.players}
    assert not {"tg:0", "tg:1"} <= seated
    # The block works both ways: 1 never sits with 0 either, whoever blocked whom.
    await q.unblock("tg:0", "tg:1")
    assert await q.blocked_by("tg:0") == set()


async def test_a_player_whose_platform_is_down_is_not_matched(backend: Backend, redis_prefix: str) -> None:
    q = backend.queue
    now = await now_of(backend)
    await q.join(player(0, "tg"), 1500, THREE, now)
    await q.join(player(1, "console"), 1500, THREE, now)  # no console process sent a heartbeat
    await q.join(player(2, "web"), 1500, THREE, now)
    assert await q.match(now + 1) == []
    await q.heartbeat("console")
    [match] = await q.match(now + 2)
    assert len(match.players) == 3


async def test_the_window_widens_with_the_wait(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    for n, rating in enumerate((1500, 1550, 1900)):
        await q.join(player(n), rating, THREE, now)
    assert await q.match(now + 1) == []  # window 105 around the oldest
    assert await q.match(now + 50) == []  # 350: 1900 is 400 away
    [match] = await q.match(now + 61)  # 405
    assert match.spread == 400


async def test_a_frequent_leaver_becomes_eligible_later(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    assert await q.record_leave("tg:0") == 1
    assert await q.record_leave("tg:0") == 2
    joined = await q.join(player(0), 1500, THREE, now)
    assert joined.eligible_at == pytest.approx(now + 30)
    for n in (1, 2):
        await q.join(player(n), 1500, THREE, now)
    assert await q.match(now + 29) == []
    [match] = await q.match(now + 31)
    assert "tg:0" in {e.player.key for e in match.players}


async def test_take_with_computers_after_the_wait(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    await q.join(player(0), 1500, Options("russian", 4, "fast"), now)
    assert await q.take_with_computers("tg:0", now + 59) is None
    match = await q.take_with_computers("tg:0", now + 60)
    assert match is not None and match.computers == 3 and match.pool == "russian:4:fast"
    assert [e.player.key for e in match.players] == ["tg:0"]
    assert await q.take_with_computers("tg:0", now + 61) is None
    assert await q.seated_at("tg:0") == match.match_id
    assert (await q.cancel("tg:0")).outcome is CancelOutcome.MATCHED


async def test_any_preset_waits_in_every_pool_and_is_seated_once(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    await q.join(player(0), 1500, Options("any", 3, "normal"), now)
    for n in (1, 2):
        await q.join(player(n), 1500, Options("russian", 3, "normal"), now)
    for n in (3, 4):
        await q.join(player(n), 1500, Options("estonian", 3, "normal"), now)
    matches = await q.match(now + 1)
    assert len(matches) == 1  # 0 went to one pool, the other pool is short of a player
    assert "tg:0" in {e.player.key for e in matches[0].players}


@pytest.mark.parametrize("config", [MatchConfig(entry_seconds=1.0)])
async def test_an_expired_entry_is_never_matched_and_renewal_keeps_one(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    for n in range(3):
        await q.join(player(n), 1500, THREE, now)
    for _ in range(3):  # 1.5 s: the unrenewed entry expired, the renewed ones never went 1 s unrenewed
        await backend.advance(0.5)
        assert await q.renew(["tg:0", "tg:1", "tg:9"]) == 2
    now = await now_of(backend)
    await q.join(player(3), 1500, THREE, now)
    [match] = await q.match(now)
    assert "tg:2" not in {e.player.key for e in match.players}
    assert not (await q.status("tg:2", now)).queued


async def test_every_process_matching_at_once_seats_each_player_once(backend: Backend) -> None:
    now = await now_of(backend)
    queues = [backend.queue, *(backend.second() for _ in range(5))]
    await asyncio.gather(*(queues[n % 6].join(player(n), 1500 + n % 7, THREE, now) for n in range(90)))
    rounds = await asyncio.gather(*(q.match(now + 1) for q in queues for _ in range(3)))
    seated = [e.player.key for matches in rounds for m in matches for e in m.players]
    assert len(seated) == len(set(seated)) == 90


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError):
        Options("russian", 2, "normal")
    with pytest.raises(ValueError):
        Options("polish", 3, "sleepy")
    with pytest.raises(ValueError):
        Player("tg", "1:2", "x")


async def test_any_is_matched_with_its_rating_in_each_preset(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    ratings = {"polish": 2100.0, "estonian": 1500.0, "russian": 1800.0}
    with pytest.raises(ValueError, match="estonian"):
        await q.join(player(0), {"polish": 1500.0}, Options("any", 3, "normal"), now)
    await q.join(player(0), ratings, Options("any", 3, "normal"), now)
    for n in (1, 2):
        await q.join(player(n), 1500, Options("polish", 3, "normal"), now)
        await q.join(player(n + 10), 1510, Options("estonian", 3, "normal"), now)
    [match] = await q.match(now + 1)
    assert match.pool == "estonian:3:normal"
    assert {e.player.key: e.rating for e in match.players}["tg:0"] == 1500.0
    assert match.spread == 10


async def test_any_takes_computers_at_a_polish_table(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    await q.join(player(0), {"polish": 1700.0, "estonian": 1500.0, "russian": 1600.0}, Options("any"), now)
    match = await q.take_with_computers("tg:0", now + 60)
    assert match is not None and match.pool == "polish:3:normal" and match.computers == 2
    assert match.players[0].rating == 1700.0


async def test_a_match_nobody_built_is_handed_to_another_process(backend: Backend) -> None:
    q, other = backend.queue, backend.second()
    now = await now_of(backend)
    for n in range(6):
        await q.join(player(n), 1500 + n, THREE, now)
    first, second = await q.match(now + 1)  # the forming process builds `first`, dies before `second`
    assert await q.built(first.match_id, "table-1")
    for entry in first.players:
        assert await q.seated_at(entry.player.key) == "table-1"
        assert (await q.cancel(entry.player.key)).match_id == "table-1"
    assert await other.unbuilt(now + 10) == []  # within the grace
    [late] = await other.unbuilt(now + 32)
    assert late == second
    assert await other.unbuilt(now + 33) == []  # leased to the first asker
    await q.unseat(second.players[0].player.key)  # left meanwhile: stays unseated
    assert await other.built(second.match_id, "table-2")
    assert await q.seated_at(second.players[0].player.key) is None
    assert await q.seated_at(second.players[1].player.key) == "table-2"
    assert await other.unbuilt(now + 100) == []
    assert not await q.built("no-such-match", "table-3")


def test_the_deployment_settings_reach_the_matcher(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.settings import Settings

    monkeypatch.setenv("PUBLIC_COMPUTERS_AFTER", "45")
    monkeypatch.setenv("PUBLIC_ENTRY_SECONDS", "90")
    monkeypatch.setenv("PUBLIC_SPREAD_MAX", "500")
    config = MatchConfig.from_settings(Settings())
    assert (config.computers_after, config.entry_seconds, config.spread_max) == (45, 90, 500)
    assert config.window(10_000) == 500 and config.window(0) == 100


async def test_any_fitting_two_tables_sits_at_the_polish_one(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    await q.join(player(0), 1500, Options("any", 3, "normal"), now)
    for n in (1, 2):
        await q.join(player(n), 1500, Options("estonian", 3, "normal"), now)
        await q.join(player(n + 10), 1500, Options("polish", 3, "normal"), now)
    [match] = await q.match(now + 1)
    assert match.pool == "polish:3:normal" and "tg:0" in {e.player.key for e in match.players}


@pytest.mark.parametrize("config", [MatchConfig(scan_candidates=4)])
async def test_a_dense_window_still_yields_the_nearest_players(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    await q.join(player(0), 1500, THREE, now - 1)  # the anchor: waited longest
    for n in range(10):
        await q.join(player(n + 10), 1400 + n, THREE, now)  # many within the window, below
    await q.join(player(1), 1501, THREE, now)
    await q.join(player(2), 1502, THREE, now)
    matches = await q.match(now + 0.5)
    first = next(m for m in matches if "tg:0" in {e.player.key for e in m.players})
    assert {e.player.key for e in first.players} == {"tg:0", "tg:1", "tg:2"}
    assert first.spread == 2
