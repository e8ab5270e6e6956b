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

Here the report and the run; the rules in `doctor_rules.py`, the reading of Redis in `doctor_probe.py`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import redis
from redis import exceptions as rx

from bot.ops.doctor_probe import _cluster_facts, _facts, _immortal, _info, _topology, _untagged
from bot.ops.doctor_rules import (
    MIN_VERSION,
    SUPPORTED_VERSION,
    ClusterFacts,
    Finding,
    Level,
    NodeFacts,
    _int,
    evaluate,
)

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
