"""Options beyond the presets (RULES.md section 5) and preset options switched the other way."""

from __future__ import annotations

import pytest
from dealkit import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CRAWL,
    PASS,
    SELL,
    Game,
    bid,
    contract,
    cs,
    give,
    layout,
    play,
    take,
    with_tally,
)

from core import events as ev
from core.rules import preset

RUS_HANDS = {1: "KH QH AH 10H AC 10C KC", 2: "9H JH AS 10S KS QS JS", 0: "9C JC QC 9S AD 10D KD"}
RUS_TALON = "QD JD 9D"

# ---------------------------------------------------------------- ace marriage

ACES = {1: "AC AS AH AD KH 10H 9C", 2: "KS QS 10S JS 9S 9H JH", 0: "KC QC 10C JC QH KD 10D"}
ACES_TALON = "QD JD 9D"


def aces_game(name: str = "russian", **options: object) -> Game:
    rules = preset(name, {"ace_marriage": True, **options})
    return Game(rules, 3, layout(rules, 3, 0, ACES, ACES_TALON))


def test_ace_marriage_declared_by_leading_an_ace_worth_200_without_trump() -> None:
    """RULES.md §5: "ace marriage (four aces held by a player on lead, worth 200, no trump)". docs/RULES.md:
    "declared by leading an ace while holding all four (same conditions as marriages)"."""
    g = aces_game()
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])
    g.play_tricks("KH JH QH")  # first trick: KH wins, no marriage possible yet
    assert g.to_act == 1
    assert play("AC", declare=True) in g.legal(1)
    events = g.act(1, play("AC", declare=True))
    marriage = [e for e in events if e.kind == ev.MARRIAGE]
    assert marriage and (marriage[0].value, marriage[0].detail) == (200, "A")
    assert ev.TRUMP not in [e.kind for e in events]
    assert g.deal.trump == -1
    g.play_out()
    r = g.state.results[-1]
    assert r.marriages[1] == ("A",)
    assert sum(r.points) == 120 + 200


def test_ace_marriage_once_per_deal_and_not_on_the_first_trick() -> None:
    """docs/RULES.md (`ace_marriage`): "under the same conditions as a marriage (on lead, not on the first
    trick ...) ... can be declared once per deal"."""
    g = aces_game()
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])
    assert g.refuse(1, play("AC", declare=True)) == "cannot_declare"
    g.play_tricks("KH JH QH")
    g.act(1, play("AC", declare=True))
    g.play_tricks("JS JC")
    assert g.to_act == 1
    assert play("AS", declare=True) not in g.legal(1)
    assert g.refuse(1, play("AS", declare=True)) == "cannot_declare"


