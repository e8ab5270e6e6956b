"""Matchmaking under load: simulated players arriving across several OS processes on one real Redis.

Every process (like every bot process in production) queues its share of the arrivals, runs the matcher
every `--match-every` seconds (confirming each table it forms as built, as the table builder will),
renews its waiting players' entries, sends its platform heartbeats, and cancels some players while they
wait; a few players block someone who arrived before them. When the
arrivals are over and a short drain has passed, the parent collects every match every process formed
and checks them against what each process queued and cancelled.

    python bench/matchmaking.py [--players 10000] [--rate 100] [--processes 4] [--redis-url URL] [--cluster]

Redis (bench/redis_target.py): `--redis-url` (or REDIS_URL) names the server, `--cluster` says it is a
Redis Cluster (the queue's clients are then cluster clients); without a URL a private redis-server (or,
with `--cluster`, a private 3-master cluster) is started on loopback (tests/redis_server.py).
Every request is counted (bench/tally.py): joins queued or refused by outcome, cancels done or lost to a
match formed first (intended: a race the bench provokes), blocks, matcher calls, confirmations of built
tables (refused: the match record expired), renewals. Past 1% unintended refusals the figures below are
withheld (null, with the reason) and the exit status is 1.
Prints one JSON object: `wait_p50_s` / `wait_p99_s` (joining to a full table), `spread_p50` /
`spread_p99` / `spread_max` (rating spread within a table), `seated_twice` (must be 0), `lost` (queued,
not cancelled, neither seated nor still waiting: must be 0), `cancelled_seated` (must be 0),
`blocked_pairs_seated` (must be 0), `round_trips_per_player` (every request the processes wrote to
Redis, counted at the connection, divided by the players queued; target <= 5), `match_call_p99_ms`.
Progress goes to stderr when it is a terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing as mp
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.redis_target import add_options, redis_target  # noqa: E402
from bench.tally import Tally, emit  # noqa: E402
from bot.matchmaking import (  # noqa: E402
    CancelOutcome,
    JoinOutcome,
    MatchConfig,
    Options,
    Player,
    RedisQueue,
)

PLATFORMS = ("tg", "dc", "web")
INTENDED = frozenset({"cancel:matched"})
"""A cancel that a match formed first beat: the race the bench provokes by cancelling waiting players."""
RATES = (
    "wait_p50_s",
    "wait_p99_s",
    "round_trips_per_player",
    "match_call_p50_ms",
    "match_call_p99_ms",
)
# What people ask for: mostly the default (Polish, three, normal pace), some "any", some other tables.
CHOICES: tuple[tuple[Options, float], ...] = (
    (Options("polish", 3, "normal"), 0.55),
    (Options("any", 3, "normal"), 0.15),
    (Options("polish", 4, "normal"), 0.10),
    (Options("russian", 3, "fast"), 0.10),
    (Options("polish", 2, "slow"), 0.10),
)


@dataclass
class WorkerResult:
    joined: dict[str, float] = field(default_factory=dict)
    refused: int = 0
    tally: dict[str, dict[str, int]] = field(default_factory=lambda: {"accepted": {}, "refused": {}})
    cancelled: list[str] = field(default_factory=list)
    blocks: list[tuple[str, str]] = field(default_factory=list)
    matches: list[dict[str, Any]] = field(default_factory=list)
    match_call_ms: list[float] = field(default_factory=list)
    round_trips: int = 0


@dataclass(frozen=True)
class Plan:
    url: str
    cluster: bool
    prefix: str
    players: int
    rate: float
    processes: int
    seed: int
    start: float
    drain: float
    match_every: float
    cancel_share: float
    block_share: float


def arrivals(plan: Plan, worker: int) -> list[tuple[float, Player, float, Options, float | None, int | None]]:
    """This worker's players: (arrival time, player, rating, options, cancel after, index to block)."""
    rng = random.Random(plan.seed)
    out = []
    for n in range(plan.players):
        at = plan.start + n / plan.rate
        platform = rng.choice(PLATFORMS)
        rating = min(2600.0, max(400.0, rng.gauss(1500.0, 300.0)))
        options = rng.choices([c for c, _ in CHOICES], [w for _, w in CHOICES])[0]
        cancel = rng.uniform(0.0, 3.0) if rng.random() < plan.cancel_share else None
        block = rng.randrange(max(0, n - 300), n) if n and rng.random() < plan.block_share else None
        if n % plan.processes == worker:
            out.append((at, Player(platform, str(n), f"P{n}"), rating, options, cancel, block))
    return out


