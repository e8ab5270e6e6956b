"""A public table's "group" is its seated people: each gets the group's messages privately.

A group table's messages for the group are drawn once, in the group's language. A public table seats
strangers from different platforms who read different languages and share no chat, so every message the
service addresses to its group is delivered instead to each seated person (not to one handed to a computer
for good: they left), under the same key (one table message per deal, edited in place as in a group), and
drawn again in that person's language when the message can be (`Redraw`: the table, a deal's result, the
final score sheet, a fixed phrase). A message whose sentences may speak of its reader (`ReaderRedraw`: the
table, a deal's result, "ended the game") is drawn for each person as their seat: their copy is private,
so it says "You failed 105" where the others' say "Ala failed 105" (`bot.reader`). This module sits below
`bot.context` and knows no handler.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Final

from bot.commands import PayloadError, encode_payload, read_payload
from bot.i18n import LANGUAGES, Translator, translator
from bot.model import Button, Group, Message, Private, UserRef
from bot.public.refusals import PUBLIC_REFUSED
from bot.public.rematch import rematch_line
from bot.table import TableDoc

__all__ = ["PUBLIC_PLATFORM", "ReaderRedraw", "Redraw", "fan_out", "is_public"]

PUBLIC_PLATFORM: Final = "pub"
"""The `platform` part of a public table's id (`pub:<random>`): no chat of any platform has it."""

Redraw = Callable[[Translator], tuple[str, tuple[tuple[Button, ...], ...]]]
"""A group message drawn in another language: its text and buttons."""

ReaderRedraw = Callable[[Translator, int | None], tuple[str, tuple[tuple[Button, ...], ...]]]
"""A group message drawn in a language for one reader (a seat; None: the group's many readers)."""


def is_public(table_id: str) -> bool:
    return table_id.startswith(PUBLIC_PLATFORM + ":")


def fan_out(
    doc: TableDoc,
    messages: Sequence[Message],
    redraws: Mapping[str, Redraw],
    reader_redraws: Mapping[str, ReaderRedraw] | None = None,
) -> list[Message]:
    """`messages` with each `Group` message replaced by one `Private` copy per seated person, in order:
    drawn for that person's seat where the message has a `ReaderRedraw`."""
    reader_redraws = reader_redraws or {}
    out: list[Message] = []
    for message in messages:
        if not isinstance(message.audience, Group):
            out.append(message)
            continue
        drawn: dict[str, tuple[str, tuple[tuple[Button, ...], ...]]] = {}
        key = message.key if message.key is not None else f"#{id(message)}"
        for i, seat in enumerate(doc.seats):
            if not seat.human or seat.user is None:
                continue
            lang = seat.lang if seat.lang in LANGUAGES and seat.lang else doc.settings.language
            redraw = redraws.get(key)
            for_reader = reader_redraws.get(key)
            if for_reader is not None:
                text, buttons = for_reader(translator(lang), i)
            elif lang == message.language or redraw is None:
                text, buttons, lang = message.text, message.buttons, message.language
            else:
                if lang not in drawn:
                    drawn[lang] = redraw(translator(lang))
                text, buttons = drawn[lang]
            offer = doc.ended == "won" and doc.rematch is not None
            buttons = _public_buttons(buttons, translator(lang), offer)
            if message.kind == "final" and offer:
                text = f"{text}\n\n{rematch_line(translator(lang))}"
            user = UserRef(seat.platform or "", seat.user_id or "", seat.name, lang)
            out.append(replace(message, audience=Private(user), text=text, buttons=buttons, language=lang))
    return out


def _public_buttons(
    buttons: tuple[tuple[Button, ...], ...], t: Translator, offer: bool = False
) -> tuple[tuple[Button, ...], ...]:
    """Without the buttons of commands a public table refuses; the score sheet's "Play again" becomes
    **Play again** and **No thanks** of the offer to play again with the same people (`offer`: a won
    game's; `bot.public.again`) and "Game record" (`export`): once the game is over nobody sits at the
    table any more, so a private `/export` no longer finds it, and the button names the table."""
    rows: list[tuple[Button, ...]] = []
    for row in buttons:
        kept: list[Button] = []
        for button in row:
            try:
                p = read_payload(button.payload)
            except PayloadError:
                kept.append(button)
                continue
            if p.name == "again":
                if offer:
                    again = encode_payload("again", (), p.version, p.table_id, p.tag)
                    no = encode_payload("again", ("no",), p.version, p.table_id, p.tag)
                    rows.append((Button(t._("Play again"), again), Button(t._("No thanks"), no)))
                payload = encode_payload("export", (), p.version, p.table_id, p.tag)
                kept.append(Button(t._("Game record"), payload))
            elif p.name not in PUBLIC_REFUSED:
                kept.append(button)
        if kept:
            rows.append(tuple(kept))
    return tuple(rows)
