"""`thousand doctor` against real redis-servers configured to lose games, and not to."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from typing import Any

import pytest
import redis
from redis_server import LocalRedisCluster, RedisServer

from bot.ops.commands import doctor
from bot.ops.doctor import Finding, Level, NodeFacts, evaluate, run_doctor
from bot.storage import RedisStore

Factory = Callable[..., RedisServer]
SAFE = ("--maxmemory", "256mb")


def levels(findings: list[Finding]) -> dict[str, Level]:
    """The worst level per check."""
    order = [Level.OK, Level.WARN, Level.FAIL]
    out: dict[str, Level] = {}
    for f in findings:
        if f.check not in out or order.index(f.level) > order.index(out[f.check]):
            out[f.check] = f.level
    return out


def message(findings: list[Finding], check: str) -> str:
    return " | ".join(f.message for f in findings if f.check == check)


def test_persistence_off_would_lose_games(redis_factory: Factory) -> None:
    server = redis_factory(appendonly=False, extra_args=SAFE)
    report = run_doctor(server.url)
    assert report.exit_code == 1
    assert levels(report.findings)["persistence"] is Level.FAIL
    assert "appendonly no" in message(report.findings, "persistence")
    assert "every game" in message(report.findings, "persistence")  # the fixture also turns RDB off
    assert "FAIL  persistence  appendonly no" in report.to_text()


def test_a_safe_redis_passes(redis_factory: Factory) -> None:
    server = redis_factory(appendonly=True, extra_args=SAFE)
    report = run_doctor(server.url)
    assert report.exit_code == 0, report.to_text()
    assert set(levels(report.findings).values()) == {Level.OK}
    assert report.to_text().endswith("nothing here would lose games")


@pytest.mark.parametrize("policy", ["allkeys-lru", "volatile-lru", "volatile-ttl", "allkeys-random"])
def test_any_eviction_policy_would_lose_games(redis_factory: Factory, policy: str) -> None:
    server = redis_factory(appendonly=True, extra_args=(*SAFE, "--maxmemory-policy", policy))
    report = run_doctor(server.url)
    assert report.exit_code == 1
    assert levels(report.findings)["eviction"] is Level.FAIL
    assert policy in message(report.findings, "eviction")


def test_memory_headroom(redis_factory: Factory) -> None:
    server = redis_factory(appendonly=True, extra_args=SAFE)
    # Redis 7 takes some 70 KB more at the first look the doctor takes (of about 1 MB in all): taken first,
    # or the headroom measured here would be off by that much (0.8 read as FAIL, not WARN).
    run_doctor(server.url)
    with redis.Redis.from_url(server.url) as client:
        info = client.info("memory")
        used = int(info["used_memory"]) - int(info.get("mem_not_counted_for_evict", 0))
        client.config_set("maxmemory", str(int(used / 0.95)))
        report = run_doctor(server.url)
        assert levels(report.findings)["memory"] is Level.FAIL, report.to_text()
        assert "raise maxmemory" in message(report.findings, "memory")
        client.config_set("maxmemory", str(int(used / 0.8)))
        report = run_doctor(server.url)
        assert levels(report.findings)["memory"] is Level.WARN
        assert report.exit_code == 0
        client.config_set("maxmemory", "0")
        report = run_doctor(server.url)
        assert levels(report.findings)["memory"] is Level.WARN
        assert "no maxmemory" in message(report.findings, "memory")


def test_table_size_sampled_for_headroom(redis_factory: Factory) -> None:
    server = redis_factory(appendonly=True, extra_args=SAFE)

    async def fill() -> None:
        store = RedisStore.from_url(server.url)
        for i in range(30):
            await store.save(f"tg:{i}", 0, json.dumps({"seats": ["x" * 200] * 4}), ttl_seconds=600)
        await store.close()

    asyncio.run(fill())
    report = run_doctor(server.url)
    text = message(report.findings, "memory")
    assert "KB per table, 30 tables sampled" in text
    assert "room for ~" in text


def test_without_config_command_info_is_enough(redis_factory: Factory) -> None:
    # Managed services rename or forbid CONFIG; the doctor falls back on INFO.
    server = redis_factory(appendonly=False, extra_args=(*SAFE, "--rename-command", "CONFIG", ""))
    report = run_doctor(server.url)
    assert levels(report.findings)["persistence"] is Level.FAIL
    assert levels(report.findings)["eviction"] is Level.OK


def test_untagged_keys_under_the_prefix_are_reported(redis_factory: Factory) -> None:
    server = redis_factory(appendonly=True, extra_args=SAFE)
    with redis.Redis.from_url(server.url) as client:
        client.set("thousand:legacy:table", "x")
        client.set("other-app:key", "x")
    report = run_doctor(server.url)
    assert levels(report.findings)["keys"] is Level.WARN
    assert "thousand:legacy:table" in message(report.findings, "keys")
    assert "other-app" not in report.to_text()


def test_keys_that_never_expire_are_reported(redis_factory: Factory) -> None:
    server = redis_factory(appendonly=True, extra_args=SAFE)
    with redis.Redis.from_url(server.url) as client:
        client.sadd("thousand:{tg:1}:user", "tg:-5")  # an index from before user indexes expired
        client.set("thousand:{tg:-5}:table", "x", ex=60)
        client.zadd("thousand:{deadlines}:due", {"tg:-5": 1.0})  # global: needs no expiry
        client.set("other-app:key", "x")
    report = run_doctor(server.url)
    assert report.exit_code == 0  # a warning: nothing is lost, something grows
    assert levels(report.findings)["lifetimes"] is Level.WARN
    text = message(report.findings, "lifetimes")
    assert "1 sampled key(s)" in text and "thousand:{tg:1}:user" in text
    with redis.Redis.from_url(server.url) as client:
        client.expire("thousand:{tg:1}:user", 60)
    assert "lifetimes" not in levels(run_doctor(server.url).findings)


def test_password_is_never_printed_and_a_wrong_one_is_exit_2(redis_factory: Factory) -> None:
    server = redis_factory(appendonly=True, extra_args=SAFE)
    with redis.Redis.from_url(server.url) as client:  # (the fixture's start-up ping needs no password)
        client.config_set("requirepass", "pw-0123456789")
    good = server.url.replace("redis://", "redis://:pw-0123456789@")
    report = run_doctor(good)
    assert report.exit_code == 0, report.to_text()
    assert "pw-0123456789" not in report.to_text() + report.to_json()
    bad = run_doctor(server.url.replace("redis://", "redis://:wrong-password@"))
    assert bad.exit_code == 2
    assert "wrong-password" not in bad.to_text()


def test_unreachable_is_exit_2() -> None:
    report = run_doctor("redis://127.0.0.1:1/0", timeout=0.5)
    assert report.exit_code == 2
    assert "cannot reach Redis" in report.to_text()


def test_cluster_without_redis_cluster_setting(redis_cluster: LocalRedisCluster) -> None:
    report = run_doctor(redis_cluster.url, cluster=False)
    assert levels(report.findings)["cluster"] is Level.FAIL
    assert "REDIS_CLUSTER" in message(report.findings, "cluster")
    # Every master is checked: the test cluster runs without persistence on each of its 3 nodes.
    nodes = {f.node for f in report.findings if f.check == "persistence" and f.level is Level.FAIL}
    assert len(nodes) == 3
    configured = run_doctor(redis_cluster.url, cluster=True)
    assert levels(configured.findings)["cluster"] is Level.OK


def test_cli_reads_redis_url_and_prints_json(redis_factory: Factory, monkeypatch: pytest.MonkeyPatch) -> None:
    off = redis_factory(appendonly=False, extra_args=SAFE)
    on = redis_factory(appendonly=True, extra_args=SAFE)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setenv("REDIS_URL", off.url)
    assert doctor(None, None, as_json=True, out=out, err=err) == 1
    parsed: dict[str, Any] = json.loads(out.getvalue())
    assert parsed["ok"] is False
    assert {"level": "fail", "check": "persistence"}.items() <= parsed["findings"][1].items()
    monkeypatch.setenv("REDIS_URL", on.url)
    assert doctor(None, None, out=io.StringIO(), err=err) == 0
    monkeypatch.delenv("REDIS_URL")
    assert doctor(None, None, out=io.StringIO(), err=err) == 1
    assert "REDIS_URL is not set" in err.getvalue()


# --- the rules alone --------------------------------------------------------------------------------------

BASE = {
    "redis_version": "7.2.4",
    "role": "master",
    "aof_enabled": 1,
    "maxmemory_policy": "noeviction",
    "used_memory": 10_000_000,
    "maxmemory": 100_000_000,
    "total_system_memory": 1_000_000_000,
}


def judge(config: dict[str, str] | None = None, **info: Any) -> dict[str, Level]:
    facts = NodeFacts("n", {**BASE, **info}, config)
    return levels(evaluate([facts], cluster_enabled=False, cluster_configured=False))


def test_versions() -> None:
    assert judge(redis_version="4.0.14")["version"] is Level.FAIL
    assert judge(redis_version="6.0.9")["version"] is Level.WARN
    assert judge(redis_version="6.2.0")["version"] is Level.OK
    assert judge(redis_version="7.4.1")["version"] is Level.OK


def test_replica_and_failed_writes() -> None:
    assert judge(role="slave")["role"] is Level.FAIL
    assert judge(aof_last_write_status="err")["persistence"] is Level.FAIL
    assert judge({"appendonly": "yes", "appendfsync": "no"})["persistence"] is Level.WARN
    assert judge({"appendonly": "yes", "appendfsync": "everysec"})["persistence"] is Level.OK


def test_memory_counts_what_redis_holds_against_maxmemory() -> None:
    """The AOF and replica output buffers are not counted for eviction, nor for the doctor's headroom."""
    assert judge(used_memory=95_000_000)["memory"] is Level.FAIL
    assert judge(used_memory=95_000_000, mem_not_counted_for_evict=15_000_000)["memory"] is Level.WARN
    assert judge(used_memory=95_000_000, mem_not_counted_for_evict=30_000_000)["memory"] is Level.OK


def test_memory_without_limit_near_machine_size() -> None:
    assert judge(maxmemory=0, used_memory=950_000_000)["memory"] is Level.FAIL
    assert judge(maxmemory=2_000_000_000)["memory"] is Level.WARN  # a limit above the machine's memory


def test_cluster_configured_on_standalone_is_a_warning() -> None:
    facts = NodeFacts("n", BASE, None)
    found = levels(evaluate([facts], cluster_enabled=False, cluster_configured=True))
    assert found["cluster"] is Level.WARN
