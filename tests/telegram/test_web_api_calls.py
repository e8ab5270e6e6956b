"""Fewer Bot API calls with the web table: when all three players watch the table on the web (their
pages' event streams open, so the service knows them present), a move costs at most 0.4 Bot API calls
on average (sends, edits, deletions: everything but reads; what remains is the group's table message in
compact mode); the same moves with the pages closed cost the hand messages too (the control). Measured:
0.40 a move with the pages open, 1.40 with them closed (40 moves of a polish game)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestClient, TestServer
from tgkit import Rig, seat_everyone, settings

from adapters.web.app import WebOptions, WebTable, make_app
from bot.model import UserRef
from bot.presence import Presence
from bot.weblinks import signer_for
from fakes.telegram import FakeTelegram


def counts(method: str) -> bool:
    """A Bot API call a move causes: everything but the reads (getUpdates, getMe, getChatMember...)."""
    return not method.lower().startswith("get")


@pytest.fixture
async def web_rig() -> AsyncIterator[Rig]:
    rig = Rig(
        settings_=settings(telegram_webapp_url="https://cards.example/", web_secret="api-calls-web-0123")
    )
    await rig.start()
    try:
        yield rig
    finally:
        await rig.close()


async def _play(rig: Rig, pages: bool, moves: int) -> tuple[int, int]:
    """Moves made from the web pages (the player to act presses the first action); (moves, Bot API calls)."""
    fake: FakeTelegram = rig.fake
    people = [fake.add_user(name) for name in ("Alice", "Bob", "Carol")]
    chat = rig.group("Cards", people)
    table = await seat_everyone(rig, chat, people)
    await rig.settle()
    service = rig.bot.runtime.service
    service.presence = Presence(rig.store, clock=rig.clock.now)
    signer = signer_for(rig.settings)
    assert signer is not None
    web = WebTable(
        service,
        signer,
        WebOptions(rate=1000, burst=1000, poll_seconds=0.01),
        deliver=rig.bot.adapter.deliver,
        clock=rig.clock.now,
        presence=service.presence,
    )
    made = 0
    async with TestClient(TestServer(make_app(web))) as client:
        origin = str(client.make_url("/")).rstrip("/")
        sessions = {}
        for person in people:
            user = UserRef("tg", str(person.id), person.first_name, "en")
            token = web.link(table.table_id, user).split("?t=", 1)[1]
            r = await client.post("/api/session", json={"link": token}, headers={"Origin": origin})
            sessions[(await r.json())["seat"]] = (await r.json())["session"]
        streams = []
        if pages:
            for session in sessions.values():
                r = await client.post("/api/ticket", json={"session": session}, headers={"Origin": origin})
                ticket = (await r.json())["ticket"]
                streams.append(await client.get("/api/events", params={"ticket": ticket}))
            for _ in range(200):
                here = [await service.presence.present(table.table_id, f"tg:{p.id}") for p in people]
                if all(here):
                    break
                await asyncio.sleep(0.01)
            assert all(here)
        before = len([c for c in fake.calls if counts(c.method)])
        for _ in range(moves):
            _, state = await table.state()
            if state is None or state.finished:
                break
            seat = state.to_act
            assert seat is not None
            r = await client.post("/api/view", json={"session": sessions[seat]}, headers={"Origin": origin})
            view = json.loads(await r.text())
            pick = next((a for a in view["actions"] if a["kind"] == "pass"), view["actions"][0])
            r = await client.post(
                "/api/act",
                json={"session": sessions[seat], "payload": pick["payload"]},
                headers={"Origin": origin},
            )
            assert (await r.json())["ok"]
            made += 1
            await rig.settle()
        calls = len([c for c in fake.calls if counts(c.method)]) - before
        for s in streams:
            with contextlib.suppress(Exception):
                s.close()
    return made, calls


async def test_web_players_cost_at_most_0_4_calls_per_move(web_rig: Rig) -> None:
    made, calls = await _play(web_rig, pages=True, moves=40)
    assert made >= 30
    print(f"web pages open: {calls} Bot API calls for {made} moves ({calls / made:.2f} a move)")
    assert calls / made <= 0.4, (calls, made)


async def test_closed_pages_get_their_hands_as_before(web_rig: Rig) -> None:
    made, calls = await _play(web_rig, pages=False, moves=40)
    assert made >= 30
    print(f"pages closed: {calls} Bot API calls for {made} moves ({calls / made:.2f} a move)")
    assert calls / made > 1.0, (calls, made)
