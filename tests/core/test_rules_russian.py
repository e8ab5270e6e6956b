"""Preset `russian` (pagat's Тысяча; RULES.md section 4)."""

from __future__ import annotations

import pytest
from dealkit import CONCEDE, PASS, Game, bid, c, contract, cs, give, layout, play, with_tally

from core import events as ev
from core.rules import RuleError, preset

RUS = preset("russian")

# Dealer 0: seat 1 opens, then seat 2, then seat 0.
HANDS = {1: "KH QH AH 10H AC 10C KC", 2: "9H JH AS 10S KS QS JS", 0: "9C JC QC 9S AD 10D KD"}
TALON = "QD JD 9D"
# Seat 1 holds the aces and tens: with the talon it takes every trick; the defenders score 0.
SWEEP = {1: "AC 10C AS 10S AH 10H AD", 2: "KC QC JC KS QS JS KH", 0: "QH JH 9H KD QD JD 9D"}
SWEEP_TALON = "10D 9C 9S"


def rus3(hands: dict[int, str] | None = None, talon: str | None = None, rules: object = RUS) -> Game:
    return Game(rules, 3, layout(rules, 3, 0, hands or HANDS, talon or TALON))  # type: ignore[arg-type]


def sweep(state_totals: list[int] | None = None, **tally: object) -> Game:
    g = rus3(SWEEP, SWEEP_TALON)
    if state_totals is not None:
        g = Game(RUS, 3, state=with_tally(g.state, state_totals, **tally))  # type: ignore[arg-type]
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9C", 0: "9S"})), (1, contract(100))])
    g.play_out()
    return g


# ---------------------------------------------------------------- players and deal


def test_russian_three_or_four_players() -> None:
    """RULES.md §4: "Players: 3, or 4 with the dealer sitting out (as in `polish`)." """
    with pytest.raises(RuleError):
        RUS.check_players(2)
    g = Game(RUS, 4, seed=1)
    dealer = g.deal.dealer
    assert g.hand(dealer) == [] and dealer not in g.deal.active
    assert sorted(len(g.hand(s)) for s in range(4)) == [0, 7, 7, 7]


def test_russian_seven_cards_each_and_a_prikup_of_three() -> None:
    """RULES.md §4: "7 cards each, prikup (talon) of 3." """
    g = Game(RUS, 3, seed=9)
    assert [len(g.hand(s)) for s in range(3)] == [7, 7, 7]
    assert len(g.deal.talon) == 3


# ---------------------------------------------------------------- bidding


def test_russian_opener_must_open_with_at_least_100() -> None:
    """RULES.md §4: "The player left of the dealer must open with a bid of at least 100 (cannot pass on their
    first turn)"."""
    g = rus3()
    assert g.to_act == 1 and PASS not in g.legal(1)
    assert g.refuse(1, PASS) == "must_open"
    assert g.refuse(1, bid(95)) == "bid_too_low"
    assert g.legal(1)[0] == bid(100)


def test_russian_bids_rise_in_steps_of_5_and_a_pass_is_final() -> None:
    """RULES.md §4: "bids rise in steps of 5; a pass is final." """
    g = rus3()
    assert g.refuse(1, bid(102)) == "bad_bid_step"
    g.act(1, bid(100))
    assert g.legal(2)[:2] == [PASS, bid(105)]
    g.act(2, PASS)
    g.act(0, bid(105))
    g.act(1, bid(110))
    assert g.to_act == 0  # seat 2 passed for good
    g.act(0, PASS)
    assert g.deal.declarer == 1 and g.deal.contract == 110


def test_russian_bid_above_120_needs_a_marriage_and_no_other_cap() -> None:
    """RULES.md §4: "A bid above 120 needs a marriage in hand (no other cap)." Engine decision: at most what a
    deal can give, 400."""
    g = rus3()
    g.act(1, bid(100))
    assert g.legal(2)[-1] == bid(400)  # seat 2 holds KS QS
    g.act(2, bid(125))
    assert g.refuse(0, bid(130)) == "bid_needs_marriage"  # seat 0: no marriage
    g.act(0, PASS)
    assert g.refuse(1, bid(405)) == "bid_too_high"
    g.act(1, bid(400))


# ---------------------------------------------------------------- prikup and contract


def test_russian_prikup_is_shown_to_all() -> None:
    """RULES.md §4: "The declarer shows the prikup to all, takes it"."""
    g = rus3()
    g.run([(1, bid(100)), (2, PASS), (0, PASS)])
    shown = [e for e in g.last if e.kind == ev.TALON_SHOWN]
    assert shown and shown[0].audience is None and set(shown[0].cards) == set(cs(TALON))
    assert set(cs(TALON)) <= set(g.hand(1))


