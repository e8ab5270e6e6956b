"""`thousand doctor` on a Redis Cluster (issue 26): a replica for every master, persistence on every node
(replicas too), cluster_state ok with no node failed, and cluster-require-full-coverage no. On local
clusters with and without replicas, and the rules alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from redis_server import LocalRedisCluster

from bot.ops.doctor import ClusterFacts, Finding, Level, NodeFacts, evaluate, run_doctor

SAFE = ("--maxmemory", "256mb")


def levels(findings: list[Finding]) -> dict[str, Level]:
    order = [Level.OK, Level.WARN, Level.FAIL]
    out: dict[str, Level] = {}
    for f in findings:
        if f.check not in out or order.index(f.level) > order.index(out[f.check]):
            out[f.check] = f.level
    return out


def lines(findings: list[Finding], check: str, level: Level) -> list[Finding]:
    return [f for f in findings if f.check == check and f.level is level]


DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


@pytest.fixture
def replicated(tmp_path: Path) -> Iterator[LocalRedisCluster]:
    """3 masters + 3 replicas as deploy/compose.cluster.yaml runs them: each node reads
    deploy/redis-cluster.conf (its `dir /data` left out; port, directory and a 2 s node timeout given
    here), the replicas made as its init job makes them."""
    conf = tmp_path / "redis-cluster.conf"
    shipped = (DEPLOY / "redis-cluster.conf").read_text().splitlines()
    conf.write_text("\n".join(line for line in shipped if not line.startswith("dir ")) + "\n")
    cluster = LocalRedisCluster(
        tmp_path, replicas=1, appendonly=True, appendfsync="everysec", full_coverage=False, config_file=conf
    )
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()


def test_the_documented_cluster_passes(replicated: LocalRedisCluster) -> None:
    report = run_doctor(replicated.url, cluster=True)
    assert report.exit_code == 0, report.to_text()
    found = levels(report.findings)
    assert found["cluster"] is Level.OK and found["replicas"] is Level.OK, report.to_text()
    assert found["coverage"] is Level.OK, report.to_text()
    # Persistence is read on all six nodes: three masters and three replicas.
    persisted = {f.node for f in lines(report.findings, "persistence", Level.OK)}
    assert len(persisted) == 6, report.to_text()
    assert "every master has 1 replica(s)" in report.to_text()


def test_a_master_left_without_its_replica_fails(replicated: LocalRedisCluster) -> None:
    master = replicated.master_of_slot(0)
    replicated.kill(master)
    replicated.wait_failover(master)
    report = run_doctor(replicated.url, cluster=True)
    text = report.to_text()
    assert report.exit_code == 1, text
    # The promoted replica serves slot 0 now, with no replica of its own; the killed node is failed.
    promoted = replicated.master_of_slot(0)
    lonely = lines(report.findings, "replicas", Level.FAIL)
    assert [f.node for f in lonely] == [f"127.0.0.1:{promoted.port}"], text
    assert any(str(master.port) in f.message for f in lines(report.findings, "cluster", Level.FAIL)), text


def test_a_cluster_without_replicas_or_persistence_fails(redis_cluster: LocalRedisCluster) -> None:
    # The session's cluster: 3 masters, no replicas, no append-only file, Redis' default full coverage.
    report = run_doctor(redis_cluster.url, cluster=True)
    text = report.to_text()
    assert report.exit_code == 1
    assert len(lines(report.findings, "replicas", Level.FAIL)) == 3, text
    assert levels(report.findings)["coverage"] is Level.WARN, text
    assert "cluster-require-full-coverage yes" in text
    assert levels(report.findings)["cluster"] is Level.OK  # its state is ok: only the set-up is unsafe


# --- the rules alone --------------------------------------------------------------------------------------

MASTER = {"redis_version": "7.0.15", "role": "master", "aof_enabled": 1, "maxmemory": 10, "used_memory": 1}


def judge(cluster: ClusterFacts) -> list[Finding]:
    nodes = [NodeFacts(a, MASTER, {"appendonly": "yes"}) for a in cluster.replicas]
    return evaluate(nodes, cluster_enabled=True, cluster_configured=True, cluster=cluster)


def test_rules_replicas_state_and_coverage() -> None:
    good = ClusterFacts(
        states={"a": "ok", "b": "ok"},
        replicas={"a": ["c"], "b": ["d"]},
        full_coverage={"a": "no", "b": "no"},
    )
    assert {f.level for f in judge(good)} == {Level.OK}
    lonely = ClusterFacts(states={"a": "ok", "b": "ok"}, replicas={"a": ["c"], "b": []})
    assert [f.node for f in judge(lonely) if f.level is Level.FAIL] == ["b"]
    down = ClusterFacts(states={"a": "fail", "b": "ok"}, replicas={"a": ["c"], "b": ["d"]}, failed=["e"])
    failing = [f.message for f in judge(down) if f.level is Level.FAIL]
    assert any("a says fail" in m for m in failing) and any("e" in m for m in failing)
    covering = ClusterFacts(states={"a": "ok"}, replicas={"a": ["c"]}, full_coverage={"a": "yes"})
    assert levels(judge(covering))["coverage"] is Level.WARN
    unknown = ClusterFacts(states={"a": "ok"}, replicas={"a": ["c"]}, full_coverage={"a": None})
    assert "coverage" not in levels(judge(unknown))  # CONFIG refused: nothing claimed either way


def test_rules_a_replica_without_persistence_fails() -> None:
    replica = NodeFacts("c", {**MASTER, "role": "slave", "aof_enabled": 0}, {"appendonly": "no"})
    cluster = ClusterFacts(states={"a": "ok"}, replicas={"a": ["c"]}, replica_facts=[replica])
    failing = [f for f in judge(cluster) if f.level is Level.FAIL]
    assert [(f.check, f.node) for f in failing] == [("persistence", "c")]


# --- the documented set-up ---------------------------------------------------------------------------------


def test_the_compose_cluster_file_runs_six_nodes_an_init_job_and_cluster_bots() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.cluster.yaml").read_text())
    services = compose["services"]
    nodes = sorted(name for name in services if name.startswith("redis-") and name[-1].isdigit())
    assert nodes == [f"redis-{i}" for i in range(1, 7)]
    for name in nodes:
        assert "./redis-cluster.conf:/usr/local/etc/redis/redis.conf:ro" in services[name]["volumes"]
        test = services[name]["healthcheck"]["test"]
        assert test[0] == "CMD-SHELL" and len(test) == 2  # podman-compose 1.0.3 (test_compose_portable)
    init = services["redis-cluster-init"]
    assert set(init["depends_on"]) == set(nodes)
    assert "--cluster-replicas 1" in init["command"][0]
    bots = [name for name, service in services.items() if "build" in service]
    assert sorted(bots) == ["discord", "telegram", "web"]
    for name in bots:
        environment = services[name]["environment"]
        assert environment["REDIS_CLUSTER"] == "true" and environment["REDIS_URL"].startswith(
            "redis://redis-1"
        )
        assert environment["REDIS_WAIT_REPLICAS"] == "1"
        assert services[name]["env_file"] == ".env"
        assert set(services[name]["depends_on"]) == {"redis-cluster-init"}
    conf = (DEPLOY / "redis-cluster.conf").read_text()
    for line in ("cluster-enabled yes", "cluster-require-full-coverage no", "appendonly yes"):
        assert f"\n{line}\n" in conf
