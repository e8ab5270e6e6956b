"""`/set OPTION VALUE` for every rule option of `core.rules.RuleSet`, read as its type, through the service:
a valid value is stored for the chat and reaches the next game's rules; an invalid one is refused and
changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from botkit import Harness, errors, make_user

from bot.model import Sender
from core.rules import Barrel, Declaration, Opening, Rounding, RuleSet, SitOutScoring, TalonVisibility, preset

ADMIN = make_user(0, admin=True)
BARTEK = make_user(1)

MARRIAGES = {"H": 120, "D": 90, "C": 70, "S": 50}

# option: (valid text, the value it means, invalid text) for the polish preset.
CASES: dict[str, tuple[str, Any, str]] = {
    "player_counts": ("2,3", (2, 3), "2,x"),
    "two_musiki": ("off", False, "maybe"),
    "dealer_sits_out": ("no", False, "perhaps"),
    "opening": ("compulsory", Opening.COMPULSORY, "sideways"),
    "opening_bid": ("110", 110, "lots"),
    "bid_step": ("5", 5, "five"),
    "marriage_needed_above": ("off", None, "high"),
    "cap_by_marriages": ("false", False, "2"),
    "max_bid": ("400", 400, "x400"),
    "max_bid_two_players": ("none", None, "max"),
    "golden_rounds": ("2", 2, "-3"),
    "talon_visibility": ("secret", TalonVisibility.SECRET, "hidden"),
    "contract_step": ("off", False, "never"),
    "bomb": ("off", False, "boom"),
    "bomb_points": ("40", 40, "forty"),
    "concede": ("on", True, "give up"),
    "concede_points": ("50", 50, "1.5"),
    "blind": ("off", False, "on"),  # "on" is a bool, but a blind game needs a compulsory opening
    "blind_max_bid": ("150", 150, "?"),
    "crawl": ("yes", True, "slowly"),
    "sell_talon": ("tak", True, "sell"),
    "must_beat": ("on", True, "always"),
    "declaration": ("choice", Declaration.CHOICE, "automatically"),
    "marriage_values": ('{"H": 120, "D": 90, "C": 70, "S": 50}', MARRIAGES, '{"H": 100}'),
    "marriage_min_cards": ("3", 3, "three"),
    "ace_marriage": ("on", True, "aces"),
    "ace_marriage_value": ("250", 250, "a lot"),
    "four_nines_bonus": ("100", 100, "-100"),
    "redeal_four_nines": ("on", True, "again"),
    "rounding": ("exact", Rounding.EXACT, "nearest"),
    "sit_out_scoring": ("talon_points", SitOutScoring.TALON_POINTS, "points"),
    "barrel": ("off", Barrel.OFF, "sometimes"),
    "barrel_at": ("700", 700, "off"),
    "barrel_deals": ("2", 2, "0"),
    "barrel_penalty": ("100", 100, "some"),
    "bolts": ("off", False, "bolt"),
    "bolt_penalty": ("100", 100, "1e3"),
    "samosval": ("on", True, "555"),
    "target": ("1500", 1500, "0"),
}


def test_every_option_has_a_case() -> None:
    assert set(CASES) == set(RuleSet.model_fields) - {"preset"}


async def stored_options(h: Harness) -> tuple[int, dict[str, Any]]:
    version, settings = await h.service.chat_settings(h.chat.key)
    return version, settings.options


@pytest.mark.parametrize("option", sorted(CASES))
async def test_set_an_option(harness: Harness, option: str) -> None:
    h = harness
    valid, meant, invalid = CASES[option]
    out = await h.text(ADMIN, f"/set {option} {valid}")
    assert not errors(out), [m.text for m in out]
    assert out[0].kind == "settings"
    _, options = await stored_options(h)
    rules = preset("polish", options)
    assert getattr(rules, option) == meant
    # The rules the chat's next table plays by.
    assert not errors(await h.text(ADMIN, "/new"))
    assert not errors(await h.text(BARTEK, "/join"))
    assert not errors(await h.text(ADMIN, "/start"))
    assert getattr((await h.state()).rules, option) == meant
    # A value its type cannot read, or the rules do not allow, is refused and stores nothing.
    version, before = await stored_options(h)
    out = await h.text(ADMIN, f"/set {option} {invalid}")
    assert [m.kind for m in out] == ["error"] and isinstance(out[0].audience, Sender)
    assert await stored_options(h) == (version, before)
    # `default` takes the option back to the preset's.
    assert not errors(await h.text(ADMIN, f"/set {option} default"))
    assert option not in (await stored_options(h))[1]


async def test_barrel_off_and_its_other_spellings(harness: Harness) -> None:
    """The reported `/set barrel off`: accepted, shown, and a game without a barrel follows."""
    h = harness
    out = await h.text(ADMIN, "/set barrel off")
    assert not errors(out) and "barrel=off" in out[0].text
    assert "Barrel at" not in out[0].text  # the rules summary has no barrel any more
    spellings = (("capped", Barrel.CAPPED), ("no", Barrel.OFF), ("DECLARER_ONLY", Barrel.DECLARER_ONLY))
    for text, meant in spellings:
        assert not errors(await h.text(ADMIN, f"/set barrel {text}"))
        assert preset("polish", (await stored_options(h))[1]).barrel == meant
    assert not errors(await h.text(ADMIN, "/set barrel off"))
    await h.open_table([ADMIN, BARTEK])
    assert (await h.state()).rules.barrel == Barrel.OFF


async def test_other_spellings_of_lists_and_marriages(harness: Harness) -> None:
    h = harness
    for text in ("H=120 D=90 C=70 S=50", "h:120, d:90, c:70, s:50", "{“H”: 120, “D”: 90, “C”: 70, “S”: 50}"):
        assert not errors(await h.text(ADMIN, f"/set marriage_values {text}")), text
        assert preset("polish", (await stored_options(h))[1]).marriage_values == MARRIAGES
    for text in ("H=", "=5", "[1, 2]", '{"H": true, "D": 90, "C": 70, "S": 50}', '{"X": 1}'):
        assert errors(await h.text(ADMIN, f"/set marriage_values {text}")), text
    assert not errors(await h.text(ADMIN, "/set player_counts 2 3"))
    assert preset("polish", (await stored_options(h))[1]).player_counts == (2, 3)
    for text in ("5", "3,4", "2;3", "two"):  # polish with two musiki needs 2 players allowed
        assert errors(await h.text(ADMIN, f"/set player_counts {text}")), text
