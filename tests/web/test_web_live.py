"""Live updates and presence on a real Redis: a move made through another server instance reaches an open
page of this one; an open page marks its seat present and the service stops redrawing that player's hand
(the turn notification of a player whose page is closed stays); the replay link serves the record."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer
from botkit import Clock, errors, make_user, quiet_settings
from webkit import GROUP, HUMANS, Rig, signer_of, static_dir, web_settings

from adapters.web.app import WebOptions, WebTable, make_app
from bot.handlers import Handlers
from bot.markup import to_plain
from bot.model import ChatRef, Message, Private
from bot.presence import Presence
from bot.service import Service
from bot.storage import RedisStore
from bot.weblinks import Signer


def hands_of(messages: list[Message]) -> list[Any]:
    return [m for m in messages if m.kind == "hand" and isinstance(m.audience, Private)]


async def next_event(resp: ClientResponse, timeout: float = 5.0) -> tuple[str, Any]:
    """The next SSE event of a stream: (event name, parsed data)."""
    event, data = "", ""
    async with asyncio.timeout(timeout):
        while True:
            line = (await resp.content.readline()).decode()
            if line.startswith("event: "):
                event = line[7:].strip()
            elif line.startswith("data: "):
                data = line[6:].strip()
            elif line == "\n" and event:
                return event, json.loads(data)


async def next_view(resp: ClientResponse, timeout: float = 5.0) -> dict[str, Any]:
    while True:
        event, data = await next_event(resp, timeout)
        if event == "view":
            assert isinstance(data, dict)
            return data


@pytest.fixture
async def second(rig: Rig, redis_url: str, tmp_path: Path) -> AsyncIterator[Rig]:
    """Another server process's web table: its own service and Redis connections, the same Redis."""
    store = RedisStore.from_url(redis_url)
    settings = web_settings()
    service = Service(store, settings, handlers=Handlers, clock=Clock(), presence=Presence(store))
    web = WebTable(
        service,
        signer_of(settings),
        WebOptions(poll_seconds=0.02, ping_seconds=0.5, rate=1000, burst=1000),
    )
    (tmp_path / "b").mkdir()
    async with TestClient(TestServer(make_app(web, static_dir(tmp_path / "b")))) as client:
        yield Rig(service, rig.harness, web, client)
    await service.close()
    await store.close()


