"""The service's own upkeep: a chat's settings live a year after their last use (not their last change),
without a store round trip per command; the per-table locks of a process do not pile up."""

from __future__ import annotations

import gc
import random
from collections.abc import AsyncIterator

import pytest
from botkit import Clock, Harness, errors, make_user, quiet_settings

from bot.handlers import Handlers
from bot.model import ChatRef
from bot.service import Service
from bot.storage import MemoryStore

ALA, BARTEK, CELINA = (make_user(i, admin=True) for i in range(3))
DAY = 24 * 3600.0


class CountingStore(MemoryStore):
    """Counts the store's reads and writes of one key."""

    def __init__(self, clock: Clock, key: str) -> None:
        super().__init__(clock=clock)
        self.key = key
        self.touches = 0

    async def load(self, table_id: str):  # type: ignore[no-untyped-def]
        self.touches += table_id == self.key
        return await super().load(table_id)

    async def save(self, table_id: str, *args, **kwargs):  # type: ignore[no-untyped-def]
        self.touches += table_id == self.key
        return await super().save(table_id, *args, **kwargs)


@pytest.fixture
async def yearly(clock: Clock) -> AsyncIterator[Harness]:
    store = CountingStore(clock, "settings:t:-100")
    service = Service(store, quiet_settings(settings_ttl=365 * DAY), handlers=Handlers, clock=clock)
    yield Harness(service, store, clock)
    await service.close()


async def test_settings_used_every_day_outlive_their_ttl_and_moves_do_not_touch_them(
    yearly: Harness, clock: Clock
) -> None:
    h = yearly
    store = h.store
    assert isinstance(store, CountingStore) and store.key == f"settings:{h.chat.key}"
    await h.text(ALA, "/set turn 90")
    assert (await store.load(store.key)) is not None
    for day in range(400):  # a game every day for more than a year after the last change
        clock.now += DAY
        await h.open_table([ALA, BARTEK, CELINA])
        if day == 0:
            before = store.touches
            rng = random.Random(1)
            for _ in range(6):
                assert await h.play_turn(rng, {0: ALA, 1: BARTEK, 2: CELINA}, sensible=True)
            assert store.touches == before, "a move read or wrote the chat's settings"
        assert not errors(await h.text(ALA, "/end"))
    _, settings = await h.service.chat_settings(h.chat.key)
    assert settings.turn_seconds == 90, "the settings expired a year after their last change"
    # Unused for a year and a day, they go.
    clock.now += 366 * DAY
    assert await store.load(store.key) is None


async def test_table_locks_go_when_nobody_holds_them(harness: Harness) -> None:
    service = harness.service
    for i in range(50):
        assert not errors(await harness.text(ALA, "/new", chat=ChatRef("t", str(-1000 - i), f"G{i}")))
    gc.collect()
    assert len(service._locks) == 0
