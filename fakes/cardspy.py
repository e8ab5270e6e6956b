"""The one detector of private cards that every privacy check of the suite uses.

Two questions, kept apart:

- *Which cards are private now?* `secret_cards(state)`: cards in a hand, the talon or piles lying face
  down, cards laid down in the exchange, cards played face down in a crawl. A card played face up is
  public, and so is a talon shown to everyone (from then on). A finished game has no secrets.
- *Which cards does a text show?* `readings(text, langs)`: every form a card can take in what the bot
  writes or what a broken bot could write:

  - labels: a rank letter of any of the six languages (`bot.i18n.RANK_LETTERS`, the aliases the parser
    accepts such as the Estonian soldat `S`, and the notation `9 J Q K 10 T A`) next to a suit symbol
    (`♣♠♥♦`, outlined `♧♤♡♢`, with or without an emoji variation selector), rank then suit or suit then
    rank, with or without a space (`Q♠`, `q♠`, `Q ♠`, `♠Q`, `♠ Q`, `♠️Q`), and the Unicode playing cards
    (`🂭`);
  - codes, the record notation of `core.cards.CARD_NAMES` (`QS`, `10H`, `TH`, `qs`, `9c`), as in the
    bot's button payloads and commands.

Token boundaries (so that ordinary text raises no false alarm):

- a rank is not glued to a letter or digit on its outer side (`W♠` counts, `NOW♠` does not; `120 ♠`
  holds no `10 ♠`), and a code is a whole word (`AS` and `10H` count; `MASS`, `10HZ` do not);
- with a space between rank and suit the rank must be upper case (the bot renders ranks upper case;
  lower case is only typed, glued to the suit: `q♠`), which keeps `a ♥` out;
- a suit written as a suit (`♥ hearts`, `♥ kier`: `Translator.suit`) is not a card, so `Jan K ♥ hearts`
  shows no `K♥`;
- a "Last trick: …" line (`bot.render.without_played_tricks`) shows only played cards: it is left out
  (once the next deal is dealt, a deal's result still names its last trick, now in new hands);
- a code spelled in lower or mixed case that is a word of one of the six languages (`as`, `ad`, `ah`)
  is not a card; in upper case it is (`AS`);
- text the translation catalogs fix (an example such as "Write it like QS, 10H or Q♠") names no card
  of the game: literal stretches of catalog messages that hold a card are blanked before reading
  (only stretches of 12 or more other characters, so that a catalog entry can never hide a bare card).

Languages: a letter is read the way the message's language reads it (Turkish `K♠` is the queen, English
`K♠` the king). A token the message's languages do not spell is read in the notation, then in every
language. When one token has several readings (languages unknown, or a table whose language changed),
it is reported only when every reading is private: a public card could be meant.

Where cards hide: `telegram_parts` and `discord_parts` take every field a user sees or a button carries
(texts, captions, button labels, callback data and URLs, inline keyboards stored as a dict or as a JSON
string; embeds' title, description, fields, author and footer; components' labels, placeholders,
contents, select options and custom ids). Payloads that decode (`bot.commands.read_payload`) are read
by their arguments, anything else by its text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po

from bot.commands import PayloadError, read_payload
from bot.i18n import _EXTRA_ALIASES, LANGUAGES, RANK_LETTERS
from bot.render import without_played_tricks
from core.cards import CARD_NAMES, SUIT_SYMBOLS, cards_of
from core.deal import Phase
from core.game import GameState

__all__ = [
    "Part",
    "Reading",
    "discord_parts",
    "leaks",
    "message_parts",
    "readings",
    "secret_cards",
    "telegram_parts",
]

# --------------------------------------------------------------------------- what is private now


def secret_cards(state: GameState | None) -> frozenset[int]:
    """Cards nobody but their holder may know now (none once the game is over)."""
    if state is None or state.finished:
        return frozenset()
    deal = state.deal
    secret = 0
    for hand in deal.hands:
        secret |= hand
    hidden = list(deal.talon) + list(deal.discard)
    if deal.piles is not None:
        if deal.phase in (Phase.BLIND, Phase.BIDDING, Phase.TALON):
            hidden += list(deal.piles[0]) + list(deal.piles[1])
        else:  # the declarer took one pile into the hand (the hand covers it); the other lies face down
            hidden += list(deal.piles[1 - deal.pile])
    if deal.crawl:  # the first trick of a crawl is played face down
        hidden += list(deal.trick)
    for card in hidden:
        secret |= 1 << card
    if deal.talon_public and deal.piles is None:
        for card in deal.talon_as_dealt:
            secret &= ~(1 << card)
    return frozenset(cards_of(secret))


# --------------------------------------------------------------------------- recognising cards

_SUITS = {s: i for i, s in enumerate(SUIT_SYMBOLS)} | {"♧": 0, "♤": 1, "♡": 2, "♢": 3}
_VARIATION = dict.fromkeys(map(ord, "\ufe0f\ufe0e"))
_NOTATION = {"9": 0, "J": 1, "Q": 2, "K": 3, "10": 4, "T": 4, "A": 5}
_CODE_SUITS = {"C": 0, "S": 1, "H": 2, "D": 3}
_WORDS = frozenset({"as", "ad", "ah"})
"""Lower/mixed-case codes that are words of the six languages (en, tr, pl...): not read as cards."""

# Unicode playing cards: U+1F0A_ spades, B_ hearts, C_ diamonds, D_ clubs; low digit 1 A 9 A 10 B J D Q E K
_PLAYING = {
    chr(0x1F0A0 + block * 16 + nib): suit * 6 + rank
    for block, suit in enumerate((1, 2, 3, 0))
    for nib, rank in ((1, 5), (9, 0), (10, 4), (11, 1), (13, 2), (14, 3))
}


def _letters(lang: str) -> dict[str, int]:
    own = {letter: rank for rank, letter in enumerate(RANK_LETTERS[lang])}
    return own | _EXTRA_ALIASES.get(lang, {})


_BY_LANG = {lang: _letters(lang) for lang in LANGUAGES}
_ALL_RANKS = sorted({*_NOTATION, *(r for d in _BY_LANG.values() for r in d)}, key=len, reverse=True)
_RANK = "|".join(re.escape(r) for r in _ALL_RANKS)
_SUIT = "[" + "".join(_SUITS) + "]"
_EDGE_L = r"(?<![^\W_])"  # nothing alphanumeric just before
_EDGE_R = r"(?![^\W_])"  # nothing alphanumeric just after
_PATTERN = re.compile(
    rf"{_EDGE_L}(?P<rs>{_RANK})(?P<rs_gap> ?)(?P<rs_suit>{_SUIT})"
    rf"|(?P<sr_suit>{_SUIT})(?P<sr_gap> ?)(?P<sr>{_RANK}){_EDGE_R}"
    rf"|{_EDGE_L}(?P<code>(?:10|[9JQKAT])[CSHD]){_EDGE_R}"
    rf"|(?P<play>[{''.join(_PLAYING)}])",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Reading:
    """A card-like token and the cards it can mean (one, unless its languages disagree)."""

    token: str
    cards: frozenset[int]


def _rank_readings(rank: str, langs: Sequence[str]) -> frozenset[int]:
    """Ranks a letter means: in the message's languages, else the notation, else any language."""
    up = rank.upper()
    tiers = (
        {d[up] for lang in langs if (d := _BY_LANG.get(lang)) and up in d},
        {_NOTATION[up]} if up in _NOTATION else set(),
        {d[up] for d in _BY_LANG.values() if up in d},
    )
    return frozenset(next((t for t in tiers if t), set()))


