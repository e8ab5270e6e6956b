"""The rules of `thousand doctor`: what a Redis deployment's INFO and CONFIG say about the games it keeps.

Pure (facts in, findings out), so every rule is tested without a server; `bot.ops.doctor_probe` gathers
the facts and `bot.ops.doctor` runs both against a URL.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from bot.storage.keys import KeyLayout

__all__ = [
    "MEMORY_FAIL",
    "MEMORY_WARN",
    "MIN_VERSION",
    "SUPPORTED_VERSION",
    "ClusterFacts",
    "Finding",
    "Level",
    "NodeFacts",
    "evaluate",
]

MIN_VERSION: Final = (5, 0)
"""Below this the store cannot work: its scripts call TIME before writing (script effects replication
became the default in 5.0) and tables keep their events in streams (5.0)."""

SUPPORTED_VERSION: Final = (6, 2)
"""The oldest version the test suite runs against; older ones are past their end of life."""

MEMORY_WARN: Final = 0.75
MEMORY_FAIL: Final = 0.90


class Level(enum.StrEnum):
    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True, slots=True)
class Finding:
    level: Level
    check: str
    message: str
    node: str = ""


@dataclass(slots=True)
class NodeFacts:
    """What one Redis node told us: its INFO (all sections merged) and CONFIG values (None if refused)."""

    address: str
    info: Mapping[str, Any]
    config: Mapping[str, str] | None
    table_bytes: float | None = None
    tables: int | None = None


@dataclass(slots=True)
class ClusterFacts:
    """What a Redis Cluster told us about itself: CLUSTER INFO's state (per master asked), each master's
    live replicas, the nodes marked failed, each master's cluster-require-full-coverage (None: CONFIG
    refused), and each replica's own facts (its persistence matters once it is promoted)."""

    states: Mapping[str, str]
    replicas: Mapping[str, Sequence[str]]
    failed: Sequence[str] = ()
    full_coverage: Mapping[str, str | None] = field(default_factory=dict)
    replica_facts: Sequence[NodeFacts] = ()


def _version(text: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in text.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit())
        out.append(int(digits) if digits else 0)
    return tuple(out)


def _int(info: Mapping[str, Any], key: str, default: int = 0) -> int:
    try:
        return int(info.get(key, default))
    except (TypeError, ValueError):
        return default


def _mb(n: float) -> str:
    return f"{n / 1024 / 1024:,.0f} MB"


def _node_findings(facts: NodeFacts, *, node: str) -> Iterable[Finding]:
    info, config = facts.info, facts.config or {}

    version_text = str(info.get("redis_version", "0"))
    version = _version(version_text)
    if version < MIN_VERSION:
        yield Finding(
            Level.FAIL,
            "version",
            f"Redis {version_text} is too old: the store needs >= {'.'.join(map(str, MIN_VERSION))} "
            "(script effects replication, streams)",
            node,
        )
    elif version < SUPPORTED_VERSION:
        yield Finding(
            Level.WARN,
            "version",
            f"Redis {version_text} works but is untested and past its end of life; "
            f"use >= {'.'.join(map(str, SUPPORTED_VERSION))}",
            node,
        )
    else:
        yield Finding(Level.OK, "version", f"Redis {version_text}", node)

    if str(info.get("role", "master")) != "master":
        yield Finding(
            Level.FAIL,
            "role",
            "this node is a replica: writes are refused; point REDIS_URL at the master (or Sentinel)",
            node,
        )

    aof = config.get("appendonly", "yes" if _int(info, "aof_enabled") else "no")
    if aof != "yes":
        saves = config.get("save")
        since = (
            "every game (RDB snapshots are off too)" if saves == "" else "every move since the last snapshot"
        )
        yield Finding(
            Level.FAIL,
            "persistence",
            f"appendonly no: a Redis restart or crash loses {since}; set appendonly yes (deploy/redis.conf)",
            node,
        )
    else:
        fsync = config.get("appendfsync")
        if fsync == "no":
            yield Finding(
                Level.WARN,
                "persistence",
                "appendonly yes but appendfsync no: a machine crash loses up to ~30 s of moves; use everysec",
                node,
            )
        elif str(info.get("aof_last_write_status", "ok")) != "ok":
            yield Finding(
                Level.FAIL,
                "persistence",
                "the last append-only write failed (disk full or read-only?): Redis refuses writes",
                node,
            )
        else:
            how = f", appendfsync {fsync}" if fsync else ""
            yield Finding(Level.OK, "persistence", f"appendonly yes{how}", node)
    if str(info.get("rdb_last_bgsave_status", "ok")) != "ok":
        yield Finding(Level.WARN, "persistence", "the last RDB snapshot failed (disk?)", node)

    policy = str(config.get("maxmemory-policy", info.get("maxmemory_policy", "noeviction")))
    if policy != "noeviction":
        yield Finding(
            Level.FAIL,
            "eviction",
            f"maxmemory-policy {policy}: under memory pressure Redis deletes keys, live tables "
            "included (every table has a TTL); set noeviction",
            node,
        )
    else:
        yield Finding(Level.OK, "eviction", "maxmemory-policy noeviction", node)

    yield from _memory_findings(facts, node=node)


