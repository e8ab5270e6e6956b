"""Three browser pages play a whole deal of each preset by taps only, against the real server and Redis;
a spectator page and the other seats never receive a private card (in the DOM or in any message)."""

from __future__ import annotations

import pytest
from browserkit import CODE, GROUP, HUMANS, Room, Tab
from tapper import tap

from core.cards import CARD_NAMES, cards_of, mask_of
from core.deal import Phase
from core.game import GameState


def forbidden(state: GameState, seat: int | None) -> set[str]:
    """Cards `seat` (None: a spectator) must not receive now: the others' hands (less the cards of a talon
    shown to everyone) and a talon not shown."""
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
    if deal.talon_public:  # shown to the whole table: known to everyone from then on
        secret &= ~mask_of(deal.talon_as_dealt)
    if seat is not None:
        for giver, action in state.actions_this_deal():
            if giver == seat and getattr(action, "kind", "") == "give":
                secret &= ~mask_of(c for _, c in action.cards)  # type: ignore[attr-defined]
    return {CARD_NAMES[c] for c in cards_of(secret)}


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
    start = room.web.signer.start_payload(GROUP.key)
    tabs = [
        await room.open(telegram=HUMANS[0], start=start, lang="pl"),
        await room.open(HUMANS[1], lang="ru"),
        await room.open(HUMANS[2], lang="en"),
    ]
    spectator = await room.open(telegram=HUMANS[3], start=start, lang="uk")
    by_seat = {await seat_of(t): t for t in tabs}
    assert sorted(by_seat, key=str) == [0, 1, 2] and await seat_of(spectator) is None
    checked = {id(t): 0 for t in room.tabs}

    async def check_privacy(state: GameState) -> None:
        for tab in room.tabs:
            seat = await seat_of(tab)
            secret = forbidden(state, seat)
            fresh = tab.seen.messages[checked[id(tab)] :]
            checked[id(tab)] = len(tab.seen.messages)
            leaked = (set(CODE.findall(await tab.dom())) | set(CODE.findall("\n".join(fresh)))) & secret
            assert not leaked, (seat, state.phase, leaked)

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
    assert spectator.seen.messages and await spectator.page.locator("#hand button").count() == 0
