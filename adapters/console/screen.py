"""What the terminal prints of the service's messages: a scrolling log, not a chat of edited messages.

A chat edits the table and the hand in place; a terminal can only print them again, so the same facts
would pile up. `Screen` turns each message into the lines worth printing:

- the lobby once: the seats as the game starts (its edits while computers sit down, the lines meant for
  a group chat and the "game has started" edit are left out);
- the talon once per deal, wherever it would appear again (the table reprinted after each move, the
  hand, the note of the talon taken);
- the hand without what the table printed just above it (bids, declarer, trump, the trick).

Sentences about the person at the terminal come in the second person from the service ("You failed 105"):
the terminal's table is in the person's private chat, so the service renders its messages for them
(`bot.reader`). Nothing here changes what a sentence says: a line is only printed or left out. Lines are
matched by the translated message templates (`{field}` becomes a group), so this works in every language
and never guesses from English words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from bot.i18n import N_, Translator
from bot.model import Message

__all__ = ["YOU", "Screen", "template_regex"]

YOU: Final = N_("You")
"""The name of the person at the terminal unless they choose one (`thousand play --name`)."""


_LOBBY_CHAT_ONLY: Final = (N_("Created by {name}."), N_("Join, add computer players, then start."))
"""Lobby lines that speak to a group chat (who opened the table, buttons to press)."""

_TALON: Final = N_("Talon: {cards}")
_TALON_NOTES: Final = (N_("You took the talon: {cards}"), N_("The talon: {cards}"))
"""A hand's notes of the talon (a deal's result tells its talon again, as its own line: it is kept)."""

_SHOWN_BY_TABLE: Final = (
    (N_("Bids: {bids}"), (N_("Bids: {bids}"),)),
    (N_("Trump: {suit}"), (N_("Trump: {suit}"),)),
    (
        N_("Declarer: {name}, {value}"),
        (N_("Declarer: {name}, contract {value}"), N_("Declarer: {name}, bid {value}")),
    ),
    (
        N_("Declarer: you, {value}"),
        (N_("Declarer: you, contract {value}"), N_("Declarer: you, bid {value}")),
    ),
    (N_("Last trick: {cards}"), (N_("Last trick: {cards} → {name}"),)),
    (N_("Trick: {cards}"), (N_("Trick {number}: {cards}"),)),
)
"""Lines of the hand (template) and the table lines that say the same (or more) about the same values."""

_FIELD = re.compile(r"\{(\w+)\}")


def template_regex(template: str, fixed: Mapping[str, str] | None = None) -> re.Pattern[str]:
    """A pattern for the lines a (translated) template produces: each `{field}` a named group, or the
    regular expression given for it in `fixed`."""
    fixed = fixed or {}
    parts: list[str] = []
    seen: set[str] = set()
    pos = 0
    for m in _FIELD.finditer(template):
        parts.append(re.escape(template[pos : m.start()]))
        name = m.group(1)
        if name in fixed:
            parts.append(f"(?:{fixed[name]})")
        elif name in seen:
            parts.append(f"(?P={name})")
        else:
            parts.append(f"(?P<{name}>.+?)")
            seen.add(name)
        pos = m.end()
    parts.append(re.escape(template[pos:]))
    return re.compile("".join(parts))


@dataclass
class Screen:
    """The terminal's memory of what it printed, and the filter every message passes through."""

    t: Translator
    name: str
    """The name the person at the terminal plays under."""
    lobby: Message | None = None
    lobby_printed: bool = False
    table_lines: tuple[str, ...] = ()
    talons: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        t = self.t
        self._chat_only = [template_regex(t._(line)) for line in _LOBBY_CHAT_ONLY]
        self._talon = template_regex(t._(_TALON))
        self._talon_notes = [template_regex(t._(note)) for note in _TALON_NOTES]
        self._by_table = [
            (template_regex(t._(hand)), tuple(t._(line) for line in table)) for hand, table in _SHOWN_BY_TABLE
        ]

    # --- the lobby ----------------------------------------------------------------------------------

    def hold_lobby(self, message: Message) -> None:
        """Keep the lobby's latest state, to print once when the game starts."""
        if message.buttons:  # the open lobby; its closing edit ("the game has started") has none
            self.lobby = message

    def take_lobby(self) -> Message | None:
        """The lobby to print now (once), without the lines meant for a chat."""
        if self.lobby is None or self.lobby_printed:
            return None
        self.lobby_printed = True
        lines = [
            ln for ln in self.lobby.text.split("\n") if not any(p.fullmatch(ln) for p in self._chat_only)
        ]
        return replace(self.lobby, text="\n".join(lines), buttons=())

    # --- every other message ------------------------------------------------------------------------

    def filter(self, message: Message) -> Message | None:
        """The message as the terminal prints it; None when nothing of it is left to print."""
        lines = message.text.split("\n")
        if message.kind == "hand":
            lines = [ln for ln in lines if not self._on_table(ln)]
        lines = self._talon_once(lines)
        if message.kind == "table":
            self.table_lines = tuple(lines)
        if message.kind == "result":
            self.talons.clear()  # the next deal has a talon of its own
        if not lines:
            return None
        return replace(message, text="\n".join(lines))

    def _on_table(self, line: str) -> bool:
        """Whether the table printed last says what this line of the hand says."""
        for pattern, table_templates in self._by_table:
            m = pattern.fullmatch(line)
            if m is None:
                continue
            fixed = {k: re.escape(v) for k, v in m.groupdict().items()}
            for template in table_templates:
                on_table = template_regex(template, fixed)
                if any(on_table.fullmatch(shown) for shown in self.table_lines):
                    return True
        return False

    def _talon_once(self, lines: Sequence[str]) -> list[str]:
        """Drop every line showing a talon already printed in this deal. The note of the talon taken
        ("You took the talon: ...") wins over the plain "Talon: ..." line of the same message."""
        notes = {
            i: m["cards"] for i, ln in enumerate(lines) for p in self._talon_notes if (m := p.fullmatch(ln))
        }
        plain = {
            i: m["cards"] for i, ln in enumerate(lines) if i not in notes and (m := self._talon.fullmatch(ln))
        }
        keep = [True] * len(lines)
        for i, cards in [*notes.items(), *plain.items()]:
            if cards in self.talons:
                keep[i] = False
            self.talons.add(cards)
        return [ln for ln, k in zip(lines, keep, strict=True) if k]
