"""Redis Cluster capacity and failover, one server and a cluster side by side, through the Service.

Tables of three people (no computer players) play random legal moves through `Service.handle`, each
command from the chat it belongs to: a secret move (`give`, `discard`) pressed as its button in the
mover's private chat (a button names its table, as the hand's buttons do), every other move typed in
the table's group (`bot.vocabulary.typed`). Before each move the bench reads the table back (a second
store client, `Observer`), so its model of every table is the store's.

Every answer is counted (`bench/tally.py`): accepted moves, refusals by reason; the storage's own
answers, "temporarily unavailable" and "may or may not have been taken" (`StorageUncertain`), are
counted apart (expected during a failover). A phase whose other refusals pass 1% of its commands prints
no rates (null, the reason, exit status 1).

Phases, each on a Redis of its own (started here unless `--redis-url` is given):
- `one-server`: one redis-server (appendonly everysec), the baseline.
- `cluster`: 3 masters + 3 replicas (appendonly everysec): commands/s, accepted moves/s, round trips
  per move (`RedisStore.round_trips`), and each master's share of the commands processed (INFO
  commandstats deltas on each master, less the bench's own reads; the raw share as well), the Redis CPU
  per move (INFO cpu) and the rate at which the busiest master's core would be full.
- `cluster-wait`: the same with REDIS_WAIT_REPLICAS=1 (WAIT 1 after each save).
- `single-slots`: on one server, the Redis CPU per operation of the slots that stay single whatever the
  number of masters: `{sends}`, a platform's relay stream, `{mm}` (see `single_slots`).
- with `--failover`: `failover` and `failover-wait`: SIGKILL of one master mid-run (the one holding the
  slot of the `{deadlines}` tag: before issue 26 every save wrote there), then: the longest stall of
  the tables whose slot is on a surviving master, the time until every table of the killed master
  accepted a move again, acknowledged moves lost (each move the service answered as accepted, looked up
  in the final documents), moves stored while the mover was told they failed (or told they may have
  been taken), half-written tables (document and stream out of step) and live tables whose deadline has
  no entry in its index shard after the timer loop's sweep and a tick; `failover-no-replicas`: the same
  kill on 3 masters without replicas (`cluster-require-full-coverage no`): the other tables must go on,
  the lost node's players are told "storage unavailable".

    python bench/cluster.py [--tables 60] [--seconds 10] [--failover] [--failover-seconds 20]
        [--node-timeout-ms 2000] [--phases one-server,cluster,...] [--seed 1]
        [--redis-url URL --cluster]

`--redis-url URL --cluster`: the `cluster` and `cluster-wait` phases on that cluster (its masters found
by CLUSTER NODES); no failover there (the bench kills only what it started); a cluster URL without
`--cluster` is refused with a clear error (`bench/redis_target.check_mode`). Progress on stderr when it
is a terminal. Prints one JSON object: the phases by name and `ceilings` (moves/s per master, masters).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import platform
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.redis_nodes import LocalRedisCluster, RedisServer, command, parse_nodes  # noqa: E402
from bench.redis_target import check_mode  # noqa: E402
from bench.service import Observer, Table, refusal_reason  # noqa: E402
from bench.tally import Tally, emit  # noqa: E402
from bot import vocabulary  # noqa: E402
from bot.commands import SECRET_MOVES, encode_payload, from_payload, parse_text  # noqa: E402
from bot.handlers import Handlers  # noqa: E402
from bot.model import Command  # noqa: E402
from bot.service import Service  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.snapshot import encode_action  # noqa: E402
from bot.storage import RedisStore, StorageUnavailable  # noqa: E402
from bot.table import TableDoc  # noqa: E402
from core.game import GameState  # noqa: E402

RATES = (
    "moves_per_s",
    "commands_per_s",
    "p50_ms",
    "p99_ms",
    "moves_per_s_per_master",
    "redis_ceiling_moves_per_s",
)
UNAVAILABLE = frozenset({"unavailable"})
"""Refusal codes that say the storage failed (the outage's answer, not the bench's mistake)."""
PHASES = (
    "one-server",
    "cluster",
    "cluster-wait",
    "failover",
    "failover-wait",
    "failover-no-replicas",
    "single-slots",
)


def is_unavailable(code: str) -> bool:
    """The storage's own refusal: unavailable, or (issue 26) not known to be kept."""
    return code in UNAVAILABLE or "uncertain" in code or "unknown" in code


def wait_supported() -> bool:
    return "redis_wait_replicas" in Settings.model_fields


