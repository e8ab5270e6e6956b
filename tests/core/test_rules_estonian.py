"""Preset `estonian` (seed 001, the Estonian text; RULES.md section 3)."""

from __future__ import annotations

import pytest
from dealkit import (
    BLIND_NO,
    BLIND_YES,
    CRAWL,
    PASS,
    SELL,
    Game,
    bid,
    c,
    contract,
    cs,
    give,
    layout,
    play,
    take,
    with_tally,
)

from core import events as ev
from core.cards import cards_of
from core.rules import preset

EST = preset("estonian")

# Dealer 0: seat 1 opens (and decides about a blind game first), then seat 2, then seat 0.
HANDS3 = {1: "KH QH AH 10H 9C JC QC", 2: "AS 10S KS QS 9S JS 9D", 0: "AC 10C KC JH 9H AD 10D"}
TALON3 = "KD QD JD"


def est3(
    hands: dict[int, str] | None = None, talon: str | None = None, rules: object = EST, players: int = 3
) -> Game:
    return Game(rules, players, layout(rules, players, 0, hands or HANDS3, talon or TALON3))  # type: ignore[arg-type]


def won_by_seat_1(g: Game, value: int = 60, blind: bool = False) -> Game:
    g.run([(1, BLIND_YES if blind else BLIND_NO), (1, bid(value)), (2, PASS), (0, PASS)])
    return g


# ---------------------------------------------------------------- the deal


@pytest.mark.parametrize(("players", "hand", "talon"), [(2, 11, 2), (3, 7, 3), (4, 5, 4)])
def test_estonian_talon_has_as_many_cards_as_players(players: int, hand: int, talon: int) -> None:
    """Seed 001: "laua keskele jagatakse maha mängijatega võrdne arv kaarte". RULES.md §3: "2 players 11 cards
    each + 2; 3 players 7 + 3; 4 players 5 + 4" — all playing."""
    g = Game(EST, players, seed=7)
    assert [len(g.hand(s)) for s in range(players)] == [hand] * players
    assert len(g.deal.talon) == talon
    assert len(g.deal.active) == players


# ---------------------------------------------------------------- blind decision and bidding


def test_estonian_blind_decision_is_the_openers_first_action() -> None:
    """Seed 001: "Kui oled segajast järgmine, on sul võimalus pakkuda pimedalt." RULES.md §3: "before the
    deal,
    only the player left of the dealer may announce a blind game"; the engine asks it first."""
    g = est3()
    assert g.deal.phase == "blind" and g.to_act == 1
    assert list(g.legal(1)) == [BLIND_YES, BLIND_NO]
    assert g.legal(2) == () and g.legal(0) == ()
    assert g.refuse(2, BLIND_YES) == "not_your_turn"
    assert g.refuse(1, bid(40)) == "wrong_phase"
    # the opener has not seen the hand yet; the others have
    assert sorted(e.audience for e in g.events if e.kind == ev.HAND_DEALT) == [0, 2]
    events = g.act(1, BLIND_NO)
    assert [(e.kind, e.audience) for e in events] == [(ev.BLIND_CHOSEN, None), (ev.HAND_DEALT, 1)]
    assert g.deal.phase == "bidding" and g.to_act == 1


def test_estonian_opener_must_open_with_at_least_40() -> None:
    """Seed 001: "Segajast järgmine ei saa pakkuda alla neljakümne." RULES.md §3: "The player left of the
    dealer must open [decided] (cannot pass on their first turn) with a bid of at least 40." """
    g = est3()
    g.act(1, BLIND_NO)
    assert PASS not in g.legal(1)
    assert g.legal(1)[0] == bid(40)
    assert g.refuse(1, PASS) == "must_open"
    assert g.refuse(1, bid(35)) == "bid_too_low"
    g.act(1, bid(40))
    g.act(2, bid(45))
    g.act(0, PASS)
    assert PASS in g.legal(1)  # after opening, the opener may pass
    g.act(1, PASS)
    assert g.deal.declarer == 2 and g.deal.contract == 45


