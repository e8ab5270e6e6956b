"""Preset `polish` (seed 000, the GameDesire rules of Tysiąc; RULES.md section 2)."""

from __future__ import annotations

import pytest
from dealkit import BOMB, PASS, Game, bid, c, contract, discard, give, layout, play, take, with_tally

from core import events as ev
from core.actions import PLAYS_DECLARING, Bomb
from core.cards import CARD_POINTS, cards_of, mask_of
from core.game import replace_deal
from core.rules import preset

POLISH = preset("polish")

# Dealer 0: seat 1 opens automatically at 100, seat 2 bids first, then seat 0.
HANDS3 = {1: "KH QH AH 10H AC KC 9C", 2: "AS 10S KS QS 9S JS 9D", 0: "JC QC 10C JH 9H AD 10D"}
TALON3 = "KD QD JD"


def polish3(hands: dict[int, str] | None = None, talon: str | None = None, rules: object = POLISH) -> Game:
    return Game(rules, 3, layout(rules, 3, 0, hands or HANDS3, talon or TALON3))  # type: ignore[arg-type]


# ---------------------------------------------------------------- bidding


def test_polish_opener_left_of_dealer_opens_automatically_at_100() -> None:
    """Seed 000: "Teklif verme daima dağıtanın solundaki oyuncu tarafından 100 puanla başlar." RULES.md §2:
    "The player left of the dealer opens automatically at 100 (it is not an action of theirs)"."""
    g = polish3()
    opening = [e for e in g.events if e.kind == ev.BID]
    assert len(opening) == 1
    assert (opening[0].seat, opening[0].value, opening[0].detail, opening[0].audience) == (
        1,
        100,
        "automatic",
        None,
    )
    assert g.deal.bid == 100 and g.deal.bidder == 1
    assert g.to_act == 2
    assert g.legal(1) == ()


def test_polish_bids_are_higher_multiples_of_10() -> None:
    """Seed 000: "Oyuncular teklifi 10'un katlarınca artırabilirler." RULES.md §2: "each either bids a higher
    multiple of 10 or passes"."""
    g = polish3()
    assert g.legal(2)[:3] == (PASS, bid(110), bid(120)) or list(g.legal(2)[:3]) == [PASS, bid(110), bid(120)]
    assert g.refuse(2, bid(105)) == "bad_bid_step"
    assert g.refuse(2, bid(100)) == "bid_too_low"
    assert g.refuse(2, bid(90)) == "bid_too_low"
    g.act(2, bid(120))
    assert g.refuse(0, bid(120)) == "bid_too_low"
    assert [a for a in g.legal(0)] == [PASS]  # seat 0 holds no marriage: 120 is its most


def test_polish_pass_is_final() -> None:
    """RULES.md §2: "A pass is final." A seat that passed is never asked again."""
    g = polish3()
    g.act(2, PASS)
    g.act(0, bid(110))
    assert g.to_act == 1  # seat 2 is skipped
    g.act(1, bid(120))
    assert g.to_act == 0
    assert g.refuse(2, bid(130)) == "not_your_turn"


def test_polish_bidding_ends_when_all_but_one_passed() -> None:
    """RULES.md §2: "Bidding ends when all but one have passed; that one is the declarer." """
    g = polish3()
    g.run([(2, bid(110)), (0, PASS), (1, PASS)])
    won = [e for e in g.last if e.kind == ev.BIDDING_WON]
    assert won and won[0].seat == 2 and won[0].value == 110 and won[0].detail is False
    assert g.deal.declarer == 2 and g.deal.contract == 110


def test_polish_forced_100_when_everyone_passes() -> None:
    """Seed 000: "eğer kimse teklif vermezse ilk oyuncu 100 puanlık teklif vermek zorundadır". RULES.md §2:
    "If every other player passes without anyone having bid, the opener is declarer at 100: the forced
    100." """
    g = polish3()
    g.run([(2, PASS), (0, PASS)])
    won = next(e for e in g.last if e.kind == ev.BIDDING_WON)
    assert (won.seat, won.value, won.detail) == (1, 100, True)
    assert g.deal.forced


