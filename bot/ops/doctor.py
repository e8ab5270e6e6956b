"""`thousand doctor`: what in a Redis deployment would lose games, found before it does.

Games live only in Redis. The bot survives its own restarts by design; it does not survive a Redis that
forgets (no append-only file), throws tables away under memory pressure (any eviction policy: every
table has a TTL, so even the ``volatile-*`` policies pick them), runs out of memory, is too old for the
store's scripts, or is a cluster that the store does not know it is talking to.

The checks read ``INFO`` (always allowed) and ``CONFIG GET`` when permitted (managed services often
disable it; then the INFO fields are used alone). In cluster mode every master is checked, and the
cluster as a whole (`ClusterFacts`, issue 26): each master has a replica to take over its slots when it
is lost (docs/OPERATIONS.md, "Redis Cluster"), every replica keeps an append-only file too (it becomes
the master), the cluster says cluster_state:ok with no node failed, and ``cluster-require-full-coverage
no``, so that a slot range lost for good stops only the tables in it. `evaluate` is pure (INFO/CONFIG
dictionaries in, findings out) so the rules are tested without a server.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import redis
from redis import exceptions as rx

from bot.storage.keys import KeyLayout

__all__ = [
    "MIN_VERSION",
    "SUPPORTED_VERSION",
    "ClusterFacts",
    "DoctorReport",
    "Finding",
    "Level",
    "NodeFacts",
    "evaluate",
    "run_doctor",
    "safe_url",
]

MIN_VERSION: Final = (5, 0)
"""Below this the store cannot work: its scripts call TIME before writing (script effects replication
became the default in 5.0) and tables keep their events in streams (5.0)."""

SUPPORTED_VERSION: Final = (6, 2)
"""The oldest version the test suite runs against; older ones are past their end of life."""

MEMORY_WARN: Final = 0.75
MEMORY_FAIL: Final = 0.90
SAMPLE_TABLES: Final = 20


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


@dataclass(slots=True)
class DoctorReport:
    url: str
    findings: list[Finding] = field(default_factory=list)
    unreachable: str = ""

    @property
    def failed(self) -> bool:
        return bool(self.unreachable) or any(f.level is Level.FAIL for f in self.findings)

    @property
    def exit_code(self) -> int:
        """0: nothing would lose games (warnings allowed); 1: something would; 2: Redis not reachable."""
        if self.unreachable:
            return 2
        return 1 if self.failed else 0

    def to_json(self) -> str:
        return json.dumps(
            {
                "url": self.url,
                "ok": not self.failed,
                "unreachable": self.unreachable or None,
                "findings": [asdict(f) for f in self.findings],
            },
            indent=1,
        )

    def to_text(self) -> str:
        lines = [f"thousand doctor: {self.url}"]
        if self.unreachable:
            lines.append(f"  FAIL  connect      {self.unreachable}")
        for f in self.findings:
            where = f" [{f.node}]" if f.node else ""
            lines.append(f"  {f.level.value.upper():<5} {f.check:<12} {f.message}{where}")
        verdict = (
            "Redis unreachable"
            if self.unreachable
            else "games at risk: fix the FAIL lines"
            if self.failed
            else "nothing here would lose games"
        )
        lines.append(verdict)
        return "\n".join(lines)


def safe_url(url: str) -> str:
    """The URL with any password replaced by ***."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, f"{user}:***@{host}{port}", parts.path, parts.query, parts.fragment))


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


# --- talking to Redis ----------------------------------------------------------------------------------


def _call(client: redis.Redis, *args: str) -> Any:
    """One command (redis-py's `execute_command` carries no type hints)."""
    return client.execute_command(*args)  # type: ignore[no-untyped-call]


def _info(client: redis.Redis) -> dict[str, Any]:
    info: dict[str, Any] = _call(client, "INFO", "everything")
    return info


