"""Structured logs: one JSON object per line with the table and chat, no private chat contents."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator

import pytest

from bot.ops.logs import configure_logging, log_context


@pytest.fixture
def capture() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    handler = configure_logging("INFO", "json", secrets=["s3cret-value"], stream=stream)
    yield stream
    logging.getLogger().removeHandler(handler)


def records(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_lines_carry_context_and_allowed_extras(capture: io.StringIO) -> None:
    log = logging.getLogger("bot.service")
    with log_context(table_id="tg:-100123", chat_id="-100123", platform="telegram"):
        log.info("bid %d", 120, extra={"command": "bid", "outcome": "ok", "update": {"raw": "dump"}})
    log.info("outside")
    inside, outside = records(capture)
    assert inside["msg"] == "bid 120"
    assert inside["level"] == "info"
    assert inside["logger"] == "bot.service"
    assert inside["table_id"] == "tg:-100123"
    assert (inside["chat_id"], inside["platform"]) == ("-100123", "telegram")
    assert (inside["command"], inside["outcome"]) == ("bid", "ok")
    assert "update" not in inside  # extras outside the allowed list never reach the line
    assert "table_id" not in outside
    assert str(inside["ts"]).endswith("+00:00")


def test_private_chat_text_is_never_written(capture: io.StringIO) -> None:
    log = logging.getLogger("adapters.telegram")
    with log_context(chat_id="555", private=True):
        log.info("message received", extra={"text": "my hand is A♥ K♥"})
    with log_context(chat_id="-100123", private=False):
        log.info("message received", extra={"text": "/bid 120"})
    private, group = records(capture)
    assert private["text"] == "<private: 16 chars>"
    assert "A♥" not in capture.getvalue()
    assert group["text"] == "/bid 120"


def test_context_is_per_task(capture: io.StringIO) -> None:
    log = logging.getLogger("bot.service")

    async def handle(table: str) -> None:
        with log_context(table_id=table):
            await asyncio.sleep(0.01)
            log.info("done")

    async def both() -> None:
        await asyncio.gather(handle("a"), handle("b"))

    asyncio.run(both())
    assert sorted(str(r["table_id"]) for r in records(capture)) == ["a", "b"]


def test_unknown_context_field_is_refused() -> None:
    with pytest.raises(ValueError), log_context(message="hello"):
        pass


def test_registered_secrets_and_exceptions_are_redacted(capture: io.StringIO) -> None:
    try:
        raise ValueError("token s3cret-value rejected")
    except ValueError:
        logging.getLogger("x").exception("startup failed with s3cret-value")
    (line,) = records(capture)
    assert "s3cret-value" not in json.dumps(line)
    assert "***" in str(line["msg"]) and "***" in str(line["exc"])


def test_console_format_is_one_readable_line() -> None:
    stream = io.StringIO()
    handler = configure_logging("WARNING", "console", stream=stream)
    try:
        with log_context(table_id="dc:42"):
            logging.getLogger("bot").info("hidden by level")
            logging.getLogger("bot").warning("slow save", extra={"duration_ms": 250})
    finally:
        logging.getLogger().removeHandler(handler)
    (line,) = stream.getvalue().splitlines()
    assert "WARNING" in line and "slow save" in line
    assert line.endswith("[table_id=dc:42 duration_ms=250]")


def test_request_logging_libraries_are_quieted(capture: io.StringIO) -> None:
    logging.getLogger("httpx").info("HTTP Request: POST https://api.telegram.org/bot1/getUpdates")
    assert capture.getvalue() == ""


def test_public_text_hides_addresses_and_secrets_that_logs_keep() -> None:
    from bot.ops.logs import Redactor

    redactor = Redactor(["hunter2-password"])
    raw = (
        "Error 111 connecting to 10.0.4.7:6379. Connection refused. "
        "Error -2 connecting to redis-master.prod.svc:6380. "
        "url redis://:hunter2-password@cache.internal:6379/0 and [fd00::1]:6379 via 192.168.1.20 "
        "Connect call failed ('172.17.0.9', 6381) ('fd00::2', 6382, 0, 0)"
    )
    logged = redactor(raw)
    assert "hunter2-password" not in logged and "10.0.4.7:6379" in logged  # logs keep addresses
    shown = redactor.public(raw)
    for leak in (
        "10.0.4.7",
        "6379",
        "6380",
        "redis-master",
        "cache.internal",
        "hunter2",
        "fd00",
        "192.168",
        "172.17",
        "6381",
        "6382",
    ):
        assert leak not in shown, (leak, shown)
    assert shown.startswith("Error 111 connecting to ***. Connection refused.")
