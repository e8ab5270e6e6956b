"""Match scoring from hand-made deal outcomes (core/scoring.py): every rule about totals, no cards played."""

from __future__ import annotations

from typing import Any

import pytest

from core.cards import parse_card
from core.deal import ACE_SUIT, DealOutcome
from core.rules import RuleSet, preset
from core.scoring import MatchTally, match_winner, round_defender, score_deal, sit_out_score

POLISH = preset("polish")
EST = preset("estonian")
RUS = preset("russian")


def outcome(**kw: Any) -> DealOutcome:
    n = len(kw.get("points", (0, 0, 0)))
    base: dict[str, Any] = {
        "declarer": 0,
        "contract": 100,
        "made": True,
        "points": (0,) * n,
        "marriages": ((),) * n,
        "ending": "played",
        "blind": False,
        "four_nines": (),
        "talon_as_dealt": (),
        "sitting_out": None,
    }
    base.update(kw)
    if "talon_as_dealt" in kw and isinstance(kw["talon_as_dealt"], str):
        base["talon_as_dealt"] = tuple(parse_card(t) for t in kw["talon_as_dealt"].split())
    return DealOutcome(**base)


def tally(
    totals: tuple[int, ...],
    on_barrel: tuple[bool, ...] | None = None,
    deals: tuple[int, ...] | None = None,
    bolts: tuple[int, ...] | None = None,
) -> MatchTally:
    n = len(totals)
    return MatchTally(totals, on_barrel or (False,) * n, deals or (0,) * n, bolts or (0,) * n)


def score(rules: RuleSet, t: MatchTally, o: DealOutcome) -> tuple[tuple[int, ...], MatchTally, Any]:
    result, new = score_deal(rules, t, o, 0, 0)
    assert result.scores == tuple(new.totals[s] - t.totals[s] for s in range(len(t.totals)))
    assert result.totals == new.totals
    return result.scores, new, result


# ---------------------------------------------------------------- rounding


@pytest.mark.parametrize(
    ("points", "rounded"),
    [(0, 0), (1, 0), (2, 0), (3, 5), (4, 5), (5, 5), (11, 10), (12, 10), (13, 15), (14, 15), (118, 120)],
)
def test_rounding_to_nearest_5_remainder_1_2_down_3_4_up(points: int, rounded: int) -> None:
    """RULES.md §2: "Defenders score their deal points rounded to the nearest multiple of 5 (a remainder of 1
    or 2 rounds down, 3 or 4 rounds up)." """
    assert round_defender(POLISH, points) == rounded
    assert round_defender(RUS, points) == rounded
    assert round_defender(EST, points) == points


def test_declarer_scores_plus_or_minus_contract_defenders_rounded() -> None:
    """RULES.md §1: "the declarer then scores +contract, otherwise −contract. Card points above the contract
    are not scored." """
    scores, _, _ = score(POLISH, tally((0, 0, 0)), outcome(contract=110, made=True, points=(143, 33, 24)))
    assert scores == (110, 35, 25)
    scores, _, _ = score(POLISH, tally((0, 0, 0)), outcome(contract=110, made=False, points=(100, 33, 87)))
    assert scores == (-110, 35, 85)


# ---------------------------------------------------------------- bomb and concession


def test_bomb_scores_0_for_the_bomber_and_60_for_the_others() -> None:
    """RULES.md §2: "the bomber scores 0, each other player +60 (nothing for a player on the barrel)"."""
    o = outcome(declarer=1, made=None, ending="bomb")
    scores, _, _ = score(POLISH, tally((0, 0, 0)), o)
    assert scores == (60, 0, 60)
    scores, _, _ = score(POLISH, tally((800, 0, 799)), o)
    assert scores == (0, 0, 60)
    scores, _, _ = score(POLISH, tally((0, 900, 0)), o)
    assert scores == (60, 0, 60)


def test_concession_scores_minus_bid_and_60_per_opponent() -> None:
    """RULES.md §4: "the declarer scores −contract (the bid), each opponent +60 (nothing for a player on the
    barrel)"."""
    o = outcome(declarer=2, contract=115, made=None, ending="concede")
    scores, _new, result = score(RUS, tally((0, 0, 0)), o)
    assert scores == (60, 60, -115)
    assert result.bolts == ()
    scores, _, _ = score(RUS, tally((880, 0, 0), (True, False, False)), o)
    assert scores == (0, 60, -115)


