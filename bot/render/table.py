"""The group's table message of the current deal: only public facts (a `PublicTableView` holds no hand)."""

from __future__ import annotations

from collections.abc import Sequence

from bot.i18n import N_, Translator
from bot.model import Button
from bot.reader import about
from bot.views import PublicTableView
from core.deal import ACE_SUIT, Phase

from .words import (
    PHASE_NAMES,
    Payload,
    Rendered,
    Rows,
    Trick,
    auction_text,
    seat_names,
    trick_lines,
    trick_text,
)

__all__ = ["render_table"]


def _scores_text(t: Translator, names: list[str], totals: Sequence[int], barrel: Sequence[bool]) -> str:
    parts = []
    for s, total in enumerate(totals):
        mark = " 🛢" if s < len(barrel) and barrel[s] else ""
        parts.append(f"{names[s]} **{total}**{mark}")
    return " · ".join(parts)


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
    names = seat_names(t, v.seats)
    deal = N_("**Deal {number}** · dealer: {name}")
    lines = [about(t, deal, names, v.dealer, reader, number=v.deal_number + 1)]
    sitting_out = [s for s in range(len(v.seats)) if s not in v.active]
    if sitting_out:
        lines.append(about(t, N_("Sits out: {name}"), names, sitting_out[0], reader))
    if v.blind_seat >= 0:
        lines.append(about(t, N_("{name} plays blind."), names, v.blind_seat, reader))
    if v.auction:
        lines.append(t._("Bids: {bids}").format(bids=auction_text(t, names, v.auction)))
    if v.sale:
        lines.append(t._("Talon sale: {bids}").format(bids=auction_text(t, names, v.sale)))
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
                cards=trick_text(t, names, cards, seats), name=names[winner]
            )
        )
    if v.phase == Phase.PLAY:
        if v.crawl and v.trick:
            lines.append(t._("Crawl: the cards lie face down."))
        if live or v.trick:
            trick = trick_text(t, names, v.trick, v.trick_seats) if v.trick else "—"
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
