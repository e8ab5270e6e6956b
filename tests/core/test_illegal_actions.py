"""Every refusal code of the engine, each from a real position, and the state unchanged after it.

ENGINE.md: "`state.apply_action` raises `core.errors.IllegalAction` (`.code`, `.message`) and leaves the
state unchanged: checks come before any change."
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from dealkit import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    CRAWL,
    PASS,
    SELL,
    Game,
    bid,
    contract,
    discard,
    give,
    layout,
    play,
    snapshot,
    take,
)

from core.actions import Action
from core.errors import IllegalAction
from core.rules import preset

POLISH = preset("polish")
EST = preset("estonian")
RUS = preset("russian")
HANDS = {1: "KH QH AH 10H AC 10C KC", 2: "9H JH AS 10S KS QS JS", 0: "9C JC QC 9S AD 10D KD"}
TALON = "QD JD 9D"


def rus_play() -> Game:
    g = Game(RUS, 3, layout(RUS, 3, 0, HANDS, TALON))
    return g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])


def polish3() -> Game:
    return Game(POLISH, 3, layout(POLISH, 3, 0, HANDS, TALON))


def polish2() -> Game:
    g = Game(POLISH, 2, seed=3)
    g.act(g.to_act, PASS)
    return g


def est_bidding(blind: bool = False) -> Game:
    g = Game(EST, 3, layout(EST, 3, 0, HANDS, TALON))
    return g.run([(1, BLIND_YES if blind else BLIND_NO)])


def trumped() -> Game:
    g = rus_play()
    g.play_tricks("AC 9D 9C")
    g.act(1, play("KH", declare=True))
    g.play_tricks("9H 9S")
    g.act(1, play("10C"))
    return g


def must_beat_position() -> Game:
    rules = preset("russian", {"must_beat": True})
    g = Game(rules, 3, layout(rules, 3, 0, HANDS, TALON))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])
    g.act(1, play("QD"))
    g.act(2, play("9D"))
    return g


def finished_game() -> Game:
    rules = preset("polish", {"target": 100, "barrel": "off"})
    g = Game(rules, 3, layout(rules, 3, 0, HANDS, TALON))
    while not g.state.finished:
        g.play_out()
    return g


CASES: list[tuple[str, Callable[[], Game], int, Action]] = [
    ("not_your_turn", polish3, 0, PASS),
    ("wrong_phase", rus_play, 1, bid(120)),
    ("wrong_phase", polish3, 2, play("AS")),
    ("must_open", est_bidding, 1, PASS),
    ("must_open", lambda: Game(RUS, 3, layout(RUS, 3, 0, HANDS, TALON)), 1, PASS),
    ("bad_bid_step", polish3, 2, bid(115)),
    ("bid_too_low", polish3, 2, bid(100)),
    ("bid_too_high", polish3, 2, bid(170)),
    ("bid_needs_marriage", lambda: polish3().run([(2, PASS)]), 0, bid(130)),
    ("blind_bid_too_high", lambda: est_bidding(blind=True), 1, bid(125)),
    ("card_not_in_hand", rus_play, 1, play("9S")),
    ("must_follow_suit", lambda: rus_play().run([(1, play("AC")), (2, play("9H"))]), 0, play("AD")),
    ("must_trump", trumped, 2, play("AS")),
    ("must_beat", must_beat_position, 0, play("JD")),
    ("cannot_declare", rus_play, 1, play("KH", declare=True)),
    ("bad_give", lambda: Game(RUS, 3, layout(RUS, 3, 0, HANDS, TALON)).run(
        [(1, bid(100)), (2, PASS), (0, PASS)]), 1, give({2: "9D"})),
    ("bad_discard", lambda: polish2().run([]), -1, discard("9C")),
    ("no_such_pile", polish2, -1, take(2)),
    ("no_bomb", lambda: polish3().run([(2, bid(110)), (0, PASS), (1, PASS)]), 2, BOMB),
    ("no_concede", lambda: polish3().run([(2, bid(110)), (0, PASS), (1, PASS)]), 2, CONCEDE),
    ("no_crawl", rus_play, 1, CRAWL),
    ("no_sale", polish2, -1, SELL),
    ("contract_too_low", lambda: polish3().run([(2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"}))]), 1,
     contract(90)),
    ("contract_too_high", lambda: polish3().run([(2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"}))]), 1,
     contract(320)),
    ("game_over", finished_game, 0, PASS),
]  # fmt: skip


def _prepare(make: Callable[[], Game], seat: int, code: str) -> tuple[Game, int]:
    g = make()
    if seat < 0:
        seat = g.to_act
        if code == "bad_discard":
            g.act(seat, take(0))
    return g, seat


@pytest.mark.parametrize(("code", "make", "seat", "action"), CASES, ids=[c[0] for c in CASES])
def test_refusal_code_and_state_unchanged(
    code: str, make: Callable[[], Game], seat: int, action: Action
) -> None:
    """ENGINE.md: "`apply` raises `core.errors.IllegalAction` (`.code`, `.message`) and leaves the state
    unchanged." The action is also absent from `legal_actions`."""
    g, seat = _prepare(make, seat, code)
    assert action not in g.legal(seat)
    assert g.refuse(seat, action) == code


@pytest.mark.parametrize(("code", "make", "seat", "action"), CASES, ids=[c[0] for c in CASES])
def test_refusal_in_place_changes_nothing(
    code: str, make: Callable[[], Game], seat: int, action: Action
) -> None:
    """ENGINE.md: "`state.apply_action(seat, action)` applies in place ... Checks come before any change." """
    g, seat = _prepare(make, seat, code)
    state = g.state.clone()
    before = snapshot(state)
    with pytest.raises(IllegalAction) as info:
        state.apply_action(seat, action)
    assert info.value.code == code and info.value.message
    assert snapshot(state) == before


def test_deal_over_refused_on_a_finished_deal() -> None:
    """ENGINE.md code `deal_over`: a deal that has ended takes no more actions."""
    g = polish3().run([(2, PASS), (0, PASS)])
    deal = g.deal.copy()
    deal.apply(1, BOMB, [])
    assert deal.phase == "done"
    with pytest.raises(IllegalAction) as info:
        deal.apply(1, PASS, [])
    assert info.value.code == "deal_over"


def test_every_documented_code_is_tested() -> None:
    """ENGINE.md lists the refusal codes; each one has a test here."""
    engine = (Path(__file__).resolve().parents[2] / "docs" / "ENGINE.md").read_text(encoding="utf-8")
    section = engine[engine.index("Codes:") : engine.index("`game_over`") + len("`game_over`")]
    documented = set(re.findall(r"`([a-z_]+)`", section))
    tested = {c[0] for c in CASES} | {"deal_over"}
    assert documented <= tested, sorted(documented - tested)


def test_a_refused_action_leaves_the_game_playable() -> None:
    """After a refusal the same state still accepts a legal action."""
    g = rus_play()
    assert g.refuse(1, play("9S")) == "card_not_in_hand"
    g.act(1, g.legal(1)[0])
    assert len(g.deal.trick) == 1
