"""The open-hands solver against the engine itself: an exhaustive minimax over ``DealState``'s own
``legal_actions`` and ``apply`` on small positions of every preset, option and player count, between
tricks and within them, with marriages and the ace marriage to declare and the crawl to choose."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from core.actions import Action
from core.ai.solver import OpenHandsValue, option_values, solve
from core.cards import ACES, MARRIAGE_MASKS, cards_of, mask_of
from core.deal import DealState, Phase
from core.events import Event
from core.game import new_game
from core.rules import preset

Key = tuple[Any, ...]


def _key(d: DealState) -> Key:
    return (
        tuple(d.hands),
        d.trick,
        d.trick_seats,
        d.trump,
        d.to_act,
        d.leader,
        min(d.tricks, 1),
        d.crawl,
        d.declared,
    )


def _brute(d: DealState, memo: dict[Key, tuple[int, int]]) -> tuple[int, int]:
    """(declarer's, defenders') points still to come with the declarer maximizing their own, then
    the defenders' least; the defenders minimizing the declarer's, then taking the most themselves."""
    key = _key(d)
    hit = memo.get(key)
    if hit is not None:
        return hit
    decl = d.declarer
    best: tuple[int, int] | None = None
    for action in d.legal_actions(d.to_act):
        dd, de = _child(d, action, memo)
        if best is None:
            best = (dd, de)
        elif d.to_act == decl:
            if (dd, -de) > (best[0], -best[1]):
                best = (dd, de)
        elif (dd, -de) < (best[0], -best[1]):
            best = (dd, de)
    assert best is not None
    memo[key] = best
    return best


def _sides(d: DealState) -> tuple[int, int]:
    decl = d.declarer
    return d.taken[decl], sum(d.taken[s] for s in d.active if s != decl)


def _child(d: DealState, action: Action, memo: dict[Key, tuple[int, int]]) -> tuple[int, int]:
    """Points to come from ``d`` when ``action`` is played, then the exact play."""
    c = d.copy()
    out: list[Event] = []
    c.apply(d.to_act, action, out)
    d0, e0 = _sides(d)
    d1, e1 = _sides(c)
    if c.phase == Phase.DONE:
        return d1 - d0, e1 - e0
    fd, fe = _brute(c, memo)
    return d1 - d0 + fd, e1 - e0 + fe


def _to_play(name: str, players: int, options: dict[str, Any], rng: random.Random) -> DealState:
    """A deal of random bids and exchange at the start of its play."""
    rules = preset(name, options)
    while True:
        state, _ = new_game(rules, players, seed=rng.randrange(1 << 30))
        while state.deal.phase != Phase.PLAY and not state.results:
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            state.apply_action(seat, legal[rng.randrange(len(legal))])
        if not state.results:
            return state.deal.copy()


def _play_random(d: DealState, rng: random.Random, moves: int) -> None:
    for _ in range(moves):
        if d.phase != Phase.PLAY:
            return
        legal = d.legal_actions(d.to_act)
        d.apply(d.to_act, legal[rng.randrange(len(legal))], [])


def _play_tricks(d: DealState, rng: random.Random, tricks: int) -> None:
    """Random play until ``tricks`` tricks are taken (a crawl is an action but no card)."""
    while d.phase == Phase.PLAY and (d.tricks < tricks or d.trick):
        legal = d.legal_actions(d.to_act)
        d.apply(d.to_act, legal[rng.randrange(len(legal))], [])


def _reshape(d: DealState, k: int, rng: random.Random) -> None:
    """Deal ``k`` cards to each active seat from the cards the hands hold, between tricks: often a
    marriage (or, with the ace marriage, all four aces) to the player on lead or another seat."""
    pool = list(cards_of(mask_of(c for h in d.hands for c in cards_of(h))))
    rng.shuffle(pool)
    hands = {s: 0 for s in d.active}
    seats = list(d.active)
    lucky = d.to_act if rng.random() < 0.6 else rng.choice(seats)
    if d.rules.ace_marriage and k >= 4 and rng.random() < 0.5 and all(c in pool for c in cards_of(ACES)):
        hands[lucky] = ACES
    elif rng.random() < 0.7:
        for m in rng.sample(MARRIAGE_MASKS, 4):
            if all(c in pool for c in cards_of(m)):
                hands[lucky] = m
                break
    pool = [c for c in pool if not any(h >> c & 1 for h in hands.values())]
    for s in seats:
        while hands[s].bit_count() < k:
            hands[s] |= 1 << pool.pop()
    for s in seats:
        d.hands[s] = hands[s]
    if d.tricks and rng.random() < 0.5:
        d.trump = rng.randrange(-1, 4)


def _position(name: str, players: int, options: dict[str, Any], rng: random.Random) -> DealState:
    """A small position: a deal played at random to its last cards, or reshaped to a few cards each
    (on the first trick too, where the crawl is chosen), then part of a trick played at random."""
    d = _to_play(name, players, options, rng)
    n = len(d.active)
    small = {2: 6, 3: 4, 4: 3}[n]
    if rng.random() < 0.4:
        per_hand = d.hands[d.to_act].bit_count()
        _play_tricks(d, rng, per_hand - small)
    else:
        if rng.random() < 0.6:
            _play_tricks(d, rng, rng.randrange(1, 3))
        if d.phase != Phase.PLAY:
            return _position(name, players, options, rng)
        k = rng.randint(2, small + (1 if n == 3 and options.get("ace_marriage") else 0))
        _reshape(d, k, rng)
    if rng.random() < 0.3 and d.crawl_ok and d.tricks == 0:
        legal = d.legal_actions(d.to_act)
        if legal[-1].kind == "crawl":
            d.apply(d.to_act, legal[-1], [])
    if rng.random() < 0.5:
        _play_random(d, rng, rng.randrange(1, n))
    if d.phase != Phase.PLAY:
        return _position(name, players, options, rng)
    return d


CONFIGS: list[tuple[str, int, dict[str, Any]]] = [
    ("polish", 2, {}),
    ("polish", 3, {}),
    ("polish", 4, {}),
    ("estonian", 2, {}),
    ("estonian", 3, {}),
    ("estonian", 4, {}),
    ("russian", 3, {}),
    ("russian", 4, {}),
    ("polish", 3, {"must_beat": True}),
    ("russian", 3, {"must_beat": True, "crawl": True}),
    ("russian", 4, {"crawl": True, "ace_marriage": True}),
    ("estonian", 3, {"must_beat": True, "ace_marriage": True}),
    ("estonian", 2, {"must_beat": True}),
    ("polish", 3, {"ace_marriage": True, "marriage_min_cards": 3}),
]
POSITIONS = 80


def _check(d: DealState, seed: int, where: Callable[[], str]) -> tuple[int, int, int]:
    """Compare the solver with the engine's minimax at ``d``; counts of positions, options and of
    options that declared."""
    memo: dict[Key, tuple[int, int]] = {}
    fd, fe = _brute(d, memo)
    d0, e0 = _sides(d)
    got = solve(d)
    want = OpenHandsValue(d.declarer, d0 + fd, e0 + fe)
    assert got == want, f"seed {seed}: {where()}"
    options = option_values(d)
    legal = list(d.legal_actions(d.to_act))
    assert sorted(options, key=repr) == sorted(legal, key=repr), f"seed {seed}: {where()}"
    declaring = 0
    for action in legal:
        cd, ce = _child(d, action, memo)
        assert options[action] == OpenHandsValue(d.declarer, d0 + cd, e0 + ce), (
            f"seed {seed}: {action} at {where()}"
        )
        c = d.copy()
        c.apply(d.to_act, action, [])
        declaring += c.declared != d.declared
    return 1, len(legal), declaring


def _describe(d: DealState) -> str:
    return (
        f"{d.rules.preset} hands={[hex(h) for h in d.hands]} trick={d.trick} seats={d.trick_seats} "
        f"trump={d.trump} to_act={d.to_act} declarer={d.declarer} tricks={d.tricks} crawl={d.crawl}"
    )


@pytest.mark.parametrize(("name", "players", "options"), CONFIGS)
def test_solver_matches_engine_minimax(name: str, players: int, options: dict[str, Any]) -> None:
    base = 1000 * CONFIGS.index((name, players, options))
    positions = options_seen = declaring = mid_trick = first_trick = 0
    for i in range(POSITIONS):
        seed = base + i
        rng = random.Random(seed)
        d = _position(name, players, options, rng)
        p, o, m = _check(d, seed, lambda d=d: _describe(d))  # type: ignore[misc]
        positions += p
        options_seen += o
        declaring += m
        mid_trick += bool(d.trick)
        first_trick += d.tricks == 0
    assert positions == POSITIONS
    assert mid_trick >= POSITIONS // 5 and POSITIONS - mid_trick >= POSITIONS // 8
    assert first_trick >= 5
    if not (name == "estonian" and players == 4):  # 4 in play: 5 cards each, and 3 needed to declare
        assert declaring >= 3, declaring


def test_crawl_is_an_option_valued_like_the_engine() -> None:
    """At the first lead of a declarer without an ace, the crawl is one of the valued options."""
    rng = random.Random(7)
    found = 0
    for _ in range(400):
        d = _to_play("russian", 3, {"crawl": True}, rng)
        if d.hands[d.declarer] & ACES:
            continue
        _reshape(d, 3, rng)
        if d.hands[d.declarer] & ACES:
            continue
        _check(d, 0, lambda d=d: _describe(d))  # type: ignore[misc]
        assert any(a.kind == "crawl" for a in option_values(d))
        found += 1
        if found == 20:
            break
    assert found == 20


def test_solve_refuses_a_deal_out_of_its_play() -> None:
    state, _ = new_game(preset("polish"), 3, seed=1)
    with pytest.raises(ValueError, match="not in its card play"):
        solve(state)


def test_full_deal_declarer_and_defenders_share_the_points() -> None:
    """From the first lead of a whole deal without marriages in any hand, the two sides' points add
    up to the 120 of the cards."""
    rng = random.Random(3)
    checked = 0
    while checked < 5:
        d = _to_play("polish", 3, {}, rng)
        if any(h & m == m for h in d.hands for m in MARRIAGE_MASKS):
            continue
        v = solve(d)
        assert v.declarer + v.defenders == 120
        assert 0 <= v.declarer <= 120
        checked += 1
