"""`thousand reports` for operators: the reports players filed at public tables, read from a real
redis-server through the CLI (typer's CliRunner): listed newest first, filtered by --since, as JSON lines,
one shown with its record; every key the reports use has a lifetime."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import redis
from typer.testing import CliRunner

from adapters.cli import app
from bot.cli_reports import parse_since
from bot.reports import REPORT_SECONDS, RedisReports, Report
from bot.storage import RedisStore

runner = CliRunner()


def report(rid: str, created: float, reason: str = "abuse") -> Report:
    return Report(
        id=rid,
        created=created,
        table_id="pub:0123456789ab",
        serial="abcdef0123",
        preset="polish",
        reason=reason,
        reporter="tg:90000101",
        reporter_name="Ala",
        reported="dc:90000202",
        reported_name="Boris",
        record={"format": "thousand-record/1", "deals": [{"n": 1}]},
    )


def file_reports(url: str, *reports: Report) -> None:
    async def run() -> None:
        store = RedisStore.from_url(url)
        try:
            for r in reports:
                await RedisReports(store).file(r)
        finally:
            await store.close()

    asyncio.run(run())


@pytest.fixture
def filed(redis_url: str, monkeypatch: pytest.MonkeyPatch) -> float:
    now = time.time()
    file_reports(redis_url, report("rold", now - 3 * 86400, "leaving"), report("rnew", now - 3600))
    monkeypatch.setenv("REDIS_URL", redis_url)
    return now


def test_reports_are_listed_newest_first_and_filtered_by_since(filed: float) -> None:
    result = runner.invoke(app, ["reports", "--json"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [r["id"] for r in rows] == ["rnew", "rold"]
    assert rows[0]["reported"] == "dc:90000202" and "record" not in rows[0]
    result = runner.invoke(app, ["reports", "--since", "2d", "--json"])
    assert [json.loads(line)["id"] for line in result.output.splitlines()] == ["rnew"]
    table = runner.invoke(app, ["reports"])
    assert table.exit_code == 0, table.output
    assert "2 reports" in table.output and "rnew" in table.output and "Boris (dc:90000202)" in table.output


def test_one_report_is_shown_with_its_record(filed: float) -> None:
    result = runner.invoke(app, ["reports", "show", "rnew"])
    assert result.exit_code == 0, result.output
    assert "Reason:   abuse" in result.output and "By:       Ala (tg:90000101)" in result.output
    assert '"format": "thousand-record/1"' in result.output
    as_json = runner.invoke(app, ["reports", "show", "rold", "--json"])
    assert json.loads(as_json.output)["record"]["deals"] == [{"n": 1}]
    missing = runner.invoke(app, ["reports", "show", "nosuch"])
    assert missing.exit_code == 1


def test_without_redis_or_with_a_bad_since_the_command_says_so() -> None:
    result = runner.invoke(app, ["reports"])
    assert result.exit_code == 2 and "REDIS_URL" in result.output
    bad = runner.invoke(app, ["reports", "--since", "yesterday", "--url", "redis://127.0.0.1:1"])
    assert bad.exit_code == 2


def test_since_reads_durations_and_dates() -> None:
    assert parse_since("24h", 100000.0) == 100000.0 - 86400
    assert parse_since("2026-12-01", 0.0) == 1796083200.0


def test_every_report_key_has_a_lifetime(redis_url: str) -> None:
    file_reports(redis_url, report("rttl", time.time()))
    with redis.Redis.from_url(redis_url) as client:
        keys = client.keys("thousand:report*")
        assert sorted(k.decode() for k in keys) == ["thousand:report:rttl", "thousand:reports"]
        for key in keys:
            ttl = client.ttl(key)
            assert 0 < ttl <= REPORT_SECONDS, key
