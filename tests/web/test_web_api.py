"""The web table's API on a real Redis: sessions from initData and links, the view of a seat and of a
spectator on the wire, moves through the service, refusals, origin and size checks."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from webkit import BOT_TOKEN, GROUP, HUMANS, Rig

from adapters.web.telegram_auth import sign_init_data
from bot.render import hand_order
from bot.table import TableDoc
from bot.weblinks import Claims, Signer
from core.cards import CARD_NAMES, cards_of, mask_of
from core.deal import Phase
from core.game import GameState
from fakes.cardspy import Part, leaks, secret_cards

CARD_INDEX = {name: i for i, name in enumerate(CARD_NAMES)}
CODE = re.compile(r"(?<![A-Za-z0-9])(?:9|10|J|Q|K|A)[CSHD](?![A-Za-z0-9])")


def init_data(user_id: int, start: str | None = None, *, token: str = BOT_TOKEN, age: int = 0) -> str:
    fields = {
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps({"id": user_id, "first_name": f"U{user_id}", "language_code": "pl"}),
        "auth_date": str(int(time.time()) - age),
    }
    if start is not None:
        fields["start_param"] = start
    return sign_init_data(fields, token)


async def open_game(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)


async def state_now(rig: Rig) -> tuple[TableDoc, GameState]:
    _, doc = await rig.harness.doc()
    assert doc is not None and doc.game is not None
    return doc, rig.harness.cache.state(doc.serial, doc.game.spec, doc.game.actions)


def forbidden(state: GameState, seat: int | None) -> set[str]:
    """Cards `seat` (None: a spectator) must not receive: the others' hands and a talon not shown (the
    cards `seat` gave away it still knows)."""
    deal = state.deal
    if state.finished:
        return set()
    secret = 0
    for s, hand in enumerate(deal.hands):
        if s != seat:
            secret |= hand
    talon_taken = deal.declarer >= 0 and deal.phase not in (Phase.BIDDING, Phase.TALON, Phase.SALE)
    if not deal.talon_public and not talon_taken:
        secret |= mask_of(deal.talon_as_dealt)
    if seat is not None:
        for giver, action in state.actions_this_deal():
            if giver == seat and getattr(action, "kind", "") == "give":
                secret &= ~mask_of(c for _, c in action.cards)  # type: ignore[attr-defined]
    return {CARD_NAMES[c] for c in cards_of(secret)}


async def view(rig: Rig, session: str) -> tuple[str, dict[str, Any]]:
    r = await rig.view(session)
    assert r.status == 200, await r.text()
    text = await r.text()
    return text, json.loads(text)


async def test_sessions_views_and_a_whole_deal_by_the_web(rig: Rig) -> None:
    await open_game(rig)
    start = await rig.start()
    # Telegram: the seat comes from initData's user, the table from the signed start payload.
    r = await rig.client.post(
        "/api/session", json={"init_data": init_data(100, start)}, headers=rig.headers()
    )
    assert r.status == 200, await r.text()
    s0 = await r.json()
    assert (s0["table"], s0["seat"], s0["lang"]) == (GROUP.key, 0, "pl")
    assert s0["strings"]["pass"] == "Pas" and "phase.play" in s0["strings"]
    # A Telegram user who does not sit at the table: a spectator.
    r = await rig.client.post(
        "/api/session", json={"init_data": init_data(999, start)}, headers=rig.headers()
    )
    spectator = await r.json()
    assert spectator["seat"] is None
    # Discord/terminal-style links for the two others.
    sessions = {0: s0["session"], 1: (await rig.session_by_link(HUMANS[1]))["session"]}
    sessions[2] = (await rig.session_by_link(HUMANS[2]))["session"]
    assert all(isinstance(s, str) for s in sessions.values())

    moves = 0
    while True:
        _, state = await state_now(rig)
        if state.deal_number > 0 or state.finished:
            break
        # Every view on the wire: no private card of another seat, none at all for the spectator.
        for seat, session in [*sessions.items(), (None, spectator["session"])]:
            text, data = await view(rig, str(session))
            leaked = set(CODE.findall(text)) & forbidden(state, seat)
            assert not leaked, (seat, state.phase, leaked)
            # The suite's detector too (labels in every language, codes, payload arguments).
            private = set(secret_cards(state)) & {CARD_INDEX[c] for c in forbidden(state, seat)}
            assert not leaks([Part(f"view of seat {seat}", text)], private, ["pl", "en"])
            if seat is None:
                assert data["hand"] is None and data["actions"] == [] and data["me"] is None
            else:
                # The hand in the chats' order: by suit, high to low.
                assert data["hand"] == [CARD_NAMES[c] for c in hand_order(cards_of(state.deal.hands[seat]))]
        seat = state.to_act
        assert seat is not None and seat >= 0
        _, data = await view(rig, str(sessions[seat]))
        actions = data["actions"]
        assert actions, (state.phase, data["prompt"])
        if state.phase == Phase.BIDDING:
            values = [a["value"] for a in actions if a["kind"] == "bid"]
            legal = [a.value for a in state.legal_actions(seat) if type(a).__name__ == "Bid"]
            assert values == legal  # the whole range, no paging
        pick = next((a for a in actions if a["kind"] == "pass"), actions[0])
        if (
            state.phase == Phase.BIDDING
            and state.deal.bid == 0
            and not any(a["kind"] == "pass" for a in actions)
        ):
            pick = actions[0]
        r = await rig.client.post(
            "/api/act", json={"session": sessions[seat], "payload": pick["payload"]}, headers=rig.headers()
        )
        assert r.status == 200 and (await r.json()) == {"ok": True}, (pick, await r.text())
        # The same payload again is stale now: refused in the player's language, nothing changes.
        version_before = (await rig.harness.doc())[0]
        r = await rig.client.post(
            "/api/act", json={"session": sessions[seat], "payload": pick["payload"]}, headers=rig.headers()
        )
        answer = await r.json()
        assert answer["ok"] is False and answer["error"], answer
        assert (await rig.harness.doc())[0] == version_before
        moves += 1
        assert moves < 80
    assert moves > 10
    # The web delivered the group's table messages and the other players' hands, never the mover's own.
    assert any(m.kind == "table" for m in rig.delivered)


async def test_forged_expired_and_other_table_credentials_are_refused(rig: Rig) -> None:
    await open_game(rig)
    start = await rig.start()
    bad = [
        {"init_data": init_data(100, start, token="654321:another-bots-token-here")},  # another bot
        {"init_data": init_data(100, start).replace("U100", "U101")},  # tampered after signing
        {"init_data": init_data(100, start, age=3 * 86400)},  # too old
        # A start payload signed elsewhere.
        {"init_data": init_data(100, Signer(b"x" * 32).start_payload(GROUP.key, "a1b2c3"))},
        {"link": Signer(b"x" * 32).sign(Claims("link", GROUP.key, "100", "A", "en", "tg", time.time() + 60))},
        {"link": rig.web.signer.sign(Claims("link", GROUP.key, "100", "A", "en", "tg", time.time() - 1))},
        {"link": rig.web.signer.sign(Claims("session", GROUP.key, "100", "A", "en", "tg", time.time() + 60))},
        {"link": await rig.start()},
        {},
    ]
    for body in bad:
        r = await rig.client.post("/api/session", json=body, headers=rig.headers())
        assert r.status in (400, 401, 403), (body, r.status)
        assert (await r.json())["error"], body
    # A session for another table cannot move on this one, even with a genuine payload of this table.
    token = rig.web.session_for(Claims("session", "tg:-100999", HUMANS[0].user_id, "A", "en", "tg", 0))
    doc, state = await state_now(rig)
    mover = state.to_act
    mover_session = (await rig.session_by_link(HUMANS[mover or 0]))["session"]
    _, mover_view = await view(rig, str(mover_session))
    payload = mover_view["actions"][0]["payload"]
    r = await rig.client.post("/api/act", json={"session": token, "payload": payload}, headers=rig.headers())
    assert r.status == 403
    # Not your turn: refused by the service, in the player's language.
    idle = next(s for s in range(3) if s != mover)
    idle_session = (await rig.session_by_link(HUMANS[idle]))["session"]
    r = await rig.client.post(
        "/api/act", json={"session": idle_session, "payload": payload}, headers=rig.headers()
    )
    answer = await r.json()
    assert answer["ok"] is False and answer["error"]
    assert (await rig.harness.doc())[1] == doc


async def test_origin_size_and_session_checks(rig: Rig) -> None:
    await open_game(rig)
    session = (await rig.session_by_link(HUMANS[0]))["session"]
    body = {"session": session, "payload": "x:::tg:-100777"}
    for headers in ({}, {"Origin": "https://evil.example"}, {"Origin": "null"}):
        r = await rig.client.post("/api/act", json=body, headers=headers)
        assert r.status == 403, headers
        assert "Content-Security-Policy" in r.headers
    r = await rig.stream(session, {"Origin": "https://evil.example"})
    assert r.status == 403
    r = await rig.stream(session, {"Sec-Fetch-Site": "cross-site"})
    assert r.status == 403
    # A same-origin EventSource sends no Origin: the stream opens.
    r = await rig.stream(session)
    assert r.status == 200 and r.headers["Content-Type"].startswith("text/event-stream")
    r.close()
    r = await rig.client.post("/api/act", data="x" * 5000, headers=rig.headers())
    assert r.status == 413
    r = await rig.view("forged.token")
    assert r.status == 401
    page = await rig.client.get("/")
    csp = page.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp


async def test_csp_allows_telegrams_script_and_nothing_else_external(rig: Rig) -> None:
    """script-src names Telegram's telegram-web-app.js exactly; no other directive names anything off the
    server but frame-ancestors (Telegram's clients frame the Mini App)."""
    for path in ("/", "/static/app.js", "/api/view", "/api/events?ticket=x", "/no-such-page"):
        r = await rig.client.get(path)
        directives = {
            d.split()[0]: d.split()[1:] for d in r.headers["Content-Security-Policy"].split(";") if d.strip()
        }
        assert directives["script-src"] == ["'self'", "https://telegram.org/js/telegram-web-app.js"], path
        assert directives["default-src"] == ["'none'"]
        for name, sources in directives.items():
            if name in ("script-src", "frame-ancestors"):
                continue
            assert all(s in ("'self'", "'none'", "data:") for s in sources), (name, sources)
        assert all(
            s == "'self'" or (s.startswith("https://") and s.endswith("telegram.org"))
            for s in directives["frame-ancestors"]
        )


async def test_rate_limit(rig: Rig) -> None:
    from adapters.web.security import RateLimiter

    rig.web.limiter = RateLimiter(rate=1, burst=10)  # the burst runs out whatever the machine's speed
    await open_game(rig)
    session = (await rig.session_by_link(HUMANS[0]))["session"]
    statuses = [(await rig.view(session)).status for _ in range(60)]
    assert statuses.count(429) > 0 and statuses[0] == 200


async def test_the_table_from_the_hand_button_or_the_players_only_table(rig: Rig) -> None:
    """The private hand's web_app button puts the start payload in the page URL (no start_param in
    initData): the page sends it as `start`. Without either, the one live table the player sits at."""
    await open_game(rig)
    start = await rig.start()
    for body in ({"init_data": init_data(101), "start": start}, {"init_data": init_data(101)}):
        r = await rig.client.post("/api/session", json=body, headers=rig.headers())
        assert r.status == 200, await r.text()
        data = await r.json()
        assert (data["table"], data["seat"]) == (GROUP.key, 1)
    # Somebody at no table, with no start payload: nothing to open.
    r = await rig.client.post("/api/session", json={"init_data": init_data(555)}, headers=rig.headers())
    assert r.status == 404 and (await r.json())["error"]
    # A start payload that was not signed here: refused, even with genuine initData.
    forged = {"init_data": init_data(101), "start": start[:-1] + ("0" if start[-1] != "0" else "1")}
    r = await rig.client.post("/api/session", json=forged, headers=rig.headers())
    assert r.status == 403
