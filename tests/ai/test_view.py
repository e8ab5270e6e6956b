"""A seat's view holds only what the seat may know.

The proof is by construction: two games whose hidden cards differ but which look the same to seat
``s`` (the same events visible to ``s``) must give ``s`` the same view.  The games are made by
swapping two cards between places ``s`` cannot see and replaying the same actions.
"""

from __future__ import annotations

import pickle
import random
from dataclasses import replace

import pytest

from core.actions import Action
from core.cards import DECK_SIZE, FULL_DECK
from core.deal import DealLayout
from core.errors import IllegalAction
from core.events import Event, events_for
from core.game import GameState, new_game
from core.rules import RuleSet, preset
from core.view import HIDDEN, SeatView, seat_view

CONFIGS = [
    ("polish", 2, {}),
    ("polish", 3, {}),
    ("polish", 4, {}),
    ("estonian", 2, {}),
    ("estonian", 3, {}),
    ("estonian", 4, {}),
    ("russian", 3, {}),
    ("russian", 4, {}),
    ("polish", 3, {"sell_talon": True, "ace_marriage": True}),
    ("russian", 3, {"must_beat": True}),
]


def _rules(name: str, options: dict[str, object]) -> RuleSet:
    return preset(name, options) if options else preset(name)


def _random_prefix(
    rules: RuleSet, players: int, seed: int, rng: random.Random
) -> tuple[GameState, list[tuple[int, Action]], list[Event]]:
    """A first deal played by random legal actions up to a random point (never its end)."""
    state, events = new_game(rules, players, seed=seed)
    start_events = list(events)
    actions: list[tuple[int, Action]] = []
    stop = rng.randrange(60)
    while len(actions) < stop:
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions(seat)
        action = legal[rng.randrange(len(legal))]
        trial = state.clone()
        trial.apply_action(seat, action)
        if trial.results:
            break
        events.extend(state.apply_action(seat, action))
        actions.append((seat, action))
    return state, actions, start_events + events[len(start_events) :]


def _swap_layout(layout: DealLayout, a: int, b: int) -> DealLayout:
    def sw(mask: int) -> int:
        ha, hb = mask >> a & 1, mask >> b & 1
        if ha != hb:
            mask ^= (1 << a) | (1 << b)
        return mask

    def swc(c: int) -> int:
        return b if c == a else a if c == b else c

    piles = None
    if layout.piles is not None:
        piles = (tuple(swc(c) for c in layout.piles[0]), tuple(swc(c) for c in layout.piles[1]))
    return DealLayout(
        layout.dealer,
        tuple(sw(h) for h in layout.hands),
        tuple(swc(c) for c in layout.talon),
        piles,
        layout.blind,
    )


def _replay(
    rules: RuleSet, players: int, layout: DealLayout, actions: list[tuple[int, Action]]
) -> tuple[GameState, list[Event]] | None:
    state, events = new_game(rules, players, layout=layout)
    for seat, action in actions:
        try:
            events.extend(state.apply_action(seat, action))
        except IllegalAction:
            return None
    return state, events


@pytest.mark.parametrize(("name", "players", "options"), CONFIGS)
def test_view_depends_only_on_what_the_seat_saw(name: str, players: int, options: dict[str, object]) -> None:
    rules = _rules(name, options)
    rng = random.Random(hash((name, players)) & 0xFFFF)
    compared = 0
    differed = 0
    for trial in range(40):
        state, actions, _ = _random_prefix(rules, players, 1000 + trial, rng)
        layout = state.layout
        base = _replay(rules, players, layout, actions)
        assert base is not None
        base_state, base_events = base
        for _ in range(12):
            a, b = rng.sample(range(DECK_SIZE), 2)
            alt = _replay(rules, players, _swap_layout(layout, a, b), actions)
            if alt is None:
                continue
            alt_state, alt_events = alt
            for seat in range(players):
                if events_for(base_events, seat) == events_for(alt_events, seat):
                    assert seat_view(base_state, seat) == seat_view(alt_state, seat)
                    compared += 1
                elif seat_view(base_state, seat) != seat_view(alt_state, seat):
                    differed += 1
    # Enough cases of each kind: the test could fail either way.
    assert compared >= 40
    assert differed >= 10


