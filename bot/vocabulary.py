"""The words of the moves: a legal action as a person types it, as a button sends it, as a menu offers
it, and the action a typed move or a pressed button names.

One module owns this, as python-chess keeps `Move.uci()` and `parse_san` with its model: the chats'
buttons (`bot.render`), the web table (`adapters/web/viewjson.py`), Discord's autocomplete, the move
handlers and every test and bench that plays through the service read and write moves here, so a move
one of them writes is a move all of them read. `parse_move(*words(a)) == a` for every legal action `a`
(tests/bot/test_vocabulary.py holds it for fuzzed games of every preset and language).

Pure: no translator state beyond the one passed in, no I/O; `bot.render` builds on it, so this module
imports nothing of the service's rendering or context.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from bot.commands import MOVE_COMMANDS, canonical_name
from bot.i18n import N_, Translator, parse_card_in, translator
from core.actions import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    CRAWL,
    PASS,
    SELL,
    Action,
    Bid,
    Blind,
    Bomb,
    Concede,
    Contract,
    Crawl,
    Discard,
    Give,
    Pass,
    Play,
    SellTalon,
    TakeTalon,
    bid_action,
    contract_action,
)
from core.cards import CARD_NAMES, Card, CardParseError
from core.deal import layout_shape
from core.game import GameState
from core.rules import Declaration
from core.view import SeatView

__all__ = [
    "DECLARE_WORDS",
    "GIVE_LABEL",
    "GIVE_ONE",
    "NO",
    "PAGE_MARK",
    "YES",
    "Choice",
    "MoveError",
    "Mover",
    "Page",
    "Pick",
    "card_word",
    "give_order",
    "menu",
    "page_start",
    "parse",
    "parse_move",
    "picks",
    "presses",
    "typed",
    "values",
    "words",
]

# Words for yes and no in the supported languages (blind games, rule options).
YES: Final = frozenset({"yes", "y", "1", "true", "on", "tak", "да", "так", "jah", "evet"})
NO: Final = frozenset({"no", "n", "0", "false", "off", "nie", "нет", "ні", "ei", "hayır", "hayir"})

DECLARE_WORDS: Final = frozenset({"!", "+", "★", "declare", "marriage"})
"""After a played card: declare its marriage (`/play QS !`; a `!` glued to the card works too)."""

PAGE_MARK: Final = "p"
"""A page button's argument: `p180` redraws the hand at the page holding 180 (bid and contract buttons)."""

GIVE_LABEL: Final = N_("Give {list}")
"""A whole give as one choice (the web table's confirm button): "Give 9♣ to Ada, J♦ to Boris"."""
GIVE_ONE: Final = N_("{card} to {name}")

_MULTI: Final = {"give", "discard"}
"""Moves of several cards, which buttons pick one card at a time."""


class MoveError(ValueError):
    """A move that cannot be read; `code` is the refusal the service answers (`bot.render.ERRORS`)."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


class Page(NamedTuple):
    """A page button of bid or contract values: show the values from `start` (no move)."""

    command: str
    start: int


class Pick(NamedTuple):
    """Part of a give or a lay-down picked with buttons (no move yet): the cards chosen so far."""

    command: str
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Mover:
    """What the words of a seat's moves depend on: who gets the cards of a give (`active` from the
    dealer's left), whether the talon lies in two piles (`/take 2`), whether a played marriage card may be
    declared or not (`declaration` choice)."""

    seat: int
    active: tuple[int, ...]
    piles: bool = False
    choose_declare: bool = False

    @classmethod
    def of_state(cls, state: GameState, seat: int) -> Mover:
        deal = state.deal
        return cls(
            seat,
            tuple(deal.active),
            deal.piles is not None,
            state.rules.declaration == Declaration.CHOICE,
        )

    @classmethod
    def of_view(cls, sv: SeatView) -> Mover:
        # Two piles by the layout of the rules (a 4-card talon alone is no sign: estonian with four).
        piles = layout_shape(sv.rules, sv.players)[2] == 2
        return cls(sv.seat, sv.active, piles, sv.rules.declaration == Declaration.CHOICE)

    def give_order(self) -> list[int]:
        return give_order(self.active, self.seat)


def give_order(active: Sequence[int], seat: int) -> list[int]:
    """Who gets the cards of a give, in order: clockwise from the giver's left."""
    i = list(active).index(seat)
    return [active[(i + k) % len(active)] for k in range(1, len(active))]


def page_start(arg: str) -> int | None:
    """The value a page button (`p180`) asks to show, or None when `arg` is not a page argument."""
    if arg.startswith(PAGE_MARK) and arg[1:].isdigit() and len(arg) <= 8:
        return int(arg[1:])
    return None