def _scan(text: str, langs: Sequence[str]) -> Iterator[Reading]:
    for m in _PATTERN.finditer(text):
        token = m.group(0)
        if m.group("code"):
            code = token.upper()
            if token != code and token.lower() in _WORDS:
                continue
            yield Reading(token, frozenset({_CODE_SUITS[code[-1]] * 6 + _NOTATION[code[:-1]]}))
            continue
        if m.group("play"):
            yield Reading(token, frozenset({_PLAYING[token]}))
            continue
        rank, gap, suit = (
            (m.group("rs"), m.group("rs_gap"), m.group("rs_suit"))
            if m.group("rs")
            else (m.group("sr"), m.group("sr_gap"), m.group("sr_suit"))
        )
        if gap and rank != rank.upper():
            continue
        s = _SUITS[suit]
        yield Reading(token, frozenset(s * 6 + r for r in _rank_readings(rank, langs)))


def _suit_phrases() -> list[str]:
    """How `Translator.suit` writes a suit in every language (`♥ hearts`): a suit, not a card."""
    from bot.i18n import SUIT_NAMES, translator

    out: set[str] = set()
    for lang in LANGUAGES:
        t = translator(lang)
        out |= {f"{SUIT_SYMBOLS[s]} {t._(SUIT_NAMES[s])}" for s in range(4)}
    return sorted(out, key=len, reverse=True)