def _play_until(state: GameState, rng: random.Random, want: str) -> GameState | None:
    for _ in range(200):
        if state.deal.phase == want:
            return state
        seat = state.to_act
        if seat is None:
            return None
        legal = state.legal_actions(seat)
        state.apply_action(seat, legal[rng.randrange(len(legal))])
    return None


def test_blind_bidder_sees_no_hand_and_defenders_no_talon() -> None:
    from core.actions import BLIND_YES

    rules = preset("estonian")
    state, _ = new_game(rules, 3, seed=5)
    opener = state.to_act
    assert opener is not None
    assert seat_view(state, opener).hand == 0
    state.apply_action(opener, BLIND_YES)
    view = seat_view(state, opener)
    assert view.hand == 0 and not view.hand_known and view.blind_seat == opener
    others = [s for s in range(3) if s != opener]
    for s in others:
        v = seat_view(state, s)
        assert v.hand == state.deal.hands[s] and v.talon == ()


def test_secret_talon_is_only_in_the_declarers_view() -> None:
    rules = preset("estonian")
    rng = random.Random(3)
    for seed in range(30):
        state, _ = new_game(rules, 3, seed=seed)
        got = _play_until(state, rng, "exchange")
        if got is None:
            continue
        decl = got.deal.declarer
        assert seat_view(got, decl).talon == got.deal.talon_as_dealt
        for s in range(3):
            if s != decl:
                v = seat_view(got, s)
                assert v.talon == () and v.hand & ~got.deal.hands[s] == 0
        return
    pytest.fail("no exchange reached")


def test_two_musiki_piles_stay_hidden() -> None:
    rules = preset("polish")
    rng = random.Random(4)
    state, _ = new_game(rules, 2, seed=9)
    got = _play_until(state, rng, "play")
    assert got is not None
    decl = got.deal.declarer
    other = 1 - decl
    assert seat_view(got, other).talon == () and seat_view(got, other).discard == ()
    dv = seat_view(got, decl)
    assert got.deal.piles is not None
    assert dv.talon == got.deal.piles[got.deal.pile] and dv.discard == got.deal.discard


def test_crawl_cards_are_face_down_for_others() -> None:
    rules = preset("estonian")
    rng = random.Random(8)
    for seed in range(400):
        state, _ = new_game(rules, 3, seed=seed)
        got = _play_until(state, rng, "play")
        if got is None:
            continue
        from core.actions import CRAWL

        decl = got.deal.declarer
        if CRAWL not in got.legal_actions(decl):
            continue
        got.apply_action(decl, CRAWL)
        legal = got.legal_actions(decl)
        got.apply_action(decl, legal[0])
        nxt = got.deal.to_act
        v_next = seat_view(got, nxt)
        assert v_next.trick == (HIDDEN,) and v_next.crawl
        assert seat_view(got, decl).trick == got.deal.trick
        return
    pytest.fail("no crawl position found")


def test_view_never_holds_another_hand_and_pickles() -> None:
    rng = random.Random(11)
    for name, players, options in CONFIGS:
        rules = _rules(name, options)
        state, _, _ = _random_prefix(rules, players, 77, rng)
        for seat in range(players):
            view = seat_view(state, seat)
            others = 0
            for s in range(players):
                if s != seat:
                    others |= state.deal.hands[s]
            # What the view shows as hand is this seat's own; other hands only leak if known otherwise.
            assert view.hand & others == 0
            assert view.hand & ~FULL_DECK == 0
            assert pickle.loads(pickle.dumps(view)) == view
            assert isinstance(replace(view), SeatView)