def test_polish_bid_above_120_needs_a_marriage() -> None:
    """Seed 000: "Teklifler oyuncu bir çifte sahip olmadığı sürece 120'den yüksek olamaz". RULES.md §2: "A bid
    above 120 needs a marriage in the bidder's hand"."""
    g = polish3()
    g.act(2, PASS)
    assert g.refuse(0, bid(130)) == "bid_needs_marriage"
    assert g.legal(0)[-1] == bid(120)


def test_polish_cap_is_120_plus_the_marriages_in_hand() -> None:
    """Seed 000: "oyuncu 120 (tüm kartların toplamı) artı oyuncuların karıştırmalarının miktarı kadar teklif
    verebilir." RULES.md §2: "the most a player may bid is 120 plus the values of the marriages in their hand
    at that moment"."""
    g = polish3()
    # seat 2 holds KS QS (40): at most 160
    assert g.legal(2)[-1] == bid(160)
    assert g.refuse(2, bid(170)) == "bid_too_high"
    g.act(2, bid(160))
    # seat 0 holds no marriage, seat 1 holds KH QH (100): at most 220
    g.act(0, PASS)
    assert g.legal(1)[-1] == bid(220)
    assert g.refuse(1, bid(230)) == "bid_too_high"


def test_polish_absolute_cap_300_with_three_players() -> None:
    """Seed 000: "3 kişi oynarken 300 puana kadar çıkılabilir." RULES.md §2: "Absolute caps: 360 with 2
    players,
    300 with 3 (and 4)." """
    hands = {2: "KH QH KD QD KC QC 9S", 1: "AH 10H AD 10D AC 10C 9H", 0: "KS QS AS 10S JS JH JD"}
    g = polish3(hands, "JC 9C 9D")
    assert g.legal(2)[-1] == bid(300)  # 120 + 100 + 80 + 60 = 360, capped
    assert g.refuse(2, bid(310)) == "bid_too_high"
    g.act(2, bid(300))


def test_polish_absolute_cap_300_with_four_players() -> None:
    """RULES.md §2: "Absolute caps: 360 with 2 players, 300 with 3 (and 4)." """
    hands = {2: "KH QH KD QD KC QC 9S", 1: "AH 10H AD 10D AC 10C 9H", 3: "KS QS AS 10S JS JH JD"}
    g = Game(POLISH, 4, layout(POLISH, 4, 0, hands, "JC 9C 9D"))
    assert g.to_act == 2
    assert g.legal(2)[-1] == bid(300)
    assert g.refuse(2, bid(310)) == "bid_too_high"


def test_polish_absolute_cap_360_with_two_players() -> None:
    """Seed 000: "2 oyuncu varken 360 puana kadar çıkmam mümkündür." RULES.md §2: "Absolute caps: 360 with 2
    players"."""
    hands = {0: "KH QH KD QD KC QC KS QS 9H 9D"}
    g = Game(POLISH, 2, layout(POLISH, 2, 0, hands, piles=("AH 10H", "AD 10D")))
    assert g.deal.opener == 1 and g.to_act == 0  # dealer 0: seat 1 opened with 100, seat 0 bids
    assert g.legal(0)[-1] == bid(360)  # 120 + 280 = 400, capped at 360
    assert g.refuse(0, bid(370)) == "bid_too_high"
    g.act(0, bid(360))


# ---------------------------------------------------------------- musik, 3 players


def test_polish_musik_is_shown_to_everyone_after_a_bid() -> None:
    """Seed 000: "3 oyuncu olduğunda teklifi kazanan 3 kartlık Zorunlu kağıtları alır. Daha sonra Zorunlu
    kağıtların ters çevrilir ve oyunculara gösterilir." RULES.md §2: "It is shown to everyone"."""
    g = polish3()
    g.run([(2, bid(110)), (0, PASS), (1, PASS)])
    shown = [e for e in g.last if e.kind == ev.TALON_SHOWN]
    assert len(shown) == 1 and shown[0].audience is None
    assert set(shown[0].cards) == set(cs_("KD QD JD"))
    assert set(g.hand(2)) >= set(cs_("KD QD JD"))
    assert len(g.hand(2)) == 10 and g.deal.phase == "exchange"


def cs_(text: str) -> list[int]:
    return [c(t) for t in text.split()]


