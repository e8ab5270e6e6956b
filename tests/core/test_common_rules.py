"""Rules common to all presets (RULES.md section 1): tricks, trump, duties, marriages, contract, game end."""

from __future__ import annotations

import pytest
from dealkit import BLIND_NO, PASS, Game, bid, c, contract, give, layout, play, with_tally

from core import events as ev
from core.game import new_game
from core.rules import preset

RUSSIAN = preset("russian")

# Dealer 0; seat 1 opens and becomes declarer.  After the exchange below:
#   seat 1: KH QH AH 10H AC 10C KC QD      seat 2: 9H JH AS 10S KS QS JS 9D
#   seat 0: 9C JC QC 9S AD 10D KD JD
HANDS = {1: "KH QH AH 10H AC 10C KC", 2: "9H JH AS 10S KS QS JS", 0: "9C JC QC 9S AD 10D KD"}
TALON = "QD JD 9D"


def russian_in_play(rules: object = RUSSIAN) -> Game:
    g = Game(rules, 3, layout(rules, 3, 0, HANDS, TALON))  # type: ignore[arg-type]
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])
    return g


def test_declarer_leads_to_the_first_trick() -> None:
    """RULES.md §1: "The declarer (the winner of the bidding) leads to the first trick." """
    g = russian_in_play()
    assert g.deal.phase == "play"
    assert g.to_act == g.deal.declarer == 1


def test_trick_without_trump_goes_to_highest_card_of_suit_led() -> None:
    """RULES.md §1: "A trick is won ... with no trump in it, by the highest card of the suit led."
    A higher card of another suit (AD after a led 10C) does not win."""
    g = russian_in_play()
    g.play_tricks("10C 9D 9C")
    assert g.deal.trump == -1
    assert g.last[-1].kind == ev.TRICK_TAKEN and g.last[-1].seat == 1
    g2 = russian_in_play()
    g2.run([(1, play("KC")), (2, play("AS")), (0, play("QC"))])
    assert g2.last[-1].seat == 1  # KC beats QC; AS is another suit


def test_trick_winner_leads_the_next_trick() -> None:
    """RULES.md §1: "The trick's winner leads the next trick." """
    g = russian_in_play()
    g.play_tricks("10C 9D 9C")
    assert g.to_act == 1
    g.play_tricks("AH 9H 9S")
    assert g.to_act == 1
    g.act(1, play("KC"))
    g.act(2, play("AS"))
    g.act(0, play("QC"))
    assert g.last[-1].seat == 1 and g.to_act == 1


def test_no_trump_before_the_first_marriage() -> None:
    """RULES.md §1: "Before the first declaration of a deal there is no trump." A void player may discard
    anything (no trump duty)."""
    g = russian_in_play()
    assert g.deal.trump == -1
    g.act(1, play("AC"))
    # seat 2 has no clubs and no trump exists: every card is playable
    assert {a.card for a in g.legal(2)} == set(g.hand(2))


def test_marriage_makes_its_suit_trump_at_once() -> None:
    """RULES.md §1: "Declaring one credits its value to the declaring player in this deal and makes its suit
    trump, at once (the led K or Q is already trump)"."""
    g = russian_in_play()
    g.play_tricks("AC 9D 9C")
    events = g.act(1, play("KH", declare=True))
    assert [e.kind for e in events] == [ev.CARD_PLAYED, ev.MARRIAGE, ev.TRUMP]
    marriage = events[1]
    assert (marriage.seat, marriage.value, marriage.detail, marriage.audience) == (1, 100, "H", None)
    assert g.deal.trump == 2  # hearts, already while the K is on the table
    g.act(2, play("9H"))
    g.act(0, play("9S"))
    _cards, _seats, trump = g.deal.trick_history[-1]
    assert trump == 2
    assert g.deal.taken[1] == 11 + 0 + 0 + 100 + 4 + 0 + 0


def test_trick_with_trump_goes_to_the_highest_trump() -> None:
    """RULES.md §1: "A trick is won by the highest trump in it"; a trump beats the led 10C."""
    g2 = russian_in_play()
    g2.play_tricks("AC 9D 9C")
    g2.act(1, play("KH", declare=True))
    g2.play_tricks("9H 9S")
    g2.act(1, play("10C"))
    g2.act(2, play("JH"))  # trump
    g2.act(0, play("QC"))
    assert g2.last[-1].seat == 2