def test_concession_by_a_declarer_on_the_barrel_takes_them_off() -> None:
    """RULES.md §4: "A declarer on the barrel who concedes leaves it." """
    o = outcome(declarer=0, contract=100, made=None, ending="concede")
    scores, new, _ = score(RUS, tally((880, 0, 0), (True, False, False), (2, 0, 0)), o)
    assert scores == (-100, 60, 60)
    assert new.on_barrel == (False, False, False) and new.barrel_deals == (0, 0, 0)


# ---------------------------------------------------------------- sit-out dealer


def test_polish_sit_out_aces_and_marriage() -> None:
    """RULES.md §2: "50 for each ace in the musik as dealt plus the value of a marriage lying in it"."""
    for talon, expected in [("AH AD AC", 150), ("KH QH AS", 150), ("KS QS 9H", 40), ("9C JD 10H", 0)]:
        o = outcome(points=(0, 90, 30, 0), talon_as_dealt=talon, sitting_out=3, declarer=1)
        assert sit_out_score(POLISH, o) == expected
        scores, _, _ = score(POLISH, tally((0, 0, 0, 0)), o)
        assert scores[3] == expected


def test_russian_sit_out_talon_points_rounded() -> None:
    """RULES.md §4: "the dealer who sits out scores the card points of the prikup, rounded like a
    defender's"."""
    for talon, expected in [("AH 10H AD", 30), ("AH KD QD", 20), ("AH 10H JC", 25), ("9C 9D JH", 0)]:
        o = outcome(points=(0, 90, 30, 0), talon_as_dealt=talon, sitting_out=3, declarer=1)
        assert sit_out_score(RUS, o) == expected


def test_sit_out_scores_nothing_on_the_barrel() -> None:
    """RULES.md §2: "As a defender, sitting out, or when another player bombs, they score 0." RULES.md §4:
    "(nothing on the barrel; no bolt)"."""
    o = outcome(points=(0, 90, 30, 0), talon_as_dealt="AH AD AC", sitting_out=3, declarer=1)
    scores, _, _ = score(POLISH, tally((0, 0, 0, 810)), o)
    assert scores[3] == 0
    scores, _, result = score(RUS, tally((0, 0, 0, 880), (False, False, False, True)), o)
    assert scores[3] == 0 and 3 not in result.bolts


# ---------------------------------------------------------------- blind and four nines


def test_blind_result_doubled_and_four_nines_added_undoubled() -> None:
    """RULES.md §3: "+2×contract or −2×contract"; four nines: "added to their score for the deal; it does not
    count toward a contract and is never doubled"."""
    o = outcome(declarer=0, contract=80, made=True, points=(95, 20, 5), blind=True, four_nines=(0,))
    scores, _, _ = score(EST, tally((0, 0, 0)), o)
    assert scores == (260, 20, 5)
    o = outcome(declarer=0, contract=80, made=False, points=(75, 40, 5), blind=True, four_nines=(2,))
    scores, _, _ = score(EST, tally((0, 0, 0)), o)
    assert scores == (-160, 40, 105)


def test_no_four_nines_bonus_on_the_barrel() -> None:
    """RULES.md §3: "exactly ±contract (doubled if blind), with no four-nines bonus; as a defender they score
    nothing." """
    o = outcome(declarer=0, contract=80, made=True, points=(95, 20, 5), blind=True, four_nines=(0,))
    scores, _, result = score(EST, tally((880, 0, 0)), o)
    assert scores == (160, 20, 5) and result.four_nines == ()
    o = outcome(declarer=0, contract=80, made=True, points=(95, 20, 5), four_nines=(1,))
    scores, _, _ = score(EST, tally((0, 900, 0)), o)
    assert scores == (80, 0, 5)


# ---------------------------------------------------------------- declarer-only barrel


@pytest.mark.parametrize(("rules", "at"), [(POLISH, 800), (EST, 880)])
def test_declarer_only_barrel(rules: RuleSet, at: int) -> None:
    """RULES.md §2 "Barrel at 800" and §3 "Barrel at 880": "scores only as declarer ... no deal limit, no
    penalty"."""
    o = outcome(declarer=1, contract=120, made=True, points=(40, 130, 30))
    scores, _, result = score(rules, tally((at, at, at - 1)), o)
    assert scores == (0, 120, 30)
    assert result.barrel == (True, True, True)  # seat 2 got there with this deal
    o = outcome(declarer=1, contract=120, made=False, points=(40, 110, 50))
    scores, _new, _ = score(rules, tally((at, at, at - 10)), o)
    assert scores == (0, -120, 50)
    # many deals on it: never a penalty
    t = tally((at, 0, 0))
    for _ in range(6):
        o = outcome(declarer=1, contract=100, made=True, points=(40, 100, 30))
        _, t, _ = score(rules, t, o)
    assert t.totals[0] == at