def settings_for(url: str, cluster: bool, prefix: str, *, wait: int = 0, **values: Any) -> Settings:
    """The bot's settings for a run on `url` (REDIS_WAIT_REPLICAS when `wait`: issue 26's WAIT)."""
    base: dict[str, Any] = {
        "redis_url": url,
        "redis_cluster": cluster,
        "redis_prefix": prefix,
        "ai_workers": 0,
        "charts": False,
        "command_limit": 0,
        "turn_seconds": 90,
    }
    if wait:
        if not wait_supported():
            raise RuntimeError("REDIS_WAIT_REPLICAS is not a setting yet (issue 26's WAIT has not landed)")
        base["redis_wait_replicas"] = wait
    base.update(values)
    return Settings(_env_file=None, **base)


def open_redis_store(settings: Settings) -> RedisStore:
    """The store as the bots open it (`bot.ops.runtime.open_store`: WAIT and cluster from the settings)."""
    from bot.ops.runtime import open_store

    store = open_store(settings)
    assert isinstance(store, RedisStore)
    return store


# --- driving the tables ---------------------------------------------------------------------------


@dataclass
class TableLog:
    """What one table's people saw: when their moves were accepted, which ones, and the refusals."""

    table: Table
    accepted_at: list[float] = field(default_factory=list)
    sent_at: list[float] = field(default_factory=list)
    """When each accepted move was sent (`accepted_at`: when its answer came)."""
    acked: list[tuple[str, int, str]] = field(default_factory=list)
    """(game serial, index in the game's actions, encoded action) of each move answered as accepted."""
    told_failed: list[tuple[str, int, str, str]] = field(default_factory=list)
    """The same for each move answered "unavailable" (or uncertain), with the code."""
    unavailable_at: list[float] = field(default_factory=list)
    uncertain_at: list[float] = field(default_factory=list)
    """Answers "may or may not have been taken" (a save the replicas did not confirm in time): the table
    did answer, so for its stalls these count as progress; whether the move stands the audit reads."""
    finished: bool = False
    last: Command | None = None
    last_at: tuple[str, int, str] | None = None
    """(serial, index, encoded action) of `last`."""
    unreadable_answers: Counter[str] = field(default_factory=Counter)
    """Answers to the last move sent again while the bench could not read the table (its node lost)."""


def command_for(table: Table, state: GameState, version: int, rng: random.Random) -> tuple[Command, str, str]:
    """A random legal move of the seat to act as its person sends it: a secret move as its button in the
    person's private chat, the rest typed in the group. (command, kind, encoded action)."""
    seat = state.to_act
    assert seat is not None, "a live game with nobody to act"
    legal = state.legal_actions(seat)
    action = legal[rng.randrange(len(legal))]
    mover = vocabulary.Mover.of_state(state, seat)
    name, args = vocabulary.words(action, mover)
    person = table.people[seat]
    if name in SECRET_MOVES:
        payload = encode_payload(name, args, version, table.group.key)
        return (
            from_payload(payload, table.privates[seat], person),
            f"{name} button in private",
            encode_action(seat, action),
        )
    command = parse_text(vocabulary.typed(action, mover), table.group, person)
    assert command is not None
    return command, f"{name} in group", encode_action(seat, action)