def test_another_marriage_changes_trump() -> None:
    """RULES.md §1: "makes its suit trump, at once ... and until another marriage is declared." """
    g = russian_in_play()
    g.play_tricks("AC 9D 9C")
    g.act(1, play("KH", declare=True))
    g.play_tricks("9H 9S")
    assert g.deal.trump == 2
    # seat 1 leads again; it can no longer declare hearts (the K is gone) and holds no other marriage,
    # so give the lead away: 10C, seat 2 trumps with JH, then seat 2 holds KS QS and declares spades.
    g.play_tricks("10C JH QC")
    assert g.to_act == 2
    g.act(2, play("QS", declare=True))
    assert g.deal.trump == 1
    assert g.deal.marriages[2] == (1,)
    assert g.deal.taken[2] == 10 + 2 + 3 + 40


def test_must_follow_suit() -> None:
    """RULES.md §1: "a player must follow the suit led if able"."""
    g = russian_in_play()
    g.act(1, play("AC"))
    g.act(2, play("9D"))
    assert g.refuse(0, play("AD")) == "must_follow_suit"
    assert {a.card for a in g.legal(0)} == {c("JC"), c("QC"), c("9C")}


def test_void_player_must_trump() -> None:
    """RULES.md §1: "if void in it, must play a trump if holding one"."""
    g = russian_in_play()
    g.play_tricks("AC 9D 9C")
    g.act(1, play("KH", declare=True))
    g.play_tricks("9H 9S")
    g.act(1, play("10C"))
    assert g.refuse(2, play("AS")) == "must_trump"
    assert [a.card for a in g.legal(2)] == [c("JH")]


def test_void_without_trump_plays_any_card() -> None:
    """RULES.md §1: "otherwise any card (all three presets)"."""
    g = russian_in_play()
    g.play_tricks("AC 9D 9C")
    g.act(1, play("KH", declare=True))
    g.act(2, play("9H"))
    # seat 0 holds no heart (the trump and led suit): anything goes
    assert {a.card for a in g.legal(0)} == set(g.hand(0))


def test_must_beat_option_requires_heading_the_trick() -> None:
    """RULES.md §1: "Option `must_beat` (off in all presets): in addition, a player must head the trick when
    able (play a higher card of the led suit, or, when void, a trump higher than any trump in it)." """
    plain = russian_in_play()
    plain.act(1, play("KC"))
    plain.act(2, play("9D"))
    assert {a.card for a in plain.legal(0)} == {c("9C"), c("JC"), c("QC")}
    beat = russian_in_play(preset("russian", {"must_beat": True}))
    beat.act(1, play("QD"))
    # seat 2 holds 9D only in diamonds: cannot beat QD, so it may play it
    assert [a.card for a in beat.legal(2)] == [c("9D")]
    beat.act(2, play("9D"))
    # seat 0 holds AD 10D KD JD: must play a diamond higher than the queen
    assert {a.card for a in beat.legal(0)} == {c("KD"), c("10D"), c("AD")}
    assert beat.refuse(0, play("JD")) == "must_beat"


def must_beat_trick_three() -> Game:
    """4-player estonian with `must_beat`: seat 1 declares spades on trick 2, seat 2 wins it with AS and
    leads KC on trick 3; seat 3 (void in clubs) trumps with JS.  Then seat 0 holds 9C 10C and seat 1
    (void in clubs) holds 9S KS."""
    rules = preset("estonian", {"must_beat": True})
    hands = {1: "AC QS KS 9S AH", 2: "QC KC AS JD QD", 3: "10S JS 9H JH QH", 0: "9C JC 10C KD 10D"}
    g = Game(rules, 4, layout(rules, 4, 0, hands, "10H 9D KH AD"))
    g.run([(1, BLIND_NO), (1, bid(40)), (2, PASS), (3, PASS), (0, PASS)])
    g.act(1, give({2: "9D", 3: "KH", 0: "AD"}))
    g.play_tricks("AC QC 9H JC")
    g.act(1, play("QS", declare=True))
    g.play_tricks("AS 10S KD")
    assert g.to_act == 2 and g.deal.trump == 1
    g.act(2, play("KC"))
    assert [a.card for a in g.legal(3)] == [c("JS")]
    g.act(3, play("JS"))
    return g