def test_polish_forced_100_talon_seen_only_by_declarer() -> None:
    """Seed 000: "eğer kimse teklif vermezse ilk oyuncu 100 puanlık teklif vermek zorundadır ve sadece o
    Zorunlu kağıtları görebilir." RULES.md §2: "except after a forced 100, when only the declarer sees it"."""
    g = polish3()
    g.run([(2, PASS), (0, PASS)])
    talon = set(cs_(TALON3))
    for e in g.last:
        if set(e.cards) & talon:
            assert e.audience == 1, e
    private = [e for e in g.last if e.kind == ev.TALON_TAKEN and e.audience == 1]
    assert private and set(private[0].cards) == talon
    assert not [e for e in g.last if e.kind == ev.TALON_SHOWN]
    public_taken = [e for e in g.last if e.kind == ev.TALON_TAKEN and e.audience is None]
    assert public_taken and public_taken[0].cards == ()


def test_polish_declarer_gives_one_card_face_down_to_each_so_all_hold_8() -> None:
    """Seed 000: "Zorunlu kağıtları alan oyuncu diğer oyunculara 2 kart vermek zorundadır ve böylelikle diğer
    oyuncularda 8 adet kart olur." RULES.md §2: "The declarer then gives one card, face down, to each other
    player, so that all hold 8." """
    g = polish3()
    g.run([(2, bid(110)), (0, PASS), (1, PASS)])
    events = g.act(2, give({0: "9D", 1: "JD"}))
    assert [len(g.hand(s)) for s in range(3)] == [8, 8, 8]
    assert c("9D") in g.hand(0) and c("JD") in g.hand(1)
    given = [e for e in events if e.kind == ev.CARD_GIVEN]
    for e in given:
        if e.cards:
            assert e.audience in (e.seat, e.value)  # only giver and receiver see the card
        else:
            assert e.audience is None
    assert {(e.value, e.audience) for e in given if e.cards} == {(0, 0), (0, 2), (1, 1), (1, 2)}


def test_polish_give_refusals() -> None:
    """RULES.md §2: one card "to each other player": anything else is refused (bad_give, card_not_in_hand)."""
    g = polish3()
    g.run([(2, bid(110)), (0, PASS), (1, PASS)])
    assert g.refuse(2, give({0: "9D"})) == "bad_give"
    assert g.refuse(2, give({0: "9D", 2: "JD"})) == "bad_give"
    assert g.refuse(2, give({0: "9D", 1: "9D"})) == "bad_give"
    assert g.refuse(2, give({0: "9D", 1: "AH"})) == "card_not_in_hand"
    assert g.refuse(0, give({1: "JC", 2: "QC"})) == "not_your_turn"
    assert give({0: "9D", 1: "JD"}) in g.legal(2)


# ---------------------------------------------------------------- contract step


def test_polish_contract_step_keeps_or_raises_the_bid() -> None:
    """RULES.md §2: "After the exchange the declarer fixes the final contract [decided, from the GameDesire
    rules the seed translates]: the current bid, or a higher multiple of 10 under the same caps, counting
    the marriages in hand now. Keeping the bid is always allowed. This is an explicit step"."""
    g = polish3()
    g.run([(2, PASS), (0, PASS)])  # forced 100: seat 1 took KD QD JD, now holds KH QH and KD QD
    g.act(1, give({2: "JD", 0: "9C"}))
    assert g.deal.phase == "contract" and g.to_act == 1
    legal = list(g.legal(1))
    assert legal[0] == contract(100)
    assert legal[-1] == contract(300)  # 120 + 100 + 80 = 300 (also the cap)
    assert g.refuse(1, contract(90)) == "contract_too_low"
    assert g.refuse(1, contract(105)) == "bad_bid_step"
    assert g.refuse(1, contract(310)) == "contract_too_high"
    events = g.act(1, contract(250))
    assert [e.kind for e in events] == [ev.CONTRACT]
    assert events[0].value == 250 and events[0].audience is None
    assert g.deal.contract == 250 and g.deal.phase == "play"


