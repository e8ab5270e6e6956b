"""Finding English in what a non-English user was shown.

`EnglishFinder(lang)` knows every English text the bot can write (the service's catalog `en.po`, the
Discord adapter's catalog ids, the Telegram adapter's texts, which are in `en.po` too) and reports the
pieces of them that appear in a text although `lang`'s translation differs, plus whole English words
from a list (Turn, Pass, Bid, You...) unless the language itself uses that word (Estonian says "Pass").
Placeholders split a message into pieces; a piece counts when it has a word of five letters or two
words, so that a lone "OK" or a card letter never does. Names are the caller's to remove.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
OTHER_LANGUAGES = ("pl", "ru", "uk", "et", "tr")

ENGLISH_WORDS = (
    "Turn", "Pass", "Bid", "Bids", "You", "Your", "Hand", "Join", "Start", "Score", "Scores", "Deal",
    "Trick", "Trump", "Talon", "Winner", "Game", "Table", "Players", "Computer", "Leave", "Rules",
    "Settings", "Contract", "Declarer", "Dealer", "dealer", "points", "deal", "the", "and", "your", "you",
    "with", "turn", "wins", "made", "failed", "Marriage", "marriage", "Take", "Give", "Play", "Discard",
    "Sell", "Blind", "seconds", "played", "Created", "Seats", "taken", "waiting", "Waiting", "talon",
    "trick", "trump", "bid", "pass", "left", "right", "clubs", "spades", "hearts", "diamonds",
)  # fmt: skip
"""Words that give English away (checked as whole words, case-sensitive)."""

_PLACEHOLDER = re.compile(r"\{\w*\}")
_SPLIT = re.compile(r"\{\w*\}|\n| · |\*\*|\\|`")
_WORD = re.compile(r"[^\W\d_]+")


@cache
def _catalog(path: Path, lang: str) -> Catalog:
    with path.open("rb") as fh:
        return read_po(fh, locale=lang)


def _pairs(lang: str) -> Iterator[tuple[str, str]]:
    """(English text, its translation in `lang`) of every message, plural forms included."""
    bot_en, bot_l = (
        _catalog(ROOT / "bot/locales/en.po", "en"),
        _catalog(ROOT / f"bot/locales/{lang}.po", lang),
    )
    for m in bot_en:
        if not m.id:
            continue
        other = bot_l.get(m.id)
        english = [m.string] if isinstance(m.string, str) else list(m.string)
        translated = (
            [] if other is None else [other.string] if isinstance(other.string, str) else other.string
        )
        for text in english:
            yield text or (m.id if isinstance(m.id, str) else m.id[0]), " ".join(t for t in translated if t)
    dc = _catalog(ROOT / f"adapters/discord/locales/{lang}.po", lang)
    for m in dc:
        if m.id and isinstance(m.id, str):
            yield m.id, m.string if isinstance(m.string, str) else ""


def _pieces(text: str) -> Iterator[str]:
    for raw in _SPLIT.split(text):
        piece = raw.strip(" .,:;!?()«»\"'-–—·")
        words = _WORD.findall(piece)
        if len(words) >= 2 or any(len(w) >= 5 for w in words):
            yield piece


class EnglishFinder:
    def __init__(self, lang: str) -> None:
        self.lang = lang
        translations: list[str] = []
        pieces: set[str] = set()
        for english, translated in _pairs(lang):
            translations.append(translated)
            for piece in _pieces(english):
                if piece not in translated:
                    pieces.add(piece)
        own = "\n".join(translations)
        # A piece the language's own catalog uses (a name, a borrowed word) is not a leak.
        self.pieces = sorted((p for p in pieces if not _contains(own, p)), key=len, reverse=True)
        self.words = [w for w in ENGLISH_WORDS if not _contains(own, w)]
        alternatives = "|".join(re.escape(p) for p in [*self.pieces, *self.words])
        self._pattern = re.compile(r"(?<!\w)(?:" + alternatives + r")(?!\w)")

    def find(self, text: str) -> list[str]:
        """The English pieces and words in `text`."""
        return sorted(set(self._pattern.findall(text)))


def _contains(text: str, piece: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(piece) + r"(?!\w)", text) is not None


def plain(text: str) -> str:
    """Telegram HTML or Discord markdown as the reader sees it."""
    text = re.sub(r"<[^>]+>", "", text)
    return html.unescape(text).replace("**", "").replace("`", "")


def without(text: str, names: Iterable[str]) -> str:
    """The text with the names people and computers go by removed (they may be any word)."""
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, "·")
    return text


def _typed() -> list[str]:
    """What people type (the help's command columns, `/command` words): commands, not English text."""
    from bot.help import DISCORD, TERMINAL, TYPED

    return [commands for commands, _ in (*TYPED, *DISCORD, *TERMINAL) if commands]


_COMMAND = re.compile(r"/thousand \w+|/\w+")


def english_in(lang: str, texts: Iterable[tuple[str, str]], names: Iterable[str]) -> list[str]:
    """`where: English found: text` for each (where, text) that has English in it."""
    from bot.commands import COMMANDS

    finder = EnglishFinder(lang)
    names = [*names, *_typed()]
    report = []
    for where, text in texts:
        if plain(text).strip() in COMMANDS:  # a command's name as typed (Telegram's command menu lists them)
            continue
        seen = _COMMAND.sub("·", without(plain(text), names))
        found = finder.find(seen)
        if found:
            report.append(f"{where}: {found}: {seen[:300]!r}")
    return report
