"""Fixtures of the browser tests: the real aiohttp server of adapters/web on Redis, and chromium.

Skipped, with the reason, only when the system's chromium or Playwright for Python is missing
(`make test` installs chromium where it can).
"""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bot"))  # botkit
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # cardspy

try:
    import playwright.async_api as _pw
except ImportError:  # pragma: no cover - the dev extra installs it
    _pw = None  # type: ignore[assignment]

from browserkit import BOT_TOKEN, CHROMIUM, GROUP

if _pw is None:
    pytest.skip("Playwright for Python is not installed (pip install -e '.[dev]')", allow_module_level=True)
if CHROMIUM is None:
    pytest.skip("chromium is not installed (as root: apt-get install -y chromium)", allow_module_level=True)

from aiohttp.test_utils import TestServer
from botkit import Clock, Harness, quiet_settings
from browserkit import Room

from adapters.web.app import STATIC_DIR, WebOptions, WebTable, make_app
from bot.handlers import Handlers
from bot.model import Message
from bot.presence import Presence
from bot.service import Service
from bot.storage import RedisStore
from bot.weblinks import signer_for


@pytest.fixture
async def room(redis_url: str) -> AsyncIterator[Room]:
    store = RedisStore.from_url(redis_url)
    settings = quiet_settings(web_secret="browser-test-secret-0123456789")
    service = Service(store, settings, handlers=Handlers, clock=time.time, presence=Presence(store))
    harness = Harness(service, store, Clock(), chat=GROUP)
    signer = signer_for(settings)
    assert signer is not None

    async def deliver(messages: list[Message]) -> None:
        return None

    web = WebTable(
        service,
        signer,
        WebOptions(telegram_token=BOT_TOKEN, poll_seconds=0.02, rate=1000, burst=1000),
        deliver=deliver,
    )
    server = TestServer(make_app(web, STATIC_DIR), host="127.0.0.1")
    await server.start_server()
    base = str(server.make_url("")).rstrip("/")
    assert _pw is not None
    async with _pw.async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            room = Room(service, web, base, browser, harness)
            yield room
            # No page asked for anything off the test server (Telegram's script is answered by the test).
            assert [url for tab in room.tabs for url in tab.seen.external] == []
        finally:
            await browser.close()
    await server.close()
    await service.close()
    await store.close()
