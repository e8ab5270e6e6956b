"""Fixtures for the Discord adapter tests: the fake Discord, a world of users in a guild, running bots."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from dckit import World, make_world

from fakes.discord import FakeDiscord, FakeDiscordConfig


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord(FakeDiscordConfig()) as server:
        yield server


@pytest.fixture
def world(fake: FakeDiscord) -> World:
    return make_world(fake)