_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%\(\w+\)[sd]|%[sd]")


def _catalog_files() -> Iterator[tuple[str, bytes]]:
    for lang in LANGUAGES:
        source = resources.files("bot.locales").joinpath(f"{lang}.po")
        if source.is_file():
            yield lang, source.read_bytes()
    discord = Path(__file__).resolve().parents[1] / "adapters" / "discord" / "locales"
    for path in sorted(discord.glob("*.po")):
        yield path.stem, path.read_bytes()


@cache
def _fixed_texts() -> tuple[str, ...]:
    """Literal stretches of catalog messages (every language) that hold a card-like token."""
    import io

    stretches: set[str] = set()
    for lang, data in _catalog_files():
        catalog = read_po(io.BytesIO(data), locale=None)
        for message in catalog:
            ids = message.id if isinstance(message.id, tuple | list) else (message.id,)
            strs = message.string if isinstance(message.string, tuple | list) else (message.string,)
            for text in (*ids, *strs):
                if not text:
                    continue
                for stretch in _PLACEHOLDER.split(str(text)):
                    found = list(_scan(_normalise(stretch), [lang]))
                    rest = len(stretch) - sum(len(r.token) for r in found)
                    if found and rest >= 12:
                        stretches.add(_normalise(stretch))
    return tuple(sorted(stretches, key=len, reverse=True))


def _normalise(text: str) -> str:
    return text.translate(_VARIATION)


@cache
def _phrases() -> tuple[str, ...]:
    return (*_fixed_texts(), *_suit_phrases())


def readings(text: str, langs: Iterable[str] | None = None) -> list[Reading]:
    """Every card-like token in `text` with the cards it can mean for a reader of `langs` (None: any)."""
    order = list(LANGUAGES if langs is None else langs)
    clean = _normalise(text)
    for phrase in _phrases():
        if phrase in clean:
            clean = clean.replace(phrase, "\x00")
    return [r for r in _scan(clean, order) if r.cards]


# --------------------------------------------------------------------------- where cards hide


@dataclass(frozen=True)
class Part:
    """One field of a message: `text` is read for labels and codes, a `payload` by its arguments."""

    where: str
    value: str
    payload: bool = False


def _payload_cards(value: str) -> list[Reading] | None:
    """Cards among a service payload's arguments (a Discord custom id `t|<payload>|...` too), or None
    when the value is not a payload."""
    candidates = [value]
    if "|" in value:
        candidates += value.split("|")
    for candidate in candidates:
        try:
            payload = read_payload(candidate)
        except PayloadError:
            continue
        out: list[Reading] = []
        for arg in payload.args:
            out += [r for r in _scan(arg, []) if r.token == arg]
        return out
    return None


def leaks(parts: Iterable[Part], private: Collection[int], langs: Iterable[str] | None = None) -> list[str]:
    """What in `parts` shows a card of `private` (a token every reading of which is private): one line
    per field, naming the cards, how they were written, the field and its text."""
    order = list(LANGUAGES if langs is None else langs)
    out: list[str] = []
    for part in parts:
        found: list[Reading] | None = _payload_cards(part.value) if part.payload else None
        if found is None:
            text = part.value
            for lang in order:  # "Last trick: ..." shows played cards, maybe in the next deal's hands now
                text = without_played_tricks(text, lang)
            found = readings(text, order)
        shown = [
            f"{'/'.join(CARD_NAMES[c] for c in sorted(r.cards))} as {r.token!r}"
            for r in found
            if r.cards and all(c in private for c in r.cards)
        ]
        if shown:
            out.append(f"{', '.join(shown)} in {part.where}: {part.value!r}")
    return out