@dataclass
class Play:
    """Tables driven through one service until `stop` is set; every answer counted."""

    service: Service
    observer: Observer
    tables: list[Table]
    rng: random.Random
    reopen: bool = True
    tally: Tally = field(default_factory=Tally)
    logs: dict[str, TableLog] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    observer_reads: Counter[str] = field(default_factory=Counter)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    timing: bool = True

    def __post_init__(self) -> None:
        self.logs = {t.group.key: TableLog(t) for t in self.tables}

    async def read(self, table: Table) -> tuple[int, TableDoc | None, GameState | None] | None:
        try:
            self.observer_reads[table.group.key] += 1
            return await self.observer.read(table.group)
        except StorageUnavailable:
            await asyncio.sleep(0.05)
            return None

    async def send(self, command: Command) -> tuple[str | None, float]:
        start = time.perf_counter()
        out = await self.service.handle(command)
        took = time.perf_counter() - start
        if self.timing:
            self.latencies.append(took)
        return refusal_reason(out), time.monotonic()

    async def lobby(self, table: Table) -> None:
        for seat, text in [(0, f"/new {table.preset}"), (1, "/join"), (2, "/join"), (0, "/start")]:
            command = parse_text(text, table.group, table.people[seat])
            assert command is not None
            reason, _ = await self.send(command)
            if reason is None:
                self.tally.accept("lobby")
            else:
                self.tally.refuse(f"lobby:{reason}")

    async def table_loop(self, table: Table) -> None:
        log = self.logs[table.group.key]
        while not self.stop.is_set():
            read = await self.read(table)
            if read is None:
                if log.last is not None:
                    # The person tries again meanwhile: what are they told?
                    sent = time.monotonic()
                    reason, when = await self.send(log.last)
                    log.unreadable_answers[reason or "accepted"] += 1
                    if reason is None and log.last_at is not None:
                        log.accepted_at.append(when)
                        log.sent_at.append(sent)
                        log.acked.append(log.last_at)
                        log.last = log.last_at = None
                    await asyncio.sleep(0.2)
                continue
            version, doc, state = read
            if doc is None or state is None or state.finished or doc.status == "finished":
                if not self.reopen:
                    log.finished = True
                    return
                await self.lobby(table)
                continue
            assert doc.game is not None
            command, kind, encoded = command_for(table, state, version, self.rng)
            at = (doc.serial, len(doc.game.actions), encoded)
            log.last, log.last_at = command, at
            sent = time.monotonic()
            reason, when = await self.send(command)
            if reason is None:
                self.tally.accept("move")
                self.kinds[kind] += 1
                log.accepted_at.append(when)
                log.sent_at.append(sent)
                log.acked.append(at)
                log.last = log.last_at = None  # a person tries again only a move that failed
            elif is_unavailable(reason):
                self.tally.refuse(reason)
                (log.uncertain_at if "uncertain" in reason else log.unavailable_at).append(when)
                log.told_failed.append((*at, reason))
                await asyncio.sleep(0.05)
            else:
                self.tally.refuse(f"{command.name}:{reason}")

    async def open_all(self) -> None:
        for table in self.tables:
            await self.lobby(table)

    async def run(self) -> None:
        await asyncio.gather(*(self.table_loop(t) for t in self.tables))


# --- the Redis a phase runs on --------------------------------------------------------------------


@dataclass
class Target:
    """A Redis for one phase: its URL, whether it is a cluster, and the ports of its masters."""

    url: str
    cluster: bool
    local: LocalRedisCluster | None = None
    server: RedisServer | None = None

    def master_ports(self) -> list[int]:
        if self.local is not None:
            return [m.port for m in self.local.masters()]
        if self.server is not None:
            return [self.server.port]
        host_port = self.url.split("://", 1)[1].split("/", 1)[0].rsplit("@", 1)[-1]
        port = int(host_port.rsplit(":", 1)[1])
        if not self.cluster:
            return [port]
        return sorted(n.port for n in parse_nodes(command(port, "CLUSTER", "NODES")) if n.master and n.slots)

    def slot_owner(self) -> Callable[[int], int]:
        """slot -> port of the master serving it now."""
        if not self.cluster:
            port = self.master_ports()[0]
            return lambda _slot: port
        ports = self.master_ports()
        nodes = [n for n in parse_nodes(command(ports[0], "CLUSTER", "NODES")) if n.master and n.slots]

        def owner(slot: int) -> int:
            return next(n.port for n in nodes if n.serves(slot))

        return owner


@contextlib.contextmanager
def started(kind: str, base: Path, *, node_timeout_ms: int) -> Iterator[Target]:
    """A private Redis for a phase: `server`, `cluster` (3 masters + 3 replicas), `bare` (3 masters)."""
    if kind == "server":
        with RedisServer(data_dir=base / "server", appendonly=True, appendfsync="everysec") as server:
            yield Target(server.url, False, server=server)
        return
    local = LocalRedisCluster(
        base / kind,
        3,
        replicas=1 if kind == "cluster" else 0,
        node_timeout_ms=node_timeout_ms,
        appendonly=True,
        appendfsync="everysec",
        full_coverage=False,
    )
    try:
        local.start()
        yield Target(local.url, True, local=local)
    finally:
        local.close()


def commandstats(port: int) -> dict[str, int]:
    """INFO commandstats of one node: calls per command (lower case)."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError, RuntimeError):
        for line in command(port, "INFO", "commandstats").splitlines():
            if line.startswith("cmdstat_"):
                name, _, rest = line[len("cmdstat_") :].partition(":")
                out[name] = int(rest.split("calls=", 1)[1].split(",", 1)[0])
    return out


def cpu_seconds(port: int) -> float:
    """CPU time the node's process used so far (INFO cpu: user + system, all its threads)."""
    total = 0.0
    with contextlib.suppress(OSError, RuntimeError):
        for line in command(port, "INFO", "cpu").splitlines():
            if line.startswith(("used_cpu_user:", "used_cpu_sys:")):
                total += float(line.split(":", 1)[1])
    return total


