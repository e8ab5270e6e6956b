"""The adapter's own few texts (deep-link notes, the greeting after joining, the command menu).

They are translated through the project's catalogs (`bot.i18n`) like every other text; a language whose
catalog lacks one of them shows the English text.
"""

from __future__ import annotations

import logging
from typing import Final

from bot.i18n import LANGUAGES, N_, translator

__all__ = ["BAD_LINK", "COMMAND_MENU", "GROUP_TYPING", "HAND_SENT", "HAND_UNREACHABLE", "text_in"]

log = logging.getLogger("thousand.telegram.i18n")


def text_in(lang: str, message: str) -> str:
    """`message` in `lang` (English when the language or its catalog is missing)."""
    if lang not in LANGUAGES:
        return message
    try:
        return translator(lang)._(message)
    except (OSError, ModuleNotFoundError, ValueError):  # no catalog installed for it
        log.debug("no catalog for %s", lang)
        return message


COMMAND_MENU: Final = (
    ("new", N_("Open a table in this group: /new [preset]")),
    ("join", N_("Take a seat at the table")),
    ("bid", N_("Bid: /bid 120")),
    ("pass", N_("Pass")),
    ("play", N_("Play a card: /play QS")),
    ("queue", N_("Find a game with other players (in our private chat)")),
    ("cancel", N_("Leave the queue for a public game")),
    ("hand", N_("Show my hand (privately)")),
    ("score", N_("The score sheet")),
    ("rules", N_("The rules of this table")),
    ("settings", N_("Settings (admins): preset, options, language, turn time, computer level")),
    ("lang", N_("My language: /lang pl")),
    ("leave", N_("Leave the table (a computer takes the seat)")),
    ("kick", N_("Vote to hand a seat to a computer: /kick 2")),
    ("back", N_("Play my own turns again after being away")),
    ("end", N_("End the game (admins, the table's creator)")),
    ("export", N_("The game record as a file")),
    ("review", N_("My review of the last deal (privately)")),
    ("stats", N_("My statistics")),
    ("top", N_("The best players")),
    ("help", N_("How to play with this bot")),
)
"""The command menu (`setMyCommands`), in the order shown."""

BAD_LINK: Final = N_(
    "This link is not valid: it is too old, or it was made for someone else. Press Join or New in the group "
    "again."
)
"""The answer to a deep link forged, altered, made for another person, or expired: it names no group."""
HAND_SENT: Final = N_("Your cards are in our private chat.")
"""The toast of My hand pressed in a group (the hand went to the private chat)."""
HAND_UNREACHABLE: Final = N_("I cannot write to you privately: open our chat and press Start.")
"""The toast of My hand when the private chat does not work (the answer opens it)."""

NOTES: Final = (
    N_("{name}, I cannot write to you privately yet: open our chat and press Start."),
    N_("Open the chat"),
    N_("To take a seat, open our private chat and press Start: your cards will come there."),
    N_("Join"),
    N_("You joined the table in «{group}». Your cards will come here."),
    N_("You opened a table in «{group}». Your cards will come here."),
)
"""Texts the adapter writes itself (listed so that catalog extraction finds them)."""

GROUP_TYPING: Final = {
    True: N_(
        "In a group, /bid 120 and !bid 120 both work, and the buttons. In our private chat, bid 120 works "
        "too."
    ),
    False: N_(
        "In a group, type commands with a slash (/bid 120) or use the buttons: I see !bid 120 there only "
        "as a reply to one of my messages. In our private chat, bid 120 and !bid 120 work too."
    ),
}
"""What `/help` adds about typing in groups, by whether the bot reads every group message (privacy mode
off, `getMe`'s `can_read_all_group_messages`) or only commands, replies and mentions (privacy mode on)."""
