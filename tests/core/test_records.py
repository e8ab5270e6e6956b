"""Game records (replay-format.md): building, replaying, and how a bad record is reported."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from dealkit import BLIND_NO, BLIND_YES, BOMB, CONCEDE, PASS, SELL, Game, bid, contract, give, layout, play

from core.record import RecordError, build_record, parse_record, replay_text
from core.rules import preset

POLISH = preset("polish")
HANDS = {1: "KH QH AH 10H AC 10C KC", 2: "9H JH AS 10S KS QS JS", 0: "9C JC QC 9S AD 10D KD"}
TALON = "QD JD 9D"


def record_of(g: Game, names: list[str] | None = None) -> dict[str, Any]:
    n = g.state.players
    return build_record(g.state, names or [f"p{i}" for i in range(n)])


def replay(data: dict[str, Any]) -> dict[str, Any]:
    return replay_text(json.dumps(data))


def finished_polish() -> Game:
    g = Game(POLISH, 3, layout(POLISH, 3, 0, HANDS, TALON))
    g.run([(2, bid(110)), (0, PASS), (1, PASS), (2, give({0: "9H", 1: "JH"})), (2, contract(110))])
    g.play_out()
    g.act(g.to_act, PASS)  # deal 2 begun
    return g


def test_record_has_the_documented_shape() -> None:
    """replay-format.md: "format", "rules" with preset and options, "players", "deals" with dealer, hands,
    talon and actions; the polish opener's automatic 100 is not an action."""
    g = finished_polish()
    rec = record_of(g, ["Ala", "Bartek", "Celina"])
    assert rec["format"] == "thousand-record/1"
    assert rec["rules"] == {"preset": "polish", "options": {}}
    assert rec["players"] == ["Ala", "Bartek", "Celina"]
    d0 = rec["deals"][0]
    assert d0["dealer"] == 0 and sorted(d0["talon"]) == sorted(TALON.split())
    assert [len(h) for h in d0["hands"]] == [7, 7, 7]
    assert d0["actions"][:3] == [
        {"seat": 2, "action": "bid", "value": 110},
        {"seat": 0, "action": "pass"},
        {"seat": 1, "action": "pass"},
    ]
    assert d0["actions"][3] == {"seat": 2, "action": "give", "cards": {"0": "9H", "1": "JH"}}
    assert d0["actions"][4] == {"seat": 2, "action": "contract", "value": 110}
    assert rec["deals"][1]["actions"] == [{"seat": g.state.deal.active[1], "action": "pass"}]


def test_record_replays_to_the_same_results() -> None:
    """replay-format.md: "`thousand replay FILE` re-plays it through the engine ... The engine's outcome for a
    record must be exactly what these rules give." """
    g = finished_polish()
    report = replay(record_of(g))
    assert report["ok"] is True
    assert report["deals"][0] == g.state.results[0].to_json()
    assert report["deals"][1] == {"complete": False, "phase": "bidding", "to_act": g.to_act}
    assert report["totals"] == list(g.state.totals) and report["winner"] is None


def test_record_options_are_the_overrides_of_the_preset() -> None:
    """replay-format.md: "`rules.options` overrides options by their documented names"."""
    rules = preset("russian", {"must_beat": True, "samosval": True})
    g = Game(rules, 3, seed=2)
    g.play_out()
    rec = record_of(g)
    assert rec["rules"] == {"preset": "russian", "options": {"must_beat": True, "samosval": True}}
    assert replay(rec)["deals"][0] == g.state.results[0].to_json()


def test_blind_is_the_deals_field_not_an_action() -> None:
    """replay-format.md: "`blind` (optional, `estonian`): the seat that announced a blind game before the
    deal." docs/RULES.md: "a game record carries it as the deal's `blind` field, not as an action"."""
    rules = preset("estonian")
    g = Game(rules, 3, layout(rules, 3, 0, HANDS, TALON))
    g.run([(1, BLIND_YES), (1, bid(60)), (2, PASS), (0, PASS)])
    g.play_out()
    g.act(g.to_act, BLIND_NO)
    rec = record_of(g)
    assert rec["deals"][0]["blind"] == 1
    assert "blind" not in rec["deals"][1]
    assert all(a["action"] != "blind" for d in rec["deals"] for a in d["actions"])
    report = replay(rec)
    assert report["ok"] and report["deals"][0]["scores"][1] in (120, -120)
    assert report["deals"][0]["contract"] == 60
    assert report["deals"][1] == {"complete": False, "phase": "bidding", "to_act": 2}


