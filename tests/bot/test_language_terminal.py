"""Every player in their own language, in the terminal: a whole game per language through the real input
loop of `adapters/console` (help, information, refusals and the game to its end) shows no English."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from langkit import OTHER_LANGUAGES, english_in
from rich.console import Console

from adapters.console.app import GameOptions, play
from bot.handlers.lobby import AI_NAMES

OPENING = ("help", "rules", "score", "hand", "bid 5", "nonsense", "table")


def _lines() -> Iterator[str]:
    yield from OPENING
    while True:
        yield "1"


async def _game(lang: str, **options: object) -> tuple[int, str]:
    out = io.StringIO()
    console = Console(file=out, width=100, highlight=False, color_system=None)
    lines = _lines()

    async def read_line(prompt: str) -> str | None:
        out.write(prompt)
        return next(lines)

    status = await play(
        GameOptions(lang=lang, level="easy", seed=3, **options),  # type: ignore[arg-type]
        console=console,
        read_line=read_line,
    )
    return status, out.getvalue()


@pytest.mark.parametrize("lang", OTHER_LANGUAGES)
async def test_a_whole_terminal_game_in_one_language_shows_no_english(lang: str) -> None:
    status, text = await _game(lang)
    assert status == 0 and "🏆" in text
    paragraphs = [(f"terminal {lang}", p) for p in text.split("\n") if p.strip()]
    assert len(paragraphs) > 50
    assert not english_in(lang, paragraphs, AI_NAMES)