def card_word(card: Card, lang: str | None = None) -> str:
    """A card as a move names it: the international notation (`KS`, what buttons carry), unless the
    reader's letters would read that as another card (a Turkish K is the queen, kız), then the reader's
    own label (`P♠`). Typed cards are read with the reader's letters first (`parse_move`)."""
    name = CARD_NAMES[card]
    if lang is None:
        return name
    try:
        if parse_card_in(name, (lang,)) == card:
            return name
    except CardParseError:
        pass
    return translator(lang).card(card)


# --- action → words ---------------------------------------------------------------------------------


def words(action: Action, mover: Mover, lang: str | None = None) -> tuple[str, tuple[str, ...]]:
    """The move command and its arguments that make `action`: a button's payload (`lang` None: cards in
    the international notation), or what a reader of `lang` types after the slash."""
    match action:
        case Play(card, declare):
            return "play", (card_word(card, lang), "!") if declare else (card_word(card, lang),)
        case Bid(value):
            return "bid", (str(value),)
        case Contract(value):
            return "contract", (str(value),)
        case Pass():
            return "pass", ()
        case Give(cards):
            to = dict(cards)
            return "give", tuple(card_word(to[s], lang) for s in mover.give_order())
        case Discard(cards):
            return "discard", tuple(card_word(c, lang) for c in cards)
        case TakeTalon(pile):
            return "take", (str(pile + 1),) if mover.piles else ()
        case Blind(announce):
            return "blind", ("yes",) if announce else ("no",)
        case SellTalon():
            return "sell", ()
        case Bomb():
            return "bomb", ()
        case Concede():
            return "concede", ()
        case Crawl():
            return "crawl", ()
    raise AssertionError(f"no words for {action!r}")


def typed(action: Action, mover: Mover, lang: str | None = None) -> str:
    """The command a person types for `action`: `/bid 120`, `/play QS !`, `/give 9C JD`, `/take 2`.
    Cards in the notation a reader of `lang` types (`card_word`); the command names are the chats' own,
    which every platform reads (a terminal also takes its language's verbs, adapters/console/verbs.py)."""
    name, args = words(action, mover, lang)
    return " ".join((f"/{name}", *args))


def presses(action: Action, mover: Mover) -> list[tuple[str, tuple[str, ...]]]:
    """The buttons (command, arguments) a person presses, in order, to make `action`: a give or a
    lay-down one card at a time (each press shows the hand with the choice so far), anything else at
    once. (A value on another page of bid buttons needs a page press first: see `bot.render`.)"""
    name, args = words(action, mover)
    if name in _MULTI:
        return [(name, args[: i + 1]) for i in range(len(args))]
    return [(name, args)]


# --- words → action ---------------------------------------------------------------------------------


