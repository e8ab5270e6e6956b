"""The view JSON of the web table (docs/WEB.md): what one seat, or a spectator, may see of a table.

A seat's view is built from `core.view.seat_view` (exactly what that seat may know) and the public view;
a spectator's only from `bot.views.public_view` (what the group sees). The full game state is used for
nothing else than building those two views and listing the legal actions of the seat to act, which is
the seat asking. Actions carry ready payloads (`bot.commands.encode_payload`) for the table's stored
version, so a move from the page is checked like a button press.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bot.commands import encode_payload, table_tag
from bot.i18n import Translator, translator
from bot.ladder import Rating
from bot.public.fanout import PUBLIC_PLATFORM
from bot.reader import about
from bot.render import PHASE_NAMES, first_trick_note, hand_order
from bot.render_result import (
    TALON_OF_DEAL,
    ending_text,
    result_notes,
    rounding_text,
    talon_of_deal,
    zero_reason,
)
from bot.table import TableDoc
from bot.views import CompletedTrick, PublicTableView, SeatLabel, previous_tricks, public_view, seat_labels
from bot.vocabulary import Mover, give_order, menu
from core.actions import (
    Action,
    Bid,
    Blind,
    Contract,
    Discard,
    Give,
    Pass,
    Play,
    TakeTalon,
)
from core.cards import CARD_NAMES, SUIT_LETTERS, cards_of
from core.deal import Phase, active_seats
from core.game import GameState
from core.scoring import DealResult
from core.view import HIDDEN, SeatView, seat_view

__all__ = ["view_json"]

_MARRIAGE_LETTERS = (*SUIT_LETTERS, "A")


def _tricks_json(tricks: Sequence[CompletedTrick]) -> list[dict[str, Any]]:
    return [
        {
            "cards": [{"seat": s, "card": CARD_NAMES[c]} for c, s in zip(t.cards, t.seats, strict=True)],
            "winner": t.winner,
            "points": t.points,
        }
        for t in tricks
    ]


def _code(c: int) -> str | None:
    return None if c == HIDDEN else CARD_NAMES[c]


def _suit(s: int) -> str | None:
    return SUIT_LETTERS[s] if 0 <= s < 4 else None


def view_json(
    doc: TableDoc,
    version: int,
    state: GameState | None,
    seat: int | None,
    lang: str,
    *,
    rating: Rating | None = None,
) -> dict[str, Any]:
    """The view of `seat` (None: a spectator) of the table `doc` stored at `version`. `rating`: the
    seat's person's public ladder rating at a public table (shown to them only)."""
    t = translator(lang)
    labels = seat_labels(doc)
    # Sentences name players plainly: the page marks a computer's seat itself (once).
    names = [label.name for label in labels]
    out: dict[str, Any] = {
        "version": version,
        "table_id": doc.id,
        "title": doc.title,
        "heading": _heading(doc, labels),
        "lang": t.lang,
        "status": doc.status,
        "preset": doc.settings.preset,
        "deal": 0,
        "phase": None,
        "phase_name": "",
        "seats": [
            {
                "name": label.name,
                "computer": label.computer,
                "away": label.away,
                "total": 0,
                "barrel": False,
                "bid": None,
                "cards": 0,
                "points": 0,
                "active": False,
            }
            for i, label in enumerate(labels)
        ],
        "me": seat,
        "dealer": -1,
        "to_act": -1,
        "declarer": -1,
        "bid": 0,
        "contract": 0,
        "trump": None,
        "marriages": [[] for _ in labels],
        "talon": None,
        "talon_size": 0,
        "trick": [],
        "last_trick": None,
        "tricks": [],
        "recent": [],
        "history": [],
        "talon_taken": None,
        "turn_deadline": None,
        "hand": None,
        "actions": [],
        "legal_cards": [],
        "prompt": "",
        "scores": [],
        "results": [],
        "finished": doc.status == "finished",
        "winner": None,
        "public": doc.id.startswith(f"{PUBLIC_PLATFORM}:"),
        "rating": None,
    }
    if state is None:
        return out
    pv = public_view(doc, state)
    _public_part(out, pv, t)
    out["tricks"] = _tricks_json(pv.completed)
    # The deals that ended since the last card the page may have seen, with their tricks and results,
    # while the next deal has no trick yet (its last two tricks often play themselves and the next deal
    # follows in the same update; a redeal or a bomb can follow at once too): the page shows each.
    # The seat's person reads the results: sentences about them say "You" (`bot.reader`).
    reader = seat if seat is not None and 0 <= seat < len(doc.seats) else None
    if state.results and (state.finished or not pv.completed):
        recent = []
        for r in reversed(state.results):
            tricks = previous_tricks(state, r.number) if r.ending == "played" else ()
            recent.append(
                {
                    "deal": r.number + 1,
                    "tricks": _tricks_json(tricks),
                    "result": _result_json(t, state, r, names, reader),
                }
            )
            if r.ending == "played" or len(recent) >= 4:
                break
        out["recent"] = recent[::-1]
    # Every finished deal's result (the stored game's), so a page opened or reloaded later can show any
    # of them, one tap away on its score sheet.
    out["history"] = [_result_json(t, state, r, names, reader) for r in state.results]
    out["talon_taken"] = _talon_taken(t, pv, names, reader)
    if doc.turn is not None and doc.turn.kind == "turn" and doc.status == "game":
        out["turn_deadline"] = doc.turn.deadline
    if seat is None or not 0 <= seat < len(doc.seats):
        out["me"] = None
        if pv.to_act >= 0 and not pv.finished:
            out["prompt"] = t._("Waiting for {name}.").format(name=names[pv.to_act])
        return out
    if rating is not None:
        out["rating"] = {
            "preset": doc.settings.preset,
            "rating": round(rating.rating),
            "provisional": rating.provisional,
            "games": rating.games,
        }
    sv = seat_view(state, seat)
    _private_part(out, sv, t)
    legal: Sequence[Action] = ()
    if not state.finished and doc.status == "game" and state.to_act == seat:
        legal = state.legal_actions(seat)
    tag = table_tag(doc.serial)

    def payload(name: str, args: tuple[str, ...]) -> str:
        return encode_payload(name, args, version, doc.id, tag)

    out["actions"], out["legal_cards"] = _actions(t, sv, legal, payload, [label.name for label in labels])
    # The seat's own review of each finished deal (`/review N`, `bot.review`): a button on its result.
    for i, r in enumerate(out["history"]):
        r["review"] = payload("review", (str(i + 1),))
    if doc.status == "game" and doc.seats[seat].away:
        # A computer plays for a seat away after missed turns until its person says `back` (a chat has
        # /back; the page has this button, a web guest has nothing else).
        back = {"kind": "back", "label": t._("Back to the game"), "payload": payload("back", ())}
        out["actions"] = [back, *out["actions"]]
    if doc.status == "finished" and out["public"]:
        out["actions"] = []  # strangers are not seated together again unasked: the page offers Play now
    elif doc.status == "finished":
        # The final sheet's "Play again" (docs/SERVICE.md): the same seats and settings at a new table.
        out["actions"] = [{"kind": "again", "label": t._("Play again"), "payload": payload("again", ())}]
    if legal:
        out["prompt"] = _prompt(t, sv, names, legal)
        note = first_trick_note(t, sv)  # the first trick declares no marriage: said as the chats say it
        if note is not None:
            out["prompt"] += " " + note
    elif pv.to_act >= 0 and not pv.finished and pv.to_act != seat:
        out["prompt"] = t._("Waiting for {name}.").format(name=names[pv.to_act])
    return out


def _public_part(out: dict[str, Any], pv: PublicTableView, t: Translator) -> None:
    seats = out["seats"]
    last_bid: dict[int, int] = {}
    for s, value in (*pv.auction, *pv.sale):
        last_bid[s] = value
    for i, row in enumerate(seats):
        row["total"] = pv.totals[i] if i < len(pv.totals) else 0
        row["barrel"] = bool(pv.barrel[i]) if i < len(pv.barrel) else False
        row["bid"] = last_bid.get(i)
        row["cards"] = pv.hand_counts[i] if i < len(pv.hand_counts) else 0
        row["points"] = pv.taken[i] if i < len(pv.taken) else 0
        row["active"] = i in pv.active
    out.update(
        deal=pv.deal_number + 1,
        phase=pv.phase,
        phase_name=t._(PHASE_NAMES[pv.phase]) if pv.phase in PHASE_NAMES else "",
        dealer=pv.dealer,
        to_act=pv.to_act,
        declarer=pv.declarer,
        bid=pv.bid,
        contract=pv.contract,
        trump=_suit(pv.trump),
        marriages=[[_MARRIAGE_LETTERS[m] for m in ms] for ms in pv.marriages],
        talon=[CARD_NAMES[c] for c in pv.talon] if pv.talon else None,
        talon_size=pv.talon_size,
        trick=[{"seat": s, "card": _code(c)} for c, s in zip(pv.trick, pv.trick_seats, strict=True)],
        last_trick=None
        if pv.last_trick is None
        else {
            "cards": [
                {"seat": s, "card": _code(c)} for c, s in zip(pv.last_trick[0], pv.last_trick[1], strict=True)
            ],
            "winner": pv.last_trick[2],
        },
        scores=[list(r.totals) for r in pv.results],
        results=[
            {
                "deal": r.number + 1,
                "declarer": r.declarer,
                "contract": r.contract,
                "made": r.made,
                "scores": list(r.scores),
                "totals": list(r.totals),
                "ending": r.ending,
            }
            for r in pv.results
        ],
        finished=pv.finished,
        winner=None
        if pv.winner is None
        else list(pv.winner)
        if isinstance(pv.winner, tuple)
        else [pv.winner],
    )


def _talon_taken(
    t: Translator, pv: PublicTableView, names: list[str], reader: int | None
) -> dict[str, Any] | None:
    """The public talon after the declarer took it, until the first trick is over: told in words (the
    cards are in the declarer's hand now; drawn on the felt they looked like cards in play), to the
    declarer as theirs ("Talon you took", `bot.reader`)."""
    if not pv.talon or not pv.talon_taken or pv.declarer < 0 or pv.completed or pv.phase == Phase.DONE:
        return None
    return {
        "seat": pv.declarer,
        "cards": [CARD_NAMES[c] for c in pv.talon],
        "text": about(t, TALON_OF_DEAL, names, pv.declarer, reader, cards=t.cards(pv.talon)),
    }


def _heading(doc: TableDoc, labels: Sequence[SeatLabel]) -> str:
    """The game and the table: the group's title, or the players of a private (terminal) table, whose
    chat's title ("Terminal") names no table."""
    if doc.private or not doc.title:
        return "1000 · " + ", ".join(label.name for label in labels)
    return f"1000 · {doc.title}"


def _result_json(
    t: Translator, state: GameState, r: DealResult, names: list[str], reader: int | None = None
) -> dict[str, Any]:
    """A deal's result as the chats tell it, in parts the page lays out: how it ended, and per seat the
    card points, marriages, the score (with the rounding and the reason for a zero) and the total. Told
    to `reader`, the seat whose page it is ("You failed 105"), if any."""
    rules = state.rules
    earlier = [x for x in state.results if x.number < r.number]
    barrel_before = earlier[-1].barrel if earlier else ()
    active = active_seats(rules, state.players, r.dealer)
    out_seats = [s for s in range(state.players) if s not in active]
    sitting_out = out_seats[0] if out_seats else None
    rows = []
    for s in range(len(r.totals)):
        rows.append(
            {
                "seat": s,
                "name": names[s],
                "points": r.points[s] if r.ending == "played" and s != sitting_out else None,
                "marriages": list(r.marriages[s]) if s < len(r.marriages) else [],
                "score": r.scores[s],
                "total": r.totals[s],
                "reason": zero_reason(t, r, s, barrel_before, sitting_out),
                "rounding": None if s == sitting_out else rounding_text(t, rules, r, s, barrel_before),
                "bolt": s in r.bolts,
                "barrel": bool(r.barrel and r.barrel[s]),
                "sits_out": s == sitting_out,
            }
        )
    notes = []
    if r.talon and r.declarer >= 0:  # shown to everyone in the deal (DealResult.talon): told again
        notes.append(talon_of_deal(t, r, names, reader))
    if r.blind:
        notes.append(t._("A blind game: the score counts double."))
    notes.extend(result_notes(t, r, names, reader))
    return {
        "deal": r.number + 1,
        "declarer": r.declarer,
        "contract": r.contract,
        "made": r.made,
        "ending": r.ending,
        "summary": ending_text(t, r, names, reader),
        "rows": rows,
        "notes": notes,
    }


def _private_part(out: dict[str, Any], sv: SeatView, t: Translator) -> None:
    """What only this seat knows: its hand (in the chats' order: by suit, high to low), the talon it
    saw, its own face-down crawl card."""
    out["hand"] = [CARD_NAMES[c] for c in hand_order(cards_of(sv.hand))] if sv.hand_known else []
    if sv.talon:
        out["talon"] = [CARD_NAMES[c] for c in sv.talon]
    out["trick"] = [{"seat": s, "card": _code(c)} for c, s in zip(sv.trick, sv.trick_seats, strict=True)]


def _actions(
    t: Translator, sv: SeatView, legal: Sequence[Action], payload: Any, names: list[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """The seat's choices (`bot.vocabulary.menu`: every legal action, a give or a lay-down whole) as the
    page reads them, and the playable cards in the order of the hand."""
    actions: list[dict[str, Any]] = []
    legal_cards: list[str] = []
    mover = Mover.of_view(sv)
    order = mover.give_order() if sv.phase == Phase.EXCHANGE else []
    for choice in menu(t, mover, legal, names):
        item: dict[str, Any] = {
            "kind": choice.kind,
            "label": choice.label,
            "payload": payload(choice.command, choice.args),
        }
        match choice.action:
            case Bid(value) | Contract(value):
                item["value"] = value
            case Blind(announce):
                item["value"] = int(announce)
            case TakeTalon(pile):
                item["value"] = pile
            case Play(card):
                item["card"] = CARD_NAMES[card]
                if item["card"] not in legal_cards:
                    legal_cards.append(item["card"])
            case Discard() | Give():
                item["cards"] = list(choice.args)
                if choice.kind == "give":
                    item["targets"] = list(order)
        actions.append(item)
    # The playable cards in the order of the hand (the page and the chats' card buttons agree).
    place = {CARD_NAMES[c]: i for i, c in enumerate(hand_order(cards_of(sv.hand)))}
    legal_cards.sort(key=lambda code: place.get(code, len(place)))
    return actions, legal_cards


def _prompt(t: Translator, sv: SeatView, names: list[str], legal: Sequence[Action]) -> str:
    """What to do now, in the words of the hand message (the same catalog entries)."""
    phase = sv.phase
    if phase == Phase.BLIND:
        return t._("play blind (without looking at your cards)?")
    if phase in (Phase.BIDDING, Phase.SALE):
        values = [a.value for a in legal if type(a) is Bid]
        can_pass = any(type(a) is Pass for a in legal)
        if phase == Phase.SALE:
            return t._("the talon is for sale: buy it with a bid, or pass.")
        if values and not can_pass:
            return t._("open the bidding: from {low} to {high}.").format(low=values[0], high=values[-1])
        if values:
            return t._("bid from {low} to {high}, or pass.").format(low=values[0], high=values[-1])
        return t._("you can only pass.")
    if phase == Phase.TALON:
        return t._("take the talon.")
    if phase == Phase.DISCARD:
        return t._("lay down two cards in place of the pile.")
    if phase == Phase.EXCHANGE:
        order = give_order(sv.active, sv.seat)
        return t._("give a card to {name}.").format(name=", ".join(names[s] for s in order))
    if phase == Phase.CONTRACT:
        values = [a.value for a in legal if type(a) is Contract]
        return t._("fix your contract: from {low} to {high}.").format(low=values[0], high=values[-1])
    text = t._("play a card.") if sv.trick else t._("lead a card.")
    if any(type(a) is Play and a.declare for a in legal):
        text += " " + t._("★ declares the marriage.")
    return text