def test_sale_replays() -> None:
    """docs/RULES.md: "a record may hold `sell` ...; the sale's bids and passes are `bid` and `pass`"."""
    rules = preset("estonian", {"sell_talon": True})
    g = Game(rules, 3, layout(rules, 3, 0, HANDS, TALON))
    g.run([(1, BLIND_NO), (1, bid(60)), (2, PASS), (0, PASS), (1, SELL), (2, bid(65)), (0, PASS)])
    g.play_out()
    rec = record_of(g)
    kinds = [a["action"] for a in rec["deals"][0]["actions"]]
    assert kinds[:7] == ["bid", "pass", "pass", "sell", "bid", "pass", "give"]
    report = replay(rec)
    assert report["ok"] and report["deals"][0]["declarer"] == 2 and report["deals"][0]["contract"] == 65


def test_bomb_and_concession_are_reported_without_points() -> None:
    """replay-format.md: "For a bomb or concession, `made` is `null` and `points` are all 0"; "`contract` ...
    for a bomb 100, for a concession the bid"."""
    g = Game(POLISH, 3, layout(POLISH, 3, 0, HANDS, TALON))
    g.run([(2, PASS), (0, PASS), (1, BOMB)])
    d = replay(record_of(g))["deals"][0]
    assert (d["made"], d["points"], d["contract"], d["scores"]) == (None, [0, 0, 0], 100, [60, 0, 60])
    rus = preset("russian")
    g = Game(rus, 4, layout(rus, 4, 3, {}, TALON))
    opener = g.to_act
    g.run([(opener, bid(105))])
    g.act(g.to_act, PASS)
    g.act(g.to_act, PASS)
    g.act(opener, CONCEDE)
    d = replay(record_of(g))["deals"][0]
    assert d["made"] is None and d["points"] == [0, 0, 0, 0] and d["contract"] == 105
    assert d["scores"][3] == g.state.results[0].scores[3]  # the sit-out dealer's prikup score


def test_sit_out_dealer_has_no_points_and_no_marriages() -> None:
    """replay-format.md: "A dealer who sits out has `points` 0 and no marriages; their talon score is in
    `scores`." """
    g = Game(POLISH, 4, layout(POLISH, 4, 3, {}, "AH AD 9C"))
    g.play_out()
    d = replay(record_of(g))["deals"][0]
    assert d["points"][3] == 0 and d["marriages"][3] == [] and d["scores"][3] == 100


@pytest.mark.parametrize(
    ("name", "players", "steps", "phase"),
    [
        ("polish", 3, 0, "bidding"),
        ("polish", 2, 1, "talon"),
        ("polish", 2, 2, "discard"),
        ("russian", 3, 3, "exchange"),
        ("russian", 3, 4, "contract"),
        ("russian", 3, 5, "play"),
    ],
)
def test_unfinished_last_deal_reports_phase_and_seat(name: str, players: int, steps: int, phase: str) -> None:
    """replay-format.md: "An unfinished last deal is reported as `{"complete": false, "phase": "...",
    "to_act":
    SEAT}`, the phase one of `bidding`, `talon`, `discard`, `exchange`, `contract`, `play`." """
    rules = preset(name)
    g = Game(rules, players, seed=4)
    for _ in range(steps):
        seat = g.to_act
        g.act(seat, PASS if PASS in g.legal(seat) and g.deal.phase == "bidding" else g.legal(seat)[0])
    assert g.deal.phase == phase
    report = replay(record_of(g))
    assert report["ok"] and report["deals"] == [{"complete": False, "phase": phase, "to_act": g.to_act}]


# ---------------------------------------------------------------- illegal actions and wrong deals


def test_illegal_action_reports_deal_and_action_index() -> None:
    """replay-format.md: "When an action is illegal: `"ok": false` and `"error": {"deal": D, "action": A,
    "code":
    "...", "message": "..."}` ... `deals`, `totals` and `winner` then describe the deals finished before that
    deal." """
    rec = record_of(finished_polish())
    bad = copy.deepcopy(rec)
    bad["deals"][1]["actions"] = [{"seat": 0, "action": "bid", "value": 115}]
    report = replay(bad)
    assert report["ok"] is False
    assert report["error"]["deal"] == 1 and report["error"]["action"] == 0
    assert report["error"]["code"] and report["error"]["message"]
    assert len(report["deals"]) == 1 and report["totals"] == report["deals"][0]["totals"]


