"""Three browser pages play a whole deal of each preset by taps only, against the real server and Redis;
a spectator page and the other seats never receive a private card (in the DOM or in any message)."""

from __future__ import annotations

import json

import pytest
from browserkit import GROUP, HUMANS, Room, Tab
from tapper import tap

from core.actions import Give
from core.cards import cards_of
from core.game import GameState
from fakes.cardspy import Part, leaks, secret_cards


def private_to(state: GameState, seat: int | None) -> set[int]:
    """Cards `seat` (None: a spectator) must never receive now: the shared detector's private cards
    (fakes/cardspy.py) less what this seat knows itself (its hand, the cards it gave or laid down, its
    face-down crawl card)."""
    private = set(secret_cards(state))
    if seat is None or state.finished:
        return private
    deal = state.deal
    private -= set(cards_of(deal.hands[seat]))
    if deal.declarer == seat:
        private -= set(deal.discard)
    private -= {c for c, s in zip(deal.trick, deal.trick_seats, strict=True) if s == seat}
    for giver, action in state.actions_this_deal():
        if giver == seat and isinstance(action, Give):
            private -= {c for _, c in action.cards}
    return private


# Every text node and attribute value of the page (SVG titles included), each on its own (a card is
# never made of two elements' texts run together), payloads read as payloads.
DOM = """
() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode())
    if (n.nodeValue.trim()) out.push([n.parentNode.nodeName + " text", n.nodeValue, false]);
  const skip = new Set(["class", "d", "transform", "viewBox", "points", "href", "src", "rel", "role"]);
  for (const el of document.querySelectorAll("*"))
    for (const a of el.attributes)
      if (!skip.has(a.name)) out.push([el.tagName + "@" + a.name, a.value, a.name === "data-payload"]);
  return out;
}
"""


async def dom_parts(tab: Tab) -> list[Part]:
    return [Part(where, value, payload) for where, value, payload in await tab.page.evaluate(DOM)]


def message_parts(message: str) -> list[Part]:
    """Every string of a JSON message (an API answer or an SSE event); a payload read as a payload."""
    try:
        data = json.loads(message)
    except ValueError:
        return [Part("message", message)]
    out: list[Part] = []

    def walk(value: object, key: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str) and key not in ("session", "ticket"):  # opaque signed tokens, base64
            out.append(Part(f"message {key}", value, key == "payload"))

    walk(data, "")
    return out


async def seat_of(tab: Tab) -> int | None:
    value = (
        await tab.page.get_attribute(".seat.me", "data-seat")
        if await tab.page.locator(".seat.me").count()
        else None
    )
    return None if value is None else int(value)


async def version(room: Room) -> int:
    v, _ = await room.harness.doc()
    return int(v)


@pytest.mark.parametrize("preset", ["polish", "estonian", "russian"])
async def test_three_pages_play_a_whole_deal_by_taps(room: Room, preset: str) -> None:
    await room.harness.open_table(HUMANS[:3], preset=preset)
    start = room.web.signer.start_payload(GROUP.key, await room.serial())
    tabs = [
        await room.open(telegram=HUMANS[0], start=start, lang="pl"),
        await room.open(HUMANS[1], lang="ru"),
        await room.open(HUMANS[2], lang="en"),
    ]
    spectator = await room.open(telegram=HUMANS[3], start=start, lang="uk")
    by_seat = {await seat_of(t): t for t in tabs}
    assert sorted(by_seat, key=str) == [0, 1, 2] and await seat_of(spectator) is None
    checked = {id(t): 0 for t in room.tabs}

    langs = {id(tabs[0]): "pl", id(tabs[1]): "ru", id(tabs[2]): "en", id(spectator): "uk"}

    async def check_privacy(state: GameState) -> None:
        """The page's DOM now and every message it received since the last move."""
        for tab in room.tabs:
            seat = await seat_of(tab)
            fresh = tab.seen.messages[checked[id(tab)] :]
            checked[id(tab)] = len(tab.seen.messages)
            parts = await dom_parts(tab) + [p for m in fresh for p in message_parts(m)]
            found = leaks(parts, private_to(state, seat), [langs[id(tab)], "en"])
            assert not found, (seat, state.deal.phase, found)

    state = await room.harness.state()
    first_deal = state.deal_number
    taps: list[str] = []
    moves = 0
    await room.settle(await version(room))
    while state.deal_number == first_deal and not state.finished:
        await check_privacy(state)
        before = await version(room)
        tab = by_seat[state.to_act]
        taps.append(await tap(tab))
        for _ in range(100):  # a selection changes only the page; a move changes the stored version
            if await version(room) != before or taps[-1] not in (
                "confirm",
                "pass",
                "bid",
                "contract",
                "take",
                "blind-no",
                "declare",
                "card",
            ):
                break
            await tab.page.wait_for_timeout(20)
        after = await version(room)
        if after != before:
            moves += 1
            await room.settle(after)
        state = await room.harness.state()
        assert len(taps) < 200, taps[-20:]
    assert moves >= 10, taps
    assert state.deal_number != first_deal or state.finished
    # The spectator saw the trick cards as they were played, never a hand.
    assert await spectator.page.locator("#hand button").count() == 0
    # The deal is on every page's score sheet (a row and the total) and chart (a line per player).
    for tab in room.tabs:
        assert await tab.page.locator("#sheet-body tbody tr").count() == 2
        assert await tab.page.locator("#sheet-body svg.chart polyline").count() == 3
    # Every page followed the deal by its event stream (the checks above read those messages too).
    for tab in room.tabs:
        assert tab.seen.events >= moves, (tab.seen.events, moves)
