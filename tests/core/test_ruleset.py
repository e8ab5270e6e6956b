"""The rule set: presets as option values, validation, JSON round trip, and docs/RULES.md covering it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from core.rules import (
    PRESETS,
    Barrel,
    Declaration,
    Opening,
    Rounding,
    RuleError,
    RuleSet,
    SitOutScoring,
    TalonVisibility,
    preset,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "RULES.md"


def test_polish_preset_values() -> None:
    """RULES.md §2: "Players: 2, 3 or 4", automatic 100, steps of 10, caps 300/360, musik shown unless
    forced, contract step, bomb, automatic marriages H100 D80 C60 S40, rounding to 5, barrel at 800."""
    r = preset("polish")
    assert r.player_counts == (2, 3, 4)
    assert r.two_musiki and r.dealer_sits_out
    assert (r.opening, r.opening_bid, r.bid_step) == (Opening.AUTOMATIC, 100, 10)
    assert (r.marriage_needed_above, r.cap_by_marriages, r.max_bid, r.max_bid_two_players) == (
        120,
        True,
        300,
        360,
    )
    assert r.talon_visibility == TalonVisibility.PUBLIC_UNLESS_FORCED
    assert r.contract_step and r.bomb and r.bomb_points == 60
    assert not (r.concede or r.blind or r.crawl or r.sell_talon or r.must_beat or r.bolts or r.samosval)
    assert r.declaration == Declaration.AUTOMATIC
    assert r.marriage_values == {"H": 100, "D": 80, "C": 60, "S": 40}
    assert r.marriage_min_cards == 0 and r.four_nines_bonus == 0
    assert r.rounding == Rounding.NEAREST_5
    assert r.sit_out_scoring == SitOutScoring.ACES_AND_MARRIAGE
    assert (r.barrel, r.barrel_at, r.target) == (Barrel.DECLARER_ONLY, 800, 1000)


def test_estonian_preset_values() -> None:
    """RULES.md §3: "Players: 2, 3 or 4, all playing", compulsory opening of at least 40 in steps of 5,
    secret talon, no contract step, blind ≤ 120, crawl, calling trump by choice with 3 cards, C100 S80 H60
    D40, four nines 100, exact scoring, barrel at 880."""
    r = preset("estonian")
    assert r.player_counts == (2, 3, 4)
    assert not r.two_musiki and not r.dealer_sits_out
    assert (r.opening, r.opening_bid, r.bid_step) == (Opening.COMPULSORY, 40, 5)
    assert (r.marriage_needed_above, r.cap_by_marriages, r.max_bid, r.max_bid_two_players) == (
        120,
        False,
        None,
        None,
    )
    assert r.talon_visibility == TalonVisibility.SECRET
    assert not r.contract_step
    assert r.blind and r.blind_max_bid == 120 and r.crawl
    assert not (r.bomb or r.concede or r.sell_talon or r.must_beat or r.bolts)
    assert r.declaration == Declaration.CHOICE and r.marriage_min_cards == 3
    assert r.marriage_values == {"C": 100, "S": 80, "H": 60, "D": 40}
    assert r.four_nines_bonus == 100
    assert r.rounding == Rounding.EXACT
    assert (r.barrel, r.barrel_at) == (Barrel.DECLARER_ONLY, 880)


def test_russian_preset_values() -> None:
    """RULES.md §4: "Players: 3, or 4 with the dealer sitting out", compulsory 100 in steps of 5, public
    prikup, contract step, concession worth 60, marriages by choice, rounding, capped barrel at 880 with 3
    deals and 120, bolts of 120, sit-out scores the prikup's points."""
    r = preset("russian")
    assert r.player_counts == (3, 4) and r.dealer_sits_out
    assert (r.opening, r.opening_bid, r.bid_step) == (Opening.COMPULSORY, 100, 5)
    assert (r.marriage_needed_above, r.cap_by_marriages, r.max_bid) == (120, False, None)
    assert r.talon_visibility == TalonVisibility.PUBLIC
    assert r.contract_step and r.concede and r.concede_points == 60
    assert not (r.bomb or r.blind or r.crawl or r.sell_talon)
    assert r.declaration == Declaration.CHOICE and r.marriage_min_cards == 0
    assert r.marriage_values == {"H": 100, "D": 80, "C": 60, "S": 40}
    assert r.rounding == Rounding.NEAREST_5
    assert r.sit_out_scoring == SitOutScoring.TALON_POINTS
    assert (r.barrel, r.barrel_at, r.barrel_deals, r.barrel_penalty) == (Barrel.CAPPED, 880, 3, 120)
    assert r.bolts and r.bolt_penalty == 120


def test_options_beyond_the_presets_are_off_in_all_presets() -> None:
    """RULES.md §5: "All off in the three presets ...: `must_beat`; ace marriage; samosval; golden round;
    redeal when a player holds four nines after the exchange; talon selling outside `estonian`." """
    for r in PRESETS.values():
        assert not r.must_beat
        assert not r.ace_marriage
        assert not r.samosval
        assert r.golden_rounds == 0
        assert not r.redeal_four_nines
        assert not r.sell_talon


