"""The Discord front end's own strings: slash command descriptions and the few labels and notes that the
service does not write (the "My hand" button, the turn ping, the DM notes).

They live in this package's gettext catalogs (`locales/<lang>.po`), compiled in memory like the service's
(`bot.i18n`), because they exist only on Discord. `CommandTranslator` hands the descriptions to
discord.py, which sends them as `description_localizations` when the commands are synced.
"""

from __future__ import annotations

import io
from functools import cache
from importlib import resources
from typing import Final

import discord
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations
from discord import app_commands

from bot.i18n import LANGUAGES, N_, negotiate, translator

__all__ = ["DISCORD_LOCALES", "CommandTranslator", "Labels", "labels", "language_of"]

DISCORD_LOCALES: Final[dict[str, discord.Locale]] = {
    "pl": discord.Locale.polish,
    "ru": discord.Locale.russian,
    "uk": discord.Locale.ukrainian,
    "tr": discord.Locale.turkish,
}
"""Discord locales that have a catalog here (Discord has no Estonian locale; English is the default)."""

# Labels and notes (the service's messages are translated by the service).
MY_HAND: Final = N_("My hand")
HAND_BY_DM: Final = N_("Hand by DM")
HAND_HERE: Final = N_("Hand here")
OPEN_TABLE: Final = N_("Open table")
YOUR_TURN: Final = N_("{mention}, your turn.")
HURRY: Final = N_("{mention}, your turn is about to time out.")
DM_CLOSED: Final = N_("{mention}, I cannot send you direct messages: use the My hand button instead.")
DM_ON: Final = N_("Your hand now comes by direct message.")
DM_OFF: Final = N_("Your hand now shows here, only to you.")
DM_SENT: Final = N_("I sent it to you by direct message.")
DONE: Final = N_("Done.")
RESTARTING: Final = N_("The bot is restarting: please try again in a moment.")
FAILED: Final = N_("Something went wrong. Please try again.")
QUEUE_BY_DM: Final = N_(
    "I keep this up to date in our direct messages, with its buttons; your table and your cards come "
    "there too."
)
QUEUE_NEEDS_DM: Final = N_(
    "A public game is played in direct messages, and I cannot send you any. Allow direct messages from "
    "this server's members in its privacy settings, then try /thousand play again. You are not in the queue."
)
CARD_OR_GAME: Final = N_(
    "Give either a card (to play it) or the options of a game (to find one with other players), not both."
)
NO_ACCESS: Final = N_(
    "I cannot post in this channel: I need View Channel, Send Messages, Embed Links and Attach Files here."
)


@cache
def _catalog(lang: str) -> NullTranslations:
    if lang == "en":
        return NullTranslations()
    source = resources.files("adapters.discord.locales").joinpath(f"{lang}.po")
    if not source.is_file():
        return NullTranslations()
    with source.open("rb") as fh:
        catalog = read_po(fh, locale=lang, domain="discord")
    buf = io.BytesIO()
    write_mo(buf, catalog, use_fuzzy=False)
    buf.seek(0)
    return Translations(buf, domain="discord")


class Labels:
    """The adapter's strings in one language."""

    __slots__ = ("_gettext", "lang")

    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in LANGUAGES else "en"
        self._gettext = _catalog(self.lang).gettext

    def _(self, message: str) -> str:
        return self._gettext(message)


@cache
def labels(lang: str) -> Labels:
    return Labels(lang)


def language_of(locale: str | discord.Locale | None) -> str | None:
    """The supported language for a Discord locale (`pl`, `en-US`...), or None."""
    if locale is None:
        return None
    return negotiate(str(locale.value if isinstance(locale, discord.Locale) else locale))


class CommandTranslator(app_commands.Translator):
    """Localizes command, option and group descriptions, and the names of choices given as `locale_str`
    (from the service's catalogs); command names and choice values stay as they are."""

    _LOCATIONS: Final = frozenset(
        {
            app_commands.TranslationContextLocation.command_description,
            app_commands.TranslationContextLocation.group_description,
            app_commands.TranslationContextLocation.parameter_description,
            app_commands.TranslationContextLocation.choice_name,
        }
    )

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        if context.location not in self._LOCATIONS:
            return None
        lang = next((code for code, loc in DISCORD_LOCALES.items() if loc is locale), None)
        if lang is None:
            return None
        if context.location is app_commands.TranslationContextLocation.choice_name:
            # Choice names are the service's words (a pace, a phrase, a preset): its catalogs have them.
            t = translator(lang)
            preset = string.extras.get("preset")
            text = t.preset(preset) if isinstance(preset, str) else t._(string.message)
        else:
            text = labels(lang)._(string.message)
        return text if text != string.message else None


# Command and option descriptions (msgids; the tree is built from these constants).
DESCRIPTIONS: Final = {
    "thousand": N_("Play the card game 1000"),
    "new": N_("Open a table in this channel"),
    "new.preset": N_("The rules to play by"),
    "join": N_("Take a seat at the table"),
    "leave": N_("Leave the table (in a game, a computer takes your seat)"),
    "start": N_("Start the game"),
    "bid": N_("Bid in the auction"),
    "bid.amount": N_("Your bid"),
    "pass": N_("Pass"),
    "contract": N_("Fix your contract after the exchange"),
    "contract.amount": N_("Your contract"),
    "play": N_("Play a card; without one, find a game with other players"),
    "play.card": N_("The card to play"),
    "play.preset": N_("Find a game: the rules (any: the first table that fills)"),
    "play.players": N_("Find a game: how many players"),
    "play.pace": N_("Find a game: how fast it is played"),
    "cancel": N_("Leave the queue for a game"),
    "say": N_("Say a fixed phrase to your public table"),
    "say.phrase": N_("The phrase"),
    "block": N_("Never be seated with a player of your public table again"),
    "block.player": N_("Their seat number or name"),
    "block.undo": N_("Undo a block instead"),
    "review": N_("After a deal: your costliest choices in it, privately"),
    "review.deal": N_("Which deal (default: the last one)"),
    "report": N_("Report a player of your public table"),
    "report.player": N_("Their seat number or name"),
    "report.reason": N_("Why"),
    "hand": N_("Show your hand (only you see it)"),
    "hand.dm": N_("From now on, send your hand by direct message (true) or show it here (false)"),
    "score": N_("Show the score sheet"),
    "rules": N_("Show the rules of this table"),
    "settings": N_("Change a rule or setting (Manage Server, or the table's creator)"),
    "settings.option": N_("The rule or setting"),
    "settings.value": N_("The new value"),
    "lang": N_("Choose the language"),
    "lang.language": N_("The language"),
    "kick": N_("Give a player's seat to a computer (by vote, or an admin)"),
    "kick.player": N_("The player"),
    "end": N_("End the game"),
    "export": N_("Get the game record as a file"),
    "stats": N_("Your statistics"),
    "top": N_("The best players here"),
    "top.public": N_("The public games' ladder instead"),
    "top.preset": N_("The ladder of these rules"),
    "back": N_("Play your own seat again after being away"),
    "help": N_("How to play"),
}