def test_estonian_bids_rise_by_at_least_5_in_multiples_of_5() -> None:
    """Seed 001: "Väikeim samm on 5, st kui keegi pakkus 100, on järgmine 105". RULES.md §3: "each bids at
    least 5 more than the current bid or passes. Every bid, the opening one included, is a multiple of 5." """
    g = est3()
    g.act(1, BLIND_NO)
    assert g.refuse(1, bid(42)) == "bad_bid_step"
    g.act(1, bid(100))
    assert g.legal(2)[:3] == [PASS, bid(105), bid(110)]
    assert g.refuse(2, bid(100)) == "bid_too_low"
    assert g.refuse(2, bid(107)) == "bad_bid_step"
    g.act(2, bid(115))


def test_estonian_pass_is_final_and_bidding_ends_with_one_left() -> None:
    """Seed 001: "(Mängija, kes on öelnud "pass" ei oma õigust edasi pakkuda)". RULES.md §3: "A pass is final.
    Bidding ends when all but one have passed." """
    g = est3()
    g.run([(1, BLIND_NO), (1, bid(40)), (2, PASS), (0, bid(50))])
    assert g.to_act == 1  # seat 2 is skipped
    g.act(1, bid(60))
    assert g.to_act == 0
    g.act(0, PASS)
    assert g.deal.declarer == 1 and g.deal.contract == 60


def test_estonian_bid_above_120_needs_a_marriage_checked_silently() -> None:
    """Seed 001: "ilma paarita (sama masti emand+kuningas) saab pakkuda maksimum 120". RULES.md §3: "A bid
    above 120 needs a marriage in the bidder's hand at that moment. [decided] The program checks it; nothing
    is shown to the table." """
    g = est3()
    g.run([(1, BLIND_NO), (1, bid(40))])
    # seat 2 holds KS QS
    g.act(2, bid(125))
    assert all(e.cards == () for e in g.last)  # nothing shown
    assert g.refuse(0, bid(130)) == "bid_needs_marriage"
    assert list(g.legal(0)) == [PASS]  # seat 0 holds no marriage: 130 is out of reach


def test_estonian_no_cap_beyond_what_a_deal_can_give() -> None:
    """RULES.md §3: "There is no other cap." Engine decision (docs/RULES.md): bids are still limited to the
    most a deal can give, 120 + all marriage values = 400."""
    g = est3()
    g.act(1, BLIND_NO)
    assert g.legal(1)[-1] == bid(400)
    assert g.refuse(1, bid(405)) == "bid_too_high"
    g.act(1, bid(400))


def test_estonian_bid_is_never_lowered_and_there_is_no_contract_step() -> None:
    """Seed 001: "Pakkumist ei saa tagasi võtta." RULES.md §3: "A bid can never be withdrawn or lowered;
    there is
    no raising after the talon." """
    g = won_by_seat_1(est3(), 60)
    g.act(1, give({2: "9C", 0: "JC"}))
    assert g.deal.phase == "play" and g.deal.contract == 60
    assert g.refuse(1, contract(80)) == "wrong_phase"


# ---------------------------------------------------------------- talon


def test_estonian_talon_is_taken_without_showing_it() -> None:
    """RULES.md §3: "The declarer takes the talon into hand [decided] without showing it"."""
    g = won_by_seat_1(est3())
    talon = set(cs(TALON3))
    assert not [e for e in g.events if e.kind == ev.TALON_SHOWN]
    for e in g.last:
        if set(e.cards) & talon:
            assert e.audience == 1
    assert talon <= set(g.hand(1))


@pytest.mark.parametrize(("players", "after"), [(2, 12), (3, 8), (4, 6)])
def test_estonian_declarer_gives_one_card_to_each_other_player(players: int, after: int) -> None:
    """Seed 001: "peab ta andma enda lehtedest igale mängijale ühe lehe". RULES.md §3: "gives one card from
    hand,
    face down, to each other player. All then hold the same number of cards (12, 8 or 6)." """
    g = Game(EST, players, seed=3)
    g.act(g.to_act, BLIND_NO)
    opener = g.to_act
    g.act(opener, bid(40))
    while g.deal.phase == "bidding":
        g.act(g.to_act, PASS)
    assert g.deal.declarer == opener and g.deal.phase == "exchange"
    gift = g.legal(opener)[0]
    events = g.act(opener, gift)
    assert [len(g.hand(s)) for s in range(players)] == [after] * players
    for e in events:
        if e.kind == ev.CARD_GIVEN and e.cards:
            assert e.audience in (e.seat, e.value)


# ---------------------------------------------------------------- blind game


