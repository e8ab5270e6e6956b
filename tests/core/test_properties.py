"""Property tests over random games, for every preset and player count (hypothesis).

Each example plays a game from a drawn seed with actions drawn from `legal_actions`, and checks after every
step what the rules promise whatever the play: the 24 cards are all somewhere exactly once, every listed
action is accepted and a sample of unlisted ones refused without any change, private cards only reach
their seat, the card points of a played deal add up to 120 plus the marriages, and the game's record
replays to the same results.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from dealkit import snapshot
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from core import events as ev
from core.actions import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    CRAWL,
    PASS,
    SELL,
    Action,
    Bid,
    Contract,
    Discard,
    Give,
    Play,
    TakeTalon,
)
from core.cards import CARD_POINTS, DECK_SIZE, FULL_DECK, mask_of
from core.deal import DealState, GiveChoices
from core.errors import IllegalAction
from core.events import Event
from core.game import GameState, new_game
from core.record import build_record, replay_text
from core.rules import Barrel, Declaration, RuleSet, TalonVisibility, preset
from core.scoring import MatchTally, match_winner

COMBOS = [
    ("polish", 2),
    ("polish", 3),
    ("polish", 4),
    ("estonian", 2),
    ("estonian", 3),
    ("estonian", 4),
    ("russian", 3),
    ("russian", 4),
]
IDS = [f"{name}-{n}p" for name, n in COMBOS]
# Options that add phases and actions, so that the random games reach them too.
EXTRA = {
    "polish": {"sell_talon": True, "ace_marriage": True},
    "estonian": {"sell_talon": True, "must_beat": True},
    "russian": {"ace_marriage": True, "redeal_four_nines": True, "samosval": True},
}
PROPERTY_SETTINGS = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
    print_blob=True,  # a failure also prints @reproduce_failure(...) for the example alone
    # Shrinking a long game takes minutes; a failure still prints every draw, and runs are derandomized.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
MAX_STEPS = 130


# ---------------------------------------------------------------- invariants


def card_places(deal: DealState) -> list[int]:
    """Every place a card of the deal can be, as masks (independent of core/invariants.py)."""
    places = [*deal.hands, mask_of(deal.talon), mask_of(deal.trick), *deal.won]
    if deal.piles is not None:
        if deal.pile < 0:
            places += [mask_of(deal.piles[0]), mask_of(deal.piles[1])]
        else:
            places += [mask_of(deal.piles[1 - deal.pile]), mask_of(deal.discard)]
    return places


def check_cards_conserved(deal: DealState) -> None:
    places = card_places(deal)
    union = 0
    for m in places:
        assert not union & m, "a card is in two places"
        union |= m
    assert union == FULL_DECK, f"cards missing: {sum(m.bit_count() for m in places)}"
    if deal.phase == "play":
        sizes = {deal.hands[s].bit_count() + (s in deal.trick_seats) for s in deal.active}
        assert len(sizes) == 1, "hand sizes differ during play"
    if deal.sitting_out is not None:
        assert deal.hands[deal.sitting_out] == 0


PRIVATE_KINDS = {ev.HAND_DEALT, ev.CARD_RECEIVED, ev.CARD_GIVEN, ev.DISCARDED}
PUBLIC_CARD_KINDS = {
    ev.CARD_PLAYED,
    ev.TRICK_TAKEN,
    ev.CRAWL_REVEALED,
    ev.PILES_TAKEN,
    ev.TALON_SHOWN,
    ev.TALON_TAKEN,
    ev.TALON_OFFERED,
    ev.DEAL_STARTED,  # cards = the seats in play, not cards
}


def check_audiences(before: GameState, after: GameState, events: list[Event]) -> None:
    """Private cards (hands, a secret talon, cards given, face-down crawl cards) only reach one seat."""
    for e in events:
        if e.audience is not None:
            assert 0 <= e.audience < before.players
        if e.kind in PRIVATE_KINDS and e.cards:
            assert e.audience is not None, e
            if e.kind == ev.CARD_GIVEN:
                assert e.audience in (e.seat, e.value), e
            else:
                assert e.audience == e.seat, e
        if e.audience is None and e.cards:
            assert e.kind in PUBLIC_CARD_KINDS, e
            if e.kind in (ev.TALON_SHOWN, ev.TALON_TAKEN, ev.TALON_OFFERED):
                assert after.deal.talon_public or e.kind == ev.TALON_OFFERED, e
                assert before.deal.piles is None, e
            if e.kind == ev.CARD_PLAYED:
                assert not before.deal.crawl, "a face-down crawl card was shown"
        if e.kind == ev.TALON_TAKEN and e.cards and e.audience is not None:
            assert e.audience == e.seat


def marriage_points(rules: RuleSet, marriages: tuple[tuple[str, ...], ...]) -> int:
    total = 0
    for suits in marriages:
        for s in suits:
            total += rules.ace_marriage_value if s == "A" else rules.marriage_values[s]  # type: ignore[index]
    return total


def check_deal_results(rules: RuleSet, before: GameState, after: GameState, events: list[Event]) -> None:
    for e in events:
        if e.kind != ev.DEAL_ENDED:
            continue
        r = e.detail
        if r.ending == "played":
            assert sum(r.points) == 120 + marriage_points(rules, r.marriages)
            assert r.made == (r.points[r.declarer] >= r.contract)
            if r.dealer not in before.deal.active:
                assert r.points[r.dealer] == 0 and r.marriages[r.dealer] == ()
        else:
            assert r.made is None and sum(r.points) == 0
        assert tuple(r.totals[s] - before.totals[s] for s in range(before.players)) == r.scores
        assert r.totals == after.totals


# ---------------------------------------------------------------- unlisted actions


def candidate_actions(state: GameState, rnd: random.Random) -> list[Action]:
    """A handful of actions of every kind, most of them illegal now."""
    deal = state.deal
    n = state.players
    seat = deal.to_act
    others = tuple(sorted(s for s in deal.active if s != seat))
    out: list[Action] = [PASS, BOMB, CONCEDE, CRAWL, SELL, BLIND_YES, BLIND_NO]
    out += [TakeTalon(p) for p in (0, 1, 2)]
    for _ in range(3):
        out.append(Play(rnd.randrange(DECK_SIZE), rnd.random() < 0.3))
        out.append(Bid(rnd.choice([0, 5, 7, 40, 45, 95, 100, 105, 110, 120, 125, 130, 300, 360, 400, 605])))
        out.append(Bid(deal.bid + rnd.choice([-10, -5, 0, 3, 5, 10, 15])))
        out.append(Contract(deal.bid + rnd.choice([-10, -5, 0, 3, 5, 10, 200, 500])))
        cards = rnd.sample(range(DECK_SIZE), max(len(others), 2))
        out.append(Give(tuple(zip(others, cards, strict=False))))
        wrong = tuple(sorted(rnd.sample(range(n), min(n, max(len(others), 1)))))
        out.append(Give(tuple(zip(wrong, cards, strict=False))))
        out.append(Discard(tuple(sorted(cards[:2]))))
        out.append(Discard(tuple(cards[:1])))
    return out


def same_as_listed(rules: RuleSet, action: Action, legal: Any) -> bool:
    """Where declaring is automatic, the `declare` flag is ignored: Play(c, True) is Play(c)."""
    return (
        rules.declaration == Declaration.AUTOMATIC
        and isinstance(action, Play)
        and action.declare
        and Play(action.card) in legal
    )


def check_refused_unchanged(state: GameState, seat: int, action: Action) -> None:
    clone = state.clone()
    before = snapshot(clone)
    with pytest.raises(IllegalAction):
        clone.apply_action(seat, action)
    assert snapshot(clone) == before


def check_listed_and_unlisted(state: GameState, rnd: random.Random) -> None:
    rules = state.rules
    seat = state.deal.to_act
    legal = state.legal_actions(seat)
    assert len(legal) > 0, "the seat to act has nothing to do"
    # every listed action is accepted (a sample of large lists)
    picks = list(legal) if len(legal) <= 6 else [legal[0], legal[-1], *(rnd.choice(legal) for _ in range(3))]
    before = snapshot(state)
    for action in picks:
        assert action in legal
        state.clone().apply_action(seat, action)
    assert snapshot(state) == before, "an action on a clone changed the state it was cloned from"
    # the lazy list of gives computes its items by index: they must agree with its iteration
    if isinstance(legal, GiveChoices):
        assert list(legal) == [legal[i] for i in range(len(legal))]
    # unlisted actions are refused and change nothing
    for action in rnd.sample(candidate_actions(state, rnd), 5):
        if action in legal or same_as_listed(rules, action, legal):
            continue
        check_refused_unchanged(state, seat, action)
    # any action by another seat is refused
    other = (seat + 1 + rnd.randrange(state.players - 1)) % state.players
    assert state.legal_actions(other) == ()
    check_refused_unchanged(state, other, legal[0])


# ---------------------------------------------------------------- the random game


def play_random(
    data: st.DataObject, rules: RuleSet, players: int, state: GameState | None = None
) -> GameState:
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rnd = random.Random(seed)
    if state is None:
        state, events = new_game(rules, players, seed)
        for e in events:
            if e.kind == ev.HAND_DEALT:
                assert e.audience == e.seat
    for _ in range(MAX_STEPS):
        if state.finished:
            assert state.to_act is None and state.legal_actions(0) == ()
            break
        check_cards_conserved(state.deal)
        check_listed_and_unlisted(state, rnd)
        seat = state.deal.to_act
        action = draw_action(data, state, seat)
        new = state.clone()
        events = new.apply_action(seat, action)
        check_audiences(state, new, events)
        check_deal_results(rules, state, new, events)
        state = new
    return state


def draw_action(data: st.DataObject, state: GameState, seat: int) -> Action:
    """Any legal action, with passes, bombs, concessions, crawls and sales made common enough to be seen:
    uniform draws would almost never pick them out of long lists of bids or gives."""
    legal = state.legal_actions(seat)
    rare = [a for a in (PASS, BOMB, CONCEDE, CRAWL, SELL) if a in legal]
    if rare and data.draw(st.integers(0, 2), label="rare action?") == 0:
        return rare[data.draw(st.integers(0, len(rare) - 1), label="rare action")]
    return legal[data.draw(st.integers(0, len(legal) - 1), label="action")]


def check_record_replays(state: GameState) -> None:
    record = build_record(state, [f"p{i}" for i in range(state.players)])
    report = replay_text(json.dumps(record))
    assert report["ok"] is True, report.get("error")
    finished = [r.to_json() for r in state.results]
    assert report["deals"][: len(finished)] == finished
    assert report["totals"] == list(state.totals)
    if state.finished:
        assert len(report["deals"]) == len(finished)
        winner = state.winner
        assert report["winner"] == (list(winner) if isinstance(winner, tuple) else winner)
    else:
        # A record cannot say that the opener's blind decision is still to come: a deal without `blind`
        # is one where nobody announced it, so the replay is already in the bidding.
        phase = "bidding" if state.deal.phase == "blind" else state.deal.phase
        assert report["deals"][len(finished)] == {
            "complete": False,
            "phase": phase,
            "to_act": state.deal.to_act,
        }


@pytest.mark.parametrize(("name", "players"), COMBOS, ids=IDS)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_random_games_keep_the_rules_promises(name: str, players: int, data: st.DataObject) -> None:
    """DESIGN (Tests): "property tests (hypothesis) over random games: the 24 cards are conserved, points add
    up, every listed legal action is accepted and every other refused, replaying a record gives the same
    result." """
    options = EXTRA[name] if data.draw(st.booleans(), label="extra options") else {}
    rules = preset(name, options)
    state = play_random(data, rules, players)
    check_record_replays(state)