def test_preset_names_the_rule_set() -> None:
    """A record's `rules.preset` names the preset; the rule set remembers it."""
    for name in ("polish", "estonian", "russian"):
        assert preset(name).preset == name
        assert preset(name, {"samosval": True}).preset == name


def test_unknown_preset_is_refused() -> None:
    """ENGINE.md: "options by name; unknown/invalid -> RuleError"."""
    with pytest.raises(RuleError, match="unknown preset"):
        preset("czech")


def test_unknown_option_is_refused_naming_it() -> None:
    """ENGINE.md: "options by name; unknown/invalid -> RuleError"."""
    with pytest.raises(RuleError, match="no_such_option"):
        preset("polish", {"no_such_option": 1})


@pytest.mark.parametrize(
    "options",
    [
        {"bid_step": 0},
        {"bid_step": "ten"},
        {"opening": "sometimes"},
        {"golden_rounds": -1},
        {"marriage_values": {"H": 100}},
        {"player_counts": [5]},
        {"player_counts": []},
        {"opening_bid": 105},
        {"max_bid": 90},
        {"blind": True, "opening": "automatic"},
        {"blind": True, "opening": "compulsory", "blind_max_bid": 90},
        {"barrel_at": 1000},
        {"redeal_four_nines": True},
        {"target": 0},
    ],
)
def test_invalid_option_values_and_combinations_are_refused(options: dict[str, Any]) -> None:
    """RULES.md §5 options are "each a documented option of the rule set"; DESIGN: "validated (pydantic,
    frozen) ... with cross-option invariants checked" (estonian has a four-nines bonus, so
    `redeal_four_nines` there conflicts with it)."""
    base = "estonian" if "redeal_four_nines" in options else "polish"
    with pytest.raises(RuleError):
        preset(base, options)


def test_bomb_needs_three_players_allowed() -> None:
    """RULES.md §2: "Bomb (only in the 3-player game, not with 4)"."""
    with pytest.raises(RuleError, match="bomb"):
        preset("polish", {"player_counts": [2, 4]})


def test_two_musiki_needs_two_players_allowed() -> None:
    """RULES.md §2: "2 players: 10 cards each and two musiki of 2 cards"."""
    with pytest.raises(RuleError, match="two_musiki"):
        preset("polish", {"player_counts": [3], "bomb": True})


def test_rule_set_is_frozen() -> None:
    """A game stores the rule set it started with; a rule set is a value and cannot change."""
    r = preset("polish")
    with pytest.raises(ValidationError):
        r.bid_step = 5  # type: ignore[misc]


def test_rule_set_json_round_trip() -> None:
    """ENGINE.md: "rules.model_dump_json(); RuleSet.model_validate_json(text)   # JSON round trip"."""
    for name in PRESETS:
        r = preset(name, {"samosval": True, "golden_rounds": 2, "must_beat": True})
        assert RuleSet.model_validate_json(r.model_dump_json()) == r


@pytest.mark.parametrize(("name", "bad"), [("polish", 5), ("estonian", 1), ("estonian", 5), ("russian", 2)])
def test_player_counts_are_checked(name: str, bad: int) -> None:
    """RULES.md: polish "Players: 2, 3 or 4"; estonian "Players: 2, 3 or 4"; russian "Players: 3, or 4"."""
    r = preset(name)
    with pytest.raises(RuleError, match=str(bad)):
        r.check_players(bad)
    for n in r.player_counts:
        r.check_players(n)


def test_every_option_is_documented_in_docs_rules_md() -> None:
    """ENGINE.md: "Every option is documented in `docs/RULES.md`" — by its exact name, in the options table
    with its default and the three presets' values."""
    text = DOCS.read_text(encoding="utf-8")
    rows = {m.group(1) for m in re.finditer(r"^\| `([a-z_0-9]+)` \|", text, re.MULTILINE)}
    options = set(RuleSet.model_fields) - {"preset"}
    assert options <= rows, sorted(options - rows)
    for name in options:
        assert f"- `{name}`" in text, f"{name} has no explanation"


def test_docs_table_defaults_and_preset_values_match_the_code() -> None:
    """docs/RULES.md's options table states each option's default and preset values; they must be true."""
    text = DOCS.read_text(encoding="utf-8")

    def value(cell: str) -> Any:
        cell = cell.strip().strip("`")
        if cell == "same":
            return "same"
        if cell[:1] in "[{" or cell in ("true", "false", "null") or cell.isdigit():
            return json.loads(cell)
        return cell

    def norm(v: Any) -> Any:
        if isinstance(v, tuple):
            return list(v)
        if hasattr(v, "value"):
            return v.value
        return v

    defaults = RuleSet()
    checked = 0
    for m in re.finditer(r"^\| `([a-z_0-9]+)` \|(.*)\|$", text, re.MULTILINE):
        name = m.group(1)
        if name not in RuleSet.model_fields:
            continue
        cells = [c for c in m.group(2).split("|")]
        _type, default, pol, est, rus = cells
        assert value(default) == norm(getattr(defaults, name)), name
        for cell, p in ((pol, "polish"), (est, "estonian"), (rus, "russian")):
            v = value(cell)
            expected = norm(getattr(PRESETS[p], name))
            assert v == expected or (v == "same" and expected == norm(getattr(defaults, name))), (name, p)
        checked += 1
    assert checked == len(RuleSet.model_fields) - 1
