"""The terminal in the player's own words: commands in their language (`licytuj 120`, `daj 9C JD`), a help
that speaks of the terminal, every trick printed, and another game with the same players at the end."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest
from rich.console import Console

from adapters.console.app import GameOptions, play
from adapters.console.verbs import VERBS, again_word, in_words, neutral, verbs_line
from bot.commands import COMMANDS
from bot.i18n import LANGUAGES, parse_card_in, translator
from bot.render import render_help, rights_sentence
from core.cards import CardParseError

TERMINAL_ONLY = {"help", "quit"}


async def _run(lang: str, lines: Iterator[str], **options: object) -> tuple[int, str]:
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False, color_system=None)

    async def read_line(prompt: str) -> str | None:
        out.write(prompt)
        return next(lines, None)

    status = await play(
        GameOptions(lang=lang, level="easy", **options),  # type: ignore[arg-type]
        console=console,
        read_line=read_line,
    )
    return status, out.getvalue()


@pytest.mark.parametrize("lang", [lang for lang in LANGUAGES if lang != "en"])
def test_every_language_has_its_words_and_none_is_a_card(lang: str) -> None:
    words = VERBS[lang]
    assert set(words.values()) <= set(COMMANDS) | TERMINAL_ONLY
    assert {"bid", "pass", "play", "give", "take", "discard", "contract", "again", "help", "quit"} <= set(
        words.values()
    )
    for word in words:
        assert word == word.lower() and " " not in word
        with pytest.raises(CardParseError):
            parse_card_in(word, (lang, "en"))
    line = verbs_line(lang)
    assert line is not None and again_word(lang) in line
    assert neutral(lang, again_word(lang).upper()) == "again"


@pytest.mark.parametrize(
    ("lang", "bid"),
    [("pl", "licytuj 5"), ("ru", "ставка 5"), ("uk", "ставка 5"), ("et", "paku 5"), ("tr", "teklif 5")],
)
async def test_a_bid_in_the_players_words_reaches_the_game(lang: str, bid: str) -> None:
    """`licytuj 5` is a bid (refused as too low, in Polish), not "not a command"; `pomoc` is help."""
    t = translator(lang)
    status, text = await _run(lang, iter(["pomoc" if lang == "pl" else "help", bid]), seed=3)
    assert status == 0
    not_a_command = t._("Not a choice, a card or a command. Type help for the list.")
    assert not_a_command not in text
    refusals = [
        t._(m) for m in ("That bid is too low.", "It is not your turn.", "Bids go in steps of {step}.")
    ]
    assert any(r.split("{")[0] in text for r in refusals), text[-600:]
    # The help box speaks the player's words: the commands as they type them, cards as their deck writes them.
    assert in_words(t, "bid 120 · pass · contract 120") in text
    assert in_words(t, "give 9C JD · discard 9C JD · take 1") in text
    for english in ("bid 120", "give 9C JD", "help · quit", "Type help", "quit to stop"):
        assert english not in text, english


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_terminal_help_speaks_of_the_terminal(lang: str) -> None:
    t = translator(lang)
    terminal = render_help(t, "console").text
    assert rights_sentence(t) not in terminal
    assert rights_sentence(t) in render_help(t, "t").text  # a chat's help still says who may do what
    assert "again" in terminal


async def test_another_game_with_the_same_players_and_every_trick_printed() -> None:
    lines: list[str] = []
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False, color_system=None)
    games = 0

    async def read_line(prompt: str) -> str | None:
        nonlocal games
        text = out.getvalue()
        offer = "Type again to play again with the same players"
        if text.count(offer) > games:
            games += 1
            lines.append("again" if games == 1 else "")
            return lines[-1]
        lines.append("1")
        return "1"

    status = await play(
        GameOptions(lang="en", level="easy", seed=5, players=3, preset="russian"),
        console=console,
        read_line=read_line,
    )
    text = out.getvalue()
    assert status == 0 and games == 2 and text.count("🏆") == 2
    # The second game has the same players (the lobby is printed once, the tables name them all).
    second = text.split("Type again to play again")[1]
    assert "Deal 1 · dealer:" in second and "Ada 🤖" in second and "Boris 🤖" in second
    # Every result names its final trick; a deal whose last cards played themselves also prints the trick
    # before (numbered): no trick goes unseen.
    results = [p for p in text.split("╭") if re.search(r"Deal \d+: result", p)]
    assert results and all("Last trick:" in p for p in results if "made" in p or "failed" in p)
    assert any(re.search(r"Trick \d+: .+ → ", p) for p in results)