def test_declare_flag_that_cannot_declare_is_illegal_except_in_polish() -> None:
    """replay-format.md: "A `play` with `declare: true` that cannot declare ... is illegal, except in
    `polish`,
    where declaring is automatic and the flag is ignored." """
    rus = preset("russian")
    g = Game(rus, 3, layout(rus, 3, 0, HANDS, TALON))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "9D", 0: "JD"})), (1, contract(100))])
    g.act(1, play("AC"))
    rec = record_of(g)
    rec["deals"][0]["actions"][-1]["declare"] = True
    report = replay(rec)
    assert report["ok"] is False and report["error"]["code"] == "cannot_declare"
    assert report["error"]["action"] == len(rec["deals"][0]["actions"]) - 1
    pol = record_of(finished_polish())
    for a in pol["deals"][0]["actions"]:
        if a["action"] == "play":
            a["declare"] = True
    assert replay(pol)["ok"] is True


def whole_deal_error(data: dict[str, Any], deal: int = 0) -> dict[str, Any]:
    report = replay(data)
    assert report["ok"] is False, report
    assert report["error"]["deal"] == deal and report["error"]["action"] is None
    return report


def test_duplicate_card_is_a_whole_deal_error_not_a_parse_error() -> None:
    """docs/RULES.md: "a deal whose hands/talon are not one deck (duplicates, wrong counts) is reported with
    `ok:false, action:null`, exit 1"."""
    rec = record_of(finished_polish())
    rec["deals"][0]["hands"][0][0] = rec["deals"][0]["hands"][1][0]
    whole_deal_error(rec)
    rec = record_of(finished_polish())
    rec["deals"][0]["talon"][0] = rec["deals"][0]["talon"][1]
    whole_deal_error(rec)


def test_wrong_card_counts_are_a_whole_deal_error() -> None:
    """replay-format.md: "its hands and talon are not one 24-card deck laid out as the preset and player count
    require"."""
    rec = record_of(finished_polish())
    moved = rec["deals"][0]["talon"].pop()
    rec["deals"][0]["hands"][0].append(moved)
    whole_deal_error(rec)
    rec = record_of(finished_polish())
    rec["deals"][0]["talon"].pop()
    whole_deal_error(rec)


def test_talon_layout_must_match_the_preset() -> None:
    """replay-format.md: "the `talon`: a list of cards, or, for the two-musik layout, a list of two lists"."""
    g = Game(POLISH, 2, seed=1)
    g.act(g.to_act, PASS)
    rec = record_of(g)
    assert [len(p) for p in rec["deals"][0]["talon"]] == [2, 2]
    flat = copy.deepcopy(rec)
    flat["deals"][0]["talon"] = flat["deals"][0]["talon"][0] + flat["deals"][0]["talon"][1]
    whole_deal_error(flat)
    three = record_of(finished_polish())
    t = three["deals"][0]["talon"]
    three["deals"][0]["talon"] = [t[:2], t[2:]]
    whole_deal_error(three)


def test_sitting_out_dealer_must_hold_no_cards() -> None:
    """replay-format.md: "the hand of a dealer who sits out is `[]`"."""
    g = Game(POLISH, 4, layout(POLISH, 4, 3, {}, "AH AD 9C"))
    rec = record_of(g)
    assert rec["deals"][0]["hands"][3] == []
    card = rec["deals"][0]["hands"][0].pop()
    rec["deals"][0]["hands"][3].append(card)
    whole_deal_error(rec)


def test_wrong_dealer_is_a_whole_deal_error() -> None:
    """replay-format.md: "its dealer is not the previous dealer's left neighbour"."""
    rec = record_of(finished_polish())
    rec["deals"][1]["dealer"] = 2
    report = whole_deal_error(rec, deal=1)
    assert len(report["deals"]) == 1


def test_redeal_keeps_the_dealer_in_records() -> None:
    """docs/RULES.md: "the same dealer after a redeal"."""
    rules = preset("russian", {"redeal_four_nines": True})
    hands = {1: "9H 9C 9S KH QH AH 10H", 2: "AS 10S KS QS JS AD 10D", 0: "JC QC KC AC 10C JH JD"}
    g = Game(rules, 3, layout(rules, 3, 0, hands, "9D KD QD"))
    g.run([(1, bid(100)), (2, PASS), (0, PASS), (1, give({2: "KD", 0: "10H"}))])
    g.play_out()
    rec = record_of(g)
    assert [d["dealer"] for d in rec["deals"]] == [0, 0, 1]
    report = replay(rec)
    assert report["ok"] and report["deals"][0]["scores"] == [0, 0, 0]


