"""The metrics API: separate registries, bounded labels, outcomes, and the activity counters."""

from __future__ import annotations

import pytest
from prometheus_client import REGISTRY

from bot.ops.activity import LocalActivity, RedisActivity
from bot.ops.metrics import Metrics, label


def sample(metrics: Metrics, name: str, **labels: str) -> float | None:
    return metrics.registry.get_sample_value(name, labels or None)


def test_each_metrics_object_has_its_own_registry() -> None:
    one, two = Metrics(), Metrics()
    one.cas_conflict()
    assert sample(one, "thousand_cas_conflicts_total") == 1
    assert sample(two, "thousand_cas_conflicts_total") == 0
    assert REGISTRY.get_sample_value("thousand_cas_conflicts_total") is None


def test_label_values_stay_bounded() -> None:
    assert label("play") == "play"
    assert label("Add_AI") == "add_ai"
    for hostile in ("", "9lives", "drop table;", "x" * 40, "ünïcode"):
        assert label(hostile) == "other"
    metrics = Metrics()
    metrics.update_handled("telegram", "callback query!", "ok")
    assert sample(metrics, "thousand_updates_total", platform="telegram", kind="other", outcome="ok") == 1


def test_time_command_counts_errors() -> None:
    metrics = Metrics()
    with metrics.time_command("bid") as timer:
        timer.outcome = "refused"
    with pytest.raises(RuntimeError), metrics.time_command("play"):
        raise RuntimeError("boom")
    assert sample(metrics, "thousand_commands_total", command="bid", outcome="refused") == 1
    assert sample(metrics, "thousand_commands_total", command="play", outcome="error") == 1
    assert sample(metrics, "thousand_command_duration_seconds_count", command="play") == 1


def test_send_side_counters() -> None:
    metrics = Metrics()
    metrics.rate_limited("telegram", 0.4)
    metrics.rate_limited("telegram", 3.0)
    metrics.too_many_requests("discord")
    metrics.platform_error("telegram", "forbidden")
    assert sample(metrics, "thousand_rate_limit_waits_total", platform="telegram") == 2
    assert sample(metrics, "thousand_rate_limit_wait_seconds_sum", platform="telegram") == pytest.approx(3.4)
    assert sample(metrics, "thousand_platform_429_total", platform="discord") == 1
    assert sample(metrics, "thousand_platform_errors_total", platform="telegram", kind="forbidden") == 1
    text = metrics.render().decode()
    assert "# HELP thousand_active_tables" in text


async def test_local_activity_counts_within_its_window() -> None:
    now = [1000.0]
    activity = LocalActivity(window=60, clock=lambda: now[0])
    activity.touch("tg:-1", "tg:1")
    activity.touch("tg:-1", "tg:2")
    activity.touch(None, "tg:3")  # a private command: a player, no table
    assert await activity.sample() == (1, 3)
    now[0] += 61
    activity.touch("tg:-2", "tg:1")
    assert await activity.sample() == (1, 1)


async def test_redis_activity_is_the_union_of_all_processes(redis_url: str, redis_prefix: str) -> None:
    now = [1_800_000_000.0]
    one, two = (
        RedisActivity.from_url(redis_url, prefix=redis_prefix, window=300, bucket=60, clock=lambda: now[0])
        for _ in range(2)
    )
    try:
        one.touch("tg:-1", "tg:1")
        two.touch("tg:-1", "tg:2")  # the same table seen by the other webhook replica
        two.touch("tg:-2", "tg:3")
        assert await one.sample() == (1, 1)
        assert await two.sample() == (2, 3)
        assert await one.sample() == (2, 3)  # every process reports the same union
        now[0] += 120
        one.touch("tg:-3", "tg:1")
        assert await two.sample() == (2, 3)  # one's new ids are not flushed yet
        assert await one.sample() == (3, 3)
        now[0] += 240  # the first minute left the 5-minute window; the last touch is still inside
        assert await one.sample() == (1, 1)
    finally:
        await one.close()
        await two.close()