def processed(port: int) -> int:
    with contextlib.suppress(OSError, RuntimeError):
        for line in command(port, "INFO", "stats").splitlines():
            if line.startswith("total_commands_processed:"):
                return int(line.split(":", 1)[1])
    return 0


# --- phases ---------------------------------------------------------------------------------------


@dataclass
class Options:
    tables: int = 60
    seconds: float = 10.0
    failover_seconds: float = 20.0
    kill_after: float = 4.0
    node_timeout_ms: int = 2000
    seed: int = 1
    progress: bool = False


class Progress:
    """A line on stderr every second or so while a phase runs (only when asked: a terminal)."""

    def __init__(self, enabled: bool, name: str, play: Play, began: float) -> None:
        self.enabled, self.name, self.play, self.began = enabled, name, play, began

    async def run(self) -> None:
        if not self.enabled:
            return
        while not self.play.stop.is_set():
            await asyncio.sleep(1.0)
            t = self.play.tally
            sys.stderr.write(
                f"\r{self.name}: {time.monotonic() - self.began:5.1f} s, {t.accepted['move']} moves, "
                f"{sum(t.refused.values())} refused   "
            )
            sys.stderr.flush()
        sys.stderr.write("\n")


def _share(deltas: dict[int, int]) -> dict[str, float]:
    total = sum(deltas.values()) or 1
    return {str(port): round(n / total, 3) for port, n in sorted(deltas.items())}


