"""Fixtures of the web table's tests (the kit is `webkit`)."""

from __future__ import annotations

import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bot"))  # botkit
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # cardspy

from aiohttp.test_utils import TestClient, TestServer
from botkit import Clock, Harness
from webkit import BOT_TOKEN, GROUP, Rig, signer_of, static_dir, web_settings

from adapters.web.app import WebOptions, WebTable, make_app
from bot.handlers import Handlers
from bot.model import Message
from bot.presence import Presence
from bot.service import Service
from bot.storage import RedisStore


@pytest.fixture
async def rig(redis_url: str, tmp_path: Path) -> AsyncIterator[Rig]:
    store = RedisStore.from_url(redis_url)
    settings = web_settings()
    service = Service(store, settings, handlers=Handlers, clock=time.time, presence=Presence(store))
    harness = Harness(service, store, Clock(), chat=GROUP)
    delivered: list[Message] = []

    async def deliver(messages: list[Message]) -> None:
        delivered.extend(messages)

    web = WebTable(
        service,
        signer_of(settings),
        WebOptions(telegram_token=BOT_TOKEN, poll_seconds=0.02, ping_seconds=0.5, rate=1000, burst=1000),
        deliver=deliver,
    )
    async with TestClient(TestServer(make_app(web, static_dir(tmp_path)))) as client:
        yield Rig(service, harness, web, client, delivered)
    await service.close()
    await store.close()