def test_must_beat_follower_of_a_trumped_trick_plays_any_card_of_the_suit() -> None:
    """RULES.md §1 (`must_beat`): "play a higher card of the led suit" — not possible once the trick is
    trumped, so any card of the led suit will do (9C as well as 10C after KC and a trump)."""
    g = must_beat_trick_three()
    assert {a.card for a in g.legal(0)} == {c("9C"), c("10C")}
    g.act(0, play("9C"))


def test_must_beat_when_void_requires_a_higher_trump() -> None:
    """RULES.md §1 (`must_beat`): "or, when void, a trump higher than any trump in it" — KS over JS; the
    lower 9S is refused."""
    g = must_beat_trick_three()
    g.act(0, play("10C"))
    assert [a.card for a in g.legal(1)] == [c("KS")]
    assert g.refuse(1, play("9S")) == "must_beat"
    g.act(1, play("KS"))
    assert g.last[-1].kind == ev.TRICK_TAKEN and g.last[-1].seat == 1


def test_deal_points_are_tricks_plus_marriages_and_contract_made_at_equality() -> None:
    """RULES.md §1: "A player's deal points are the card points of the tricks they took plus the marriages
    they declared." "The declarer's contract is made when their deal points are at least the contract"."""
    g = russian_in_play()
    g.play_tricks("AC 9D 9C")
    g.act(1, play("KH", declare=True))
    g.play_tricks("9H 9S")
    g.play_out()
    result = g.state.results[-1]
    assert result.ending == "played"
    assert sum(result.points) == 120 + 100
    assert result.marriages == ((), ("H",), ())
    assert result.made == (result.points[1] >= 100)


def test_contract_made_scores_exactly_the_contract() -> None:
    """RULES.md §1: "the declarer then scores +contract, otherwise −contract. Card points above the contract
    are not scored." """
    g = russian_in_play()
    g.play_tricks("AC 9D 9C")
    g.act(1, play("KH", declare=True))
    g.play_tricks("9H 9S")
    assert g.deal.taken[1] >= 100  # already made with 100 + 15
    g.play_out()
    result = g.state.results[-1]
    assert result.made is True and result.points[1] > 100
    assert result.scores[1] == 100


def test_failed_contract_scores_minus_contract() -> None:
    """RULES.md §1: "the declarer then scores +contract, otherwise −contract"."""
    rules = RUSSIAN
    g = Game(rules, 3, layout(rules, 3, 0, HANDS, TALON))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(120))])
    g.play_tricks("AC 9D 9C")  # 11 points, no marriage declared
    g.play_out()
    result = g.state.results[-1]
    if result.points[1] < 120:
        assert result.made is False and result.scores[1] == -120
    else:  # pragma: no cover - the hands above do not allow it
        raise AssertionError(result)


def test_dealer_moves_one_seat_clockwise_each_deal() -> None:
    """RULES.md: "The dealer moves one seat clockwise each deal." """
    for name, n in (("polish", 3), ("estonian", 4), ("russian", 4), ("polish", 2)):
        g = Game(preset(name), n, seed=5)
        dealers = []
        for _ in range(n + 1):
            dealers.append(g.deal.dealer)
            g.play_out()
            if g.state.finished:
                break
        assert dealers == [(dealers[0] + i) % n for i in range(len(dealers))]


def test_bidding_and_play_start_left_of_the_dealer() -> None:
    """RULES.md: "'Left of the dealer' is seat `(dealer + 1) % n`; play and bidding move to the next
    seat." """
    for dealer in range(3):
        state, _ = new_game(RUSSIAN, 3, first_dealer=dealer)
        assert state.deal.dealer == dealer
        assert state.to_act == (dealer + 1) % 3
        assert state.legal_actions((dealer + 2) % 3) == ()


