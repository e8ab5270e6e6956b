"""No dead ends in play, through the service: value pages that change nothing stored, a forced card that
plays itself when the chat asks for it."""

from __future__ import annotations

import random

from botkit import Clock, Harness, errors, make_user, quiet_settings

from bot.commands import decode_payload, encode_payload, table_tag
from bot.handlers import Handlers
from bot.markup import to_plain
from bot.model import Message, Private
from bot.render import page_start
from bot.service import Service
from bot.storage import MemoryStore
from core.actions import Bid, Play

ALA, BARTEK, CELINA = make_user(0), make_user(1), make_user(2)
USERS = {0: ALA, 1: BARTEK, 2: CELINA}


async def _harness(clock: Clock, seed: int) -> Harness:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(), handlers=Handlers, clock=clock, rng=random.Random(seed))
    return Harness(service, store, clock)


def _buttons(hand: Message) -> list[tuple[str, str, tuple[str, ...]]]:
    """(label, command, args) of every button of a hand message."""
    out = []
    for row in hand.buttons:
        for b in row:
            name, args, _, _ = decode_payload(b.payload)
            out.append((b.label, name, args))
    return out


async def _many_bids(clock: Clock) -> tuple[Harness, int, list[int]]:
    """A Russian table whose first bidder has more bids than one page holds."""
    for seed in range(50):
        h = await _harness(clock, seed)
        await h.open_table([ALA, BARTEK, CELINA], preset="russian")
        state = await h.state()
        seat = state.to_act
        assert seat is not None
        bids = [a.value for a in state.legal_actions(seat) if isinstance(a, Bid)]
        if len(bids) > 16:
            return h, seat, bids
        await h.service.close()
    raise AssertionError("no deal with many bids")


async def test_a_page_press_redraws_the_hand_and_saves_nothing(clock: Clock) -> None:
    h, seat, bids = await _many_bids(clock)
    user = USERS[seat]
    try:
        version, _ = await h.doc()
        hand = h.hands[user.key]
        first = [int(a[0]) for _, n, a in _buttons(hand) if n == "bid" and page_start(a[0]) is None]
        assert first == bids[:8] and bids[-1] not in first
        last_page = next(a for label, n, a in _buttons(hand) if n == "bid" and label.endswith("»"))
        out = await h.press(user, h.button_for(user, "bid", last_page) or "")
        assert not errors(out)
        [redrawn] = [m for m in out if m.kind == "hand"]
        assert isinstance(redrawn.audience, Private) and redrawn.audience.user.key == user.key
        assert not redrawn.notify and redrawn.key == hand.key and redrawn.version == version
        assert not [m for m in out if m.kind != "hand"], "a page press tells nobody else anything"
        assert (await h.doc())[0] == version, "a page press must not save"
        shown = [int(a[0]) for _, n, a in _buttons(redrawn) if n == "bid" and page_start(a[0]) is None]
        assert shown[-1] == bids[-1]
        # The top bid, pressed on that page, is a move.
        out = await h.press(user, h.button_for(user, "bid", (str(bids[-1]),)) or "")
        assert not errors(out), [m.text for m in out]
        state = await h.state()
        assert state.deal.bid == bids[-1] and (await h.doc())[0] == version + 1
    finally:
        await h.service.close()


async def test_page_buttons_are_checked_like_moves(clock: Clock) -> None:
    h, seat, bids = await _many_bids(clock)
    user, other = USERS[seat], USERS[(seat + 1) % 3]
    try:
        version, doc = await h.doc()
        assert doc is not None
        tag = table_tag(doc.serial)
        page = (f"p{bids[8]}",)
        # Not their turn; a version the table never had; an older version; typed instead of pressed.
        out = await h.press(other, encode_payload("bid", page, version, h.table_id, tag))
        assert [m.kind for m in errors(out)] == ["error"] and "not your turn" in out[0].text
        out = await h.press(user, encode_payload("bid", page, version + 5, h.table_id, tag))
        assert errors(out) and "not valid" in out[0].text
        out = await h.press(user, encode_payload("bid", page, version - 1, h.table_id, tag))
        assert errors(out) and "out of date" in out[0].text
        out = await h.text(user, f"/bid p{bids[8]}")
        assert errors(out) and "not a number" in errors(out)[0].text
        assert (await h.doc())[0] == version
    finally:
        await h.service.close()


async def test_autoplay_plays_a_forced_card_by_itself(clock: Clock) -> None:
    h = await _harness(clock, 7)
    admin = make_user(5, admin=True)
    try:
        out = await h.text(admin, "/set autoplay maybe")
        assert errors(out) and "not allowed" in errors(out)[0].text
        out = await h.text(admin, "/set autoplay on")
        assert not errors(out) and "Forced cards play themselves: yes" in to_plain(out[0].text)
        await h.open_table([ALA, BARTEK, CELINA], preset="polish")
        rng = random.Random(3)
        forced_seen = 0
        for _ in range(400):
            state = await h.state()
            if state.finished or state.deal.number > 2:
                break
            seat = state.to_act
            assert seat is not None
            # A human is never left to press their only card.
            legal = state.legal_actions(seat)
            assert not (len(legal) == 1 and isinstance(legal[0], Play)), "a forced card waits for a press"
            before = len(state.actions_this_deal())
            assert await h.play_turn(rng, USERS, sensible=True)
            after = await h.state()
            # Three people, no computer: one press is one move, unless forced cards followed it.
            if after.deal.number == state.deal.number and len(after.actions_this_deal()) > before + 1:
                forced_seen += 1
        assert forced_seen > 0
        # Off again: the last trick's cards wait for their players.
        assert not errors(await h.text(admin, "/set autoplay off"))
        _, doc = await h.doc()
        assert doc is not None and not doc.settings.autoplay
        for _ in range(400):
            state = await h.state()
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            if len(legal) == 1 and isinstance(legal[0], Play):
                break
            assert await h.play_turn(rng, USERS, sensible=True)
        else:
            raise AssertionError("no forced card came up with autoplay off")
    finally:
        await h.service.close()
