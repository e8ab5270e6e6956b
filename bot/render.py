"""Text of every message, in the markup of `bot.markup` and the reader's language.

Renderers for a group take a `PublicTableView` (no hands in it); the hand renderer takes the seat's own
`SeatView`. Renderers return text (and buttons where there are any); the service decides audiences,
keys and when to send. Names coming from users are escaped here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bot.help import help_lines
from bot.i18n import LANGUAGE_NAMES, N_, Translator, translator
from bot.markup import escape
from bot.model import Button
from bot.reader import about
from bot.table import ChatSettings, SeatDoc
from bot.views import HIDDEN, PublicTableView, SeatLabel
from bot.vocabulary import PAGE_MARK, Choice, Mover, menu, picks, values
from bot.vocabulary import give_order as give_order  # the words of moves live there; kept here for callers
from bot.vocabulary import page_start as page_start
from core import events as ev
from core.actions import Action
from core.cards import CARD_NAMES, MARRIAGE_MASKS, SUIT_MASKS, cards_of
from core.deal import ACE_SUIT, Phase
from core.events import Event
from core.rules import RuleSet
from core.view import SeatView

__all__ = [
    "ERRORS",
    "LEVEL_NAMES",
    "PHASE_NAMES",
    "Rendered",
    "render_error",
    "render_hand",
    "render_help",
    "render_lobby",
    "render_stats",
    "render_table",
    "render_top",
]

Payload = Callable[[str, tuple[str, ...]], str]
"""Builds a button payload for (command name, args) at the table's next version."""

Rows = tuple[tuple[Button, ...], ...]

LEVEL_NAMES = {"easy": N_("easy"), "medium": N_("medium"), "hard": N_("hard")}

PHASE_NAMES = {
    Phase.BLIND: N_("blind choice"),
    Phase.BIDDING: N_("bidding"),
    Phase.SALE: N_("talon sale"),
    Phase.TALON: N_("talon"),
    Phase.DISCARD: N_("laying down"),
    Phase.EXCHANGE: N_("giving cards"),  # as its prompt says ("give a card to Ala"), in every language
    Phase.CONTRACT: N_("contract"),
    Phase.PLAY: N_("play"),
    Phase.DONE: N_("game over"),
}

ERRORS = {
    # The service's own refusals.
    "unknown": N_("Unknown command. Send /help for the list."),
    "invalid_button": N_("This button is not valid."),
    "stale_button": N_("This button is out of date: the table has moved on."),
    "other_table": N_("This button belongs to another table."),
    "no_public_games": N_("Public games are not available on this bot."),
    "no_table": N_("There is no table here. Start one with /new."),
    "no_table_for_you": N_("You are not sitting at any table."),
    "many_tables": N_("You sit at several tables: send this command in the group of the game."),
    "table_exists": N_("A table is already open in this chat."),
    "not_seated": N_("You are not sitting at this table."),
    "already_seated": N_("You are already sitting at this table."),
    "table_full": N_("The table is full."),
    "not_allowed": N_("Only the table's creator or a chat admin may do that."),
    "secret_in_group": N_(
        "Cards you give or lay down stay secret: send that in your private chat with the bot, "
        "not in the group."
    ),
    "lobby_only": N_("That is only possible before the game starts."),
    "game_only": N_("That is only possible during a game."),
    "too_few_players": N_("Not enough players to start."),
    "too_many_players": N_("Too many players for these rules."),
    "no_ai_to_remove": N_("There is no computer player to remove."),
    "bad_number": N_("That is not a number."),
    "bad_card": N_("That is not a card. Write it like QS, 10H or Q♠."),
    "missing_argument": N_("Something is missing after the command."),
    "unknown_option": N_("Unknown setting or option."),
    "bad_value": N_("That value is not allowed here."),
    "unknown_preset": N_("Unknown preset. Choose polish, estonian or russian."),
    "unknown_language": N_("Unknown language. Choose en, pl, ru, uk, et or tr."),
    "unknown_level": N_("Unknown level. Choose easy, medium or hard."),
    "no_such_seat": N_("There is no such seat."),
    "not_a_human": N_("A computer already plays that seat."),
    "already_voted": N_("You have already voted to kick this player."),
    "not_away": N_("You are playing your seat already."),
    "you_are_away": N_("A computer is playing for you. Send /back to play again."),
    "not_private": N_("Send this command in the group where the table is."),
    "unavailable": N_("The game storage is temporarily unavailable. Please try again in a moment."),
    "busy": N_("The table is busy. Please try again."),
    "internal": N_("Something went wrong on our side. Please try again."),
    "nothing_to_export": N_("There is no game to export yet."),
    # The engine's refusals (codes of core.errors.IllegalAction).
    "not_your_turn": N_("It is not your turn."),
    "deal_over": N_("This deal is already over."),
    "wrong_phase": N_("That move is not possible now."),
    "must_open": N_("You open the bidding: you cannot pass now."),
    "bad_bid_step": N_("Bids go in steps of {step}."),
    "bid_too_low": N_("That bid is too low."),
    "bid_too_high": N_("You cannot bid that much with this hand."),
    "bid_needs_marriage": N_("A bid above {limit} needs a marriage in your hand."),
    "blind_bid_too_high": N_("A blind bid cannot be that high."),
    "card_not_in_hand": N_("You do not have that card."),
    "must_follow_suit": N_("You must follow suit."),
    "must_trump": N_("You must play a trump."),
    "must_beat": N_("You must beat the trick."),
    "cannot_declare": N_("You cannot declare a marriage with this lead."),
    "bad_give": N_("Give one card to each other player."),
    "bad_discard": N_("Lay down exactly two different cards."),
    "no_such_pile": N_("There is no such talon pile."),
    "no_bomb": N_("You cannot bomb now."),
    "no_concede": N_("You cannot concede now."),
    "no_crawl": N_("You cannot crawl now."),
    "no_sale": N_("The talon cannot be sold in this game."),
    "contract_too_low": N_("The contract cannot be lower than your bid."),
    "contract_too_high": N_("You cannot declare that much with this hand."),
    "game_over": N_("The game is over."),
}


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    buttons: Rows = ()


