"""bench/cluster.py measures what it says: on the session's 3-master cluster no master processes more
commands per move than another (no key that every move writes: before issue 26 the `{deadlines}` master
took two more per move), every move is counted and none refused, and a Redis Cluster given without
`--cluster` (or the other way round) is a clear error instead of a MovedError in the middle of a run."""

from __future__ import annotations

import pytest
from redis_server import LocalRedisCluster, RedisServer

from bench.cluster import Options, Target, throughput
from bench.redis_target import check_mode


async def test_every_master_processes_the_same_commands_per_move(redis_cluster: LocalRedisCluster) -> None:
    target = Target(redis_cluster.url, True, local=redis_cluster)
    result = await throughput("cluster", target, Options(tables=30, seconds=3.0, seed=26))
    why = "\n".join(f"{k}: {v}" for k, v in result.items())
    assert result["rate_withheld"] is None, why
    assert result["counted"]["refused"] == {}, why
    assert result["moves"] > 100 and result["moves_per_s"] > 0, why
    assert result["redis_round_trips_per_move"] < 2.2, why  # load and save (3 before issue 26)
    moves = {port: n for port, n in result["bench_reads_per_master"].items()}
    assert len(moves) == 3 and all(n > 0 for n in moves.values()), why
    processed = result["commands_processed_total_delta"]
    per_move = {port: processed[port] / moves[port] for port in moves}
    assert max(per_move.values()) / min(per_move.values()) < 1.15, per_move


def test_a_cluster_url_without_cluster_is_a_clear_error(redis_cluster: LocalRedisCluster) -> None:
    with pytest.raises(SystemExit, match="add --cluster"):
        check_mode(redis_cluster.url, False)
    check_mode(redis_cluster.url, True)


def test_a_server_url_with_cluster_is_a_clear_error(redis_server: RedisServer) -> None:
    with pytest.raises(SystemExit, match="leave out --cluster"):
        check_mode(redis_server.url, True)
    check_mode(redis_server.url, False)