def test_blind_outside_estonian_or_from_another_seat_is_a_whole_deal_error() -> None:
    """replay-format.md: "`blind` from a seat other than left of the dealer or outside `estonian`"."""
    rec = record_of(finished_polish())
    rec["deals"][0]["blind"] = 1
    whole_deal_error(rec)
    rules = preset("estonian")
    g = Game(rules, 3, layout(rules, 3, 0, HANDS, TALON))
    g.run([(1, BLIND_YES)])
    est = record_of(g)
    assert est["deals"][0]["blind"] == 1
    est["deals"][0]["blind"] = 2
    whole_deal_error(est)


def test_deal_after_the_game_ended_is_a_whole_deal_error() -> None:
    """replay-format.md: "a deal after the game ended"."""
    rules = preset("polish", {"target": 150, "barrel": "off"})
    g = Game(rules, 3, seed=6)
    while not g.state.finished:
        g.play_out()
    rec = record_of(g)
    report = replay(rec)
    assert report["ok"] and report["winner"] == g.state.winner
    extra = copy.deepcopy(rec)
    last = extra["deals"][-1]
    extra["deals"].append({**copy.deepcopy(last), "dealer": (last["dealer"] + 1) % 3, "actions": []})
    whole_deal_error(extra, deal=len(rec["deals"]))


def test_unfinished_deal_before_the_last_is_an_error_at_its_first_missing_action() -> None:
    """replay-format.md: "A deal before the last one that is unfinished is an error at the index of its first
    missing action." """
    rec = record_of(finished_polish())
    n = len(rec["deals"][0]["actions"])
    rec["deals"][0]["actions"] = rec["deals"][0]["actions"][: n - 2]
    report = replay(rec)
    assert report["ok"] is False
    assert (report["error"]["deal"], report["error"]["action"]) == (0, n - 2)
    assert report["deals"] == []


def test_actions_after_the_end_of_a_deal_are_illegal() -> None:
    """replay-format.md: a deal's actions end with the deal; one more is an illegal action (`deal_over`)."""
    rec = record_of(finished_polish())
    rec["deals"][0]["actions"].append({"seat": 0, "action": "pass"})
    report = replay(rec)
    assert report["ok"] is False
    assert report["error"]["code"] == "deal_over"
    assert (report["error"]["deal"], report["error"]["action"]) == (0, len(rec["deals"][0]["actions"]) - 1)


def test_shared_win_is_a_list_of_seats() -> None:
    """replay-format.md: "`winner`: the seat index that won the game, a list of seats for a shared win";
    RULES.md
    §1: the bomber is not among the leaders, so the two others share the win."""
    rules = preset("polish", {"barrel": "off", "target": 60})
    g = Game(rules, 3, layout(rules, 3, 0, HANDS, TALON))
    g.run([(2, PASS), (0, PASS), (1, BOMB)])
    assert g.state.winner == (0, 2)
    report = replay(record_of(g))
    assert report["winner"] == [0, 2] and report["totals"] == [60, 0, 60]


def test_cards_in_any_accepted_notation() -> None:
    """RULES.md §1: "rank + suit letter, case-insensitive ...; `T` is accepted for 10 and the suit symbols
    ♣♠♥♦ for the letters"."""
    rec = record_of(finished_polish())
    symbols = {"C": "♣", "S": "♠", "H": "♥", "D": "♦"}

    def restyle(token: str) -> str:
        rank, suit = token[:-1], token[-1]
        return ("T" if rank == "10" else rank.lower()) + symbols[suit]

    for deal in rec["deals"]:
        deal["hands"] = [[restyle(t) for t in h] for h in deal["hands"]]
        deal["talon"] = [restyle(t) for t in deal["talon"]]
        for a in deal["actions"]:
            if "card" in a:
                a["card"] = restyle(a["card"])
            if isinstance(a.get("cards"), dict):
                a["cards"] = {k: restyle(v) for k, v in a["cards"].items()}
    assert replay(rec) == replay(record_of(finished_polish()))


# ---------------------------------------------------------------- not a record (exit status 2)


def base_record() -> dict[str, Any]:
    return record_of(finished_polish())


def mutate(path: list[Any], value: Any, delete: bool = False) -> dict[str, Any]:
    data = base_record()
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


