"""The public ladder: Glicko-2 against Glickman's published example, the pairwise reading of a game of
three or four, the leaver's loss, and the ladder's storage on memory, redis-server and Redis Cluster
(idempotent per game, history, top of established players, every key with a lifetime)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from redis_server import LocalRedisCluster

from bot.ladder import MAX_RD, Rating, age, pairwise_results, rate, update_game
from bot.matchmaking.ladder_store import LadderConfig, LadderStore, MemoryLadder, RedisLadder
from bot.storage import RedisStore


def test_glickmans_example() -> None:
    """Glickman, "Example of the Glicko-2 system" (2012): 1500/200/0.06 against 1400/30 (won),
    1550/100 (lost), 1700/300 (lost), tau 0.5 -> 1464.06, 151.52, 0.05999."""
    before = Rating(1500, 200, 0.06)
    after = rate(before, [(Rating(1400, 30), 1), (Rating(1550, 100), 0), (Rating(1700, 300), 0)])
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)
    assert after.games == 1


def test_idle_periods_grow_the_rd_up_to_a_newcomers() -> None:
    settled = Rating(1700, 50, 0.06, games=40)
    assert age(settled, 0) == settled
    assert age(settled, 1).rd == pytest.approx(173.7178 * ((50 / 173.7178) ** 2 + 0.06**2) ** 0.5)
    assert age(settled, 10).rd > age(settled, 1).rd
    assert age(settled, 10_000).rd == MAX_RD
    assert rate(settled, []).rd == age(settled, 1).rd


def test_a_game_is_pairwise_results_and_a_leaver_lost_to_everyone() -> None:
    results = pairwise_results({"a": 1000, "b": 600, "c": 600})
    assert sorted(results["a"]) == [("b", 1.0), ("c", 1.0)]
    assert sorted(results["b"]) == [("a", 0.0), ("c", 0.5)]
    left = pairwise_results({"a": 900, "b": 300, "c": 200}, leavers=["a"])
    assert sorted(left["a"]) == [("b", 0.0), ("c", 0.0)]
    assert sorted(left["b"]) == [("a", 1.0), ("c", 1.0)]


def test_leaving_costs_rating_whatever_the_score() -> None:
    before = {p: Rating(1500, 80, 0.06, games=30) for p in "abc"}
    after = update_game(before, {"a": 900, "b": 300, "c": 200}, leavers=["a"])
    assert after["a"].rating < 1500 - 20
    assert after["b"].rating > 1500 and after["c"].rating < after["b"].rating
    stayed = update_game(before, {"a": 900, "b": 300, "c": 200})
    assert stayed["a"].rating > 1500 + 20


@pytest.fixture(params=["memory", "redis", "redis-cluster"])
async def ladder(request: pytest.FixtureRequest, redis_prefix: str) -> AsyncIterator[LadderStore]:
    config = LadderConfig(history=5, top_size=3)
    if request.param == "memory":
        store: LadderStore = MemoryLadder(config)
    else:
        cluster = request.param == "redis-cluster"
        if cluster:
            local: LocalRedisCluster = request.getfixturevalue("redis_cluster")
            url = local.url
        else:
            url = request.getfixturevalue("redis_url")
        store = RedisLadder(RedisStore.from_url(url, prefix=redis_prefix, cluster=cluster), config)
    yield store
    await store.close()


async def test_a_game_is_rated_once_and_kept_in_the_history(ladder: LadderStore) -> None:
    now = time.time()
    names = {"tg:1": "Ala", "dc:2": "Bob", "web:3": "Cyd"}
    changes = await ladder.apply_game(
        "polish", "g1", {"tg:1": 1000, "dc:2": 500, "web:3": 200}, names, now=now
    )
    assert changes is not None
    assert changes["tg:1"][0] == Rating() and changes["tg:1"][1].rating > 1500
    assert await ladder.apply_game("polish", "g1", {"tg:1": 1000, "dc:2": 500, "web:3": 200}, names) is None
    got = await ladder.get("polish", "tg:1", now)
    assert got == changes["tg:1"][1] and got.games == 1
    assert await ladder.get("estonian", "tg:1", now) == Rating()  # per preset
    [point] = await ladder.history("polish", "tg:1")
    assert point.game_id == "g1" and point.rating == pytest.approx(got.rating)
    for n in range(2, 9):
        await ladder.apply_game("polish", f"g{n}", {"tg:1": 1000, "dc:2": 500, "web:3": 200}, names)
    history = await ladder.history("polish", "tg:1")
    assert [p.game_id for p in history] == ["g4", "g5", "g6", "g7", "g8"]  # the last `history` kept
    assert history[-1].rating > history[0].rating


async def test_the_top_lists_established_players_best_first(ladder: LadderStore) -> None:
    names = {f"tg:{n}": f"P{n}" for n in range(5)}
    assert await ladder.top("polish") == []
    for n in range(40):
        scores = {"tg:0": 900, "tg:1": 600, "tg:2": 300} if n % 2 else {"tg:3": 800, "tg:4": 100, "tg:1": 50}
        await ladder.apply_game("polish", f"g{n}", scores, names)
    top = await ladder.top("polish", 10)
    # tg:0 and tg:3 won every game: their strength is unbounded above, their RD stays provisional.
    assert (await ladder.get("polish", "tg:3")).provisional
    assert [s.player_key for s in top] == ["tg:4", "tg:1"]
    assert all(not s.rating.provisional for s in top)
    assert top[0].name == "P4" and top[0].rating.rating > top[1].rating.rating


async def test_concurrent_games_of_one_player_are_both_counted(ladder: LadderStore) -> None:
    names: dict[str, str] = {}
    await asyncio.gather(
        *(ladder.apply_game("russian", f"g{n}", {"tg:1": 500, f"tg:{n + 10}": 100}, names) for n in range(6))
    )
    assert (await ladder.get("russian", "tg:1")).games == 6


async def test_every_ladder_key_has_a_lifetime(redis_url: str, redis_prefix: str) -> None:
    store = RedisLadder(RedisStore.from_url(redis_url, prefix=redis_prefix))
    await store.apply_game("polish", "g1", {"tg:1": 10, "tg:2": 5}, {})
    raw = aioredis.Redis.from_url(redis_url, decode_responses=True)
    keys = [k async for k in raw.scan_iter(match=f"{redis_prefix}:*")]
    assert {k.split("}:", 1)[1].split(":")[0] for k in keys} == {"r", "h", "game"}  # both provisional: no top
    assert all([await raw.pttl(k) > 0 for k in keys])
    await raw.aclose()
    await store.close()


async def test_a_leaver_is_rated_as_losing_to_everyone(ladder: LadderStore) -> None:
    scores = {"tg:1": 700, "dc:2": 300, "web:3": 100}
    changes = await ladder.apply_game("polish", "left", scores, {}, leavers=["tg:1"])
    assert changes is not None
    assert changes["tg:1"][1].rating < 1500 < changes["dc:2"][1].rating
    assert changes["web:3"][1].rating == pytest.approx(1500)  # beat the leaver, lost to dc:2: even
    assert [p.game_id for p in await ladder.history("polish", "tg:1")] == ["left"]


async def test_bad_games_are_refused_and_change_nothing(ladder: LadderStore) -> None:
    for scores, leavers, game in (
        ({"tg:1": 5}, [], "g"),
        ({"tg:1": 5, "tg:{2}": 1}, [], "g"),
        ({"tg:1": 5, "tg:2": 1}, ["tg:3"], "g"),
        ({"tg:1": 5, "tg:2": 1}, [], ""),
    ):
        with pytest.raises(ValueError):
            await ladder.apply_game("polish", game, scores, {}, leavers=leavers)
    assert await ladder.get("polish", "tg:1") == Rating()