def test_polish_contract_counts_marriages_in_hand_after_the_exchange() -> None:
    """RULES.md §2: "counting the marriages in hand now": a marriage given away no longer counts, but
    keeping the bid is always allowed."""
    g = polish3()
    g.run([(2, bid(160)), (0, PASS), (1, PASS)])  # seat 2 bid 160 on KS QS
    g.act(2, give({0: "KS", 1: "KD"}))  # gives the king of spades away; keeps QD from the musik only
    assert list(g.legal(2)) == [contract(160)]
    assert g.refuse(2, contract(170)) == "contract_too_high"
    g.act(2, contract(160))


# ---------------------------------------------------------------- bomb


def forced_for_seat_1() -> Game:
    g = polish3()
    g.run([(2, PASS), (0, PASS)])
    return g


def test_polish_bomb_only_as_declarer_of_forced_100() -> None:
    """Seed 000: "Bu iki oyuncu geçtiğinde ve biri 100 puan teklif vermek zorunda kaldığında kullanılabilir."
    RULES.md §2: "only as the declarer of a forced 100, after seeing the musik and before giving cards"."""
    g = forced_for_seat_1()
    assert BOMB in g.legal(1)
    raised = polish3()
    raised.run([(2, PASS), (0, PASS)])
    bid_won = polish3()
    bid_won.run([(2, bid(110)), (0, PASS), (1, PASS)])
    assert BOMB not in bid_won.legal(2)
    assert bid_won.refuse(2, BOMB) == "no_bomb"
    # after the cards are given it is too late
    g.act(1, give({2: "JD", 0: "9C"}))
    assert g.refuse(1, BOMB) == "wrong_phase"


def test_polish_bomb_deal_is_not_played_bomber_0_others_60() -> None:
    """Seed 000: "Eğer oyuncu bir bomba kullanmaya karar verirse oyun başlamaz. Oyuncu artı ya da eksi puan
    almaz. Diğer iki oyuncu 60'şar puan alır." RULES.md §2: "The deal's contract is reported as 100"."""
    g = forced_for_seat_1()
    g.act(1, BOMB)
    r = g.state.results[-1]
    assert (r.ending, r.declarer, r.contract, r.made) == ("bomb", 1, 100, None)
    assert r.points == (0, 0, 0)
    assert r.scores == (60, 0, 60)
    assert g.state.deal_number == 1 and g.deal.dealer == 1


def test_polish_bomb_gives_nothing_to_a_player_on_the_barrel() -> None:
    """RULES.md §2: "each other player +60 (nothing for a player on the barrel)"."""
    g = Game(POLISH, 3, state=with_tally(polish3().state, [810, 0, 100]))
    g.run([(2, PASS), (0, PASS), (1, BOMB)])
    assert g.state.results[-1].scores == (0, 0, 60)


def test_polish_bomb_once_per_game() -> None:
    """Seed 000: "3 oyuncu oyunu oynarken, her oyuncu bir defa bomba kullanabilir." RULES.md §2: "each
    player may bomb once per game"."""
    g = forced_for_seat_1()
    g.act(1, BOMB)
    # deal 2 (dealer 1, opener 2) and deal 3 (dealer 2, opener 0): others may still bomb
    for opener in (2, 0):
        g.act(g.to_act, PASS)
        g.act(g.to_act, PASS)
        assert g.deal.declarer == opener and BOMB in g.legal(opener)
        g.play_out()
    # deal 4: seat 1 opens again, forced again, but has bombed already
    assert g.deal.dealer == 0
    state, _ = replace_deal(g.state, layout(POLISH, 3, 0, HANDS3, TALON3))
    g = Game(POLISH, 3, state=state)
    g.run([(2, PASS), (0, PASS)])
    assert g.deal.forced and g.deal.declarer == 1
    assert BOMB not in g.legal(1)
    assert g.refuse(1, BOMB) == "no_bomb"


@pytest.mark.parametrize("players", [2, 4])
def test_polish_bomb_only_in_the_three_player_game(players: int) -> None:
    """RULES.md §2: "Bomb (only in the 3-player game, not with 4)"."""
    g = Game(POLISH, players, seed=3)
    while g.deal.phase == "bidding":
        g.act(g.to_act, PASS)
    assert g.deal.forced
    while g.deal.phase in ("talon", "discard"):
        g.act(g.to_act, g.legal()[0])
    assert not any(isinstance(a, Bomb) for a in g.legal())
    assert g.refuse(g.to_act, BOMB) in ("no_bomb", "wrong_phase")


