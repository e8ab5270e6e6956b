"""Sentences about a seat, told to the person who reads them: "Ala failed 105" or "You failed 105".

A message has a reader when the service knows who reads it: a seat's private hand, the group messages of a
table in one person's private chat (the terminal's game, a private chat with computers), each person's
copy of a public table's messages, the web page of one seat. A sentence whose subject is that reader is
chosen in the second person *before* it is translated, so every language gets a sentence written for it
(Russian and Ukrainian verbs agree with "Вы"/"Ви", Polish says "Twój kontrakt"). A rendered, translated
sentence is never parsed back to change its person: a pattern built from one translated sentence may match
another ("Вы: 105 не сыграно" read as made), so nothing may depend on it.

A group read by many (`reader` None) gets every sentence in the third person, with names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from bot.i18n import N_, Translator

__all__ = ["TO_READER", "about"]

TO_READER: Final = {
    N_("{name} ended the game."): N_("You ended the game."),
    N_("{name} bombs: the deal is not played."): N_("You bomb: the deal is not played."),
    N_("{name} concedes {value}."): N_("You concede {value}."),
    N_("{name} made {value} ({points} points)."): N_("You made {value} ({points} points)."),
    N_("{name} failed {value} ({points} points)."): N_("You failed {value} ({points} points)."),
    N_("{name} declared {marriage}."): N_("You declared {marriage}."),
    N_("{name} held four nines."): N_("You held four nines."),
    N_("{name} hit 555: back to zero."): N_("You hit 555: back to zero."),
    N_("{name} plays blind."): N_("You play blind."),
    N_("{name} stayed too long on the barrel."): N_("You stayed too long on the barrel."),
    # Nominal in English, a verb in some languages ("Играет Вы" would not agree).
    N_("Declarer: {name}, bid {value}"): N_("Declarer: you, bid {value}"),
    N_("Declarer: {name}, contract {value}"): N_("Declarer: you, contract {value}"),
    N_("Declarer: {name}, {value}"): N_("Declarer: you, {value}"),
    N_("Talon taken by {name}: {cards}"): N_("Talon you took: {cards}"),
    # A verb in some languages ("сдаёт: Вы", "Pauzuje: Ty" would not agree).
    N_("**Deal {number}** · dealer: {name}"): N_("**Deal {number}** · you deal"),
    N_("Sits out: {name}"): N_("You sit out this deal."),
}
"""Sentences whose subject may be their reader (third person, with `{name}`), and the same sentence
addressed to that reader (second person, without `{name}`)."""


def about(
    t: Translator, template: str, names: Sequence[str], seat: int, reader: int | None, **values: object
) -> str:
    """The sentence `template` (a key of `TO_READER`) about `seat`, translated for `reader`: addressed
    to them when they are its subject, else with the seat's name."""
    if reader is not None and seat == reader:
        return t._(TO_READER[template]).format(**values)
    return t._(template).format(name=names[seat], **values)