def _config(client: redis.Redis) -> dict[str, str] | None:
    out: dict[str, str] = {}
    try:
        for name in (
            "appendonly",
            "appendfsync",
            "maxmemory-policy",
            "save",
            "cluster-require-full-coverage",
        ):
            reply = _call(client, "CONFIG", "GET", name)
            pairs = dict(zip(reply[::2], reply[1::2], strict=True)) if isinstance(reply, list) else reply
            if name in pairs:
                out[name] = str(pairs[name])
    except rx.ResponseError:  # CONFIG renamed or not permitted (managed Redis): INFO alone
        return None
    return out


def _sample_tables(client: redis.Redis, prefix: str, scan_limit: int = 20) -> tuple[float | None, int]:
    """Average MEMORY USAGE of a few table documents, and how many table keys a bounded SCAN saw."""
    seen: list[str] = []
    cursor: int = 0
    for _ in range(scan_limit):
        cursor, keys = client.scan(cursor=cursor, match=f"{prefix}:{{*}}:table", count=1000)
        seen.extend(str(k) for k in keys)
        if cursor == 0:
            break
    sizes: list[int] = []
    for key in seen[:SAMPLE_TABLES]:
        try:
            size = _call(client, "MEMORY", "USAGE", key)
        except rx.ResponseError:
            break
        if size:
            sizes.append(int(size))
    return (sum(sizes) / len(sizes) if sizes else None), len(seen)


def _untagged(client: redis.Redis, prefix: str, scan_limit: int = 5) -> list[str]:
    found: list[str] = []
    cursor: int = 0
    for _ in range(scan_limit):
        cursor, keys = client.scan(cursor=cursor, match=f"{prefix}:*", count=1000)
        found.extend(str(k) for k in keys if "{" not in str(k) or "}" not in str(k))
        if cursor == 0 or len(found) >= 3:
            break
    return found


_GLOBAL_KINDS: Final = frozenset({"due", "token"})
"""Kinds of key that exist once per deployment and need no expiry (the deadline index)."""


def _immortal(client: redis.Redis, prefix: str, scan_limit: int = 5, sample: int = 500) -> list[str]:
    """Keys under the prefix without a TTL, among a bounded sample (the global deadline index aside)."""
    seen: list[str] = []
    cursor: int = 0
    for _ in range(scan_limit):
        cursor, keys = client.scan(cursor=cursor, match=f"{prefix}:*", count=1000)
        seen.extend(str(k) for k in keys)
        if cursor == 0 or len(seen) >= sample:
            break
    found = []
    for key in seen[:sample]:
        kind = key.split("}:", 1)[1].split(":", 1)[0] if "}:" in key else ""
        if kind not in _GLOBAL_KINDS and int(_call(client, "PTTL", key)) == -1:
            found.append(key)
    return found


def _facts(client: redis.Redis, address: str, prefix: str) -> NodeFacts:
    info = _info(client)
    per_table, tables = _sample_tables(client, prefix)
    return NodeFacts(address, info, _config(client), per_table, tables)


@dataclass(frozen=True, slots=True)
class _Node:
    node_id: str
    host: str
    port: int
    master: bool
    failed: bool
    master_id: str
    serves: bool

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def _topology(client: redis.Redis) -> list[_Node]:
    """CLUSTER NODES: every node, its role, whether it is marked failed and whether it serves slots."""
    text = _call(client, "CLUSTER", "NODES")
    nodes: list[_Node] = []
    for line in str(text).splitlines():
        parts = line.split()
        if len(parts) < 8:
            continue
        flags = parts[2].split(",")
        host, _, rest = parts[1].rpartition(":")
        port = rest.split("@", 1)[0]
        failed = "fail" in flags or "noaddr" in flags
        serves = any(not item.startswith("[") for item in parts[8:])
        nodes.append(_Node(parts[0], host, int(port), "master" in flags, failed, parts[3], serves))
    return nodes


def _masters(client: redis.Redis) -> list[tuple[str, int]]:
    return [(n.host, n.port) for n in _topology(client) if n.master and not n.failed]