# ---------------------------------------------------------------- two players, two musiki


def polish2() -> Game:
    hands = {0: "KH QH AH 10H 9C JC QC KC AC 10C", 1: "AS 10S KS QS 9S JS 9H JH 9D JD"}
    return Game(POLISH, 2, layout(POLISH, 2, 1, hands, piles=("KD QD", "AD 10D")))


def test_polish_two_players_ten_cards_and_two_musiki_of_two() -> None:
    """Seed 000: "2 oyuncu oyunu oynarken her oyuncu başlangıçta 10 kart alır. Kalan 4 kart her birinde 2 kart
    bulunan 2 adet zorunlu kağıtları oluşturur." """
    g = Game(POLISH, 2, seed=11)
    assert [len(g.hand(s)) for s in range(2)] == [10, 10]
    assert g.deal.piles is not None and [len(p) for p in g.deal.piles] == [2, 2]


def test_polish_two_players_declarer_takes_one_musik_unseen_and_lays_two_cards() -> None:
    """Seed 000: "2 oyuncu varken teklifin kazananı Zorunlu kağıtların birini alır ... Daha sonra elinden iki
    kartı alır ve yerlerini değiştirmek için onları masaya yüzü dönük biçimde koyar." RULES.md §2: "takes
    it into hand [decided] unseen by the opponent, then lays 2 cards from hand face down in its place"."""
    g = polish2()
    g.act(1, PASS)  # forced 100 for seat 0
    assert g.deal.phase == "talon" and list(g.legal(0)) == [take(0), take(1)]
    assert g.refuse(0, take(2)) == "no_such_pile"
    events = g.act(0, take(1))
    musik = set(cs_("AD 10D"))
    for e in events:
        if set(e.cards) & musik:
            assert e.audience == 0
    assert musik <= set(g.hand(0)) and len(g.hand(0)) == 12
    assert g.deal.phase == "discard"
    assert g.refuse(0, discard("9C")) == "bad_discard"
    assert g.refuse(0, discard("9C 9S")) == "card_not_in_hand"
    assert discard("9C JC") in g.legal(0)
    events = g.act(0, discard("9C JC"))
    assert all(not e.cards or e.audience == 0 for e in events)
    assert len(g.hand(0)) == 10
    assert g.deal.phase == "contract"


def test_polish_two_players_last_trick_takes_both_piles() -> None:
    """Seed 000: "2 oyuncu olduğunda son eli kim alırsa zorunlu kağıtlardaki kartların puanını o kişi alır."
    RULES.md §2: "whoever takes the last trick adds the card points of both piles to their deal points"."""
    g = polish2()
    g.run([(1, PASS), (0, take(1)), (0, discard("9C JC")), (0, contract(100))])
    g.play_out()
    piles_events = [e for e in g.events if e.kind == ev.PILES_TAKEN]
    assert len(piles_events) == 1
    pe = piles_events[0]
    assert pe.audience is None and set(pe.cards) == set(cs_("KD QD 9C JC"))
    assert pe.value == sum(CARD_POINTS[x] for x in cs_("KD QD 9C JC"))
    tricks = [e for e in g.events if e.kind == ev.TRICK_TAKEN]
    assert pe.seat == tricks[-1].seat
    r = g.state.results[-1]
    marriages = sum(POLISH.marriage_value("CSHD".index(s)) for m in r.marriages for s in m)
    assert sum(r.points) == 120 + marriages


def test_polish_two_players_discard_refuses_cards_not_held() -> None:
    """RULES.md §2: "lays 2 cards from hand face down" — exactly two different cards of the hand."""
    g = polish2()
    g.run([(1, PASS), (0, take(0))])
    assert g.refuse(0, discard("9C 9C")) == "bad_discard"
    assert g.refuse(0, discard("9C JC QC")) == "bad_discard"
    assert g.refuse(0, discard("AD 9C")) == "card_not_in_hand"


# ---------------------------------------------------------------- four players