# ---------------------------------------------------------------- late games: barrels, bolts, the end

TOTALS = st.sampled_from([-120, 0, 455, 700, 795, 800, 860, 880, 890, 900, 940, 990])


@pytest.mark.parametrize(("name", "players"), COMBOS, ids=IDS)
@settings(PROPERTY_SETTINGS, max_examples=100)
@given(data=st.data())
def test_random_late_games_score_by_the_rules(name: str, players: int, data: st.DataObject) -> None:
    """RULES.md: the barrels (polish 800 and estonian 880 declarer-only; russian capped at 880), bolts, and
    the end of the game ("The game ends after the deal in which at least one total reaches 1000 or more")."""
    rules = preset(name)
    totals = tuple(data.draw(TOTALS, label="total") for _ in range(players))
    if rules.barrel == Barrel.CAPPED:
        totals = tuple(880 if 880 <= t < 1000 else t for t in totals)
    on_barrel = tuple(rules.barrel == Barrel.CAPPED and t == 880 for t in totals)
    deals = tuple(data.draw(st.integers(0, 2), label="barrel deals") if b else 0 for b in on_barrel)
    bolts = tuple(data.draw(st.integers(0, 5), label="bolts") for _ in range(players))
    seed = data.draw(st.integers(0, 2**16), label="deal seed")
    start, _ = new_game(rules, players, seed)
    start = start.clone()
    start.tally = MatchTally(totals, on_barrel, deals, bolts)
    state = start
    before = state.tally
    count = 0
    while not state.finished and count < 3:
        number = len(state.results)
        while not state.finished and len(state.results) == number:
            seat = state.deal.to_act
            action = draw_action(data, state, seat)
            state = state.clone()
            state.apply_action(seat, action)
        r = state.results[-1]
        check_late_deal(rules, before, state.tally, r)
        before = state.tally
        count += 1
    if state.finished:
        assert max(state.totals) >= rules.target
        assert state.winner == match_winner(rules, state.totals, state.results[-1].declarer)
    else:
        assert all(max(r.totals) < rules.target for r in state.results)