# ---------------------------------------------------------------- capped (russian) barrel


def test_capped_barrel_sets_totals_between_880_and_999_to_880() -> None:
    """RULES.md §4: "a total that ends a deal between 880 and 999 is set to 880, and the player is on the
    barrel"."""
    o = outcome(declarer=0, contract=100, made=True, points=(110, 63, 7))
    scores, new, _ = score(RUS, tally((850, 820, 0)), o)
    assert new.totals == (880, 880, 5)
    assert scores == (30, 60, 5)
    assert new.on_barrel == (True, True, False) and new.barrel_deals == (0, 0, 0)


def test_capped_barrel_made_contract_back_to_880_and_1000_wins() -> None:
    """RULES.md §4: "+contract if made (reaching 1000 wins; otherwise the total is set back to 880)"."""
    on = tally((880, 0, 0), (True, False, False))
    o = outcome(declarer=0, contract=100, made=True, points=(110, 3, 7))
    scores, new, _ = score(RUS, on, o)
    assert scores[0] == 0 and new.totals[0] == 880 and new.on_barrel[0] and new.barrel_deals[0] == 1
    o = outcome(declarer=0, contract=120, made=True, points=(120, 0, 0))
    _, new, _ = score(RUS, on, o)
    assert new.totals[0] == 1000
    assert match_winner(RUS, new.totals, 0) == 0


def test_capped_barrel_failure_takes_the_player_off() -> None:
    """RULES.md §4: "−contract if failed or conceded, which also takes them off the barrel"."""
    o = outcome(declarer=0, contract=110, made=False, points=(90, 3, 27))
    _, new, _ = score(RUS, tally((880, 0, 0), (True, False, False), (2, 0, 0)), o)
    assert new.totals[0] == 770 and new.on_barrel[0] is False and new.barrel_deals[0] == 0


def test_capped_barrel_third_deal_costs_120() -> None:
    """RULES.md §4: "When the third deal that began with the player on the barrel ends with the player still
    on
    it, they score −120 and leave it ... the count restarts when they leave the barrel." """
    t = tally((880, 0, 0), (True, False, False))
    o = outcome(declarer=1, contract=100, made=True, points=(30, 80, 10))
    for expected_deals in (1, 2):
        scores, t, _ = score(RUS, t, o)
        assert scores[0] == 0 and t.barrel_deals[0] == expected_deals and t.on_barrel[0]
    scores, t, result = score(RUS, t, o)
    assert scores[0] == -120 and t.totals[0] == 760
    assert not t.on_barrel[0] and t.barrel_deals[0] == 0
    assert "barrel_penalty:0" in result.notes


def test_capped_barrel_counts_made_contracts_as_declarer_too() -> None:
    """RULES.md §4: "every finished deal that began with them on the barrel counts" — also a made contract
    below 1000 (the player is still on the barrel)."""
    t = tally((880, 0, 0), (True, False, False), (2, 0, 0))
    o = outcome(declarer=0, contract=100, made=True, points=(100, 10, 10))
    scores, t, _ = score(RUS, t, o)
    assert t.totals[0] == 760 and scores[0] == -120


def test_capped_barrel_counts_sat_out_and_conceded_deals() -> None:
    """RULES.md §4: "(also one they sat out or one conceded by another player)"."""
    t = tally((880, 0, 0, 0), (True, False, False, False))
    sat = outcome(declarer=1, points=(0, 100, 10, 10), sitting_out=0, talon_as_dealt="AH AD AC")
    conceded = outcome(declarer=2, made=None, ending="concede", points=(0, 0, 0, 0), sitting_out=1)
    scores, t, _ = score(RUS, t, sat)
    assert scores[0] == 0 and t.barrel_deals[0] == 1
    scores, t, _ = score(RUS, t, conceded)
    assert scores[0] == 0 and t.barrel_deals[0] == 2
    scores, t, _ = score(RUS, t, outcome(declarer=3, points=(20, 0, 0, 100), sitting_out=2))
    assert scores[0] == -120 and not t.on_barrel[0]


def test_redeal_changes_nothing() -> None:
    """docs/RULES.md (`redeal_four_nines`): "the deal is not played and no one scores (it does not count
    toward
    the Russian barrel's three deals)"."""
    t = tally((880, 0, 0), (True, False, False), (2, 0, 0))
    scores, new, result = score(RUS, t, outcome(made=None, ending="redeal"))
    assert scores == (0, 0, 0) and new == t and result.ending == "redeal"


# ---------------------------------------------------------------- bolts