def test_polish_four_players_dealer_sits_out() -> None:
    """RULES.md §2: "4 players [decided, from Polish sources]: the dealer sits out of the deal; the other
    three play as in the 3-player game (7 each, musik of 3), bidding starting left of the dealer." """
    g = Game(POLISH, 4, seed=21)
    dealer = g.deal.dealer
    assert g.hand(dealer) == []
    assert not [e for e in g.events if e.kind == ev.HAND_DEALT and e.seat == dealer]
    assert sorted(len(g.hand(s)) for s in range(4)) == [0, 7, 7, 7]
    assert len(g.deal.talon) == 3
    assert g.deal.opener == (dealer + 1) % 4
    assert g.to_act == (dealer + 2) % 4
    seen = set()
    while g.state.deal_number == 0:
        seen.add(g.to_act)
        g.act(g.to_act, g.legal()[0])
    assert dealer not in seen


def test_polish_four_players_sit_out_scores_aces_and_marriage_in_musik() -> None:
    """RULES.md §2: "In the 4-player game the dealer who sat out scores [decided, from Polish sources] 50 for
    each ace in the musik as dealt plus the value of a marriage lying in it." """
    g = Game(POLISH, 4, layout(POLISH, 4, 3, {}, "AH KD QD"))
    g.play_out()
    r = g.state.results[-1]
    assert r.points[3] == 0 and r.marriages[3] == ()
    assert r.scores[3] == 50 + 80
    g2 = Game(POLISH, 4, layout(POLISH, 4, 3, {}, "AH AD 9C"))
    g2.play_out()
    assert g2.state.results[-1].scores[3] == 100
    g3 = Game(POLISH, 4, layout(POLISH, 4, 3, {}, "JH 9C 10D"))
    g3.play_out()
    assert g3.state.results[-1].scores[3] == 0


# ---------------------------------------------------------------- marriages


def in_play(hands: dict[int, str] | None = None, talon: str | None = None) -> Game:
    g = polish3(hands, talon)
    g.run([(2, PASS), (0, PASS), (1, give({2: "JD", 0: "9C"})), (1, contract(100))])
    return g


def test_polish_marriage_is_declared_automatically_by_leading_k_or_q() -> None:
    """Seed 000: "Evlilikler (çiftler) Kızı ya da Papazı atarak otomatik olarak belirlenir." RULES.md §2: "In
    this preset declaring is automatic: leading such a card whenever declaring is allowed declares the
    marriage." """
    g = in_play()
    g.play_tricks("AC QS JC")
    assert g.to_act == 1
    assert not any(a == PLAYS_DECLARING[c("KH")] for a in g.legal(1))  # one action per card
    events = g.act(1, play("QH"))
    assert [e.kind for e in events][:3] == [ev.CARD_PLAYED, ev.MARRIAGE, ev.TRUMP]
    assert events[1].value == 100 and g.deal.trump == 2


def test_polish_declare_flag_is_ignored() -> None:
    """replay-format.md: a `declare: true` that cannot declare is illegal, "except in `polish`, where
    declaring is automatic and the flag is ignored"."""
    g = in_play()
    g.act(1, play("AC", declare=True))  # first trick, not a K or Q: ignored
    g.act(2, play("QS", declare=True))  # not on lead: ignored
    g.act(0, play("JC"))
    assert g.deal.marriages == [(), (), ()]


def test_polish_no_marriage_on_the_first_trick() -> None:
    """RULES.md §2: "and [decided] not on the first trick of the deal"."""
    g = in_play()
    events = g.act(1, play("KH"))
    assert ev.MARRIAGE not in [e.kind for e in events]
    assert g.deal.trump == -1
    g.act(2, play("9D"))
    g.act(0, play("JH"))
    # KH won the trick; QH led now is no marriage either: the king is gone
    events = g.act(1, play("QH"))
    assert ev.MARRIAGE not in [e.kind for e in events]


def test_polish_marriage_values_hearts_100_diamonds_80_clubs_60_spades_40() -> None:
    """Seed 000: "♥ Kupalar: 100 puan • ♦ Karolar: 80 puan • ♣ Sinekler: 60 puan • ♠ Maçalar: 40 puan"."""
    assert [POLISH.marriage_value(s) for s in range(4)] == [60, 40, 100, 80]
    g = in_play()  # seat 1 holds KH QH and, from the musik, KD QD
    g.play_tricks("AC QS JC")
    g.act(1, play("KD"))
    assert g.deal.taken[1] == 11 + 3 + 2 + 80
    assert g.deal.trump == 3