def _number(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise MoveError("bad_number") from None
    if not 0 <= value <= 100_000:
        raise MoveError("bad_number")
    return value


def _card(token: str, langs: Sequence[str]) -> Card:
    try:
        return parse_card_in(token.rstrip("!"), langs)
    except CardParseError:
        raise MoveError("bad_card") from None


def _cards(args: Sequence[str], langs: Sequence[str]) -> list[Card]:
    tokens = [part for arg in args for part in arg.replace(",", " ").split()]
    return [_card(tok, langs) for tok in tokens]


def parse_move(
    name: str, args: Sequence[str], mover: Mover, *, langs: Sequence[str] = (), button: bool = False
) -> Action | Page | Pick:
    """The action the move command `name args` names for `mover`, or, from a button (`button`), a page of
    values to show (`Page`) or part of a multi-card move (`Pick`). Typed cards are read with the letters
    of `langs` first; a button's are the international notation (read with a Turkish reader's letters,
    its K would be another card). Raises `MoveError` for words that name no move; whether the move is
    legal now is the engine's to say."""
    if name == "pass":
        return PASS
    if name in ("bid", "contract"):
        if not args:
            raise MoveError("missing_argument")
        start = page_start(args[0]) if button else None
        if start is not None:
            return Page(name, start)
        value = _number(args[0])
        return bid_action(value) if name == "bid" else contract_action(value)
    cards_langs = () if button else langs
    if name == "play":
        if not args:
            raise MoveError("missing_argument")
        card = _card(args[0], cards_langs)
        declare = args[0].endswith("!") or any(a.lower() in DECLARE_WORDS for a in args[1:])
        return Play(card, declare and mover.choose_declare)
    if name == "give":
        others = mover.give_order()
        cards = _cards(args, cards_langs)
        if len(cards) < len(others) and button:
            return Pick(name, tuple(cards))
        if len(cards) != len(others):
            raise MoveError("bad_give")
        return Give(tuple(sorted(zip(others, cards, strict=True))))
    if name == "discard":
        cards = _cards(args, cards_langs)
        if len(cards) < 2 and button:
            return Pick(name, tuple(cards))
        if len(cards) != 2:
            raise MoveError("bad_discard")
        return Discard(tuple(sorted(cards)))
    if name == "take":
        pile = _number(args[0]) - 1 if args else 0
        if pile < 0:
            raise MoveError("no_such_pile")
        return TakeTalon(pile)
    if name == "blind":
        if not args:
            return BLIND_YES
        word = args[0].lower()
        if word in YES:
            return BLIND_YES
        if word in NO:
            return BLIND_NO
        raise MoveError("bad_value")
    simple: dict[str, Action] = {"sell": SELL, "bomb": BOMB, "concede": CONCEDE, "crawl": CRAWL}
    if name in simple:
        return simple[name]
    raise MoveError("unknown")


def parse(text: str, mover: Mover, langs: Sequence[str] = ()) -> Action:
    """The action a typed move names (`/bid 120`, `pas`, `play q♠ !`), read as the chats read a message
    (`bot.commands.parse_text`: an optional `/` or `!`, a name or alias, arguments). Raises `MoveError`
    for text that is no complete move."""
    stripped = text.strip()
    if stripped[:1] in ("/", "!"):
        stripped = stripped[1:]
    parts = stripped.split()
    name = canonical_name(parts[0].split("@", 1)[0]) if parts else None
    if name is None or name not in MOVE_COMMANDS:
        raise MoveError("unknown")
    parsed = parse_move(name, parts[1:], mover, langs=langs)
    assert not isinstance(parsed, Page | Pick)  # only buttons page or pick
    return parsed


# --- the menu ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Choice:
    """One thing a seat may choose now: its `kind` (the web table's: pass, bid, contract, blind, take,
    sell, bomb, concede, crawl, card, declare, discard, give), the button's `command` and `args`, the
    `label` in the reader's language, and the legal `action` it makes (None for one card of a
    multi-card move picked with buttons, `picks`)."""

    kind: str
    command: str
    args: tuple[str, ...]
    label: str
    action: Action | None


def _label(t: Translator, action: Action, mover: Mover, names: Sequence[str]) -> tuple[str, str]:
    """(kind, label) of a legal action."""
    match action:
        case Pass():
            return "pass", t._("Pass")
        case Bid(value):
            return "bid", str(value)
        case Contract(value):
            return "contract", str(value)
        case Blind(announce):
            return "blind", t._("Play blind") if announce else t._("Look at my cards")
        case TakeTalon(pile):
            if mover.piles:
                return "take", t._("Take pile {n}").format(n=pile + 1)
            return "take", t._("Take the talon")
        case SellTalon():
            return "sell", t._("Sell the talon")
        case Bomb():
            return "bomb", t._("Bomb")
        case Concede():
            return "concede", t._("Concede")
        case Crawl():
            return "crawl", t._("Crawl")
        case Play(card, declare):
            return ("declare", f"{t.card(card)} ★") if declare else ("card", t.card(card))
        case Discard(cards):
            return "discard", t.cards(cards)
        case Give(cards):
            to = dict(cards)
            given = ", ".join(
                t._(GIVE_ONE).format(card=t.card(to[s]), name=names[s]) for s in mover.give_order()
            )
            return "give", t._(GIVE_LABEL).format(list=given)
    raise AssertionError(f"no label for {action!r}")


def menu(t: Translator, mover: Mover, legal: Iterable[Action], names: Sequence[str] = ()) -> list[Choice]:
    """A choice per legal action, in the order of `legal`, labelled for the reader (`names`: the seats'
    names, for a give's label). Layouts group them as they like (the chats: bid values in pages, cards in
    hand order, gives and lay-downs one card at a time with `picks`); each choice makes its action."""
    out = []
    for action in legal:
        kind, label = _label(t, action, mover, names)
        name, args = words(action, mover)
        out.append(Choice(kind, name, args, label, action))
    return out


def picks(t: Translator, command: str, cards: Iterable[Card], selection: Sequence[Card] = ()) -> list[Choice]:
    """The next card of a give or a lay-down picked with buttons: a choice per card of `cards` (those
    still in hand, in the order to show), each sending the choice so far and that card."""
    chosen = tuple(CARD_NAMES[c] for c in selection)
    return [Choice("card", command, (*chosen, CARD_NAMES[c]), t.card(c), None) for c in cards]


def values(legal: Iterable[Action], command: str) -> list[int]:
    """The values of the legal bids (`bid`) or contracts (`contract`), in the engine's order (rising)."""
    kind = Bid if command == "bid" else Contract
    return [a.value for a in legal if type(a) is kind]