def _markup(raw: object) -> Mapping[str, Any] | None:
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {"text": raw}
    return raw if isinstance(raw, Mapping) else None


def telegram_parts(obj: Mapping[str, Any] | None) -> list[Part]:
    """Fields of a Bot API message (a result) or of a send/edit call's parameters that people see or
    buttons carry: text, caption, poll texts, every inline/reply keyboard button (label, callback data,
    URL, switch query), whether the keyboard is a dict or a JSON string."""
    if not obj:
        return []
    parts: list[Part] = []
    for key in ("text", "caption", "question"):
        if isinstance(obj.get(key), str):
            parts.append(Part(key, obj[key]))
    for option in obj.get("options") or []:
        if isinstance(option, str):
            parts.append(Part("poll option", option))
        elif isinstance(option, Mapping) and isinstance(option.get("text"), str):
            parts.append(Part("poll option", option["text"]))
    markup = _markup(obj.get("reply_markup"))
    if markup:
        rows = [*(markup.get("inline_keyboard") or []), *(markup.get("keyboard") or [])]
        for row in rows:
            for button in row if isinstance(row, list) else []:
                if isinstance(button, str):
                    parts.append(Part("button", button))
                    continue
                if not isinstance(button, Mapping):
                    continue
                if isinstance(button.get("text"), str):
                    parts.append(Part("button label", button["text"]))
                if isinstance(button.get("callback_data"), str):
                    parts.append(Part("callback_data", button["callback_data"], payload=True))
                for key in ("url", "switch_inline_query", "switch_inline_query_current_chat"):
                    if isinstance(button.get(key), str):
                        parts.append(Part(f"button {key}", button[key]))
        if isinstance(markup.get("input_field_placeholder"), str):
            parts.append(Part("placeholder", markup["input_field_placeholder"]))
    return parts


def discord_parts(content: str | None, embeds: Iterable[Any], components: Iterable[Any]) -> list[Part]:
    """Fields of a Discord message (or one of its versions) that people see or buttons carry: content;
    embeds' title, description, fields, author and footer; components' labels, placeholders, text
    contents, select options (label, description, value) and custom ids, at any depth."""
    parts = [Part("content", content)] if content else []
    for embed in embeds:
        if not isinstance(embed, Mapping):
            continue
        for key in ("title", "description", "url"):
            if embed.get(key):
                parts.append(Part(f"embed {key}", str(embed[key])))
        for f in embed.get("fields") or []:
            parts += [Part("embed field", str(f.get(k))) for k in ("name", "value") if f.get(k)]
        for key in ("footer", "author"):
            sub = embed.get(key) or {}
            if isinstance(sub, Mapping) and (sub.get("text") or sub.get("name")):
                parts.append(Part(f"embed {key}", str(sub.get("text") or sub.get("name"))))

    def walk(items: Iterable[Any]) -> None:
        for item in items:
            if not isinstance(item, Mapping):
                continue
            for key in ("label", "placeholder", "content", "description"):
                if item.get(key):
                    parts.append(Part(f"component {key}", str(item[key])))
            if item.get("custom_id"):
                parts.append(Part("custom_id", str(item["custom_id"]), payload=True))
            if item.get("value") and isinstance(item.get("value"), str):
                parts.append(Part("option value", item["value"], payload=True))
            emoji = item.get("emoji")
            if isinstance(emoji, Mapping) and emoji.get("name"):
                parts.append(Part("emoji", str(emoji["name"])))
            walk(item.get("components") or [])
            walk(item.get("options") or [])
            if item.get("accessory"):
                walk([item["accessory"]])

    walk(components)
    return parts


def message_parts(text: str, buttons: Iterable[Iterable[Any]]) -> list[Part]:
    """Fields of a transport-neutral `bot.model.Message`: its text and each button's label and payload."""
    parts = [Part("text", text)]
    for row in buttons:
        for b in row:
            parts += [Part("button label", b.label), Part("button payload", b.payload, payload=True)]
    return parts