def test_polish_marriage_needs_the_partner_in_hand_and_the_lead() -> None:
    """RULES.md §2: "A marriage can only be declared by the player on lead, by leading its K or Q while
    holding the other card". Playing a Q as a follower declares nothing."""
    hands = {1: "KH 9H AH 10H AC 10C 9C", 2: "AS 10S KS QS 9S JS 9D", 0: "JC QC KC JH QH AD 10D"}
    g = in_play(hands)
    g.play_tricks("AC 9D JC")
    events = g.act(1, play("KH"))  # partner QH is with seat 0
    assert ev.MARRIAGE not in [e.kind for e in events]
    g.act(2, play("9S"))
    events = g.act(0, play("QH"))  # seat 0 holds KC QC too, but does not lead
    assert ev.MARRIAGE not in [e.kind for e in events]
    assert g.deal.marriages == [(), (), ()]


# ---------------------------------------------------------------- scoring


def test_polish_defenders_score_points_rounded_to_5() -> None:
    """Seed 000: "Puanlar her dağıtmadan sonra toplanır ve 5'in katlarına yuvarlanır." RULES.md §2:
    "Defenders score their deal points rounded to the nearest multiple of 5 (a remainder of 1 or 2 rounds
    down, 3 or 4 rounds up)." """
    checked = 0
    for seed in range(30):
        g = Game(POLISH, 3, seed=seed)
        g.play_out()
        r = g.state.results[-1]
        if r.ending != "played":
            continue
        for s in range(3):
            if s == r.declarer:
                assert r.scores[s] == (r.contract if r.made else -r.contract)
            else:
                p = r.points[s]
                expected = p - p % 5 if p % 5 <= 2 else p + 5 - p % 5
                assert r.scores[s] == expected
                checked += p % 5 != 0
    assert checked


def test_polish_barrel_at_800_scores_only_as_declarer() -> None:
    """Seed 000: "Bu durum oyunculardan biri 800 puan aldığında değişir. Bu durumda oyuncu yalnızca teklifi
    kazanırsa artı puan alabilir." RULES.md §2: "a player whose total is 800 or more scores only as declarer
    (±contract). As a defender ... they score 0"."""
    base = in_play().state
    g = Game(POLISH, 3, state=with_tally(polish3().state, [800, 850, 790]))
    g.run([(2, PASS), (0, PASS), (1, give({2: "JD", 0: "9C"})), (1, contract(100))])
    g.play_out()
    r = g.state.results[-1]
    assert r.scores[0] == 0  # defender at 800
    assert r.scores[1] == (100 if r.made else -100)  # declarer at 850
    p = r.points[2]
    assert r.scores[2] == (p - p % 5 if p % 5 <= 2 else p + 5 - p % 5)  # 790: not on the barrel
    assert base.deal.contract == 100


def test_polish_no_penalty_for_staying_on_the_barrel() -> None:
    """RULES.md §2: "There is no limit on the number of deals on the barrel and no penalty for staying
    there." """
    g = Game(POLISH, 3, state=with_tally(Game(POLISH, 3, seed=2).state, [820, 830, 840]))
    before = g.state.totals
    defender_deals = 0
    for _ in range(4):
        g.play_out()
        r = g.state.results[-1]
        for s in range(3):
            if before[s] >= 800 and s != r.declarer:
                assert r.scores[s] == 0
                defender_deals += 1
        before = r.totals
        if g.state.finished:
            break
    assert defender_deals >= 4


def test_polish_hand_masks_are_private() -> None:
    """DESIGN: "Every event carries its audience ... a hand" — each dealt hand goes only to its seat."""
    g = polish3()
    dealt = [e for e in g.events if e.kind == ev.HAND_DEALT]
    assert sorted(e.seat for e in dealt) == [0, 1, 2]
    for e in dealt:
        assert e.audience == e.seat
        assert mask_of(e.cards) == g.deal.hands[e.seat]
        assert cards_of(mask_of(e.cards)) == e.cards