def test_estonian_blind_bidder_does_not_see_the_hand_until_bidding_ends() -> None:
    """Seed 001: "Temast järgmine mängija ei vaata oma kaarte." RULES.md §3: "They bid without seeing their
    hand
    until bidding ends"."""
    g = est3()
    g.act(1, BLIND_YES)
    g.run([(1, bid(40)), (2, bid(45)), (0, PASS)])
    assert not [e for e in g.events if e.kind == ev.HAND_DEALT and e.seat == 1]
    g.act(1, PASS)  # seat 2 wins; the blind player now sees the hand and the deal is played normally
    shown = [e for e in g.last if e.kind == ev.HAND_DEALT]
    assert [(e.seat, e.audience) for e in shown] == [(1, 1)]
    assert g.deal.declarer == 2 and g.deal.phase == "exchange"
    assert not g.state.deal.blind_seat >= 0
    g.act(2, g.legal(2)[0])
    g.play_out()
    assert g.state.results[-1].blind is False


def test_estonian_blind_bids_may_not_exceed_120() -> None:
    """RULES.md §3: "[decided] their bids may not exceed 120" — even with marriages in the unseen hand."""
    g = est3()
    g.act(1, BLIND_YES)  # seat 1 holds KH QH
    assert g.legal(1)[-1] == bid(120)
    assert g.refuse(1, bid(125)) == "blind_bid_too_high"
    g.run([(1, bid(40)), (2, bid(125))])
    g.act(0, PASS)
    assert list(g.legal(1)) == [PASS]
    assert g.refuse(1, bid(130)) == "blind_bid_too_high"


def test_estonian_blind_declarer_talon_goes_face_down_to_the_others_clockwise() -> None:
    """Seed 001: "Võites pakkumise, annab ta kaasmängijatele pimekaardid". RULES.md §3: "nobody looks at the
    talon and there is no exchange: [decided] the talon cards, in their order, go face down one each to the
    other players clockwise from the declarer's left, and the last one to the declarer." """
    g = won_by_seat_1(est3(), 60, blind=True)
    received = [e for e in g.last if e.kind == ev.CARD_RECEIVED]
    assert [(e.seat, e.audience, e.cards) for e in received] == [
        (2, 2, (c("KD"),)),
        (0, 0, (c("QD"),)),
        (1, 1, (c("JD"),)),
    ]
    assert not [e for e in g.last if e.kind in (ev.TALON_SHOWN, ev.TALON_TAKEN)]
    assert [len(g.hand(s)) for s in range(3)] == [8, 8, 8]
    assert g.deal.phase == "play" and g.to_act == 1
    hand_shown = [e for e in g.last if e.kind == ev.HAND_DEALT]
    assert [(e.seat, e.audience) for e in hand_shown] == [(1, 1)]
    assert c("JD") in hand_shown[0].cards


def test_estonian_blind_result_is_doubled() -> None:
    """Seed 001: "vastavalt täissaamisele lisatakse tema skoorile topeltkogus kas pluss- või miinuspunkte."
    RULES.md §3: "Their result for the deal is doubled: +2×contract or −2×contract." """
    made = won_by_seat_1(est3(), 40, blind=True)
    made.play_out()
    r = made.state.results[-1]
    assert r.blind and r.contract == 40
    assert r.scores[1] == (80 if r.made else -80)
    assert r.made is (r.points[1] >= 40)
    failed = won_by_seat_1(est3(), 120, blind=True)
    failed.play_out()
    r = failed.state.results[-1]
    assert r.contract == 120 and r.made is False and r.scores[1] == -240


# ---------------------------------------------------------------- crawl

NO_ACE = {1: "KH QH 9H 10H 9C JC QC", 2: "AS 10S KS QS 9S JS 9D", 0: "AC 10C KC JH AH AD 10D"}


def test_estonian_crawl_allowed_only_without_an_ace() -> None:
    """Seed 001: "pakkumise faasi võidab mängija, kes avastab, et ka pärast võidetud kaartide vaatamist, ei
    oma ta
    endiselt ässa." RULES.md §3: "if after the exchange the declarer holds no ace, they may choose to crawl on
    the first trick"."""
    g = won_by_seat_1(est3(NO_ACE, TALON3))
    g.act(1, give({2: "9C", 0: "JC"}))
    assert CRAWL in g.legal(1)
    with_ace = won_by_seat_1(est3())
    with_ace.act(1, give({2: "9C", 0: "JC"}))  # seat 1 keeps AH
    assert CRAWL not in with_ace.legal(1)
    assert with_ace.refuse(1, CRAWL) == "no_crawl"


