"""Every legal bid and contract can be reached with buttons: the hand's value pages, in random deals of
every preset, and one-choice prompts that read naturally."""

from __future__ import annotations

import random

import pytest

from bot.commands import MAX_PAYLOAD_BYTES, decode_payload, encode_payload
from bot.i18n import translator
from bot.markup import to_plain
from bot.render import PAGE_SIZE, VALUES_ON_ONE_PAGE, page_start, render_hand
from bot.table import ChatSettings, SeatDoc, TableDoc
from bot.views import seat_labels
from core.actions import Bid, Contract, Pass
from core.deal import Phase
from core.game import GameState, new_game
from core.rules import PRESETS, preset
from core.view import seat_view

TABLE_ID = "tg:-1001234567890123"
"""A long chat id (a Telegram supergroup): the page buttons must still fit in 64 bytes."""
VERSION = 9_999_999_999


def _doc(players: int) -> TableDoc:
    settings = ChatSettings(preset="polish", language="en", turn_seconds=90, ai_level="easy")
    seats = [SeatDoc(kind="human", name=f"P{i}", user=f"t:{i}") for i in range(players)]
    return TableDoc(
        id=TABLE_ID, serial="s", platform="tg", chat_id="-1", creator="t:0", settings=settings, seats=seats,
        created=0, updated=0,
    )  # fmt: skip


def _payload(name: str, args: tuple[str, ...]) -> str:
    return encode_payload(name, args, VERSION, TABLE_ID, "abc")


def reachable(state: GameState, seat: int, doc: TableDoc) -> tuple[set[int], int]:
    """The values whose buttons a player can reach from their hand message by pressing page buttons
    (each press redraws the hand at the page it names), and the most buttons one drawing had."""
    legal = list(state.legal_actions(seat))
    t = translator("en")
    labels = seat_labels(doc)
    seen_pages: set[int | None] = set()
    todo: list[int | None] = [None]
    values: set[int] = set()
    widest = 0
    while todo:
        page = todo.pop()
        if page in seen_pages:
            continue
        seen_pages.add(page)
        rendered = render_hand(t, seat_view(state, seat), labels, legal, _payload, page=page)
        widest = max(widest, sum(len(row) for row in rendered.buttons))
        for row in rendered.buttons:
            assert len(row) <= 4, row
            for button in row:
                assert len(button.payload.encode()) <= MAX_PAYLOAD_BYTES
                name, args, version, table = decode_payload(button.payload)
                assert (version, table) == (VERSION, TABLE_ID)
                if name not in ("bid", "contract"):
                    continue
                start = page_start(args[0])
                if start is not None:
                    todo.append(start)
                else:
                    values.add(int(args[0]))
    return values, widest


CASES = [
    (name, players, options)
    for name in sorted(PRESETS)
    for players in PRESETS[name].player_counts
    for options in (None, {"max_bid": None} if name != "polish" else {"cap_by_marriages": False})
]


@pytest.mark.parametrize(("name", "players", "options"), CASES)
def test_every_legal_value_is_reachable_by_taps(
    name: str, players: int, options: dict[str, object] | None
) -> None:
    rules = preset(name, options)
    doc = _doc(players)
    checked = paged = 0
    for seed in range(12):
        rng = random.Random(seed)
        state = new_game(rules, players, seed)[0]
        for _ in range(60):
            if state.finished or state.deal.phase == Phase.PLAY:
                break
            seat = state.to_act
            assert seat is not None
            legal = list(state.legal_actions(seat))
            wanted = {a.value for a in legal if isinstance(a, Bid | Contract)}
            if wanted:
                got, widest = reachable(state, seat, doc)
                assert got == wanted, (state.deal.phase, sorted(wanted - got))
                # Discord shows at most 25 buttons; the hand's own rows stay well below.
                assert widest <= 1 + VALUES_ON_ONE_PAGE + 4
                checked += 1
                paged += len(wanted) > VALUES_ON_ONE_PAGE
            state.apply_action(seat, legal[rng.randrange(len(legal))])
    assert checked > 0
    if options is not None:
        assert paged > 0, "no decision had more values than one page: the case tests nothing"