def _memory_findings(facts: NodeFacts, *, node: str) -> Iterable[Finding]:
    info = facts.info
    # What Redis itself holds against maxmemory: used_memory less the AOF and replica output buffers
    # (`mem_not_counted_for_evict`), which on a busy master with replicas can be a large share.
    used = max(0, _int(info, "used_memory") - _int(info, "mem_not_counted_for_evict"))
    limit = _int(info, "maxmemory")
    system = _int(info, "total_system_memory")
    per_table = ""
    if facts.table_bytes:
        per_table = f"; ~{facts.table_bytes / 1024:,.1f} KB per table"
        if facts.tables is not None:
            per_table += f", {facts.tables:,} tables sampled by SCAN"
    if limit > 0:
        share = used / limit
        room = ""
        if facts.table_bytes:
            room = f", room for ~{max(0, limit - used) / facts.table_bytes:,.0f} more tables"
        text = f"{_mb(used)} used of maxmemory {_mb(limit)} ({share:.0%}){room}{per_table}"
        if share >= MEMORY_FAIL:
            yield Finding(
                Level.FAIL,
                "memory",
                f"{text}: at the limit new games and moves are refused; raise maxmemory",
                node,
            )
        elif share >= MEMORY_WARN:
            yield Finding(Level.WARN, "memory", f"{text}: little headroom", node)
        else:
            yield Finding(Level.OK, "memory", text, node)
        if system and limit > system:
            yield Finding(
                Level.WARN,
                "memory",
                f"maxmemory {_mb(limit)} exceeds the machine's {_mb(system)}: the kernel may kill Redis "
                "first",
                node,
            )
        return
    if system and used / system >= MEMORY_FAIL:
        yield Finding(
            Level.FAIL,
            "memory",
            f"{_mb(used)} used of the machine's {_mb(system)} with no maxmemory: Redis is about to be killed",
            node,
        )
        return
    yield Finding(
        Level.WARN,
        "memory",
        f"{_mb(used)} used and no maxmemory: set one below the container's memory limit (leave room for "
        f"the append-only rewrite's fork), so Redis refuses writes instead of being killed{per_table}",
        node,
    )


def _layout_findings(prefix: str) -> Iterable[Finding]:
    try:
        keys = KeyLayout(prefix)
    except ValueError as exc:
        yield Finding(Level.FAIL, "keys", f"REDIS_PREFIX {prefix!r}: {exc}")
        return
    table = "tg:-100123"
    same = {keys.slot(k) for k in (keys.table(table), keys.stream(table), keys.chat(table))}
    if len(same) != 1:
        yield Finding(Level.FAIL, "keys", "a table's keys hash to different slots: scripts would fail")


def _persistence_of_replica(facts: NodeFacts) -> Iterable[Finding]:
    info, config = facts.info, facts.config or {}
    aof = config.get("appendonly", "yes" if _int(info, "aof_enabled") else "no")
    if aof != "yes":
        yield Finding(
            Level.FAIL,
            "persistence",
            "replica with appendonly no: promoted after its master is lost, a restart of it loses the "
            "tables it took over; set appendonly yes on every node",
            facts.address,
        )
    else:
        yield Finding(Level.OK, "persistence", "replica: appendonly yes", facts.address)