def test_estonian_crawl_cards_face_down_no_duty_and_highest_of_declarers_suit_wins() -> None:
    """Seed 001: "Pakkumise võitja asetab lauale pimeda kaardi ... Nagu pakkuja, asetavad ka kaasmängijad
    lauale
    kaardid pimedalt. Kui kõik mängijad on visanud kaardid mängu, pööratakse naad nähtavaks." RULES.md §3:
    "every player plays one card face down, in the usual order (declarer first), with no duty to follow suit
    or trump; then the cards are turned up and the trick goes to the highest card of the suit of the
    declarer's card." """
    g = won_by_seat_1(est3(NO_ACE, TALON3))
    g.act(1, give({2: "9C", 0: "JC"}))
    events = g.act(1, CRAWL)
    assert [(e.kind, e.audience) for e in events] == [(ev.CRAWL, None)]
    assert CRAWL not in g.legal(1)
    events = g.act(1, play("9H"))
    assert [(e.kind, e.audience, e.cards) for e in events] == [
        (ev.CARD_PLAYED, None, ()),
        (ev.CARD_PLAYED, 1, (c("9H"),)),
    ]
    # seat 2 holds no heart; seat 0 holds JH AH: any card is allowed for both
    assert {a.card for a in g.legal(2)} == set(g.hand(2))
    g.act(2, play("AS"))
    assert {a.card for a in g.legal(0)} == set(g.hand(0))
    events = g.act(0, play("AC"))
    revealed = [e for e in events if e.kind == ev.CRAWL_REVEALED]
    assert revealed and revealed[0].audience is None
    assert revealed[0].cards == (c("9H"), c("AS"), c("AC")) and revealed[0].detail == (1, 2, 0)
    taken = next(e for e in events if e.kind == ev.TRICK_TAKEN)
    assert taken.seat == 1  # 9H is the only heart: highest of the declarer's suit
    assert not g.deal.crawl and g.to_act == 1


def test_estonian_crawl_trick_goes_to_the_higher_card_of_the_declarers_suit() -> None:
    """RULES.md §3: "the trick goes to the highest card of the suit of the declarer's card"."""
    g = won_by_seat_1(est3(NO_ACE, TALON3))
    g.act(1, give({2: "9C", 0: "JC"}))
    g.act(1, CRAWL)
    g.run([(1, play("10H")), (2, play("9D")), (0, play("AH"))])
    assert g.last[-1].kind == ev.TRICK_TAKEN and g.last[-1].seat == 0


def test_estonian_blind_declarer_may_crawl() -> None:
    """RULES.md §3: "A blind declarer may crawl too, judged on their hand after the talon was dealt out." """
    g = won_by_seat_1(est3(NO_ACE, "KD QD JD"), 40, blind=True)
    assert CRAWL in g.legal(1)
    hands = {1: "KH QH 9H 10H 9C JC QC", 2: "10S KS QS 9S JS 9D AS", 0: "AC 10C KC JH AH 10D KD"}
    with_ace = won_by_seat_1(est3(hands, "QD JD AD"), 40, blind=True)
    assert c("AD") in with_ace.hand(1)  # the last talon card went to the declarer
    assert CRAWL not in with_ace.legal(1)


# ---------------------------------------------------------------- calling trump


def in_play() -> Game:
    g = won_by_seat_1(est3())
    g.act(1, give({2: "9C", 0: "JC"}))
    return g


def test_estonian_calling_trump_is_a_choice() -> None:
    """Seed 001: "Trumbi hõikamiseks käib mängija välja emanda või kuninga sellest paarist ja ütleb "karjun"
    või
    "trump"." RULES.md §3: "They lead the K or Q and call; calling is a choice (the record's `declare`
    flag)." """
    g = in_play()
    g.play_tricks("AH 9D 9H")
    assert play("KH", declare=True) in g.legal(1) and play("KH") in g.legal(1)
    events = g.act(1, play("KH"))
    assert ev.MARRIAGE not in [e.kind for e in events] and g.deal.trump == -1
    g2 = in_play()
    g2.play_tricks("AH 9D 9H")
    events = g2.act(1, play("KH", declare=True))
    assert [e.kind for e in events][:3] == [ev.CARD_PLAYED, ev.MARRIAGE, ev.TRUMP]
    assert events[1].value == 60 and g2.deal.trump == 2