async def work(plan: Plan, worker: int, joined_count: Synchronized[int]) -> WorkerResult:
    config = MatchConfig()
    queue = RedisQueue.from_url(plan.url, prefix=plan.prefix, cluster=plan.cluster, config=config)
    result = WorkerResult()
    tally = Tally()
    mine = arrivals(plan, worker)
    # The platform of every player, for block targets queued by other workers.
    all_platforms = arrivals_platforms(plan)
    waiting: set[str] = set()
    stop = asyncio.Event()
    tasks: set[asyncio.Task[None]] = set()

    async def heartbeats() -> None:
        while not stop.is_set():
            for platform in PLATFORMS:
                await queue.heartbeat(platform)
                tally.accept("heartbeat")
            await sleep_or(stop, config.heartbeat_seconds / 3)

    async def matcher() -> None:
        while not stop.is_set():
            began = time.perf_counter()
            matches = await queue.match()
            result.match_call_ms.append((time.perf_counter() - began) * 1000)
            tally.accept("match")
            for m in matches:
                # The table builder's confirmation (seats the players at the table): one round trip.
                if await queue.built(m.match_id, f"public:{m.match_id}"):
                    tally.accept("built")
                else:
                    tally.refuse("built:expired")
                result.matches.append(
                    {
                        "id": m.match_id,
                        "players": [e.player.key for e in m.players],
                        "joined": [e.joined for e in m.players],
                        "formed": m.formed,
                        "spread": m.spread,
                    }
                )
            await sleep_or(stop, plan.match_every)

    async def renewer() -> None:
        while not stop.is_set():
            await sleep_or(stop, config.entry_seconds / 6)
            if waiting:
                await queue.renew(sorted(waiting))
                tally.accept("renew")

    async def cancel_later(key: str, after: float) -> None:
        await asyncio.sleep(after)
        if key in waiting:
            answer = await queue.cancel(key)
            if answer.outcome is CancelOutcome.CANCELLED:
                result.cancelled.append(key)
                tally.accept("cancel")
            else:
                tally.refuse(f"cancel:{answer.outcome.value}")
            waiting.discard(key)

    async def arrive(
        player: Player, rating: float, options: Options, cancel: float | None, block: int | None
    ) -> None:
        if block is not None:
            target = f"{all_platforms[block]}:{block}"
            await queue.block(player.key, target)
            tally.accept("block")
            result.blocks.append((player.key, target))
        now = time.time()
        answer = await queue.join(player, rating, options, now)
        if answer.outcome is not JoinOutcome.QUEUED:
            result.refused += 1
            tally.refuse(f"join:{answer.outcome.value}")
            return
        tally.accept("join")
        result.joined[player.key] = now
        waiting.add(player.key)
        with joined_count.get_lock():
            joined_count.value += 1
        if cancel is not None:
            spawn(cancel_later(player.key, cancel))

    def spawn(coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    await asyncio.sleep(max(0.0, plan.start - time.time() - 0.5))
    for platform in PLATFORMS:
        await queue.heartbeat(platform)
    background = [asyncio.ensure_future(f()) for f in (heartbeats, matcher, renewer)]
    for at, player, rating, options, cancel, block in mine:
        delay = at - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        spawn(arrive(player, rating, options, cancel, block))
    await asyncio.sleep(plan.drain)
    stop.set()
    for task in list(tasks):
        task.cancel()
    await asyncio.gather(*background, *tasks, return_exceptions=True)
    # Seen by this process only as far as its own matcher went; the parent merges every process's.
    result.round_trips = queue.round_trips
    result.tally = {"accepted": dict(tally.accepted), "refused": dict(tally.refused)}
    await queue.close()
    return result


def arrivals_platforms(plan: Plan) -> list[str]:
    rng = random.Random(plan.seed)
    platforms = []
    for n in range(plan.players):
        platforms.append(rng.choice(PLATFORMS))
        rng.gauss(1500.0, 300.0)
        rng.choices([c for c, _ in CHOICES], [w for _, w in CHOICES])
        if rng.random() < plan.cancel_share:
            rng.uniform(0.0, 3.0)
        if n and rng.random() < plan.block_share:
            rng.randrange(max(0, n - 300), n)
    return platforms


async def sleep_or(event: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)


def worker_main(plan: Plan, worker: int, out: str, joined_count: Synchronized[int]) -> None:
    result = asyncio.run(work(plan, worker, joined_count))
    Path(out).write_text(json.dumps(asdict(result)))


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def still_waiting(url: str, prefix: str, keys: Sequence[str], cluster: bool) -> set[str]:
    queue = RedisQueue.from_url(url, prefix=prefix, cluster=cluster)
    try:
        found = set()
        for key in keys:
            if (await queue.status(key)).queued:
                found.add(key)
        return found
    finally:
        await queue.close()


def run(**options: Any) -> dict[str, Any]:
    """Run the simulation against the Redis at `url` and return the figures (see the module doc), the
    counts under `counted`; `rate_withheld` says why the figures are null when they are. The options are
    `run_counted`'s."""
    return run_counted(**options)[0]


def run_counted(
    *,
    url: str,
    cluster: bool = False,
    players: int,
    rate: float,
    processes: int = 4,
    seed: int = 1,
    drain: float = 10.0,
    match_every: float = 0.25,
    cancel_share: float = 0.10,
    block_share: float = 0.02,
    prefix: str | None = None,
    show: bool = False,
) -> tuple[dict[str, Any], int]:
    """`run`, and the exit status: 1 when more than 1% of the requests were refused unintentionally."""
    plan = Plan(
        url=url,
        cluster=cluster,
        prefix=prefix or f"bench-mm-{random.randrange(1 << 30):x}",
        players=players,
        rate=rate,
        processes=processes,
        seed=seed,
        start=time.time() + 3.0,
        drain=drain,
        match_every=match_every,
        cancel_share=cancel_share,
        block_share=block_share,
    )
    ctx = mp.get_context("spawn")
    joined_count: Synchronized[int] = ctx.Value("i", 0)
    with tempfile.TemporaryDirectory(prefix="bench-mm-") as tmp:
        outs = [str(Path(tmp) / f"worker-{i}.json") for i in range(processes)]
        procs = [
            ctx.Process(target=worker_main, args=(plan, i, outs[i], joined_count)) for i in range(processes)
        ]
        for p in procs:
            p.start()
        while any(p.is_alive() for p in procs):
            if show:
                elapsed = max(0.0, time.time() - plan.start)
                sys.stderr.write(f"\r{elapsed:6.1f} s  queued {joined_count.value}/{players}   ")
                sys.stderr.flush()
            time.sleep(0.5)
        if show:
            sys.stderr.write("\n")
        for p in procs:
            p.join()
            if p.exitcode != 0:
                raise SystemExit(f"a worker failed (exit {p.exitcode})")
        results = [json.loads(Path(o).read_text()) for o in outs]

    joined: dict[str, float] = {}
    cancelled: set[str] = set()
    blocks: set[frozenset[str]] = set()
    matches: list[dict[str, Any]] = []
    calls: list[float] = []
    trips = refused = 0
    tally = Tally(intended=INTENDED)
    for r in results:
        tally.merge(r["tally"])
        joined.update(r["joined"])
        cancelled.update(r["cancelled"])
        blocks.update(frozenset(pair) for pair in r["blocks"])
        matches.extend(r["matches"])
        calls.extend(r["match_call_ms"])
        trips += r["round_trips"]
        refused += r["refused"]
    seat_count: dict[str, int] = {}
    waits: list[float] = []
    spreads: list[float] = []
    blocked_seated = 0
    for m in matches:
        spreads.append(m["spread"])
        for key, joined_at in zip(m["players"], m["joined"], strict=True):
            seat_count[key] = seat_count.get(key, 0) + 1
            waits.append(m["formed"] - joined_at)
        seated_here = m["players"]
        blocked_seated += sum(
            1 for i, a in enumerate(seated_here) for b in seated_here[i + 1 :] if frozenset((a, b)) in blocks
        )
    seated = set(seat_count)
    waiting = asyncio.run(still_waiting(url, plan.prefix, sorted(set(joined) - seated - cancelled), cluster))
    lost = set(joined) - cancelled - seated - waiting
    figures = {
        "redis": "cluster" if cluster else "single",
        "players": players,
        "rate_per_s": rate,
        "processes": processes,
        "queued": len(joined),
        "refused": refused,
        "tables": len(matches),
        "seated": len(seated),
        "cancelled": len(cancelled),
        "still_waiting": len(waiting),
        "wait_p50_s": round(percentile(waits, 0.50), 2),
        "wait_p99_s": round(percentile(waits, 0.99), 2),
        "spread_p50": round(percentile(spreads, 0.50), 1),
        "spread_p99": round(percentile(spreads, 0.99), 1),
        "spread_max": round(max(spreads, default=0.0), 1),
        "seated_twice": sum(1 for n in seat_count.values() if n > 1),
        "lost": len(lost),
        "cancelled_seated": len(cancelled & seated),
        "blocked_pairs_seated": blocked_seated,
        "round_trips_per_player": round(trips / max(1, len(joined)), 3),
        "match_calls": len(calls),
        "match_call_p50_ms": round(percentile(calls, 0.50), 2),
        "match_call_p99_ms": round(percentile(calls, 0.99), 2),
        "drain_s": drain,
    }
    return tally.report(figures, RATES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument(
        "--rate", type=float, default=100.0, help="arrivals per second, all processes together"
    )
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument(
        "--drain", type=float, default=10.0, help="seconds of matching after the last arrival"
    )
    parser.add_argument("--match-every", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=1)
    add_options(parser)
    args = parser.parse_args(argv)
    kwargs: dict[str, Any] = {
        "players": args.players,
        "rate": args.rate,
        "processes": args.processes,
        "drain": args.drain,
        "match_every": args.match_every,
        "seed": args.seed,
        "show": sys.stderr.isatty(),
    }
    with redis_target(args.redis_url, args.cluster) as (url, cluster):
        figures, status = run_counted(url=url, cluster=cluster, **kwargs)
    return emit(figures, status, indent=2)


if __name__ == "__main__":
    raise SystemExit(main())