def test_ace_marriage_is_automatic_where_declaring_is() -> None:
    """docs/RULES.md (`ace_marriage`): "automatic or by choice as `declaration` says"."""
    g = aces_game("polish")
    g.run([(2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])
    g.play_tricks("KH JH QH")
    events = g.act(1, play("AD"))
    assert [(e.value, e.detail) for e in events if e.kind == ev.MARRIAGE] == [(200, "A")]


def test_ace_marriage_counts_as_a_marriage_for_bidding() -> None:
    """docs/RULES.md: "counts as a marriage for bidding (`marriage_needed_above`, `cap_by_marriages`)"; the
    most a deal can give grows by 200."""
    g = aces_game()
    assert g.legal(1)[-1] == bid(600)  # no other marriage in hand: 120 + 280 + 200
    g.act(1, bid(125))
    plain = Game(preset("russian"), 3, layout(preset("russian"), 3, 0, ACES, ACES_TALON))
    assert plain.refuse(1, bid(125)) == "bid_needs_marriage"
    polish = aces_game("polish")
    polish.act(2, PASS)
    # seat 0 holds KC QC (60); seat 1 would hold 200: in polish 120 + 200 = 320, capped at 300
    polish.act(0, PASS)
    polish.act(1, give({2: "9D", 0: "JD"}))  # forced 100; seat 1 keeps its aces
    assert list(polish.legal(1))[-1] == contract(300)


# ---------------------------------------------------------------- samosval


def test_samosval_total_of_exactly_555_becomes_0() -> None:
    """RULES.md §5: "samosval (a total of exactly 555 or −555 becomes 0)"."""
    rules = preset("russian", {"samosval": True})
    sweep_hands = {1: "AC 10C AS 10S AH 10H AD", 2: "KC QC JC KS QS JS KH", 0: "QH JH 9H KD QD JD 9D"}
    base = Game(rules, 3, layout(rules, 3, 0, sweep_hands, "10D 9C 9S"))
    g = Game(rules, 3, state=with_tally(base.state, [0, 455, 0]))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9C", 0: "9S"})), (1, contract(100))])
    g.play_out()
    r = g.state.results[-1]
    assert r.totals[1] == 0 and r.scores[1] == -455
    assert "samosval:1" in r.notes
    weak = {1: "QH JH 9H KD QD JD 9D", 2: "AC 10C AS 10S AH 10H AD", 0: "KC QC JC KS QS JS KH"}
    failed = Game(rules, 3, layout(rules, 3, 0, weak, "10D 9C 9S"))
    failed = Game(rules, 3, state=with_tally(failed.state, [0, -455, 0]))
    failed.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9C", 0: "9S"})), (1, contract(100))])
    failed.play_out()
    r = failed.state.results[-1]
    assert r.made is False and r.totals[1] == 0 and r.scores[1] == 455
    plain = preset("russian")
    off = Game(plain, 3, layout(plain, 3, 0, sweep_hands, "10D 9C 9S"))
    off = Game(plain, 3, state=with_tally(off.state, [0, 455, 0]))
    off.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9C", 0: "9S"})), (1, contract(100))])
    off.play_out()
    assert off.state.totals[1] == 555


# ---------------------------------------------------------------- golden rounds


def test_golden_rounds_first_deals_have_a_minimum_bid_of_120() -> None:
    """RULES.md §5: "golden round (the first n deals are played with a minimum bid of 120)"."""
    rules = preset("russian", {"golden_rounds": 2})
    g = Game(rules, 3, seed=4)
    for _ in range(2):
        opener = g.to_act
        assert g.legal(opener)[0] == bid(120)
        assert g.refuse(opener, bid(115)) == "bid_too_low"
        g.play_out()
    assert g.legal(g.to_act)[0] == bid(100)


def test_golden_rounds_raise_the_automatic_opening() -> None:
    """RULES.md §5 (golden round) with the polish automatic opening: the opener is credited with 120."""
    rules = preset("polish", {"golden_rounds": 1})
    g = Game(rules, 3, seed=4)
    opening = next(e for e in g.events if e.kind == ev.BID)
    assert opening.value == 120 and opening.detail == "automatic"
    g.play_out()
    assert next(e for e in g.last if e.kind == ev.BID).value == 100


# ---------------------------------------------------------------- redeal on four nines


def test_redeal_four_nines_after_the_exchange_by_the_same_dealer() -> None:
    """RULES.md §5: "redeal when a player holds four nines after the exchange". docs/RULES.md: "a redeal by
    the
    same dealer; the deal is not played and no one scores"."""
    rules = preset("russian", {"redeal_four_nines": True})
    hands = {1: "9H 9C 9S KH QH AH 10H", 2: "AS 10S KS QS JS AD 10D", 0: "JC QC KC AC 10C JH JD"}
    g = Game(rules, 3, layout(rules, 3, 0, hands, "9D KD QD"))
    g.run([(1, bid(100)), (2, PASS), (0, PASS)])
    events = g.act(1, give({2: "KD", 0: "10H"}))
    kinds = [e.kind for e in events]
    assert ev.REDEAL in kinds and kinds.index(ev.REDEAL) < kinds.index(ev.DEAL_ENDED)
    r = g.state.results[-1]
    assert r.ending == "redeal" and r.scores == (0, 0, 0) and r.totals == (0, 0, 0)
    assert g.deal.dealer == 0 and g.state.deal_number == 1
    assert g.deal.phase == "bidding"


def test_no_redeal_when_the_nines_are_split_by_the_exchange() -> None:
    """RULES.md §5: "after the exchange" — four nines held before it but given away do not count."""
    rules = preset("russian", {"redeal_four_nines": True})
    hands = {1: "9H 9C 9S KH QH AH 10H", 2: "AS 10S KS QS JS AD 10D", 0: "JC QC KC AC 10C JH JD"}
    g = Game(rules, 3, layout(rules, 3, 0, hands, "9D KD QD"))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "10H"}))])
    assert g.deal.phase == "contract"


