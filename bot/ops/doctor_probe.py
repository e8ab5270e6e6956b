"""`thousand doctor` talking to Redis: the facts of a node (INFO, CONFIG, a sample of keys) and of a
cluster (its topology, each master's state and coverage, each replica's persistence).

Synchronous redis-py: the doctor is a one-shot command, not part of the bot's event loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import redis
from redis import exceptions as rx

from bot.ops.doctor_rules import ClusterFacts, NodeFacts

__all__ = ["SAMPLE_TABLES"]

SAMPLE_TABLES: Final = 20
"""How many table documents are measured for their average size."""


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