def test_estonian_calling_trump_not_before_a_trick_is_taken() -> None:
    """Seed 001: "4. Võetud on vähemalt üks tihi." RULES.md §3: "at least one trick of the deal has been
    taken"."""
    g = in_play()
    assert play("KH", declare=True) not in g.legal(1)
    assert g.refuse(1, play("KH", declare=True)) == "cannot_declare"


def test_estonian_calling_trump_only_on_lead_with_both_cards() -> None:
    """Seed 001: "2. Käes on korraga sama masti emand ja kuningas; 3. Tema kord käia." """
    g = in_play()
    g.play_tricks("AH 9D 9H")
    assert g.refuse(1, play("10H", declare=True)) == "cannot_declare"  # not a K or Q
    g.act(1, play("KD"))  # seat 1 holds QD and KD from the talon but does not call
    assert g.refuse(2, play("QS", declare=True)) == "cannot_declare"  # not on lead


def test_estonian_calling_trump_needs_at_least_three_cards() -> None:
    """Seed 001: "1. Käes on veel vähemalt kolm kaarti". RULES.md §3: "they have at least 3 cards in hand
    (counted
    before leading, the led card included)"."""
    hands = {1: "KH QH AH AS AC AD 10H", 2: "9S JS QS KS 10S 9D JD", 0: "9C JC QC KC 10C JH 9H"}
    g = Game(EST, 3, layout(EST, 3, 0, hands, "QD KD 10D"))
    won_by_seat_1(g, 60)
    g.act(1, give({2: "QD", 0: "KD"}))
    # seat 1 leads its aces and 10s, keeping KH QH to the end: 8 cards, tricks 1-6 take six of them
    g.play_tricks("AS 9S 9C")
    g.play_tricks("AC JS JC")
    g.play_tricks("AD 9D KD")
    g.play_tricks("10D JD JH")
    g.play_tricks("AH QS 9H")
    assert len(g.hand(1)) == 3  # 10H KH QH: three cards, may still call
    assert play("KH", declare=True) in g.legal(1)
    g.play_tricks("10H KS KC")
    assert len(g.hand(1)) == 2 and g.to_act == 1
    assert play("KH", declare=True) not in g.legal(1)
    assert g.refuse(1, play("KH", declare=True)) == "cannot_declare"


def test_estonian_marriage_values_clubs_100_spades_80_hearts_60_diamonds_40() -> None:
    """Seed 001: "Trumbi hõikamise punktid: risti trump – 100, poti trump – 80, ärtu trump – 60, ruutu trump –
    40." """
    assert [EST.marriage_value(s) for s in range(4)] == [100, 80, 60, 40]


def test_estonian_several_calls_each_change_trump() -> None:
    """Seed 001: "Karjuda saab võimalusel ka mitu korda mängu jooksul, kusjuures iga karjumisega muudetakse ka
    trumpi." """
    g = in_play()  # seat 1 holds KH QH and KD QD
    g.play_tricks("AH 9D 9H")
    g.act(1, play("QH", declare=True))
    g.play_tricks("9S JH")
    assert g.deal.trump == 2 and g.to_act == 1
    g.act(1, play("QD", declare=True))
    assert g.deal.trump == 3
    assert g.deal.marriages[1] == (2, 3)
    assert g.deal.taken[1] >= 60 + 40


# ---------------------------------------------------------------- four nines

NINES = {1: "KH QH AH 10H AC 10C QC", 2: "9C 9S 9H 9D AS 10S KS", 0: "JC KC JH AD 10D QS JS"}


def test_estonian_four_nines_as_dealt_give_100() -> None:
    """Seed 001: "4 üheksat korraga käes ühel mängijal annab talle kohe 100 punkti." RULES.md §3: "a player
    who
    at any moment of the deal ... holds all four nines gets a bonus of 100 once per deal"."""
    g = won_by_seat_1(est3(NINES, "KD QD JD"))
    g.play_out()
    r = g.state.results[-1]
    assert r.four_nines == (2,)
    assert r.scores[2] == r.points[2] + 100