# --- small pieces ---------------------------------------------------------------------------------


def seat_name(t: Translator, seat: SeatLabel) -> str:
    """A seat's name for markup: escaped, with a robot for a computer and a mark for an away player."""
    name = escape(seat.name)
    if seat.computer:
        return f"{name} 🤖"
    if seat.away:
        return f"{name} 💤"
    return name


def level_name(t: Translator, level: str | None) -> str:
    return t._(LEVEL_NAMES.get(level or "", N_("medium")))


def _names(t: Translator, seats: Sequence[SeatLabel]) -> list[str]:
    return [seat_name(t, s) for s in seats]


def _auction_text(t: Translator, names: list[str], auction: Sequence[tuple[int, int]]) -> str:
    passed = t._("pass")
    parts = [f"{names[s]} {v if v else passed}" for s, v in auction]
    return " · ".join(parts)


def _trick_text(t: Translator, names: list[str], cards: Sequence[int], seats: Sequence[int]) -> str:
    parts = []
    for c, s in zip(cards, seats, strict=True):
        parts.append(f"{names[s]} {'🂠' if c == HIDDEN else t.card(c)}")
    return " · ".join(parts)


def hand_order(cards: Sequence[int]) -> list[int]:
    """Cards as a hand shows them: by suit, high to low within a suit. The card buttons follow the same
    order, so the n-th choice is where the eye finds it in the hand."""
    return sorted(cards, key=lambda c: (c // 6, -(c % 6)))


def _hand_text(t: Translator, hand: int) -> str:
    """A hand sorted by suit, one group per suit that is held."""
    groups = []
    for suit in range(4):
        cards = hand_order(cards_of(hand & SUIT_MASKS[suit]))
        if cards:
            groups.append(" ".join(t.card(c) for c in cards))
    return "   ".join(groups) if groups else "—"


def _scores_text(t: Translator, names: list[str], totals: Sequence[int], barrel: Sequence[bool]) -> str:
    parts = []
    for s, total in enumerate(totals):
        mark = " 🛢" if s < len(barrel) and barrel[s] else ""
        parts.append(f"{names[s]} **{total}**{mark}")
    return " · ".join(parts)


Trick = tuple[Sequence[int], Sequence[int], int]
"""A trick taken: (cards in play order, their seats, the winner)."""

TRICK_TAKEN = N_("Trick {number}: {cards} → {name}")
"""A trick that was taken and that no table message showed (several were taken in one command)."""


def trick_lines(t: Translator, names: list[str], tricks: Sequence[tuple[int, Trick]]) -> list[str]:
    """One line per (trick number, trick) taken, "Trick 7: … → Ada": tricks that were taken while nobody
    looked (computers and forced cards playing on in one command), which the table message skipped."""
    lines = []
    for number, (cards, seats, winner) in tricks:
        text = t._(TRICK_TAKEN).format(
            number=number + 1, cards=_trick_text(t, names, cards, seats), name=names[winner]
        )
        lines.append(text)
    return lines


# --- lobby ----------------------------------------------------------------------------------------


def render_lobby(
    t: Translator,
    seats: Sequence[SeatDoc],
    settings: ChatSettings,
    rules: RuleSet,
    creator: str,
    payload: Payload,
) -> Rendered:
    labels = [SeatLabel.of(s) for s in seats]
    lines = [t._("**A table of 1000** · {preset}").format(preset=escape(t.preset(settings.preset)))]
    counts = ", ".join(str(n) for n in rules.player_counts)
    lines.append(t._("Players: {counts}. Seats taken: {n}.").format(counts=counts, n=len(seats)))
    for i, (seat, label) in enumerate(zip(seats, labels, strict=True)):
        extra = f" ({level_name(t, seat.level)})" if seat.kind == "ai" else ""
        lines.append(f"{i + 1}. {seat_name(t, label)}{extra}")
    lines.append(t._("Created by {name}.").format(name=escape(creator)))
    lines.append(t._("Join, add computer players, then start."))
    buttons: Rows = (
        (Button(t._("Join"), payload("join", ())), Button(t._("Leave"), payload("leave", ()))),
        (
            Button(t._("Add computer"), payload("add_ai", ())),
            Button(t._("Remove computer"), payload("remove_ai", ())),
        ),
        (Button(t._("Start"), payload("start", ())), Button(t._("Rules"), payload("rules", ()))),
    )
    return Rendered("\n".join(lines), buttons)


# --- the table (group) ----------------------------------------------------------------------------


_STEADY_TURNS = frozenset({Phase.BLIND, Phase.TALON, Phase.DISCARD, Phase.EXCHANGE, Phase.CONTRACT})
"""Phases whose player to act cannot change without an update of the table message in the compact policy
(the declarer acts until an event that updates it); in bidding and play every bid and card moves the
turn on."""


def render_table(
    t: Translator,
    v: PublicTableView,
    payload: Payload | None = None,
    *,
    live: bool = True,
    unseen_tricks: Sequence[tuple[int, Trick]] = (),
    reader: int | None = None,
) -> Rendered:
    """The group's table message for the current deal: only public facts.

    With `payload`, a "My hand" button sends `hand` (the player's hand comes back privately: a DM, or an
    ephemeral answer on Discord). `live`: the message is redrawn at every move; when it is not (the
    compact policy), it names nobody whose turn may be over before the next redraw: "bidding in
    progress", the player who leads the trick. `unseen_tricks` (number, trick): tricks taken since the
    last drawing that the "Last trick" line does not show (several taken in one command). `reader`: the
    seat that reads it, if one does (`bot.reader`: "You play blind", "Declarer: you")."""
    names = _names(t, v.seats)
    deal = N_("**Deal {number}** · dealer: {name}")
    lines = [about(t, deal, names, v.dealer, reader, number=v.deal_number + 1)]
    sitting_out = [s for s in range(len(v.seats)) if s not in v.active]
    if sitting_out:
        lines.append(about(t, N_("Sits out: {name}"), names, sitting_out[0], reader))
    if v.blind_seat >= 0:
        lines.append(about(t, N_("{name} plays blind."), names, v.blind_seat, reader))
    if v.auction:
        lines.append(t._("Bids: {bids}").format(bids=_auction_text(t, names, v.auction)))
    if v.sale:
        lines.append(t._("Talon sale: {bids}").format(bids=_auction_text(t, names, v.sale)))
    if v.declarer >= 0:
        if v.phase == Phase.PLAY or v.phase == Phase.DONE:
            declarer = N_("Declarer: {name}, contract {value}")
            lines.append(about(t, declarer, names, v.declarer, reader, value=v.contract))
        else:
            declarer = N_("Declarer: {name}, bid {value}")
            lines.append(about(t, declarer, names, v.declarer, reader, value=v.bid))
    if v.talon_on_table:
        lines.append(t._("Talon: {cards}").format(cards=t.cards(v.talon)))
    elif v.declarer >= 0 and not v.talon and v.phase in (Phase.EXCHANGE, Phase.CONTRACT, Phase.DISCARD):
        lines.append(t._("The talon was taken unseen."))
    if v.trump >= 0:
        lines.append(t._("Trump: {suit}").format(suit=t.suit(v.trump)))
    marriages = [
        f"{names[s]} {t.marriage('A' if m == ACE_SUIT else 'CSHD'[m])}"
        for s, ms in enumerate(v.marriages)
        for m in ms
    ]
    if marriages:
        lines.append(t._("Marriages: {list}").format(list=" · ".join(marriages)))
    if v.phase == Phase.PLAY:
        lines.extend(trick_lines(t, names, unseen_tricks))
    if v.last_trick is not None and v.phase == Phase.PLAY:
        cards, seats, winner = v.last_trick
        lines.append(
            t._("Last trick: {cards} → {name}").format(
                cards=_trick_text(t, names, cards, seats), name=names[winner]
            )
        )
    if v.phase == Phase.PLAY:
        if v.crawl and v.trick:
            lines.append(t._("Crawl: the cards lie face down."))
        if live or v.trick:
            trick = _trick_text(t, names, v.trick, v.trick_seats) if v.trick else "—"
            lines.append(t._("Trick {number}: {cards}").format(number=v.tricks + 1, cards=trick))
        leader = v.trick_seats[0] if v.trick_seats else v.to_act
        if not live and leader >= 0 and not v.finished:
            leads = t._("**Trick {number}:** {name} leads.")
            lines.append(leads.format(number=v.tricks + 1, name=names[leader]))
        taken = " · ".join(f"{names[s]} {v.taken[s]}" for s in sorted(v.active))  # seat order, as Scores
        lines.append(t._("Points this deal: {list}").format(list=taken))
    if v.to_act >= 0 and not v.finished and (live or v.phase in _STEADY_TURNS):
        lines.append(
            t._("**Turn:** {name} ({phase})").format(name=names[v.to_act], phase=t._(PHASE_NAMES[v.phase]))
        )
    elif not live and not v.finished and v.phase in (Phase.BIDDING, Phase.SALE):
        if v.phase == Phase.SALE:
            lines.append(t._("**The talon sale** is in progress."))
        else:
            lines.append(t._("**The bidding** is in progress."))
    lines.append(t._("Scores: {list}").format(list=_scores_text(t, names, v.totals, v.barrel)))
    if v.rules.bolts and any(v.bolts):
        bolts = " · ".join(f"{names[s]} {b}" for s, b in enumerate(v.bolts) if b)
        lines.append(t._("Bolts: {list}").format(list=bolts))
    buttons: Rows = ((Button(t._("My hand"), payload("hand", ())),),) if payload is not None else ()
    return Rendered("\n".join(lines), buttons)


# --- the hand (private) ---------------------------------------------------------------------------


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
    names = _names(t, seats)
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
        lines.append(t._("Bids: {bids}").format(bids=_auction_text(t, names, sv.auction)))
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
            lines.append(t._("Last trick: {cards}").format(cards=_trick_text(t, names, cards, tseats)))
        if sv.trick:
            lines.append(t._("Trick: {cards}").format(cards=_trick_text(t, names, sv.trick, sv.trick_seats)))
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


def escape_code(text: str) -> str:
    return text.replace("\\", "\\\\").replace("`", "\\`")


# --- rules, help, stats ---------------------------------------------------------------------------
def render_help(t: Translator, platform: str = "") -> Rendered:
    """The commands of the reader's platform (`bot.help`), each line's explanation in their language."""
    lines = [t._("**1000: commands**")]
    for commands, what in help_lines(platform):
        explained = t._(what) if what else ""
        lines.append(f"{commands}: {explained}" if commands and explained else commands or explained)
    if platform != "console":  # one person at their terminal: no admins, no votes, no one else's seat
        lines.append(rights_sentence(t))
    return Rendered("\n".join(lines))


def rights_sentence(t: Translator) -> str:
    """Who may do what (`bot.handlers.rights`), the same on every platform."""
    return t._(
        "Anyone seated or a chat admin may start; the table's creator or a chat admin changes settings and "
        "ends it; a chat admin hands a seat to a computer at once, the other players by a majority vote."
    )


STAT_FIELDS = ("games", "wins", "declared", "made", "score_sum", "marriages")


def render_stats(t: Translator, name: str, stats: dict[str, float], rating: float | None) -> Rendered:
    games = int(stats.get("games", 0))
    lines = [t._("**Statistics: {name}**").format(name=escape(name))]
    if not games:
        lines.append(t._("No finished games yet."))
    else:
        lines.append(t._("Games: {games} · wins: {wins}").format(games=games, wins=int(stats.get("wins", 0))))
        lines.append(
            t._("Deals declared: {declared} · contracts made: {made}").format(
                declared=int(stats.get("declared", 0)), made=int(stats.get("made", 0))
            )
        )
        average = stats.get("score_sum", 0.0) / games
        lines.append(t._("Average final score: {value}").format(value=round(average)))
        lines.append(t._("Marriages declared: {n}").format(n=int(stats.get("marriages", 0))))
    if rating is not None:
        lines.append(t._("Rating: {value}").format(value=round(rating)))
    return Rendered("\n".join(lines))


def render_top(t: Translator, rows: Sequence[tuple[str, float]]) -> Rendered:
    lines = [t._("**Top players**")]
    if not rows:
        lines.append(t._("Nobody is rated yet: ratings come from games with two or more people."))
    for i, (name, rating) in enumerate(rows):
        lines.append(f"{i + 1}. {escape(name)} · {round(rating)}")
    return Rendered("\n".join(lines))


def render_heading(t: Translator, title: str) -> str:
    """The first line of a private message about a group's game: which group it belongs to."""
    return t._("🃏 Game in «{title}»").format(title=escape(title))


PLAYED_ONLY = (
    N_("Last trick: {cards} → {name}"),
    TRICK_TAKEN,
    N_("Talon taken by {name}: {cards}"),
    N_("Talon you took: {cards}"),
)
"""Lines that show only cards of tricks taken or of a finished deal's public talon (its result, told to
everyone or to the declarer)."""


def without_played_tricks(text: str, lang: str) -> str:
    """`text` without the lines that show only cards already played or shown to everyone (`PLAYED_ONLY`:
    the previous trick on a table message, tricks taken unseen, a finished deal's final trick and public
    talon on its result). Privacy checks scan the rest: once the next deal is dealt, those cards are in
    new hands, yet naming them where they were played is no leak."""
    t = translator(lang)
    patterns = [_line_pattern(t._(template)) for template in PLAYED_ONLY]
    kept = [ln for ln in text.split("\n") if not any(p.fullmatch(ln.lstrip("*_ ")) for p in patterns)]
    return "\n".join(kept)


def _line_pattern(template: str) -> re.Pattern[str]:
    """A translated template as a pattern: each `{field}` any text."""
    parts = re.split(r"\{\w+\}", template)
    return re.compile(".+?".join(re.escape(p) for p in parts))


def render_chat_heading(t: Translator, title: str) -> str:
    """The first line of a private answer to a command given in a group that has no table."""
    return t._("🃏 In «{title}»").format(title=escape(title))


def render_error(t: Translator, code: str, **values: object) -> str:
    message = ERRORS.get(code)
    if message is None:
        return t._("That move is not possible now.")
    text = t._(message)
    try:
        return text.format(**values)
    except (KeyError, IndexError):
        return text


def language_list() -> str:
    return ", ".join(f"{code} ({name})" for code, name in LANGUAGE_NAMES.items())


__all__ += [
    "TRICK_TAKEN",
    "Trick",
    "hand_order",
    "language_list",
    "private_notes",
    "render_chat_heading",
    "render_heading",
    "seat_name",
    "trick_lines",
    "without_played_tricks",
]