BAD_RECORDS: list[tuple[str, Any]] = [
    ("wrong format", mutate(["format"], "thousand-record/2")),
    ("format missing", mutate(["format"], None, delete=True)),
    ("unknown preset", mutate(["rules", "preset"], "czech")),
    ("unknown option", mutate(["rules", "options"], {"jokers": True})),
    ("bad option value", mutate(["rules", "options"], {"bid_step": "ten"})),
    ("impossible options", mutate(["rules", "options"], {"opening_bid": 105})),
    ("too many players", mutate(["players"], ["a", "b", "c", "d", "e"])),
    ("one player", mutate(["players"], ["a"])),
    ("players missing", mutate(["players"], None, delete=True)),
    ("player count mismatch", mutate(["deals", 0, "hands"], [[], []])),
    ("dealer missing", mutate(["deals", 0, "dealer"], None, delete=True)),
    ("dealer not a seat", mutate(["deals", 0, "dealer"], 3)),
    ("dealer mistyped", mutate(["deals", 0, "dealer"], "0")),
    ("hands missing", mutate(["deals", 0, "hands"], None, delete=True)),
    ("talon mistyped", mutate(["deals", 0, "talon"], "QD JD 9D")),
    ("bad card in hand", mutate(["deals", 0, "hands", 0, 0], "11H")),
    ("bad card in talon", mutate(["deals", 0, "talon", 0], "QX")),
    ("bad card in play", mutate(["deals", 0, "actions", 5, "card"], "ZZ")),
    ("bad card in give", mutate(["deals", 0, "actions", 3, "cards", "0"], "1H")),
    ("give key not a seat", mutate(["deals", 0, "actions", 3, "cards"], {"x": "9H", "1": "JH"})),
    ("give to no such seat", mutate(["deals", 0, "actions", 3, "cards"], {"7": "9H", "1": "JH"})),
    ("unknown action", mutate(["deals", 0, "actions", 0, "action"], "double")),
    ("bid without value", mutate(["deals", 0, "actions", 0, "value"], None, delete=True)),
    ("value mistyped", mutate(["deals", 0, "actions", 0, "value"], "110")),
    ("seat mistyped", mutate(["deals", 0, "actions", 0, "seat"], "2")),
    ("seat not a seat", mutate(["deals", 0, "actions", 0, "seat"], 5)),
    ("pass with a value", mutate(["deals", 0, "actions", 1, "value"], 120)),
    ("declare mistyped", mutate(["deals", 0, "actions", 5, "declare"], "yes")),
    ("unknown field", mutate(["deals", 0, "shuffle"], 42)),
    ("blind mistyped", mutate(["deals", 0, "blind"], "1")),
]


@pytest.mark.parametrize(("why", "data"), BAD_RECORDS, ids=[b[0] for b in BAD_RECORDS])
def test_not_a_record_raises_record_error(why: str, data: Any) -> None:
    """replay-format.md: "Exit status 2 (and nothing on standard output) is for a file that is not a
    well-formed
    record anywhere in it: not JSON, wrong `format`, unknown preset or option, a player count the preset
    does not allow, missing or mistyped fields, an unknown action, a string that is not a card." """
    with pytest.raises(RecordError) as info:
        parse_record(json.dumps(data))
    assert str(info.value)


@pytest.mark.parametrize("text", ["", "{", "[]", "42", '"record"', "null"])
def test_not_json_or_not_an_object(text: str) -> None:
    """replay-format.md: "not JSON"."""
    with pytest.raises(RecordError):
        parse_record(text)


def test_russian_with_two_players_is_not_a_record() -> None:
    """replay-format.md: "a player count the preset does not allow"."""
    data = {"format": "thousand-record/1", "rules": {"preset": "russian"}, "players": ["a", "b"], "deals": []}
    with pytest.raises(RecordError, match="russian"):
        parse_record(json.dumps(data))


def test_a_bad_card_in_a_later_deal_is_found_before_replaying() -> None:
    """replay-format.md: "Such a file is checked whole before anything is replayed." """
    data = base_record()
    data["deals"][1]["hands"][0][0] = "1C"
    with pytest.raises(RecordError, match="1C"):
        replay(data)


def test_empty_record_replays_to_nothing() -> None:
    """A record with no deals: nothing happened; totals are 0."""
    data = {
        "format": "thousand-record/1",
        "rules": {"preset": "estonian"},
        "players": ["a", "b"],
        "deals": [],
    }
    assert replay(data) == {"ok": True, "deals": [], "totals": [0, 0], "winner": None}