def test_russian_declarer_gives_one_card_face_down_to_each_opponent() -> None:
    """RULES.md §4: "and gives one card face down to each opponent"."""
    g = rus3()
    g.run([(1, bid(100)), (2, PASS), (0, PASS)])
    events = g.act(1, give({2: "9D", 0: "JD"}))
    assert [len(g.hand(s)) for s in range(3)] == [8, 8, 8]
    for e in events:
        if e.kind == ev.CARD_GIVEN:
            assert (e.audience is None and e.cards == ()) or e.audience in (e.seat, e.value)


def test_russian_contract_keep_or_raise_by_multiples_of_5() -> None:
    """RULES.md §4: "then fixes the final contract: keeping the bid is always allowed; a raise is any higher
    multiple of 5"."""
    g = rus3()
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"}))])
    assert g.deal.phase == "contract"
    legal = list(g.legal(1))
    assert legal[:3] == [contract(100), contract(105), contract(110)]
    assert g.refuse(1, contract(95)) == "contract_too_low"
    assert g.refuse(1, contract(112)) == "bad_bid_step"
    g.act(1, contract(115))
    assert g.deal.contract == 115


def test_russian_raise_above_120_needs_a_marriage_after_giving_cards() -> None:
    """RULES.md §4: "a raise above 120 needs a marriage in the hand held after giving cards." """
    g = rus3()
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"}))])
    assert list(g.legal(1))[-1] == contract(400)  # KH QH kept: up to what a deal can give
    broke = rus3()
    broke.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "KH", 0: "JD"}))])
    assert list(broke.legal(1))[-1] == contract(120)
    assert broke.refuse(1, contract(125)) == "contract_too_high"


# ---------------------------------------------------------------- concession


def test_russian_concession_before_giving_cards() -> None:
    """RULES.md §4: "Concession (razpisat'): after taking the prikup and before giving cards, the declarer may
    concede: the deal is not played, the declarer scores −contract (the bid), each opponent +60"."""
    g = rus3()
    g.run([(1, bid(100)), (2, bid(105)), (0, PASS), (1, bid(110)), (2, PASS)])
    assert CONCEDE in g.legal(1)
    assert g.refuse(2, CONCEDE) == "not_your_turn"
    g.act(1, CONCEDE)
    r = g.state.results[-1]
    assert (r.ending, r.declarer, r.contract, r.made, r.points) == ("concede", 1, 110, None, (0, 0, 0))
    assert r.scores == (60, -110, 60)
    assert r.bolts == ()


def test_russian_no_concession_after_giving_cards() -> None:
    """RULES.md §4: "before giving cards"."""
    g = rus3()
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"}))])
    assert g.refuse(1, CONCEDE) == "wrong_phase"


def test_russian_concession_gives_nothing_to_a_player_on_the_barrel() -> None:
    """RULES.md §4: "each opponent +60 (nothing for a player on the barrel)"."""
    base = rus3()
    g = Game(RUS, 3, state=with_tally(base.state, [880, 0, 100], on_barrel=[True, False, False]))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, CONCEDE)])
    r = g.state.results[-1]
    assert r.scores == (0, -100, 60)


def test_russian_declarer_on_the_barrel_who_concedes_leaves_it() -> None:
    """RULES.md §4: "A declarer on the barrel who concedes leaves it." """
    g = Game(RUS, 3, state=with_tally(rus3().state, [0, 880, 0], on_barrel=[False, True, False]))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, CONCEDE)])
    r = g.state.results[-1]
    assert r.totals[1] == 780 and r.barrel == (False, False, False)


def test_russian_four_players_sit_out_still_scores_the_prikup_after_a_concession() -> None:
    """RULES.md §4: "With 4 players the dealer who sits out still scores the prikup as below." """
    g = Game(RUS, 4, layout(RUS, 4, 3, {}, "AH KD QD"))
    g.run([(0, bid(100)), (1, PASS), (2, PASS), (0, CONCEDE)])
    r = g.state.results[-1]
    assert r.scores == (-100, 60, 60, 20)  # prikup: 11 + 4 + 3 = 18, rounded to 20


# ---------------------------------------------------------------- marriages


def in_play() -> Game:
    g = rus3()
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])
    return g


def test_russian_marriage_is_declared_by_choice() -> None:
    """RULES.md §4: "Marriage: only by the player on lead, never on the first trick, by leading its K or Q and
    declaring (a choice)." """
    g = in_play()
    g.play_tricks("AC 9H 9C")
    events = g.act(1, play("KH"))
    assert ev.MARRIAGE not in [e.kind for e in events]
    g2 = in_play()
    g2.play_tricks("AC 9H 9C")
    events = g2.act(1, play("KH", declare=True))
    assert [e.value for e in events if e.kind == ev.MARRIAGE] == [100]