def _cluster_facts(
    topology: Sequence[_Node], masters: Mapping[str, redis.Redis], connect: Any, prefix: str
) -> ClusterFacts:
    """Cluster-wide facts: each master's CLUSTER INFO state and full-coverage setting, its live replicas
    (and their persistence, read from each), the nodes marked failed."""
    states: dict[str, str] = {}
    coverage: dict[str, str | None] = {}
    for address, client in masters.items():
        info = str(_call(client, "CLUSTER", "INFO"))
        state = next(
            (
                line.split(":", 1)[1].strip()
                for line in info.splitlines()
                if line.startswith("cluster_state:")
            ),
            "unknown",
        )
        states[address] = state
        config = _config(client)
        coverage[address] = None if config is None else config.get("cluster-require-full-coverage")
    by_id = {n.node_id: n for n in topology}
    replicas: dict[str, list[str]] = {
        n.address: [] for n in topology if n.master and n.serves and not n.failed
    }
    replica_facts: list[NodeFacts] = []
    for node in topology:
        if node.master or node.failed:
            continue
        master = by_id.get(node.master_id)
        if master is not None and master.address in replicas:
            replicas[master.address].append(node.address)
        client = connect(node.host, node.port)
        replica_facts.append(NodeFacts(node.address, _info(client), _config(client)))
    failed = [n.address for n in topology if n.failed]
    return ClusterFacts(states, replicas, failed, coverage, replica_facts)


def run_doctor(
    url: str,
    *,
    prefix: str = "thousand",
    cluster: bool = False,
    timeout: float = 3.0,
) -> DoctorReport:
    """Connect to `url` (every master, in cluster mode) and evaluate the deployment."""
    shown = safe_url(url)
    report = DoctorReport(shown)
    options: dict[str, Any] = {
        "decode_responses": True,
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
    }
    try:
        client = redis.Redis.from_url(url, **options)
    except ValueError as exc:
        report.unreachable = f"REDIS_URL is not a Redis URL: {exc}"
        return report
    clients: list[redis.Redis] = [client]
    try:
        try:
            client.ping()
            info = _info(client)
        except (rx.ConnectionError, rx.TimeoutError, OSError) as exc:
            report.unreachable = f"cannot reach Redis at {shown}: {exc}"
            return report
        except rx.ResponseError as exc:  # e.g. NOAUTH, WRONGPASS
            report.unreachable = f"Redis at {shown} refused us: {exc}"
            return report
        enabled = _int(info, "cluster_enabled") == 1
        nodes: list[NodeFacts] = []
        untagged: list[str] = []
        immortal: list[str] = []
        cluster_facts: ClusterFacts | None = None
        if enabled:
            connection = client.connection_pool.connection_kwargs
            kwargs = {k: v for k, v in connection.items() if k in ("username", "password", "ssl")}

            def connect(host: str, port: int) -> redis.Redis:
                node = redis.Redis(host=host, port=port, **options, **kwargs)
                clients.append(node)
                return node

            topology = _topology(client)
            masters: dict[str, redis.Redis] = {}
            for entry in topology:
                if not entry.master or entry.failed:
                    continue
                node = connect(entry.host, entry.port)
                masters[entry.address] = node
                nodes.append(_facts(node, entry.address, prefix))
                untagged.extend(_untagged(node, prefix))
                immortal.extend(_immortal(node, prefix))
            cluster_facts = _cluster_facts(topology, masters, connect, prefix)
        else:
            nodes.append(_facts(client, shown, prefix))
            untagged = _untagged(client, prefix)
            immortal = _immortal(client, prefix)
        report.findings = evaluate(
            nodes,
            cluster_enabled=enabled,
            cluster_configured=cluster,
            prefix=prefix,
            untagged_keys=untagged,
            immortal_keys=immortal,
            cluster=cluster_facts,
        )
        return report
    except (rx.RedisError, OSError) as exc:
        report.unreachable = f"Redis at {shown} failed during the checks: {exc}"
        return report
    finally:
        for c in clients:
            c.close()
