"""Fixtures of the reliability tests: the world of `relkit` on the memory store (and on a real Redis).

The Telegram rig of `tests/telegram/tgkit.py` is importable from here too."""

from __future__ import annotations

import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "telegram"))  # tgkit, the Telegram rig
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # bench.soak

from relkit import World, quiet_settings

from bot.handlers import Handlers
from bot.service import Service
from bot.storage import MemoryStore, RedisStore, Store

START = 1_700_000_000.0


async def make_world(store: Store, clock: list[float], seed: int = 1) -> World:
    service = Service(
        store, quiet_settings(), handlers=Handlers, clock=lambda: clock[0], rng=random.Random(seed)
    )
    world = World(service, store, clock)
    await world.build()
    return world


@pytest.fixture
async def world() -> AsyncIterator[World]:
    clock = [START]
    w = await make_world(MemoryStore(clock=lambda: clock[0]), clock)
    yield w
    await w.service.close()


@pytest.fixture
async def redis_world(redis_url: str, redis_prefix: str) -> AsyncIterator[World]:
    clock = [START]
    store = RedisStore.from_url(redis_url, prefix=redis_prefix)
    w = await make_world(store, clock)
    yield w
    await w.service.close()
    await store.close()