def test_russian_marriage_never_on_the_first_trick_nor_off_lead() -> None:
    """RULES.md §4: "only by the player on lead, never on the first trick"."""
    g = in_play()
    assert g.refuse(1, play("KH", declare=True)) == "cannot_declare"
    g.act(1, play("AC"))
    g.act(2, play("9H"))
    assert g.refuse(0, play("QC", declare=True)) == "cannot_declare"


def test_russian_marriage_values_hearts_100_diamonds_80_clubs_60_spades_40() -> None:
    """RULES.md §4: "Values hearts 100, diamonds 80, clubs 60, spades 40." """
    assert RUS.marriage_values == {"H": 100, "D": 80, "C": 60, "S": 40}


# ---------------------------------------------------------------- scoring


def test_russian_defenders_points_rounded_to_5() -> None:
    """RULES.md §4: "Defenders' deal points are rounded to the nearest multiple of 5." """
    seen = 0
    for seed in range(25):
        g = Game(RUS, 3, seed=seed)
        g.play_out()
        r = g.state.results[-1]
        for s in range(3):
            p = r.points[s]
            if s != r.declarer and not r.barrel[s] and p and r.scores[s] != -120:
                assert r.scores[s] == (p - p % 5 if p % 5 <= 2 else p + 5 - p % 5)
                seen += p % 5 != 0
    assert seen


@pytest.mark.parametrize(("talon", "score"), [("AH KD QD", 20), ("AH 10H 9C", 20), ("AH 10H JC", 25)])
def test_russian_sit_out_dealer_scores_prikup_points_rounded(talon: str, score: int) -> None:
    """RULES.md §4: "4 players: the dealer who sits out scores the card points of the prikup, rounded like a
    defender's (nothing on the barrel; no bolt)." """
    g = Game(RUS, 4, layout(RUS, 4, 3, {}, talon))
    g.play_out()
    r = g.state.results[-1]
    assert r.points[3] == 0 and r.scores[3] == score


def test_russian_sit_out_dealer_on_the_barrel_scores_nothing_and_no_bolt() -> None:
    """RULES.md §4: "(nothing on the barrel; no bolt)". A prikup of nines is worth 0: still no bolt."""
    g = Game(RUS, 4, layout(RUS, 4, 3, {}, "AH 10H AD"))
    g = Game(RUS, 4, state=with_tally(g.state, [0, 0, 0, 880], on_barrel=[False, False, False, True]))
    g.play_out()
    assert g.state.results[-1].scores[3] == 0
    nines = Game(RUS, 4, layout(RUS, 4, 3, {}, "9C 9S JH"))
    nines.play_out()
    r = nines.state.results[-1]
    assert r.scores[3] == 0 and 3 not in r.bolts


# ---------------------------------------------------------------- barrel


def test_russian_total_between_880_and_999_is_set_to_880() -> None:
    """RULES.md §4: "Barrel at 880: a total that ends a deal between 880 and 999 is set to 880, and the
    player is
    on the barrel." """
    g = sweep([0, 850, 0])
    r = g.state.results[-1]
    assert r.made and r.totals[1] == 880 and r.scores[1] == 30
    assert g.state.tally.on_barrel == (False, True, False)


def test_russian_on_the_barrel_a_made_contract_sets_the_total_back_to_880() -> None:
    """RULES.md §4: "A player on the barrel scores only as declarer: +contract if made (reaching 1000 wins;
    otherwise the total is set back to 880)"."""
    g = sweep([0, 880, 0], on_barrel=[False, True, False])
    r = g.state.results[-1]
    assert r.made and r.totals[1] == 880 and r.scores[1] == 0
    assert not g.state.finished


def test_russian_on_the_barrel_reaching_1000_wins() -> None:
    """RULES.md §4: "+contract if made (reaching 1000 wins ...)"."""
    g = rus3(SWEEP, SWEEP_TALON)
    g = Game(RUS, 3, state=with_tally(g.state, [0, 880, 0], on_barrel=[False, True, False]))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9C", 0: "9S"})), (1, contract(120))])
    g.play_out()
    r = g.state.results[-1]
    assert r.made and r.totals[1] == 1000
    assert g.state.finished and g.state.winner == 1


