"""What `/help` lists on each platform: the commands as they are typed there, and what they do.

The commands differ by platform (Telegram's `/bid 120`, Discord's `/thousand bid`, the terminal's bare
`bid 120`), the explanations do not: each line is the commands (markup, never translated: they are what
the person types) and a message id saying what they do (translated for the reader). A table is keyed by
`ChatRef.platform`; a platform without one gets the typed commands, which every adapter that passes text
understands. `tests/bot/test_language_help.py` checks the Discord table against the slash commands that
exist (`adapters/discord/tree.py`) and the others against `bot.commands.parse_text`.
"""

from __future__ import annotations

from typing import Final

from bot.i18n import N_

__all__ = ["HELP_LINES", "TYPED", "HelpLine", "help_lines"]

HelpLine = tuple[str, str]
"""(commands as typed, in markup; what they do, a message id). Either may be empty."""

TYPED: Final[tuple[HelpLine, ...]] = (
    ("/new [polish|estonian|russian]", N_("open a table")),
    ("/join · /leave · /start", N_("take a seat, leave it, start the game")),
    ("/add\\_ai [easy|medium|hard] · /remove\\_ai", N_("add or remove a computer player")),
    ("/bid 120 · /pass", N_("bid, or pass")),
    ("/play QS · /play QH !", N_("play a card; with ! you declare its marriage")),
    ("/give 9C JD", N_("one card to each other player, clockwise from your left")),
    ("/take 1 · /discard 9C JD · /contract 120", N_("take the talon, lay cards away, say your contract")),
    ("/sell · /blind yes|no · /bomb · /concede · /crawl", N_("the moves some rules allow")),
    (
        "/hand · /table · /score · /rules · /export",
        N_("your hand, the table, the scores, the rules, the record"),
    ),
    ("/review · /review 3", N_("after a deal: your costliest choices in it, privately")),
    ("/set preset|turn|level|lang VALUE · /set OPTION VALUE", N_("the chat's settings and rules")),
    ("/lang pl", N_("your own language")),
    ("/set lang pl", N_("the chat's language")),
    ("/kick N", N_("hand seat N to a computer")),
    ("/back · /end", N_("play your own turns again · end the game")),
    ("/again", N_("after a game: the next one with the same players and settings")),
    ("/stats · /top · /help", N_("your statistics, the best players, this help")),
    (
        "/play [polish|estonian|russian|any] [3|4] [fast|normal|slow] · /cancel",
        N_("in the private chat: a game with other players, or leave the queue"),
    ),
    (
        "/say gl|wp|ty|oops · /block N · /report N · /top public",
        N_("at a public table: a fixed phrase, never sit with them again, report them, the ladder"),
    ),
)
"""Commands typed as text (Telegram, and any platform without its own table)."""

DISCORD: Final[tuple[HelpLine, ...]] = (
    ("/thousand new [preset]", N_("open a table")),
    ("/thousand join · /thousand leave · /thousand start", N_("take a seat, leave it, start the game")),
    ("", N_("Computer players, giving cards, the talon and the other moves: the buttons.")),
    ("/thousand bid 120 · /thousand pass · /thousand contract 120", N_("bid, pass, say your contract")),
    ("/thousand play QS · /thousand play QH !", N_("play a card; with ! you declare its marriage")),
    ("/thousand hand", N_("your hand (only you see it)")),
    ("/thousand score · /thousand rules · /thousand export", N_("the scores, the rules, the record")),
    ("/thousand settings OPTION VALUE", N_("the chat's settings and rules")),
    ("/thousand lang", N_("your own language")),
    ("/thousand settings lang pl", N_("the chat's language")),
    ("/thousand kick @player", N_("hand the player's seat to a computer")),
    ("/thousand back · /thousand end", N_("play your own turns again · end the game")),
    ("/thousand stats · /thousand top · /thousand help", N_("your statistics, the best players, this help")),
    ("/thousand review", N_("after a deal: your costliest choices in it, privately")),
    (
        "/thousand play · /thousand cancel",
        N_("a game with other players, by direct message; or leave the queue"),
    ),
    (
        "/thousand say · /thousand block [undo] · /thousand report · /thousand top public",
        N_("at a public table: a fixed phrase, never sit with them again, report them, the ladder"),
    ),
)
"""Discord's slash commands (the `/thousand` group of `adapters/discord/tree.py`)."""

TERMINAL: Final[tuple[HelpLine, ...]] = (
    ("1 · 2 · 3 …", N_("the choice with that number")),
    ("QS · 10h · q♠", N_("that card")),
    ("bid 120 · pass · contract 120", N_("bid, pass, say your contract")),
    ("give 9C JD · discard 9C JD · take 1", N_("give cards, lay cards away, take the talon")),
    ("sell · blind yes|no · bomb · concede · crawl", N_("the moves some rules allow")),
    ("hand · table · score · rules", N_("your hand, the table, the scores, the rules")),
    ("lang pl", N_("your own language")),
    ("again", N_("after a game: the next one with the same players and settings")),
    ("help · quit", N_("this help · end the game")),
)
"""The terminal's words (`adapters/console`: a line is a number, a card or a command without its slash)."""

HELP_LINES: Final[dict[str, tuple[HelpLine, ...]]] = {"dc": DISCORD, "console": TERMINAL}
"""Platforms whose commands are not the typed ones (keys: `ChatRef.platform`)."""


def help_lines(platform: str) -> tuple[HelpLine, ...]:
    return HELP_LINES.get(platform, TYPED)