async def throughput(name: str, target: Target, options: Options, *, wait: int = 0) -> dict[str, Any]:
    """Tables playing for `options.seconds`: rates, round trips, each master's share of the commands."""
    prefix = f"bench-cluster-{random.randrange(1 << 30):x}"
    settings = settings_for(target.url, target.cluster, prefix, wait=wait)
    store = open_redis_store(settings)
    observer_store = RedisStore.from_url(target.url, prefix=prefix, cluster=target.cluster)
    service = Service(store, settings, handlers=Handlers, rng=random.Random(options.seed))
    tables = [Table.make(i) for i in range(options.tables)]
    play = Play(service, Observer(observer_store), tables, random.Random(options.seed))
    try:
        await play.open_all()
        await asyncio.gather(*(store.ping() for _ in range(min(64, options.tables))))
        play.tally, play.latencies = Tally(intended=frozenset()), []
        play.observer_reads.clear()
        ports = target.master_ports()
        owner = target.slot_owner()
        stats_before = {p: commandstats(p) for p in ports}
        processed_before = {p: processed(p) for p in ports}
        cpu_before = {p: cpu_seconds(p) for p in ports}
        trips_before = store.round_trips
        began = time.monotonic()
        progress = Progress(options.progress, name, play, began)

        async def stopper() -> None:
            await asyncio.sleep(options.seconds)
            play.stop.set()

        await asyncio.gather(play.run(), stopper(), progress.run())
        elapsed = time.monotonic() - began
        trips = store.round_trips - trips_before
        stats_after = {p: commandstats(p) for p in ports}
        processed_after = {p: processed(p) for p in ports}
        cpu_after = {p: cpu_seconds(p) for p in ports}
    finally:
        await service.close()
        await store.close()
        await observer_store.close()
    # The bench's own reads (one HMGET per read, on the table's master) are taken out of the shares.
    from bot.storage.keys import KeyLayout

    keys = KeyLayout(prefix)
    own: Counter[int] = Counter()
    for table_id, n in play.observer_reads.items():
        own[owner(KeyLayout.slot(keys.table(table_id)))] += n
    calls = {p: sum(stats_after[p].values()) - sum(stats_before[p].values()) for p in ports}
    # INFO commandstats counts the INFO calls themselves too: 2 per master, negligible.
    service_calls = {p: max(0, calls[p] - own[p]) for p in ports}
    by_command = {
        str(p): dict(
            Counter(
                {c: stats_after[p].get(c, 0) - stats_before[p].get(c, 0) for c in stats_after[p]}
            ).most_common(8)
        )
        for p in ports
    }
    moves = play.tally.accepted["move"]
    # Each master is one core's worth of Redis: the run's moves/s over the busiest master's share of a
    # core is where that master would be full (the bench's one Python process is the limit of the run).
    busy = {p: (cpu_after[p] - cpu_before[p]) / elapsed for p in ports}
    busiest = max(busy.values()) if busy else 0.0
    n = len(play.latencies)
    play.latencies.sort()
    figures: dict[str, Any] = {
        "redis": "cluster" if target.cluster else "one server",
        "masters": len(ports),
        "replicas_per_master": (target.local.replicas if target.local is not None else None),
        "wait_replicas": wait,
        "tables": options.tables,
        "elapsed_s": round(elapsed, 2),
        "moves": moves,
        "commands_timed": n,
        "moves_per_s": round(moves / elapsed, 1),
        "commands_per_s": round(n / elapsed, 1),
        "moves_per_s_per_master": round(moves / elapsed / len(ports), 1),
        "p50_ms": round(play.latencies[n // 2] * 1000, 2) if n else None,
        "p99_ms": round(play.latencies[min(n - 1, int(n * 0.99))] * 1000, 2) if n else None,
        "redis_round_trips_per_command": round(trips / n, 3) if n else None,
        "redis_round_trips_per_move": round(trips / moves, 3) if moves else None,
        "commands_processed_share": _share(service_calls),
        "busiest_master_share": max(_share(service_calls).values()) if ports else None,
        "commands_processed_share_with_bench_reads": _share(calls),
        "commands_processed_total_delta": {str(p): processed_after[p] - processed_before[p] for p in ports},
        "bench_reads_per_master": {str(p): own[p] for p in ports},
        "top_commands_per_master": by_command,
        "redis_cpu_share_of_a_core": {str(p): round(b, 3) for p, b in sorted(busy.items())},
        "redis_cpu_us_per_move": round(sum(cpu_after[p] - cpu_before[p] for p in ports) / moves * 1e6, 1)
        if moves
        else None,
        "redis_ceiling_moves_per_s": round(moves / elapsed / busiest) if moves and busiest else None,
        "accepted_by_kind": dict(sorted(play.kinds.items())),
    }
    result, status = play.tally.report(figures, RATES)
    result["exit_status"] = status
    return result


async def failover(
    name: str, target: Target, options: Options, *, wait: int = 0, replicas: bool = True
) -> dict[str, Any]:
    """Tables playing; SIGKILL of one master after `options.kill_after` s; play on to the end."""
    assert target.local is not None, "a failover needs a cluster this bench started"
    local = target.local
    prefix = f"bench-failover-{random.randrange(1 << 30):x}"
    settings = settings_for(target.url, True, prefix, wait=wait)
    store = open_redis_store(settings)
    observer_store = RedisStore.from_url(target.url, prefix=prefix, cluster=True)
    service = Service(store, settings, handlers=Handlers, rng=random.Random(options.seed))
    tables = [Table.make(i) for i in range(options.tables)]
    play = Play(service, Observer(observer_store), tables, random.Random(options.seed), reopen=False)
    play.timing = False
    from bot.storage.keys import KeyLayout

    keys = KeyLayout(prefix)
    victim = local.master_of(f"{prefix}:{{deadlines}}:due")
    on_victim = {t.group.key for t in tables if local.master_of(keys.table(t.group.key)) is victim}
    killed_at = 0.0
    failover_s: float | None = None
    try:
        await play.open_all()
        play.tally = Tally()
        began = time.monotonic()
        progress = Progress(options.progress, name, play, began)

        async def killer() -> None:
            nonlocal killed_at, failover_s
            await asyncio.sleep(options.kill_after)
            killed_at = time.monotonic()
            local.kill(victim)
            if replicas:
                failover_s = await asyncio.to_thread(local.wait_failover, victim, 60.0)
            await asyncio.sleep(max(0.0, options.failover_seconds - (time.monotonic() - began)))
            play.stop.set()

        await asyncio.gather(play.run(), killer(), progress.run())
        ended = time.monotonic()
        check = await audit(observer_store, play, on_victim if not replicas else set())
        check["live_tables_without_timer_after_a_tick"] = await timers_after_tick(service, play)
    finally:
        await service.close()
        await store.close()
        await observer_store.close()
    survivors = [play.logs[k] for k in play.logs if k not in on_victim]
    victims = [play.logs[k] for k in play.logs if k in on_victim]

    def answered(log: TableLog) -> list[float]:
        return sorted(t for t in [*log.accepted_at, *log.uncertain_at] if t >= killed_at)

    def stall(log: TableLog) -> float:
        """The longest time without an accepted (or uncertain) move from just before the kill to the end."""
        times = [killed_at - 0.001, *answered(log), ended]
        if log.finished and log.accepted_at and log.accepted_at[-1] < killed_at:
            return 0.0
        return max(b - a for a, b in itertools.pairwise(times))

    def stall_start(log: TableLog) -> float:
        """When the longest stall after the kill began, from the kill (negative: before it)."""
        times = [killed_at - 0.001, *answered(log), ended]
        gaps = [(b - a, a) for a, b in itertools.pairwise(times)]
        return max(gaps)[1] - killed_at

    def gap_before(log: TableLog) -> float:
        """The longest time without an accepted move in the seconds before the kill (the run's noise)."""
        times = [t for t in log.accepted_at if began + 1.0 <= t < killed_at]
        return max((b - a for a, b in itertools.pairwise(times)), default=0.0)

    def back_after(log: TableLog) -> float | None:
        """From the kill to the answer of the first move sent after it and accepted (a move in flight
        at the kill may still be answered by the dying node's last reply)."""
        later = [a for s, a in zip(log.sent_at, log.accepted_at, strict=True) if s >= killed_at]
        return round(later[0] - killed_at, 2) if later else None

    # A table whose game ended before the kill has nothing to come back to.
    victims = [log for log in victims if not (log.finished and log.accepted_at[-1:] < [killed_at])]

    survivor_stalls = sorted(round(stall(log), 2) for log in survivors if not log.finished)
    backs = [back_after(log) for log in victims]
    figures: dict[str, Any] = {
        "replicas_per_master": 1 if replicas else 0,
        "wait_replicas": wait,
        "node_timeout_ms": local.node_timeout_ms,
        "tables": options.tables,
        "tables_on_killed_master": len(victims),
        "killed_after_s": round(killed_at - began, 2),
        "failover_s": round(failover_s, 2) if failover_s is not None else None,
        "moves": play.tally.accepted["move"],
        "surviving_tables_longest_stall_s": survivor_stalls[-1] if survivor_stalls else None,
        "surviving_tables_median_stall_s": (
            survivor_stalls[len(survivor_stalls) // 2] if survivor_stalls else None
        ),
        "surviving_tables_answered_unavailable": sum(len(log.unavailable_at) for log in survivors),
        "surviving_tables_answered_uncertain": sum(len(log.uncertain_at) for log in survivors),
        "surviving_tables_longest_gap_before_kill_s": round(
            max((gap_before(log) for log in survivors), default=0.0), 2
        ),
        "surviving_tables_stall_began_after_kill_s": (
            round(
                sorted(stall_start(log) for log in survivors if not log.finished)[len(survivor_stalls) // 2],
                2,
            )
            if survivor_stalls
            else None
        ),
        "killed_tables_back_after_s": (
            max(b for b in backs if b is not None) if backs and all(b is not None for b in backs) else None
        ),
        "killed_tables_never_back": sum(b is None for b in backs),
        "killed_tables_answered_unavailable": sum(len(log.unavailable_at) for log in victims),
        "killed_tables_answered_uncertain": sum(len(log.uncertain_at) for log in victims),
        **check,
    }
    figures["killed_tables_answers_while_unreadable"] = dict(
        sum((log.unreadable_answers for log in victims), Counter())
    )
    figures["surviving_tables_answers_while_unreadable"] = dict(
        sum((log.unreadable_answers for log in survivors), Counter())
    )
    # The outage's answers are what a failover is about: counted above, per side of the kill; here they
    # do not withhold anything (any other refusal does).
    play.tally.intended = frozenset(r for r in play.tally.refused if is_unavailable(r))
    result, status = play.tally.report(figures, ())
    result["exit_status"] = status
    return result


async def audit(store: RedisStore, play: Play, lost: set[str]) -> dict[str, Any]:
    """Acknowledged moves missing from the final documents; moves stored while their mover was told they
    failed; tables whose document and stream disagree. `lost`: tables on a master lost for good (not
    read)."""
    acked_lost = 0
    stored_told_failed = 0
    uncertain_stored = 0
    half_written: list[str] = []
    unreadable = 0
    for key, log in play.logs.items():
        if key in lost:
            continue
        try:
            stored = await store.load(key)
            events = [json.loads(e) for e in await store.read_events(key)]
        except StorageUnavailable:
            unreadable += 1
            continue
        if stored is None:
            acked_lost += len(log.acked)
            continue
        doc = TableDoc.model_validate_json(stored.document)
        actions = doc.game.actions if doc.game is not None else []

        def kept(
            serial: str, index: int, encoded: str, doc: TableDoc = doc, actions: list[str] = actions
        ) -> bool:
            return doc.serial == serial and index < len(actions) and actions[index] == encoded

        acked_lost += sum(not kept(*a) for a in log.acked)
        acked = set(log.acked)
        for serial, index, encoded, code in log.told_failed:
            # The same move sent again (or chosen again) and acknowledged then is not one told it failed.
            if (serial, index, encoded) not in acked and kept(serial, index, encoded):
                if code in UNAVAILABLE:
                    stored_told_failed += 1
                else:
                    uncertain_stored += 1
        if (
            not events
            or events[-1].get("v") != stored.version
            or (doc.game is not None and events[-1].get("n") not in (None, len(actions)))
        ):
            half_written.append(key)
    return {
        "acknowledged_moves": sum(len(log.acked) for log in play.logs.values()),
        "acknowledged_moves_lost": acked_lost,
        "stored_while_told_failed": stored_told_failed,
        "stored_while_told_uncertain": uncertain_stored,
        "half_written_tables": len(half_written),
        "tables_unreadable_at_end": unreadable,
    }


async def timers_after_tick(service: Service, play: Play) -> int | None:
    """Live tables whose deadline (in the table's hash) has no entry at or before it in its shard of the
    due index, after the timer loop's repair sweep and one tick (`Service.sweep_deadlines`, `tick`)."""
    store = service.store
    assert isinstance(store, RedisStore)
    keys = store.keys
    try:
        await service.sweep_deadlines()
        await service.tick()
        missing = 0
        for key, log in play.logs.items():
            if log.finished:
                continue
            _, doc = await service.load(key)
            if doc is None or doc.status != "game":
                continue
            when = await store.call("HGET", keys.table(key), "dw")
            if when is None:
                missing += 1
                continue
            indexed = await store.call("ZSCORE", keys.due_of(key)[0], key)
            if indexed is None or float(indexed) > float(when):
                missing += 1
        return missing
    except StorageUnavailable:
        return None


# --- the single slots that remain ------------------------------------------------------------------


async def single_slots(target: Target, options: Options) -> dict[str, Any]:
    """Redis CPU per operation of the keys that stay in one slot whatever the number of masters, on one
    server: each ceiling is one core (a master) divided by it. `{sends}`: `acquire_sends` with a chat,
    group and global bucket as the Telegram adapter asks (chats and groups rotating, the clock advanced
    one 30th of a second per send, so the global bucket stays just within 30/s). The relay stream of a
    platform: `RedisRelay.hand_over`'s XADD (MAXLEN ~100,000) + EXPIRE per message, and a consumer's
    XREADGROUP of 10 and XACK of each. `{mm}`: bench/matchmaking.py (1,500 players at 100/s over 2
    processes, matching every 0.25 s) with its CPU divided by the players queued."""
    import redis.asyncio as aioredis

    from bench import matchmaking
    from bot.storage import SendBucket

    port = target.master_ports()[0]
    out: dict[str, Any] = {}
    n = 10_000 if options.seconds >= 5 else 2_000
    prefix = f"bench-slots-{random.randrange(1 << 30):x}"
    store = RedisStore.from_url(target.url, prefix=prefix)
    try:
        before, began = cpu_seconds(port), time.monotonic()
        now = time.time()
        for i in range(n):
            buckets = [
                SendBucket(f"chat:{i % 997}", 1, 1.0),
                SendBucket(f"group:{i % 211}", 20, 60.0),
                SendBucket("global", 30, 1.0),
            ]
            await store.acquire_sends(buckets, now=now + i / 30)
        used, took = cpu_seconds(port) - before, time.monotonic() - began
    finally:
        await store.close()
    us = used / n * 1e6
    out["sends"] = {
        "operations": n,
        "redis_cpu_us_per_send": round(us, 1),
        "ceiling_sends_per_s": round(1e6 / us) if us else None,
        "client_sends_per_s": round(n / took),
    }
    client = aioredis.Redis.from_url(target.url, decode_responses=True)
    stream = f"{prefix}:{{relay:bench}}:out"
    try:
        await client.xgroup_create(stream, "deliver", id="0", mkstream=True)
        before, began = cpu_seconds(port), time.monotonic()
        for i in range(n):
            async with client.pipeline(transaction=False) as pipe:
                pipe.xadd(stream, {"id": f"{i:016x}", "m": "x" * 600}, maxlen=100_000, approximate=True)
                pipe.expire(stream, 86_400)
                await pipe.execute()
            if i % 10 == 9:
                got: Any = await client.xreadgroup("deliver", "c1", {stream: ">"}, count=10)
                for _, items in got or []:
                    for entry_id, _ in items:
                        await client.xack(stream, "deliver", entry_id)
        used, took = cpu_seconds(port) - before, time.monotonic() - began
    finally:
        await client.delete(stream)
        await client.aclose()
    us = used / n * 1e6
    out["relay_stream"] = {
        "messages": n,
        "redis_cpu_us_per_message": round(us, 1),
        "ceiling_messages_per_s": round(1e6 / us) if us else None,
        "client_messages_per_s": round(n / took),
    }
    players = 1_500
    before, stats_before = cpu_seconds(port), commandstats(port)
    figures, status = await asyncio.to_thread(
        matchmaking.run_counted,
        url=target.url,
        players=players,
        rate=100.0,
        processes=2,
        drain=3.0,
        seed=options.seed,
    )
    used, stats_after = cpu_seconds(port) - before, commandstats(port)
    calls = sum(stats_after.values()) - sum(stats_before.values())
    us = used / players * 1e6
    out["mm"] = {
        "players": players,
        "arrivals_per_s": 100,
        "redis_cpu_us_per_player": round(us, 1),
        "commands_per_player": round(calls / players, 1),
        "ceiling_players_per_s": round(1e6 / us) if us else None,
        "lost": figures.get("lost"),
        "round_trips_per_player": figures.get("round_trips_per_player"),
        "exit_status": status,
    }
    return out


# --- the run --------------------------------------------------------------------------------------


async def run_phases(phases: list[str], options: Options, given: tuple[str, bool] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cluster-") as tmp:
        base = Path(tmp)
        for name in phases:
            if name in ("cluster-wait", "failover-wait") and not wait_supported():
                out[name] = {"skipped": "REDIS_WAIT_REPLICAS is not a setting yet (issue 26's WAIT)"}
                continue
            wait = 1 if name.endswith("-wait") else 0
            if given is not None:
                if name.startswith("failover") or name == "single-slots":
                    out[name] = {"skipped": "only on a Redis this bench starts"}
                    continue
                if (name == "one-server") == given[1]:
                    continue
                out[name] = await throughput(name, Target(given[0], given[1]), options, wait=wait)
                continue
            kinds = {"one-server": "server", "single-slots": "server", "failover-no-replicas": "bare"}
            kind = kinds.get(name, "cluster")
            with started(kind, base / name, node_timeout_ms=options.node_timeout_ms) as target:
                if name == "single-slots":
                    out[name] = await single_slots(target, options)
                elif name.startswith("failover"):
                    out[name] = await failover(name, target, options, wait=wait, replicas=kind == "cluster")
                else:
                    out[name] = await throughput(name, target, options, wait=wait)
    return out


def ceilings(phases: dict[str, Any]) -> dict[str, Any]:
    """Accepted moves/s per master × masters, as measured (the bench's one process is the limit here)."""
    out: dict[str, Any] = {}
    for name, result in phases.items():
        per = result.get("moves_per_s_per_master") if isinstance(result, dict) else None
        if per is not None:
            out[name] = {"moves_per_s_per_master": per, "masters": result["masters"]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=60)
    parser.add_argument("--seconds", type=float, default=10.0, help="each throughput phase")
    parser.add_argument("--failover", action="store_true", help="also the failover phases")
    parser.add_argument("--failover-seconds", type=float, default=20.0)
    parser.add_argument("--kill-after", type=float, default=4.0)
    parser.add_argument("--node-timeout-ms", type=int, default=2000)
    parser.add_argument("--phases", help=f"comma-separated, of {', '.join(PHASES)}")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--redis-url", help="the cluster phase on this Redis (with --cluster: a cluster)")
    parser.add_argument("--cluster", action="store_true")
    args = parser.parse_args(argv)
    if args.phases:
        phases = [p.strip() for p in args.phases.split(",") if p.strip()]
        unknown = [p for p in phases if p not in PHASES]
        if unknown:
            parser.error(f"unknown phases {unknown}; known: {', '.join(PHASES)}")
    else:
        phases = ["one-server", "cluster", "cluster-wait", "single-slots"]
        if args.failover:
            phases += ["failover", "failover-wait", "failover-no-replicas"]
    # The service logs each unavailable answer; the outage is counted in the JSON instead.
    logging.basicConfig(level=logging.ERROR)
    given = None
    if args.redis_url:
        check_mode(args.redis_url, args.cluster)
        given = (args.redis_url, bool(args.cluster))
    options = Options(
        tables=args.tables,
        seconds=args.seconds,
        failover_seconds=args.failover_seconds,
        kill_after=args.kill_after,
        node_timeout_ms=args.node_timeout_ms,
        seed=args.seed,
        progress=sys.stderr.isatty(),
    )
    result = asyncio.run(run_phases(phases, options, given))
    status = max((r.get("exit_status", 0) for r in result.values() if isinstance(r, dict)), default=0)
    withheld = {
        name: r["rate_withheld"]
        for name, r in result.items()
        if isinstance(r, dict) and r.get("rate_withheld")
    }
    report: dict[str, Any] = {
        "rate_withheld": "; ".join(f"{name}: {why}" for name, why in withheld.items()) or None,
        "phases": result,
        "ceilings": ceilings(result),
        "python": platform.python_version(),
        "seed": args.seed,
    }
    return emit(report, status)


if __name__ == "__main__":
    raise SystemExit(main())