def test_russian_on_the_barrel_a_failed_contract_leaves_it() -> None:
    """RULES.md §4: "−contract if failed or conceded, which also takes them off the barrel." """
    g = Game(RUS, 3, state=with_tally(rus3().state, [0, 880, 0], on_barrel=[False, True, False]))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(300))])
    g.play_out()
    r = g.state.results[-1]
    assert r.made is False and r.totals[1] == 580
    assert g.state.tally.on_barrel[1] is False and g.state.tally.barrel_deals[1] == 0


def test_russian_on_the_barrel_a_defender_scores_nothing() -> None:
    """RULES.md §4: "A player on the barrel scores only as declarer"."""
    g = Game(RUS, 3, state=with_tally(rus3().state, [880, 0, 0], on_barrel=[True, False, False]))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])
    g.play_out()
    r = g.state.results[-1]
    assert r.points[0] > 0 and r.scores[0] == 0 and r.totals[0] == 880


def test_russian_third_deal_on_the_barrel_costs_120_counting_sat_out_and_conceded_deals() -> None:
    """RULES.md §4: "When the third deal that began with the player on the barrel ends with the player still
    on
    it, they score −120 and leave it; every finished deal that began with them on the barrel counts (also
    one they sat out or one conceded by another player)"."""
    start = Game(RUS, 4, layout(RUS, 4, 0, {}, "9C 9S JH"))
    g = Game(RUS, 4, state=with_tally(start.state, [880, 0, 0, 0], on_barrel=[True, False, False, False]))
    g.play_out()  # deal 1: seat 0 deals and sits out
    r1 = g.state.results[-1]
    assert r1.scores[0] == 0 and g.state.tally.barrel_deals[0] == 1
    opener = g.deal.opener  # deal 2: conceded by another player
    g.act(opener, bid(100))
    while g.deal.phase == "bidding":
        g.act(g.to_act, PASS)
    g.act(opener, CONCEDE)
    r2 = g.state.results[-1]
    assert r2.ending == "concede" and r2.scores[0] == 0 and g.state.tally.barrel_deals[0] == 2
    assert g.deal.opener != 0  # deal 3: seat 0 defends
    g.play_out()
    r3 = g.state.results[-1]
    assert r3.scores[0] == -120 and r3.totals[0] == 760
    assert g.state.tally.on_barrel[0] is False and g.state.tally.barrel_deals[0] == 0


def test_russian_several_players_on_the_barrel_at_once() -> None:
    """RULES.md §4: "Several players may be on the barrel at once." """
    g = sweep([880, 850, 0], on_barrel=[True, False, False])
    assert g.state.tally.on_barrel == (True, True, False)
    assert g.state.totals[:2] == (880, 880)


# ---------------------------------------------------------------- bolts


def test_russian_defender_scoring_0_gets_a_bolt() -> None:
    """RULES.md §4: "Bolts: a defender (not on the barrel) whose score for a deal, after rounding, is 0 gets a
    bolt; a declarer ... never do[es]." """
    g = sweep()
    r = g.state.results[-1]
    assert r.points == (0, 120, 0) and r.scores == (0, 100, 0)
    assert sorted(r.bolts) == [0, 2]
    assert g.state.tally.bolts == (1, 0, 1)


def test_russian_every_third_bolt_costs_120() -> None:
    """RULES.md §4: "Bolts are counted over the whole game; the 3rd, 6th, 9th... bolt of a player makes their
    score for that deal −120." """
    g = sweep([50, 0, 50], bolts=[2, 0, 5])
    r = g.state.results[-1]
    assert r.scores == (-120, 100, -120)
    assert g.state.tally.bolts == (3, 0, 6)
    g2 = sweep([50, 0, 50], bolts=[3, 0, 1])
    assert g2.state.results[-1].scores == (0, 100, 0)


def test_russian_no_bolt_on_the_barrel() -> None:
    """RULES.md §4: "a defender (not on the barrel)"."""
    g = sweep([880, 0, 0], on_barrel=[True, False, False], bolts=[2, 0, 0])
    r = g.state.results[-1]
    assert 0 not in r.bolts and r.scores[0] == 0
    assert g.state.tally.bolts[0] == 2


def test_russian_no_bolt_for_defenders_of_a_conceded_deal() -> None:
    """RULES.md §4: "a defender of a conceded deal never do[es]" (with `concede_points` 0 they score 0)."""
    rules = preset("russian", {"concede_points": 0})
    g = rus3(rules=rules)
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, CONCEDE)])
    r = g.state.results[-1]
    assert r.scores == (0, -100, 0) and r.bolts == ()


def test_russian_hands_go_only_to_their_seats() -> None:
    """DESIGN: private information (hands) only in events with a seat audience."""
    g = rus3()
    for e in g.events:
        if e.kind == ev.HAND_DEALT:
            assert e.audience == e.seat
    assert c("AC") in g.hand(1)