def test_estonian_four_nines_after_taking_the_talon_count_once() -> None:
    """RULES.md §3: "at any moment of the deal (after the deal, after taking the talon, after the exchange)"
    ... "once per deal": held after taking the talon counts even if a nine is given away."""
    hands = {1: "9C 9S 9H AH 10H AC 10C", 2: "KH QH AS 10S KS QS JS", 0: "JC KC JH AD 10D QC JD"}
    g = won_by_seat_1(est3(hands, "9D KD QD"))
    g.act(1, give({2: "9D", 0: "9C"}))
    g.play_out()
    r = g.state.results[-1]
    assert r.four_nines == (1,)
    assert r.scores[1] == (60 if r.made else -60) + 100


def test_estonian_four_nines_after_the_exchange() -> None:
    """RULES.md §3: "(after the deal, after taking the talon, after the exchange)"."""
    hands = {1: "KH QH AH 10H AC 10C QC", 2: "9C 9S 9H AS 10S KS QS", 0: "JC KC JH AD 10D JS JD"}
    g = won_by_seat_1(est3(hands, "9D KD QD"))
    g.act(1, give({2: "9D", 0: "KD"}))
    g.play_out()
    r = g.state.results[-1]
    assert r.four_nines == (2,)
    assert r.scores[2] == r.points[2] + 100


def test_estonian_four_nines_do_not_count_toward_the_contract_and_are_not_doubled() -> None:
    """RULES.md §3: "The bonus is added to their score for the deal; it does not count toward a contract and
    is
    never doubled." """
    hands = {1: "9C 9S 9H 9D 10H AC 10C", 2: "KH QH AS 10S KS QS JS", 0: "JC KC JH AD 10D QC JD"}
    g = won_by_seat_1(est3(hands, "AH KD QD"), 120, blind=True)
    g.play_out()
    r = g.state.results[-1]
    assert r.four_nines == (1,) and r.blind
    assert r.made is (r.points[1] >= 120)
    assert r.scores[1] == (240 if r.made else -240) + 100
    assert sum(r.points) == 120 + sum(EST.marriage_value("CSHD".index(s)) for m in r.marriages for s in m)


def test_estonian_blind_players_unseen_hand_counts_for_four_nines() -> None:
    """RULES.md §3: "A blind player's unseen hand counts." (also when the blind player loses the bidding)"""
    hands = {1: "9C 9S 9H 9D 10H AC 10C", 2: "KH QH AS 10S KS QS JS", 0: "JC KC JH AD 10D QC JD"}
    g = est3(hands, "AH KD QD")
    g.run([(1, BLIND_YES), (1, bid(40)), (2, bid(45)), (0, PASS), (1, PASS)])
    g.play_out()
    r = g.state.results[-1]
    assert r.four_nines == (1,)
    assert r.scores[1] == r.points[1] + 100


def test_estonian_no_four_nines_bonus_on_the_barrel() -> None:
    """RULES.md §3: "a player whose total is 880 or more scores only as declarer: exactly ±contract ..., with
    no
    four-nines bonus; as a defender they score nothing." """
    g = Game(EST, 3, state=with_tally(est3(NINES, "KD QD JD").state, [0, 900, 900]))
    won_by_seat_1(g, 60)
    g.play_out()
    r = g.state.results[-1]
    assert r.scores[2] == 0  # four nines, but on the barrel as a defender
    assert r.scores[1] == (60 if r.made else -60)
    nines_declarer = {1: "9C 9S 9H 9D 10H AC 10C", 2: "KH QH AS 10S KS QS JS", 0: "JC KC JH AD 10D QC JD"}
    g2 = Game(EST, 3, state=with_tally(est3(nines_declarer, "AH KD QD").state, [0, 900, 0]))
    won_by_seat_1(g2, 40)
    g2.play_out()
    r2 = g2.state.results[-1]
    assert r2.scores[1] == (40 if r2.made else -40)


# ---------------------------------------------------------------- scoring


def test_estonian_defenders_score_exactly() -> None:
    """RULES.md §3: "Defenders score their deal points exactly (no rounding)." """
    seen_odd = False
    for seed in range(20):
        g = Game(EST, 3, seed=seed)
        g.play_out()
        r = g.state.results[-1]
        for s in range(3):
            if s != r.declarer:
                assert r.scores[s] == r.points[s] + (100 if s in r.four_nines else 0)
                seen_odd |= r.points[s] % 5 != 0
    assert seen_odd