def test_game_ends_when_a_total_reaches_1000_and_highest_wins() -> None:
    """RULES.md §1: "The game ends after the deal in which at least one total reaches 1000 or more. The
    highest total wins." """
    rules = preset("polish", {"barrel": "off"})
    base = Game(rules, 3, layout(rules, 3, 0, {1: "AH KH QH 10H AC KC QC", 2: "9C JC 9S JS QS KS 9H"}))
    g = Game(rules, 3, state=with_tally(base.state, [0, 950, 100]))
    g.run([(2, PASS), (0, PASS)])  # forced 100 for seat 1
    g.act(1, g.legal()[0])  # give
    g.act(1, contract(100))
    g.play_out()
    assert g.state.finished and g.state.to_act is None
    result = g.state.results[-1]
    assert result.made and g.state.totals[1] == 1050
    assert g.state.winner == 1
    assert g.events[-1].kind == ev.GAME_ENDED and g.events[-1].detail == 1
    assert g.refuse(1, PASS) == "game_over"


def test_tie_at_the_end_goes_to_the_declarer() -> None:
    """RULES.md §1: "[decided] equal highest totals: the declarer of that deal (also a bomber or a conceder)
    wins if among them"."""
    rules = preset("polish", {"barrel": "off"})
    base = Game(rules, 3, layout(rules, 3, 0, {1: "AH KH QH 10H AC KC QC", 2: "9C JC 9S JS QS KS 9H"}))
    g = Game(rules, 3, state=with_tally(base.state, [0, 900, 0]))
    g.run([(2, PASS), (0, PASS)])
    g.act(1, g.legal()[0])
    g.act(1, contract(100))
    g.play_out()
    r = g.state.results[-1]
    assert r.made
    # seat 1 reached 1000; make another seat reach exactly 1000 too by starting it at 1000 - its score
    other = 2 if r.scores[2] else 0
    g2 = Game(rules, 3, state=with_tally(base.state, [0, 900, 0]))
    totals = [0, 900, 0]
    totals[other] = 1000 - r.scores[other]
    g2 = Game(rules, 3, state=with_tally(base.state, totals))
    g2.run([(2, PASS), (0, PASS)])
    g2.act(1, g2.legal()[0])
    g2.act(1, contract(100))
    g2.play_out()
    assert g2.state.totals[1] == g2.state.totals[other] == 1000
    assert g2.state.winner == 1


def test_tie_between_defenders_is_a_shared_win() -> None:
    """RULES.md §1: "otherwise those players share the win." """
    rules = preset("polish", {"barrel": "off"})
    hands = {1: "9C JC 9S JS 9H JH 9D", 2: "AH 10H KH AS 10S KS QH", 0: "AC 10C KC QC AD 10D KD"}
    base = Game(rules, 3, layout(rules, 3, 0, hands, "QS QD JD"))
    probe = Game(rules, 3, state=base.state)
    probe.run([(2, PASS), (0, PASS)])
    probe.act(1, probe.legal()[0])
    probe.act(1, contract(100))
    probe.play_out()
    r = probe.state.results[-1]
    assert r.made is False and r.scores[2] > 0 and r.scores[0] > 0
    totals = [1000 - r.scores[0], 0, 1000 - r.scores[2]]
    g = Game(rules, 3, state=with_tally(base.state, totals))
    g.run([(2, PASS), (0, PASS)])
    g.act(1, g.legal()[0])
    g.act(1, contract(100))
    g.play_out()
    assert g.state.totals[0] == g.state.totals[2] == 1000
    assert g.state.winner == (0, 2)


@pytest.mark.parametrize("name", ["polish", "estonian", "russian"])
def test_card_points_of_a_played_deal_add_up_to_120(name: str) -> None:
    """RULES.md §1: "All cards together are worth 120" — the deal points of a played deal are 120 plus
    the marriages declared."""
    rules = preset(name)
    for seed in range(5):
        g = Game(rules, 3, seed=seed)
        g.play_out()
        r = g.state.results[-1]
        if r.ending != "played":
            continue
        marriages = sum(rules.marriage_value("CSHD".index(s)) for m in r.marriages for s in m)
        assert sum(r.points) == 120 + marriages
