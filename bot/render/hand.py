"""A player's private message: their hand, the state of the deal, and the moves they may make now as buttons
(bid values in pages, cards in the hand's order)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import N_, Translator
from bot.model import Button
from bot.reader import about
from bot.views import HIDDEN, SeatLabel
from bot.vocabulary import PAGE_MARK, Choice, Mover, menu, picks, values
from core import events as ev
from core.actions import Action
from core.cards import CARD_NAMES, MARRIAGE_MASKS, SUIT_MASKS, cards_of
from core.deal import Phase
from core.events import Event
from core.view import SeatView

from .words import PHASE_NAMES, Payload, Rendered, auction_text, hand_order, seat_names, trick_text

__all__ = [
    "FIRST_TRICK_NOTE",
    "PAGE_SIZE",
    "VALUES_ON_ONE_PAGE",
    "first_trick_note",
    "private_notes",
    "render_hand",
]


def _hand_text(t: Translator, hand: int) -> str:
    """A hand sorted by suit, one group per suit that is held."""
    groups = []
    for suit in range(4):
        cards = hand_order(cards_of(hand & SUIT_MASKS[suit]))
        if cards:
            groups.append(" ".join(t.card(c) for c in cards))
    return "   ".join(groups) if groups else "—"


VALUES_ON_ONE_PAGE = 12
"""Up to this many values (three rows of four) show at once; more go on pages."""
PAGE_SIZE = 8
"""Values per page (two rows of four), under a row that turns the pages."""


def _value_buttons(
    t: Translator, values: list[int], name: str, payload: Payload, start: int | None = None
) -> list[tuple[Button, ...]]:
    """A button per value, and pages when there are many: the page holding `start` (the lowest values
    by default), with a row to the previous and next pages and, when they are further, the first and the
    last. A page button carries the page's first value and redraws the hand without changing the table."""

    def rows_of(shown: list[int]) -> list[tuple[Button, ...]]:
        row = [Button(str(v), payload(name, (str(v),))) for v in shown]
        return [tuple(row[i : i + 4]) for i in range(0, len(row), 4)]

    if len(values) <= VALUES_ON_ONE_PAGE:
        return rows_of(values)
    pages = [values[i : i + PAGE_SIZE] for i in range(0, len(values), PAGE_SIZE)]
    index = 0
    if start is not None:
        index = min(sum(1 for v in values if v < start) // PAGE_SIZE, len(pages) - 1)

    def to(i: int, label: str) -> Button:
        return Button(label, payload(name, (f"{PAGE_MARK}{pages[i][0]}",)))

    nav: list[Button] = []
    if index >= 2:
        nav.append(to(0, f"« {pages[0][0]}"))
    if index >= 1:
        nav.append(to(index - 1, f"‹ {pages[index - 1][0]}–{pages[index - 1][-1]}"))
    if index + 1 < len(pages):
        nav.append(to(index + 1, f"{pages[index + 1][0]}–{pages[index + 1][-1]} ›"))
    if index + 2 < len(pages):
        nav.append(to(len(pages) - 1, f"{pages[-1][-1]} »"))
    return [*rows_of(pages[index]), tuple(nav)]


def _card_rows(sv: SeatView, choices: Sequence[Choice], payload: Payload) -> list[tuple[Button, ...]]:
    """Card choices (`bot.vocabulary`) as buttons in rows of four, in the order of the hand."""
    place = {CARD_NAMES[c]: i for i, c in enumerate(hand_order(cards_of(sv.hand)))}

    def card(ch: Choice) -> str:  # a card to play is `QS` (`QS !`); a pick adds its card to those chosen
        return ch.args[0] if ch.command == "play" else ch.args[-1]

    ordered = sorted(choices, key=lambda ch: place.get(card(ch), len(place)))
    buttons = [Button(ch.label, payload(ch.command, ch.args)) for ch in ordered]
    return [tuple(buttons[i : i + 4]) for i in range(0, len(buttons), 4)]


def private_notes(t: Translator, names: list[str], events: Sequence[Event], seat: int) -> list[str]:
    """What happened privately to `seat` in `events` (cards received, the talon seen...)."""
    notes = []
    for e in events:
        if e.audience != seat:
            continue
        if e.kind == ev.TALON_TAKEN and e.cards:
            notes.append(t._("You took the talon: {cards}").format(cards=t.cards(e.cards)))
        elif e.kind == ev.TALON_SHOWN and e.cards:
            notes.append(t._("The talon: {cards}").format(cards=t.cards(e.cards)))
        elif e.kind == ev.CARD_GIVEN and e.cards and e.value == seat:
            notes.append(t._("{name} gave you {card}").format(name=names[e.seat], card=t.card(e.cards[0])))
        elif e.kind == ev.CARD_GIVEN and e.cards and e.seat == seat:
            notes.append(
                t._("You gave {card} to {name}").format(name=names[e.value], card=t.card(e.cards[0]))
            )
        elif e.kind == ev.CARD_RECEIVED and e.cards:
            notes.append(t._("You received {card} from the talon").format(card=t.card(e.cards[0])))
        elif e.kind == ev.DISCARDED and e.cards:
            notes.append(t._("You laid down {cards}").format(cards=t.cards(e.cards)))
    return notes


FIRST_TRICK_NOTE = N_("No marriage on the first trick: a king or queen led now declares nothing.")


def first_trick_note(t: Translator, sv: SeatView) -> str | None:
    """Said to a seat that leads the first trick holding a marriage (before the lead, and while the trick
    it led with a king or queen of that marriage is on the table): the engine declares no marriage on the
    first trick of a deal (RULES.md), and a lead that would declare one later declares nothing now.
    Private: the pair is the seat's secret."""
    if sv.phase != Phase.PLAY or sv.trick_history or not sv.hand_known:
        return None
    if sv.trick:
        led = sv.trick[0]
        if sv.trick_seats[0] != sv.seat or led == HIDDEN or led % 6 not in (2, 3):  # a queen or king
            return None
        pair = MARRIAGE_MASKS[led // 6]
        if (sv.hand | 1 << led) & pair != pair:
            return None
    elif sv.to_act != sv.seat or not any(sv.hand & pair == pair for pair in MARRIAGE_MASKS):
        return None
    return t._(FIRST_TRICK_NOTE)


def render_hand(
    t: Translator,
    sv: SeatView,
    seats: Sequence[SeatLabel],
    legal: Sequence[Action],
    payload: Payload,
    *,
    notes: Sequence[str] = (),
    selection: tuple[int, ...] = (),
    page: int | None = None,
    alerts: Sequence[str] = (),
) -> Rendered:
    """A player's private message: their hand, the state of the deal, and the moves they may make now.

    `alerts` come first (a notification shows the first lines): the turn's time running out, a turn a
    computer played for them.
    `selection` holds the cards already picked in a multi-card move (gives, laying down two cards);
    `page` the value whose page of bid or contract buttons to show (see `_value_buttons`).
    """
    names = seat_names(t, seats)
    seat = sv.seat
    phase = t._(PHASE_NAMES[sv.phase])
    heading = t._("**Your hand** · deal {number} · {phase}").format(number=sv.deal_number + 1, phase=phase)
    lines = [*alerts, heading]
    if sv.hand_known:
        lines.append(_hand_text(t, sv.hand & ~_mask(selection)))
    elif seat in sv.active:
        lines.append(t._("Your cards lie face down (blind)."))
    else:
        lines.append(t._("You sit out this deal."))
    if sv.auction and sv.phase in (Phase.BIDDING, Phase.BLIND, Phase.SALE, Phase.TALON):
        lines.append(t._("Bids: {bids}").format(bids=auction_text(t, names, sv.auction)))
    if sv.declarer >= 0 and sv.phase != Phase.BIDDING:
        value = sv.contract if sv.phase in (Phase.PLAY, Phase.DONE) else sv.bid
        lines.append(about(t, N_("Declarer: {name}, {value}"), names, sv.declarer, seat, value=value))
    if sv.talon and sv.phase in (Phase.TALON, Phase.SALE, Phase.EXCHANGE, Phase.CONTRACT, Phase.DISCARD):
        lines.append(t._("Talon: {cards}").format(cards=t.cards(sv.talon)))
    if sv.trump >= 0:
        lines.append(t._("Trump: {suit}").format(suit=t.suit(sv.trump)))
    if sv.phase == Phase.PLAY:
        if sv.trick_history:
            cards, tseats, _ = sv.trick_history[-1]
            lines.append(t._("Last trick: {cards}").format(cards=trick_text(t, names, cards, tseats)))
        if sv.trick:
            lines.append(t._("Trick: {cards}").format(cards=trick_text(t, names, sv.trick, sv.trick_seats)))
    lines.extend(notes)
    first_trick = first_trick_note(t, sv)
    if first_trick is not None:
        lines.append(first_trick)
    rows: list[tuple[Button, ...]] = []
    if legal:
        prompt, rows = _prompt(t, sv, names, legal, payload, selection, page)
        lines.append(t._("**Your turn:** {prompt}").format(prompt=prompt))
    elif sv.to_act >= 0 and sv.to_act != seat and sv.phase != Phase.DONE:
        lines.append(t._("Waiting for {name}.").format(name=names[sv.to_act]))
    return Rendered("\n".join(lines), tuple(rows))


def _mask(cards: Sequence[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def _prompt(
    t: Translator,
    sv: SeatView,
    names: list[str],
    legal: Sequence[Action],
    payload: Payload,
    selection: tuple[int, ...],
    page: int | None = None,
) -> tuple[str, list[tuple[Button, ...]]]:
    """What to do now and its buttons: the choices of `bot.vocabulary.menu`, laid out for a chat (bid
    values in pages, cards in the hand's order, a give or a lay-down one card at a time)."""
    phase = sv.phase
    mover = Mover.of_view(sv)
    # A give or a lay-down is picked one card at a time (`picks`), not offered as every combination.
    choices = menu(t, mover, [a for a in legal if a.kind not in ("give", "discard")])

    def kind(*kinds: str) -> list[Choice]:
        return [c for c in choices if c.kind in kinds]

    def button(c: Choice) -> Button:
        return Button(c.label, payload(c.command, c.args))

    rows: list[tuple[Button, ...]]
    if phase == Phase.BLIND:
        rows = [tuple(button(c) for c in sorted(kind("blind"), key=lambda c: c.args != ("yes",)))]
        return t._("play blind (without looking at your cards)?"), rows
    if phase in (Phase.BIDDING, Phase.SALE):
        bids = values(legal, "bid")
        may_pass = bool(kind("pass"))
        rows = [(button(c),) for c in kind("pass")]
        rows += _value_buttons(t, bids, "bid", payload, page)
        if phase == Phase.SALE:
            text = t._("the talon is for sale: buy it with a bid, or pass.")
        elif not bids:
            text = t._("you can only pass.")
        elif len(bids) == 1 and may_pass:
            text = t._("bid {value} or pass.").format(value=bids[0])
        elif len(bids) == 1:
            text = t._("open the bidding at {value}.").format(value=bids[0])
        elif may_pass:
            text = t._("bid from {low} to {high}, or pass.").format(low=bids[0], high=bids[-1])
        else:
            text = t._("open the bidding: from {low} to {high}.").format(low=bids[0], high=bids[-1])
        return text, rows
    if phase == Phase.TALON:
        return t._("take the talon."), [(button(c),) for c in kind("take", "sell")]
    remaining = [c for c in cards_of(sv.hand) if c not in selection]
    if phase == Phase.DISCARD:
        rows = _card_rows(sv, picks(t, "discard", remaining, selection), payload)
        if selection:
            return t._("lay down one more card (chosen: {cards}).").format(cards=t.cards(selection)), rows
        return t._("lay down two cards in place of the pile."), rows
    if phase == Phase.EXCHANGE:
        others = mover.give_order()
        target = others[len(selection)] if len(selection) < len(others) else others[-1]
        rows = _card_rows(sv, picks(t, "give", remaining, selection), payload)
        extra = kind("bomb", "concede")
        if extra and not selection:
            rows.append(tuple(button(c) for c in extra))
        text = t._("give a card to {name}.").format(name=names[target])
        if selection:
            text += " " + t._("(chosen: {cards})").format(cards=t.cards(selection))
        return text, rows
    if phase == Phase.CONTRACT:
        contracts = values(legal, "contract")
        if len(contracts) == 1:
            text = t._("fix your contract at {value}.").format(value=contracts[0])
        else:
            text = t._("fix your contract: from {low} to {high}.").format(
                low=contracts[0], high=contracts[-1]
            )
        return text, _value_buttons(t, contracts, "contract", payload, page)
    # Play
    rows = _card_rows(sv, kind("card"), payload)
    declaring = kind("declare")
    if declaring:
        rows += _card_rows(sv, declaring, payload)
    rows += [(button(c),) for c in kind("crawl")]
    text = t._("play a card.") if sv.trick else t._("lead a card.")
    if declaring:
        text += " " + t._("★ declares the marriage.")
    return text, rows
