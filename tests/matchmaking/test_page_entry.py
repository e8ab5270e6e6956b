"""A web page's queue entry lives a short while without its page (issue 25): the page renews it every
2 s while open and says when it closes; a tab that could not (a crash, a lost network) must not stay
queued the two minutes a chat's entry lives. Both queues, the contract's backends."""

from __future__ import annotations

import pytest
from test_queue_contract import THREE, Backend, backend, now_of, player

from bot.matchmaking import MatchConfig

__all__ = ["backend"]


@pytest.fixture
def config() -> MatchConfig:
    return MatchConfig(entry_seconds=3.0, page_entry_seconds=0.6)


async def test_a_page_entry_expires_soon_and_a_chats_does_not(backend: Backend) -> None:
    q = backend.queue
    now = await now_of(backend)
    await q.join(player(1, "web"), 1500, THREE, now)  # a page, then closed (no status any more)
    await q.join(player(2, "web"), 1500, THREE, now)  # a page still open (asks its status)
    await q.join(player(3, "tg"), 1500, THREE, now)  # a chat (its desk renews it)
    for _ in range(4):  # 1.2 s
        await backend.advance(0.3)
        assert (await q.status("web:2")).queued
        assert await q.renew(["tg:3"]) == 1
    assert not (await q.status("web:1")).queued
    assert (await q.status("tg:3")).queued
    assert MatchConfig().lifetime("web:1") == 20.0 and MatchConfig().lifetime("tg:1") == 120.0
