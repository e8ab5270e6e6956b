"""What a player waiting for a public game reads: the queue's status message and its answers.

The status is one message per player (key `queue`), edited in place while they wait: which game they
asked for, how many wait for the same one and for how long, and a Cancel button; after
`PUBLIC_COMPUTERS_AFTER` seconds also the offer to start at once with computers in the empty seats. Its
last state says what became of the wait (a table found, cancelled, expired), without buttons.
"""

from __future__ import annotations

from typing import Final

from bot.i18n import N_, Translator
from bot.markup import escape
from bot.matchmaking.model import ANY_PRESET, Options
from bot.model import Button

__all__ = [
    "QUEUE_KEY",
    "offer_buttons",
    "render_found",
    "render_options",
    "render_waiting",
    "waiting_buttons",
]

QUEUE_KEY: Final = "queue"
"""The key of a player's status message in their private chat (one message, edited)."""

PACE_NAMES: Final = {"fast": N_("fast"), "normal": N_("normal"), "slow": N_("slow")}


def render_options(t: Translator, options: Options) -> str:
    """`polish · 3 players · normal pace` in the reader's language."""
    preset = t._("any rules") if options.preset == ANY_PRESET else t.preset(options.preset)
    players = t._("players: {n}").format(n=options.players)
    pace = t._("{pace} pace").format(pace=t._(PACE_NAMES[options.pace]))
    return f"{escape(preset)} · {players} · {pace}"


def render_waiting(t: Translator, options: Options, waiting: int, waited: float, offer: bool) -> str:
    """The status while queued. `waited` is shown in steps of 10 s so that the message is edited
    (a call against Telegram's budget) at most every 10 s."""
    seconds = int(waited) // 10 * 10
    lines = [
        "🔎 " + t._("**Looking for a game**: {options}").format(options=render_options(t, options)),
        t._("Waiting for this game: {n}.").format(n=waiting),
        t._("Waiting for {minutes}:{seconds:02d}.").format(minutes=seconds // 60, seconds=seconds % 60),
    ]
    if offer:
        lines.append(
            t._("Nobody else has come yet. Start now with computers in the empty seats, or keep waiting?")
        )
    return "\n".join(lines)


def render_found(t: Translator) -> str:
    """The status's last state once the player is seated at a table the matcher built."""
    return "✅ " + t._("A table was found: your game starts below.")


def waiting_buttons(t: Translator, cancel: str) -> tuple[tuple[Button, ...], ...]:
    return ((Button(t._("Cancel"), cancel),),)


def offer_buttons(t: Translator, go: str, wait: str, cancel: str) -> tuple[tuple[Button, ...], ...]:
    return (
        (Button(t._("Start with computers"), go), Button(t._("Keep waiting"), wait)),
        (Button(t._("Cancel"), cancel),),
    )