def test_estonian_barrel_at_880_declarer_only() -> None:
    """Seed 001: "kui mängija on saanud täis 880 punkti läheb ta lõpufaasi ehk kotti ... ta ei saa enam võetud
    tihide eest punkte vaid ainult pakkumiste eest". RULES.md §3: "Barrel at 880"."""
    g = Game(EST, 3, state=with_tally(est3().state, [880, 879, 900]))
    won_by_seat_1(g, 60)
    g.play_out()
    r = g.state.results[-1]
    assert r.declarer == 1
    assert r.scores[0] == 0 and r.scores[2] == 0  # defenders at 880 and 900
    assert r.scores[1] == (60 if r.made else -60)  # 879: not on the barrel yet


def test_estonian_blind_declarer_on_the_barrel_still_doubles() -> None:
    """RULES.md §3: "scores only as declarer: exactly ±contract (doubled if blind)"."""
    g = Game(EST, 3, state=with_tally(est3().state, [0, 890, 0]))
    won_by_seat_1(g, 40, blind=True)
    g.play_out()
    r = g.state.results[-1]
    assert r.scores[1] == (80 if r.made else -80)


# ---------------------------------------------------------------- selling the talon (option)

SALE = preset("estonian", {"sell_talon": True})


def offered() -> Game:
    g = est3(rules=SALE)
    g.run([(1, BLIND_NO), (1, bid(60)), (2, PASS), (0, PASS)])
    assert g.deal.phase == "talon" and list(g.legal(1)) == [take(0), SELL]
    g.act(1, SELL)
    return g


def test_estonian_sale_offers_the_talon_face_up() -> None:
    """Seed 001: "Laste mängus saab panna lehed "müüki". Vaatad lehed ära, kui sulle ei sobi, saad panna
    müüki".
    RULES.md §3 and docs/RULES.md (`sell_talon`): the talon is turned face up for everyone."""
    g = offered()
    offer = [e for e in g.last if e.kind == ev.TALON_OFFERED]
    assert offer and offer[0].audience is None and set(offer[0].cards) == set(cs(TALON3))
    assert offer[0].value == 60
    assert g.deal.phase == "sale" and g.to_act == 2


def test_estonian_sale_buyer_bids_at_least_5_more_and_becomes_declarer() -> None:
    """Seed 001: "kui keegi soovib "osta" peab ta pakkuma üle sinu pakutud summa vähemalt 5 võrra". RULES.md
    §3:
    "another player may buy it by bidding at least 5 more, becoming declarer at that bid and taking the
    talon"."""
    g = offered()
    assert g.legal(2)[:2] == [PASS, bid(65)]
    assert g.refuse(2, bid(60)) == "bid_too_low"
    assert g.refuse(2, bid(62)) == "bad_bid_step"
    assert g.refuse(1, bid(65)) == "not_your_turn"
    g.act(2, bid(65))
    assert g.to_act == 0
    g.act(0, bid(70))
    assert g.to_act == 2  # the seller does not bid in the sale
    g.act(2, PASS)
    assert g.deal.declarer == 0 and g.deal.contract == 70
    assert set(cs(TALON3)) <= set(g.hand(0))
    bought = [e for e in g.last if e.kind == ev.TALON_BOUGHT]
    assert bought and (bought[0].seat, bought[0].value) == (0, 70)
    assert g.deal.phase == "exchange" and g.to_act == 0


def test_estonian_sale_without_buyer_seller_plays_on() -> None:
    """Seed 001: "Kui keegi ei osta, pead proovima ise skoori kokku saada." """
    g = offered()
    g.run([(2, PASS), (0, PASS)])
    assert g.deal.declarer == 1 and g.deal.contract == 60
    assert set(cs(TALON3)) <= set(g.hand(1)) and g.deal.phase == "exchange"


def test_estonian_sale_is_off_in_the_preset() -> None:
    """RULES.md §3: "Selling the talon (the seed's "children's game"; option, off in the preset)"."""
    g = won_by_seat_1(est3())
    assert g.deal.phase == "exchange"
    assert g.refuse(1, SELL) == "wrong_phase"


def test_estonian_hand_events_are_private() -> None:
    """DESIGN: "Every event carries its audience: everyone, or one seat (a hand, the talon seen by the
    declarer, a card given)"."""
    g = won_by_seat_1(est3())
    for e in g.events:
        if e.kind == ev.HAND_DEALT:
            assert e.audience == e.seat and cards_of(g.state.layout.hands[e.seat]) == e.cards
