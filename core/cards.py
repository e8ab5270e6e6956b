"""Cards of the 24-card deck, as small ints and bit masks.

The engine doubles as the computer players' simulator, so a card is a plain ``int`` from 0 to 23
(``suit * 6 + rank``) and a set of cards is an ``int`` bit mask: legal moves, voids and trick winners
are then a few bit operations instead of loops over objects.  Within a suit a higher card number is a
higher card (9 < J < Q < K < 10 < A), which makes "highest card of a suit in a mask" a ``bit_length``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from enum import IntEnum
from typing import Final


class Suit(IntEnum):
    """Suits in the order RULES.md lists them; the letter is the record notation."""

    CLUBS = 0
    SPADES = 1
    HEARTS = 2
    DIAMONDS = 3

    @property
    def letter(self) -> str:
        return SUIT_LETTERS[self]

    @property
    def symbol(self) -> str:
        return SUIT_SYMBOLS[self]


class Rank(IntEnum):
    """Ranks from low to high."""

    NINE = 0
    JACK = 1
    QUEEN = 2
    KING = 3
    TEN = 4
    ACE = 5


Card = int
"""A card number 0..23: ``suit * 6 + rank``."""

CardMask = int
"""A set of cards: bit ``1 << card`` for each card."""

SUIT_LETTERS: Final = ("C", "S", "H", "D")
SUIT_SYMBOLS: Final = ("♣", "♠", "♥", "♦")
RANK_NAMES: Final = ("9", "J", "Q", "K", "10", "A")
RANK_POINTS: Final = (0, 2, 3, 4, 10, 11)

DECK_SIZE: Final = 24
FULL_DECK: Final[CardMask] = (1 << DECK_SIZE) - 1
SUIT_MASKS: Final = tuple(0b111111 << (6 * s) for s in range(4))
CARD_POINTS: Final = tuple(RANK_POINTS[c % 6] for c in range(DECK_SIZE))
NINES: Final[CardMask] = sum(1 << (6 * s) for s in range(4))
ACES: Final[CardMask] = sum(1 << (6 * s + Rank.ACE) for s in range(4))
MARRIAGE_MASKS: Final = tuple((1 << (6 * s + Rank.QUEEN)) | (1 << (6 * s + Rank.KING)) for s in range(4))
TOTAL_CARD_POINTS: Final = 120


def card(rank: Rank | int, suit: Suit | int) -> Card:
    return int(suit) * 6 + int(rank)


def suit_of(c: Card) -> int:
    return c // 6


def rank_of(c: Card) -> int:
    return c % 6


def beats(c: Card, w: Card, trump: int, crawl: bool = False) -> bool:
    """Whether ``c``, played after the trick's current winner ``w``, takes the trick over: a higher card of
    the same suit, or a trump over a card of another suit (no trump counts during a crawl). The one place
    the rule is written: the engine, the replay steps, the simulation and the solver ask it."""
    s = c // 6
    if s == w // 6:
        return c > w
    return not crawl and s == trump


def trick_winner(trick: Sequence[Card], trump: int, crawl: bool = False) -> int:
    """Index in ``trick`` (in the order played) of the card that takes it."""
    best = 0
    for i in range(1, len(trick)):
        if beats(trick[i], trick[best], trump, crawl):
            best = i
    return best


def card_name(c: Card) -> str:
    """Record notation: ``10H``, ``QS``."""
    return RANK_NAMES[c % 6] + SUIT_LETTERS[c // 6]


CARD_NAMES: Final = tuple(card_name(c) for c in range(DECK_SIZE))


def mask_of(cards: Iterable[Card]) -> CardMask:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _bits_table(offset: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(i + offset for i in range(12) if v >> i & 1) for v in range(4096))


_LOW12: Final = _bits_table(0)
_HIGH12: Final = _bits_table(12)


def cards_of(mask: CardMask) -> tuple[Card, ...]:
    """The cards of a mask in ascending order (by suit, then rank): two table look-ups."""
    return _LOW12[mask & 4095] + _HIGH12[mask >> 12]


def iter_cards(mask: CardMask) -> Iterator[Card]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def count(mask: CardMask) -> int:
    return mask.bit_count()


def points_of(mask: CardMask) -> int:
    return sum(CARD_POINTS[c] for c in iter_cards(mask))


class CardParseError(ValueError):
    """A token that is not a card; the message names the token."""

    def __init__(self, token: str) -> None:
        super().__init__(f"not a card: {token!r}")
        self.token = token


_SUIT_TOKENS: Final = {
    "C": 0, "S": 1, "H": 2, "D": 3,
    "♣": 0, "♠": 1, "♥": 2, "♦": 3,
    "♧": 0, "♤": 1, "♡": 2, "♢": 3,
}  # fmt: skip
_RANK_TOKENS: Final = {"9": 0, "J": 1, "Q": 2, "K": 3, "10": 4, "T": 4, "A": 5}


def parse_card(token: str, rank_aliases: dict[str, int] | None = None) -> Card:
    """Parse ``QS``, ``10h``, ``TH``, ``q♠``; ``rank_aliases`` adds localized rank letters (upper case)."""
    text = token.strip()
    if len(text) < 2:
        raise CardParseError(token)
    suit = _SUIT_TOKENS.get(text[-1].upper())
    if suit is None:
        raise CardParseError(token)
    rank_text = text[:-1].strip().upper()
    rank = _RANK_TOKENS.get(rank_text)
    if rank is None and rank_aliases:
        rank = rank_aliases.get(rank_text)
    if rank is None:
        raise CardParseError(token)
    return suit * 6 + rank


def format_cards(mask: CardMask) -> str:
    return " ".join(CARD_NAMES[c] for c in cards_of(mask))
