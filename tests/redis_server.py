"""The tests' name for the local Redis launcher, which lives in bench/redis_nodes.py (benches import it
from there without reaching into tests/)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.redis_nodes import (  # noqa: E402
    ClusterNode,
    LocalRedisCluster,
    RedisServer,
    command,
    find_redis_server,
    free_port,
    parse_nodes,
)

__all__ = [
    "ClusterNode",
    "LocalRedisCluster",
    "RedisServer",
    "command",
    "find_redis_server",
    "free_port",
    "parse_nodes",
]