def test_bolt_for_a_defender_scoring_0_and_every_third_costs_120() -> None:
    """RULES.md §4: "a defender (not on the barrel) whose score for a deal, after rounding, is 0 gets a bolt
    ... the 3rd, 6th, 9th... bolt of a player makes their score for that deal −120"."""
    o = outcome(declarer=0, contract=100, made=True, points=(118, 2, 0))
    t = tally((0, 0, 0))
    expected = [(0, 0), (0, 0), (-120, -120), (0, 0), (0, 0), (-120, -120)]
    for want in expected:
        scores, t, result = score(RUS, t, o)
        assert (scores[1], scores[2]) == want
        assert sorted(result.bolts) == [1, 2]
    assert t.bolts == (0, 6, 6)


def test_no_bolt_for_the_declarer_the_sit_out_a_conceded_deal_or_the_barrel() -> None:
    """RULES.md §4: "a declarer, a dealer sitting out, and a defender of a conceded deal never do"; "a
    defender
    (not on the barrel)"."""
    rules = preset("russian", {"concede_points": 0})
    conceded = outcome(declarer=0, made=None, ending="concede")
    _, t, result = score(rules, tally((0, 0, 0)), conceded)
    assert result.bolts == () and t.bolts == (0, 0, 0)
    sit = outcome(declarer=1, points=(0, 118, 2, 0), sitting_out=0, talon_as_dealt="9C 9D JH")
    scores, t, result = score(RUS, tally((0, 0, 0, 0)), sit)
    assert scores[0] == 0 and 0 not in result.bolts and sorted(result.bolts) == [2, 3]
    barrel = outcome(declarer=1, points=(40, 80, 0))
    scores, t, result = score(RUS, tally((880, 0, 0), (True, False, False)), barrel)
    assert result.bolts == (2,)


def test_bolts_are_off_outside_russian() -> None:
    """RULES.md §5/§2: bolts belong to `russian`; other presets never count them."""
    o = outcome(declarer=0, points=(120, 0, 0))
    _, t, result = score(POLISH, tally((0, 0, 0), bolts=(0, 2, 2)), o)
    assert result.bolts == () and t.bolts == (0, 2, 2)


# ---------------------------------------------------------------- samosval


def test_samosval_555_and_minus_555_become_0() -> None:
    """RULES.md §5: "samosval (a total of exactly 555 or −555 becomes 0)"."""
    rules = preset("polish", {"samosval": True})
    o = outcome(declarer=0, contract=100, made=True, points=(100, 5, 15))
    scores, t, result = score(rules, tally((455, 550, -570)), o)
    assert scores == (-455, -550, 570)
    assert t.totals == (0, 0, 0)  # 555, 555 and -570 + 15 = -555
    assert sorted(result.notes) == ["samosval:0", "samosval:1", "samosval:2"]
    o = outcome(declarer=2, contract=100, made=False, points=(40, 40, 40))
    _, t, _ = score(rules, tally((0, 0, -455)), o)
    assert t.totals[2] == 0
    _, t, _ = score(
        POLISH, tally((455, 0, 0)), outcome(declarer=0, contract=100, made=True, points=(100, 5, 15))
    )
    assert t.totals[0] == 555


# ---------------------------------------------------------------- winner


def test_winner_none_below_target_highest_above() -> None:
    """RULES.md §1: "The game ends after the deal in which at least one total reaches 1000 or more. The
    highest
    total wins." """
    assert match_winner(POLISH, (999, 500, 0), 0) is None
    assert match_winner(POLISH, (1000, 500, 0), 1) == 0
    assert match_winner(POLISH, (1010, 1020, 0), 0) == 1


def test_winner_tie_declarer_or_shared() -> None:
    """RULES.md §1: "[decided] equal highest totals: the declarer of that deal (also a bomber or a conceder)
    wins if among them, otherwise those players share the win." """
    assert match_winner(POLISH, (1000, 1000, 0), 1) == 1
    assert match_winner(POLISH, (1000, 1000, 0), 2) == (0, 1)
    assert match_winner(POLISH, (1020, 1020, 1020, 0), 3) == (0, 1, 2)
    assert match_winner(POLISH, (1020, 1000, 1020), 1) == (0, 2)


def test_ace_marriage_reported_as_a() -> None:
    """replay-format.md: `marriages`: "the suits each seat declared, in order" — the ace marriage as "A"."""
    o = outcome(declarer=0, points=(300, 10, 10), marriages=((2, ACE_SUIT), (), ()))
    _, _, result = score(POLISH, tally((0, 0, 0)), o)
    assert result.marriages == (("H", "A"), (), ())