def _cluster_findings(cluster: ClusterFacts) -> Iterable[Finding]:
    bad = {node: state for node, state in cluster.states.items() if state != "ok"}
    if bad:
        where = ", ".join(f"{node} says {state}" for node, state in sorted(bad.items()))
        yield Finding(
            Level.FAIL,
            "cluster",
            f"cluster_state is not ok ({where}): the tables of uncovered slots refuse every move",
        )
    else:
        yield Finding(Level.OK, "cluster", "cluster_state ok on every master")
    if cluster.failed:
        yield Finding(
            Level.FAIL,
            "cluster",
            f"node(s) marked failed: {', '.join(sorted(cluster.failed))}: restart them (they rejoin as "
            "replicas) or CLUSTER FORGET them",
        )
    lonely = sorted(master for master, replicas in cluster.replicas.items() if not replicas)
    for master in lonely:
        yield Finding(
            Level.FAIL,
            "replicas",
            "this master has no replica: when it is lost its tables stop until it is back, and a lost "
            "disk loses them; give every master a replica (deploy/compose.cluster.yaml)",
            master,
        )
    if cluster.replicas and not lonely:
        counts = sorted({len(r) for r in cluster.replicas.values()})
        yield Finding(
            Level.OK,
            "replicas",
            f"every master has {' or '.join(map(str, counts))} replica(s): a lost master's slots are taken "
            "over by its replica",
        )
    for facts in cluster.replica_facts:
        yield from _persistence_of_replica(facts)
    full = {node: value for node, value in cluster.full_coverage.items() if value is not None}
    covering = sorted(node for node, value in full.items() if value == "yes")
    if covering:
        yield Finding(
            Level.WARN,
            "coverage",
            "cluster-require-full-coverage yes: while any slot range has no master (a master lost with "
            "no replica), every node refuses every key and all tables stop; set it to no, so only the "
            f"lost range's tables stop (on {', '.join(covering)})",
        )
    elif full:
        yield Finding(
            Level.OK,
            "coverage",
            "cluster-require-full-coverage no: a lost slot range stops only its own tables",
        )


def evaluate(
    nodes: Sequence[NodeFacts],
    *,
    cluster_enabled: bool,
    cluster_configured: bool,
    prefix: str = "thousand",
    untagged_keys: Sequence[str] = (),
    immortal_keys: Sequence[str] = (),
    cluster: ClusterFacts | None = None,
) -> list[Finding]:
    """The findings for a deployment: each node's, then cluster and key layout ones."""
    findings: list[Finding] = []
    many = len(nodes) > 1
    for facts in nodes:
        findings.extend(_node_findings(facts, node=facts.address if many else ""))
    findings.extend(_layout_findings(prefix))
    if cluster_enabled and not cluster_configured:
        findings.append(
            Finding(
                Level.FAIL,
                "cluster",
                "Redis runs in cluster mode but REDIS_CLUSTER is not set: the store would run multi-key "
                "scripts across hash slots (CROSSSLOT errors); set REDIS_CLUSTER=true",
            )
        )
    elif cluster_enabled:
        findings.append(
            Finding(Level.OK, "cluster", f"cluster mode with hash-tagged keys ({len(nodes)} masters)")
        )
    if cluster_enabled and cluster is not None:
        findings.extend(_cluster_findings(cluster))
    elif cluster_configured:
        findings.append(
            Finding(
                Level.WARN,
                "cluster",
                "REDIS_CLUSTER is set but Redis is standalone: it works, with two round trips per save "
                "instead of one; unset it",
            )
        )
    if untagged_keys:
        sample = ", ".join(untagged_keys[:3])
        level = Level.FAIL if cluster_enabled else Level.WARN
        findings.append(
            Finding(
                level,
                "keys",
                f"keys under {prefix}: without a hash tag ({sample}): not written by this version's "
                "layout; in a cluster no script can use them together",
            )
        )
    if immortal_keys:
        sample = ", ".join(immortal_keys[:3])
        findings.append(
            Finding(
                Level.WARN,
                "lifetimes",
                f"{len(immortal_keys)} sampled key(s) under {prefix}: never expire ({sample}): every key "
                "that grows with games or users should (docs/OPERATIONS.md, 'Keys and their lifetimes'); "
                "left by an older version or another program, they stay until deleted",
            )
        )
    return findings