def _bidding_state(values: int) -> tuple[GameState, int]:
    """A Russian deal whose first bidder has more than `values` bids to choose from."""
    rules = preset("russian")
    for seed in range(200):
        state = new_game(rules, 3, seed)[0]
        seat = state.to_act
        assert seat is not None
        bids = [a for a in state.legal_actions(seat) if isinstance(a, Bid)]
        if len(bids) > values:
            return state, seat
    raise AssertionError("no such deal")


def test_pages_turn_forward_and_back_and_jump_to_the_ends() -> None:
    state, seat = _bidding_state(4 * PAGE_SIZE)
    doc = _doc(3)
    t = translator("en")
    legal = list(state.legal_actions(seat))
    bids = [a.value for a in legal if isinstance(a, Bid)]

    def draw(page: int | None) -> tuple[list[int], list[tuple[str, str]]]:
        rendered = render_hand(t, seat_view(state, seat), seat_labels(doc), legal, _payload, page=page)
        shown, nav = [], []
        for row in rendered.buttons:
            for b in row:
                name, args, _, _ = decode_payload(b.payload)
                if name == "bid" and page_start(args[0]) is None:
                    shown.append(int(args[0]))
                elif name == "bid":
                    nav.append((b.label, args[0]))
        return shown, nav

    first, nav = draw(None)
    assert first == bids[:PAGE_SIZE]
    assert nav[0] == (f"{bids[PAGE_SIZE]}–{bids[2 * PAGE_SIZE - 1]} ›", f"p{bids[PAGE_SIZE]}")
    assert nav[-1][0] == f"{bids[-1]} »"
    second, nav = draw(bids[PAGE_SIZE])
    assert second == bids[PAGE_SIZE : 2 * PAGE_SIZE]
    assert nav[0][0].startswith("‹ ") and nav[0][1] == f"p{bids[0]}"
    last, nav = draw(bids[-1])
    assert last[-1] == bids[-1] and f"p{bids[0]}" in [arg for _, arg in nav]
    assert all(not label.endswith("›") for label, _ in nav)
    # A value between pages (or a forged one beyond the last) shows the page that holds it, or the last.
    assert draw(bids[PAGE_SIZE] + 1)[0] == second
    assert draw(10_000)[0] == last
    assert draw(0)[0] == first
    # The prompt still names the whole range.
    text = to_plain(render_hand(t, seat_view(state, seat), seat_labels(doc), legal, _payload).text)
    assert f"from {bids[0]} to {bids[-1]}" in text


def test_a_single_value_reads_naturally() -> None:
    rules = preset("polish")
    doc = _doc(3)
    t = translator("en")
    found = {"bid": False, "contract": False}
    for seed in range(300):
        rng = random.Random(seed)
        state = new_game(rules, 3, seed)[0]
        for _ in range(40):
            if state.finished or state.deal.phase == Phase.PLAY:
                break
            seat = state.to_act
            assert seat is not None
            legal = list(state.legal_actions(seat))
            values = [a.value for a in legal if isinstance(a, Bid | Contract)]
            if len(values) == 1:
                view = seat_view(state, seat)
                text = to_plain(render_hand(t, view, seat_labels(doc), legal, _payload).text)
                assert " to " not in text.splitlines()[-1], text
                if any(isinstance(a, Pass) for a in legal):
                    assert f"bid {values[0]} or pass." in text
                    found["bid"] = True
                elif state.deal.phase == Phase.CONTRACT:
                    assert f"fix your contract at {values[0]}." in text
                    found["contract"] = True
            state.apply_action(seat, legal[rng.randrange(len(legal))])
        if all(found.values()):
            break
    assert all(found.values()), found
