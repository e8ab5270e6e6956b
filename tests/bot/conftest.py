"""Fixtures of the service's tests: a service on the memory store with a clock the test moves."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from botkit import Clock, Harness, quiet_settings

from bot.handlers import Handlers
from bot.service import Service
from bot.storage import MemoryStore


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def harness(clock: Clock) -> AsyncIterator[Harness]:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(), handlers=Handlers, clock=clock)
    yield Harness(service, store, clock)
    await service.close()


@pytest.fixture
async def timed(clock: Clock) -> AsyncIterator[Harness]:
    """A harness whose turns have a 90 s deadline (warning 30 s before)."""
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(turn_seconds=90, warn_seconds=30), handlers=Handlers, clock=clock)
    yield Harness(service, store, clock)
    await service.close()