def check_late_deal(rules: RuleSet, before: MatchTally, after: MatchTally, r: Any) -> None:
    n = len(before.totals)
    assert r.totals == after.totals
    assert r.scores == tuple(after.totals[s] - before.totals[s] for s in range(n))
    if r.ending == "redeal":
        assert after == before
        return
    declarer_value = r.contract * (2 if r.blind else 1)
    for s in range(n):
        if rules.barrel == Barrel.DECLARER_ONLY and before.totals[s] >= rules.barrel_at:
            if s != r.declarer:
                assert r.scores[s] == 0
            elif r.ending == "played":
                assert r.scores[s] == (declarer_value if r.made else -declarer_value)
        if rules.barrel == Barrel.CAPPED:
            t = after.totals[s]
            assert not (rules.barrel_at < t < rules.target), "a total above 880 below 1000"
            if before.on_barrel[s] and s != r.declarer:
                assert r.scores[s] in (0, -rules.barrel_penalty)
            if before.on_barrel[s] and s == r.declarer and r.made is False:
                assert not after.on_barrel[s]
        if rules.bolts:
            got = after.bolts[s] - before.bolts[s]
            assert got == (1 if s in r.bolts else 0)
            if got:
                assert s != r.declarer and r.ending != "concede" and not before.on_barrel[s]
                if after.bolts[s] % 3 == 0:
                    assert r.scores[s] in (-rules.bolt_penalty, rules.barrel_at - before.totals[s])
        else:
            assert after.bolts == before.bolts


def test_talon_visibility_values_are_covered() -> None:
    """The random games above run every kind of talon: public (russian), secret (estonian), public unless
    forced (polish), and the two musiki (polish, 2 players)."""
    kinds = {preset(name).talon_visibility for name, _ in COMBOS}
    assert kinds == set(TalonVisibility)


def test_card_points_total() -> None:
    """RULES.md §1: "All cards together are worth 120." (the invariant the properties rely on)"""
    assert sum(CARD_POINTS) == 120