def test_redeal_four_nines_in_a_blind_game_after_the_talon_is_dealt_out() -> None:
    """docs/RULES.md (`redeal_four_nines`): "after the exchange (in a blind game: after the talon was dealt
    out)"."""
    rules = preset("estonian", {"four_nines_bonus": 0, "redeal_four_nines": True})
    hands = {1: "9H 9C 9S KH QH AH 10H", 2: "AS 10S KS QS JS AD 10D", 0: "JC QC KC AC 10C JH JD"}
    g = Game(rules, 3, layout(rules, 3, 0, hands, "KD QD 9D"))  # the last talon card goes to the declarer
    g.run([(1, BLIND_YES), (1, bid(40)), (2, PASS), (0, PASS)])
    r = g.state.results[-1]
    assert r.ending == "redeal" and r.scores == (0, 0, 0)
    assert g.deal.dealer == 0


# ---------------------------------------------------------------- selling outside estonian


def test_sell_talon_in_polish_shows_even_a_forced_musik() -> None:
    """RULES.md §5: "talon selling outside `estonian`"; docs/RULES.md: "The talon is then turned face up for
    everyone"."""
    rules = preset("polish", {"sell_talon": True})
    g = Game(rules, 3, layout(rules, 3, 0, RUS_HANDS, RUS_TALON))
    g.run([(2, PASS), (0, PASS)])  # forced 100
    assert list(g.legal(1)) == [take(0), SELL]
    events = g.act(1, SELL)
    offer = next(e for e in events if e.kind == ev.TALON_OFFERED)
    assert offer.audience is None and set(offer.cards) == set(cs(RUS_TALON))
    assert g.legal(2)[:2] == [PASS, bid(110)]
    g.run([(2, PASS), (0, PASS)])
    assert g.deal.declarer == 1 and g.deal.phase == "exchange"


def test_sell_talon_take_keeps_a_forced_musik_secret() -> None:
    """RULES.md §2: a forced musik is seen only by the declarer — also when selling was possible but the
    declarer just took it."""
    rules = preset("polish", {"sell_talon": True})
    g = Game(rules, 3, layout(rules, 3, 0, RUS_HANDS, RUS_TALON))
    g.run([(2, PASS), (0, PASS), (1, take(0))])
    for e in g.last:
        if set(e.cards) & set(cs(RUS_TALON)):
            assert e.audience == 1


def test_sell_talon_not_offered_with_two_musiki() -> None:
    """docs/RULES.md (`sell_talon`): "Not offered in the two-musiki layout"."""
    rules = preset("polish", {"sell_talon": True})
    g = Game(rules, 2, seed=1)
    g.act(g.to_act, PASS)
    assert SELL not in g.legal()
    assert g.refuse(g.to_act, SELL) == "no_sale"


def test_sell_talon_sit_out_dealer_does_not_buy() -> None:
    """RULES.md §4 with `sell_talon`: only players in the deal bid for the talon."""
    rules = preset("russian", {"sell_talon": True})
    g = Game(rules, 4, layout(rules, 4, 3, {}, "AH KD QD"))
    g.run([(0, bid(100)), (1, PASS), (2, PASS), (0, SELL)])
    seen = set()
    while g.deal.phase == "sale":
        seen.add(g.to_act)
        g.act(g.to_act, PASS)
    assert seen == {1, 2}


# ---------------------------------------------------------------- preset options switched