async def test_a_move_through_another_instance_reaches_the_open_page(rig: Rig, second: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    _, doc = await rig.harness.doc()
    assert doc is not None
    sessions_a = [(await rig.session_by_link(u))["session"] for u in HUMANS]
    sessions_b = [(await second.session_by_link(u))["session"] for u in HUMANS]
    streams = [await rig.stream(s, rig.headers()) for s in sessions_a]
    try:
        first = [await next_view(s) for s in streams]
        version = first[0]["version"]
        mover = first[0]["to_act"]
        mine = first[mover]
        payload = mine["actions"][0]["payload"]
        started = time.perf_counter()
        r = await second.client.post(
            "/api/act", json={"session": sessions_b[mover], "payload": payload}, headers=second.headers()
        )
        assert (await r.json()) == {"ok": True}
        for seat, stream in enumerate(streams):
            view = await next_view(stream)
            assert view["version"] == version + 1 and view["me"] == seat
        assert time.perf_counter() - started < 2.0
        # Pings keep the connection alive.
        event, _ = await next_event(streams[0], timeout=3.0)
        assert event == "ping"
    finally:
        for s in streams:
            s.close()


async def test_presence_spares_hand_messages_of_players_watching_the_web(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    presence = rig.service.presence
    assert presence is not None
    # Nobody has a page open: the mover's neighbour gets their hand (their turn) as before.
    state = await rig.harness.state()
    mover = state.to_act
    assert mover is not None
    session = (await rig.session_by_link(HUMANS[(mover + 1) % 3]))["session"]
    stream = await rig.stream(session, rig.headers())
    # The mover has a page open too, but moves by typing in the chat: that answer still reaches them.
    own = (await rig.session_by_link(HUMANS[mover]))["session"]
    own_stream = await rig.stream(own, rig.headers())
    try:
        await next_view(stream)
        await next_view(own_stream)
        for _ in range(50):
            if await presence.present(GROUP.key, HUMANS[mover].key):
                break
            await asyncio.sleep(0.02)
        assert await presence.present(GROUP.key, HUMANS[mover].key)
        watcher = HUMANS[(mover + 1) % 3]
        for _ in range(50):
            if await presence.present(GROUP.key, watcher.key):
                break
            await asyncio.sleep(0.02)
        assert await presence.present(GROUP.key, watcher.key)
        assert not await presence.present(GROUP.key, HUMANS[(mover + 2) % 3].key)
        sent = await rig.harness.text(HUMANS[mover], "/pass")
        assert not errors(sent)
        hands = {m.audience.user.key for m in sent if m.kind == "hand" and isinstance(m.audience, Private)}
        assert watcher.key not in hands  # the page shows it: no Bot API call for their hand
        assert HUMANS[mover].key in hands  # the sender's own answer stays
    finally:
        stream.close()
        own_stream.close()
    # The page closed: the mark goes, and the next player's hand comes again.
    for _ in range(100):
        if not await presence.present(GROUP.key, HUMANS[(mover + 1) % 3].key):
            break
        await asyncio.sleep(0.02)
    assert not await presence.present(GROUP.key, HUMANS[(mover + 1) % 3].key)


async def test_turn_notification_kept_for_a_closed_page() -> None:
    """Without presence, or with the page closed, every hand message goes out (a service on memory)."""
    from bot.storage import MemoryStore

    store = MemoryStore()
    presence = Presence(store, clock=time.time)
    service = Service(store, quiet_settings(), handlers=Handlers, presence=presence)
    users = [make_user(i, platform="tg") for i in range(3)]
    from botkit import Harness

    h = Harness(service, store, Clock(), chat=GROUP)
    await h.open_table(users)
    state = await h.state()
    mover = state.to_act
    assert mover is not None
    nxt = users[(mover + 1) % 3]
    await presence.touch(GROUP.key, nxt.key, "page1")
    await presence.leave(GROUP.key, nxt.key, "page1")
    sent = await h.text(users[mover], "/pass")
    assert (await h.state()).to_act == (mover + 1) % 3
    turn = [
        m
        for m in sent
        if m.kind == "hand" and isinstance(m.audience, Private) and m.audience.user.key == nxt.key
    ]
    assert turn and turn[0].notify
    # With the page open, the same move would not redraw that hand (the control for the line above).
    h2 = Harness(service, store, Clock(), chat=ChatRef("tg", "-100888", "Other"))
    await h2.open_table(users)
    mover2 = (await h2.state()).to_act
    assert mover2 is not None
    nxt2 = users[(mover2 + 1) % 3]
    await presence.touch(h2.table_id, nxt2.key, "page1")
    sent = await h2.text(users[mover2], "/pass")
    assert not [
        m
        for m in sent
        if m.kind == "hand" and isinstance(m.audience, Private) and m.audience.user.key == nxt2.key
    ]
    await service.close()


async def test_replay_link_serves_the_record_and_refuses_forgeries(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    # Finish one deal so that the record has something.
    import random

    rng = random.Random(3)
    users = {i: u for i, u in enumerate(HUMANS)}
    for _ in range(200):
        state = await rig.harness.state()
        if state.deal_number > 0 or state.finished:
            break
        assert await rig.harness.play_turn(rng, users, sensible=True)
    sent = await rig.harness.text(HUMANS[0], "/export")
    exported = [m for m in sent if m.kind == "export"]
    assert exported and "/replay/" in exported[0].text
    path = to_plain(exported[0].text).split("https://example.test", 1)[1].split()[0]  # as people see it
    page = await rig.client.get(path)
    assert page.status == 200 and "<title>replay</title>" in await page.text()
    token = path.removeprefix("/replay/")
    r = await rig.client.get(f"/api/replay/{token}")
    assert r.status == 200, await r.text()
    replay = await r.json()
    assert replay["players"] == [u.name for u in HUMANS] and replay["format"] == "thousand-replay/1"
    # The finished deal stepped with every hand open: its first step as dealt, its last with the result.
    assert {s["deal"] for s in replay["steps"]} == {1}
    assert replay["steps"][0]["action"] is None and replay["steps"][-1]["result"]["complete"] is True
    assert "pass" in replay["strings"]
    # Forged, or for the table's next game (another serial): refused.
    _, doc = await rig.harness.doc()
    assert doc is not None
    forged = Signer(b"f" * 32).replay_token(GROUP.key, doc.serial, time.time() + 60)
    assert (await rig.client.get(f"/api/replay/{forged}")).status == 401
    expired = rig.web.signer.replay_token(GROUP.key, doc.serial, time.time() - 1)
    assert (await rig.client.get(f"/api/replay/{expired}")).status == 401
    other = rig.web.signer.replay_token(GROUP.key, "another-serial", time.time() + 60)
    assert (await rig.client.get(f"/api/replay/{other}")).status == 404


async def test_a_mark_expires_when_its_page_stops_refreshing_it() -> None:
    """A process that died with a page open leaves a mark that goes by itself after the TTL."""
    from bot.storage import MemoryStore

    clock = Clock()
    store = MemoryStore(clock=clock)
    presence = Presence(store, ttl=40, clock=clock)
    await presence.touch(GROUP.key, "tg:1", "page")
    clock.advance(39)
    assert await presence.present(GROUP.key, "tg:1")
    await presence.touch(GROUP.key, "tg:1", "page")  # refreshed by the open connection
    clock.advance(39)
    assert await presence.present(GROUP.key, "tg:1")
    clock.advance(2)
    assert not await presence.present(GROUP.key, "tg:1")