def test_polish_without_contract_step_plays_right_after_the_exchange() -> None:
    """docs/RULES.md (`contract_step`): "Off: the winning bid is the contract"."""
    rules = preset("polish", {"contract_step": False})
    g = Game(rules, 3, layout(rules, 3, 0, RUS_HANDS, RUS_TALON))
    g.run([(2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"}))])
    assert g.deal.phase == "play" and g.deal.contract == 100


def test_four_players_all_play_when_the_dealer_does_not_sit_out() -> None:
    """docs/RULES.md (`dealer_sits_out`): "Off: all four play (5 cards each, talon of 4)"."""
    rules = preset("russian", {"dealer_sits_out": False})
    g = Game(rules, 4, seed=2)
    assert [len(g.hand(s)) for s in range(4)] == [5, 5, 5, 5] and len(g.deal.talon) == 4


def test_two_players_with_one_talon_when_two_musiki_is_off() -> None:
    """docs/RULES.md (`two_musiki`): "Off: 2 players get 11 cards each and one talon of 2"."""
    rules = preset("polish", {"two_musiki": False})
    g = Game(rules, 2, seed=2)
    assert [len(g.hand(s)) for s in range(2)] == [11, 11] and len(g.deal.talon) == 2
    g.act(g.to_act, PASS)
    assert g.deal.phase == "exchange"


def test_secret_talon_in_russian() -> None:
    """docs/RULES.md (`talon_visibility`): "`secret`: only the declarer sees it"."""
    rules = preset("russian", {"talon_visibility": "secret"})
    g = Game(rules, 3, layout(rules, 3, 0, RUS_HANDS, RUS_TALON))
    g.run([(1, bid(100)), (2, PASS), (0, PASS)])
    for e in g.last:
        if set(e.cards) & set(cs(RUS_TALON)):
            assert e.audience == 1


def test_no_marriage_needed_when_marriage_needed_above_is_null() -> None:
    """docs/RULES.md (`marriage_needed_above`): "(`null`: never)"."""
    rules = preset("russian", {"marriage_needed_above": None})
    g = Game(rules, 3, layout(rules, 3, 0, RUS_HANDS, RUS_TALON))
    g.act(1, bid(100))
    g.act(2, PASS)
    g.act(0, bid(150))  # seat 0 holds no marriage
    assert g.deal.bid == 150


def test_marriage_min_cards_option() -> None:
    """docs/RULES.md (`marriage_min_cards`): "a player must hold at least this many cards, the led card
    included, to declare" — 8 here blocks a call after the first trick."""
    rules = preset("russian", {"marriage_min_cards": 8})
    g = Game(rules, 3, layout(rules, 3, 0, RUS_HANDS, RUS_TALON))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])
    g.play_tricks("AC 9H 9C")
    assert g.refuse(1, play("KH", declare=True)) == "cannot_declare"


def test_exact_rounding_and_barrel_off() -> None:
    """docs/RULES.md (`rounding`: "`exact`: no rounding"; `barrel`: "`off`")."""
    rules = preset("russian", {"rounding": "exact", "barrel": "off", "bolts": False})
    g = Game(rules, 3, state=with_tally(Game(rules, 3, seed=3).state, [900, 900, 900]))
    g.play_out()
    r = g.state.results[-1]
    for s in range(3):
        if s != r.declarer:
            assert r.scores[s] == r.points[s]


def test_target_option_ends_the_game_earlier() -> None:
    """docs/RULES.md (`target`): "the total that ends the game"."""
    rules = preset("polish", {"target": 300, "barrel": "off"})
    g = Game(rules, 3, seed=1)
    while not g.state.finished:
        g.play_out()
    assert max(g.state.totals) >= 300
    assert all(max(r.totals) < 300 for r in g.state.results[:-1])


@pytest.mark.parametrize(("option", "value"), [("bomb_points", 50), ("concede_points", 40)])
def test_bomb_and_concede_points_options(option: str, value: int) -> None:
    """docs/RULES.md (`bomb_points`, `concede_points`): what each other player scores."""
    if option == "bomb_points":
        rules = preset("polish", {option: value})
        g = Game(rules, 3, layout(rules, 3, 0, RUS_HANDS, RUS_TALON))
        g.run([(2, PASS), (0, PASS)])
        g.act(1, g.legal(1)[-1])  # bomb
    else:
        rules = preset("russian", {option: value})
        g = Game(rules, 3, layout(rules, 3, 0, RUS_HANDS, RUS_TALON))
        g.run([(1, bid(100)), (2, PASS), (0, PASS)])
        g.act(1, g.legal(1)[-1])  # concede
    r = g.state.results[-1]
    assert r.scores[0] == r.scores[2] == value


def test_four_nines_bonus_option_in_russian() -> None:
    """docs/RULES.md (`four_nines_bonus`): "a player holding all four nines at any moment of the deal ... gets
    this bonus once per deal"."""
    rules = preset("russian", {"four_nines_bonus": 50})
    hands = {1: "KH QH AH 10H AC 10C KC", 2: "9H 9C 9S 9D AS 10S KS", 0: "JC QC AD 10D KD JH QS"}
    g = Game(rules, 3, layout(rules, 3, 0, hands, "QD JD JS"))
    g.play_out()
    r = g.state.results[-1]
    p = r.points[2]
    assert r.scores[2] == (p - p % 5 if p % 5 <= 2 else p + 5 - p % 5) + 50
    assert r.four_nines == (2,)


def test_blind_estonian_with_no_blind_declared_plays_normally() -> None:
    """RULES.md §3: "If they do not win the bidding, the deal is played normally." — and without announcing,
    the opener sees the hand at once."""
    rules = preset("estonian")
    g = Game(rules, 3, seed=8)
    opener = g.to_act
    events = g.act(opener, BLIND_NO)
    assert [e.kind for e in events] == [ev.BLIND_CHOSEN, ev.HAND_DEALT]


def test_sale_buyer_limit_counts_the_talon() -> None:
    """docs/RULES.md (`sell_talon`): "A buyer's limit counts the talon as if it were in their hand." Seat 0
    holds no marriage, but the talon offered holds KD QD."""
    rules = preset("estonian", {"sell_talon": True})
    hands = {1: "KH QH AH 10H 9C JC QC", 2: "AS 10S KS QS 9S JS 9D", 0: "AC 10C KC JH 9H AD 10D"}
    g = Game(rules, 3, layout(rules, 3, 0, hands, "KD QD JD"))
    g.run([(1, BLIND_NO), (1, bid(60)), (2, PASS), (0, PASS), (1, SELL), (2, PASS)])
    assert g.to_act == 0 and bid(130) in g.legal(0)
    g.act(0, bid(130))
    assert g.deal.declarer == 0 and g.deal.contract == 130


def test_sale_not_offered_to_a_blind_declarer() -> None:
    """docs/RULES.md (`sell_talon`): "Not offered ... to a blind declarer" — the talon is dealt out."""
    rules = preset("estonian", {"sell_talon": True})
    g = Game(rules, 3, seed=5)
    opener = g.to_act
    g.act(opener, BLIND_YES)
    g.act(opener, bid(40))
    while g.deal.phase == "bidding":
        g.act(g.to_act, PASS)
    assert g.deal.declarer == opener and g.deal.phase == "play"


def test_blind_declarer_has_no_contract_step() -> None:
    """docs/RULES.md (`contract_step`): "A blind declarer has no contract step." Without the blind game the
    option adds the step as usual."""
    rules = preset("estonian", {"contract_step": True})
    blind = Game(rules, 3, seed=5)
    opener = blind.to_act
    blind.run([(opener, BLIND_YES), (opener, bid(40))])
    while blind.deal.phase == "bidding":
        blind.act(blind.to_act, PASS)
    assert blind.deal.phase == "play"
    seen = Game(rules, 3, seed=5)
    seen.run([(opener, BLIND_NO), (opener, bid(40))])
    while seen.deal.phase == "bidding":
        seen.act(seen.to_act, PASS)
    seen.act(opener, seen.legal(opener)[0])
    assert seen.deal.phase == "contract"


def test_must_beat_never_applies_to_a_crawl() -> None:
    """docs/RULES.md (`must_beat`): "Never applies to a crawl." """
    rules = preset("estonian", {"must_beat": True})
    hands = {1: "KH QH 9H 10H 9C JC QC", 2: "AS 10S KS QS 9S JS 9D", 0: "AC 10C KC JH AH AD 10D"}
    g = Game(rules, 3, layout(rules, 3, 0, hands, "KD QD JD"))
    g.run([(1, BLIND_NO), (1, bid(60)), (2, PASS), (0, PASS), (1, give({2: "9C", 0: "JC"}))])
    g.act(1, CRAWL)
    g.act(1, play("QH"))
    g.act(2, play("AS"))
    assert {a.card for a in g.legal(0)} == set(g.hand(0))  # JH is allowed although AH would head the trick
    g.act(0, play("JH"))


def test_bomb_needs_an_automatic_opening() -> None:
    """docs/RULES.md (`bomb`): "Needs an `automatic` opening (only it can be forced)"."""
    rules = preset("russian", {"bomb": True})
    g = Game(rules, 3, layout(rules, 3, 0, RUS_HANDS, RUS_TALON))
    g.run([(1, bid(100)), (2, PASS), (0, PASS)])
    assert not g.deal.forced
    assert BOMB not in g.legal(1)
    assert g.refuse(1, BOMB) == "no_bomb"
