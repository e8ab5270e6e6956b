"""Moving a game on: a player's action, the computer players after it, and the messages it all causes.

Every action is applied to a clone of the state (`clone`, then `apply_action`): an illegal one is refused
and nothing changes.
After a human's action the computers (computer seats, and humans who are away) play until a present
human must act. Messages are then derived from the state before and after and from the engine's
events: the group's table message (public view only), one result per finished deal, the final score
sheet, and for each present human their private hand when it changed or their turn came.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from bot.ai import AiRunner
from bot.chart import score_chart
from bot.context import Context, Refusal
from bot.i18n import Translator, translator
from bot.model import Button, Private, UserRef
from bot.render import (
    Rendered,
    Trick,
    private_notes,
    render_hand,
    render_table,
    seat_name,
)
from bot.render_result import render_result, render_score_sheet
from bot.settings import Settings
from bot.snapshot import decode_action, encode_action
from bot.table import SeatDoc, TableDoc
from bot.views import SeatLabel, public_view, seat_labels
from core import events as ev
from core.actions import Action, Give, Play
from core.deal import Phase, active_seats
from core.errors import IllegalAction
from core.events import Event
from core.game import GameState
from core.scoring import DealResult
from core.view import seat_view

__all__ = ["GameFlow", "seat_user"]

MAX_AUTO_ACTIONS = 5000
"""A bound on computer moves in one command (a whole game is far fewer)."""

_COMPACT_TRIGGERS = frozenset(
    {
        ev.DEAL_STARTED,
        ev.BLIND_CHOSEN,
        ev.BIDDING_WON,
        ev.TALON_OFFERED,
        ev.TALON_BOUGHT,
        ev.CONTRACT,
        ev.CRAWL,
        ev.TRICK_TAKEN,
    }
)
"""Public events that update the group's table message in the compact policy (not every bid/card)."""


def seat_user(seat: SeatDoc) -> UserRef:
    """The platform user of a human seat, for a private message."""
    return UserRef(seat.platform or "", seat.user_id or "", seat.name, seat.lang)


class GameFlow:
    def __init__(self, settings: Settings, ai: AiRunner) -> None:
        self.settings = settings
        self.ai = ai
        self.on_won: Callable[[TableDoc, GameState], Awaitable[None]] | None = None
        """Called once after the save that ended a game with a winner (statistics)."""

    # --- applying actions -------------------------------------------------------------------------

    def apply_action(self, ctx: Context, seat: int, action: Action) -> None:
        """Apply one action (refused with the engine's code when illegal)."""
        doc = ctx.require_doc()
        state = ctx.state
        assert state is not None and doc.game is not None
        new_state = state.clone()  # the state may be the service's cached one: never changed in place
        try:
            events = new_state.apply_action(seat, action)
        except IllegalAction as exc:
            raise Refusal(
                exc.code, step=state.rules.bid_step, limit=state.rules.marriage_needed_above
            ) from None
        doc.game.actions.append(encode_action(seat, action))
        ctx.state = new_state
        ctx.events.extend(events)
        ctx.game_changed = True
        ctx.deadline_reset = True
        ctx.mark()

    def computer_seat(self, doc: TableDoc, seat: int) -> str | None:
        """The level that plays `seat` now, or None when its human plays it."""
        s = doc.seats[seat]
        if s.kind == "ai":
            return s.level or self.settings.default_ai_level
        if s.kicked or s.away:
            return doc.settings.ai_level
        return None

    async def run_computers(self, ctx: Context) -> None:
        """Let computers move until a present human must act (or the game ends).

        With nobody present (every human away), the game waits: timers do not run and nothing moves
        until someone sends `back`.
        """
        doc = ctx.require_doc()
        if not any(s.present for s in doc.seats):
            return
        for _ in range(MAX_AUTO_ACTIONS):
            state = ctx.state
            assert state is not None and doc.game is not None
            seat = state.to_act
            if seat is None or seat < 0:
                return
            level = self.computer_seat(doc, seat)
            if level is None:
                forced = self.forced_card(doc, state, seat)
                if forced is None:
                    return
                self.apply_action(ctx, seat, forced)
                continue
            seed = zlib.crc32(f"{doc.serial}:{len(doc.game.actions)}".encode())
            action = await self.ai.decide(level, state, seat, seed)
            self.apply_action(ctx, seat, action)
        raise RuntimeError("computer players did not reach a human's turn")

    def forced_card(self, doc: TableDoc, state: GameState, seat: int) -> Action | None:
        """The one card a human may play, when it plays itself: a last card always (nothing is left to
        choose, and each person pressing it would cost a round of messages per deal), any forced card when
        the chat says so (`autoplay`)."""
        if state.phase != Phase.PLAY:
            return None
        if not doc.settings.autoplay and state.deal.hands[seat].bit_count() != 1:
            return None
        legal = state.legal_actions(seat)
        if len(legal) != 1 or type(legal[0]) is not Play:
            return None
        return legal[0]

    async def play_for(self, ctx: Context, seat: int) -> Action:
        """The chat's computer level plays one turn for an absent human."""
        doc = ctx.require_doc()
        state = ctx.state
        assert state is not None and doc.game is not None
        seed = zlib.crc32(f"{doc.serial}:{len(doc.game.actions)}:absent".encode())
        action = await self.ai.decide(doc.settings.ai_level, state, seat, seed)
        self.apply_action(ctx, seat, action)
        return action

    # --- after the moves --------------------------------------------------------------------------

    def conclude(self, ctx: Context, *, force_table: bool = False) -> None:
        """Messages for what the moves of this command did; finishing the table when the game ended."""
        doc = ctx.require_doc()
        state = ctx.state
        assert state is not None
        before = ctx.before
        labels = seat_labels(doc)
        t = ctx.t_group()
        reader = ctx.group_reader()
        events = ctx.events
        for i, e in enumerate(events):
            if e.kind == ev.DEAL_ENDED and isinstance(e.detail, DealResult):
                r = e.detail
                taken = _tricks_taken(events[:i], before, r.number)
                rendered = render_result(
                    t,
                    r,
                    labels,
                    last_trick=taken[-1][1] if taken else None,
                    unseen_tricks=taken[:-1],
                    barrel_before=_barrel_before(state, r.number),
                    sitting_out=_sitting_out(state, r.dealer),
                    rules=state.rules,
                    reader=reader,
                )
                ctx.to_group(
                    rendered.text,
                    key=f"result:{doc.serial}:{r.number}",
                    notify=True,
                    kind="result",
                    for_reader=_redraw_result(r, labels, taken, state),
                )
        last_start = max((i for i, e in enumerate(events) if e.kind == ev.DEAL_STARTED), default=-1)
        new_deal = last_start >= 0
        current = events[last_start:] if new_deal else events
        live = self.settings.table_updates == "every_action"
        optional = False  # only the trick as it forms (the table names its leader): skippable
        if live:
            trigger = bool(current)
        else:
            trigger = any(e.kind in _COMPACT_TRIGGERS for e in current)
            if before is not None and before.deal_number == state.deal_number:
                trigger = trigger or (before.phase != state.phase and state.phase == Phase.PLAY)
            # The trick as it forms, when the table message was not drawn for a while (people who take
            # their time leave the group's budget room for it; fast play merges into the trick's end).
            gap = self.settings.table_trick_seconds
            if not trigger and gap > 0 and state.phase == Phase.PLAY and ctx.now - doc.table_at >= gap:
                trigger = optional = any(e.kind == ev.CARD_PLAYED for e in current)
        if not state.finished and (trigger or new_deal or force_table):
            doc.table_at = ctx.now
            unseen = _tricks_taken(current, before, state.deal_number)[:-1]
            table = self.table(ctx, unseen_tricks=unseen)
            view = public_view(doc, state)
            payload, live_view = ctx.payload_maker(), live

            def redraw_table(t: Translator, reader: int | None) -> tuple[str, tuple[tuple[Button, ...], ...]]:
                again = render_table(t, view, payload, live=live_view, unseen_tricks=unseen, reader=reader)
                return again.text, again.buttons

            ctx.to_group(
                table.text,
                key=f"table:{doc.serial}:{state.deal_number}",
                for_reader=redraw_table,
                buttons=table.buttons,
                notify=new_deal,
                kind="table",
                optional=optional and not (new_deal or force_table),
            )
        if state.finished and doc.status == "game":
            self.finish(ctx, "won")
            return
        for i, seat in enumerate(doc.seats):
            if seat.present:
                self.hand_message(ctx, i, new_deal=new_deal, before=before)

    def table(self, ctx: Context, unseen_tricks: Sequence[tuple[int, Trick]] = ()) -> Rendered:
        """The group's table message now. Under the compact policy it is not redrawn at every bid and
        card, so it names nobody whose turn may pass before the next redraw (see `render_table`).
        `unseen_tricks`: tricks this command took that its "Last trick" line does not show."""
        doc = ctx.require_doc()
        assert ctx.state is not None
        live = self.settings.table_updates == "every_action"
        view = public_view(doc, ctx.state)
        t, reader = ctx.t_group(), ctx.group_reader()
        return render_table(
            t, view, ctx.payload_maker(), live=live, unseen_tricks=unseen_tricks, reader=reader
        )

    def hand_message(
        self,
        ctx: Context,
        seat: int,
        *,
        new_deal: bool = False,
        before: GameState | None = None,
        force: bool = False,
        selection: tuple[int, ...] = (),
        notify: bool | None = None,
        page: int | None = None,
        asked: bool = True,
    ) -> None:
        """The seat's private hand message, when something of it changed (or `force`).

        It notifies (a new message) at a new deal and on the player's turn, unless `notify` says. A forced
        hand that was `asked` for (`/hand`, My hand) replaces the one on screen at once; one the service
        sends of itself (the turn's warning) is one more hand of the deal's series."""
        doc = ctx.require_doc()
        state = ctx.state
        assert state is not None
        if state.finished:
            return
        deal = state.deal
        my_turn = deal.to_act == seat
        seat_doc = doc.seats[seat]
        own_move = received = False
        if not force and not new_deal:
            if before is None or before.deal_number != state.deal_number:
                changed = True
            else:
                was_turn = before.deal.to_act == seat
                changed = (
                    my_turn != was_turn
                    or (my_turn and ctx.game_changed)
                    or before.deal.hands[seat] != deal.hands[seat]
                    or any(e.audience == seat for e in ctx.events)
                )
                own_move = was_turn and _moved_alone(ctx, seat, seat_doc, before, state)
                received = not my_turn and not was_turn and _only_received(ctx, seat, before, state)
            if not changed:
                return
        if seat_doc.user is None:
            return
        t = translator(ctx.user_lang(seat_doc.user))
        labels = seat_labels(doc)
        names = [seat_name(t, label) for label in labels]
        legal: Sequence[Action] = state.legal_actions(seat) if my_turn else ()
        events = _since_deal_start(ctx.events, state)
        notes = private_notes(t, names, events, seat)
        if not any(e.kind == ev.CARD_GIVEN and e.audience == seat for e in events):
            notes += _gifts_not_shown(t, names, state, seat)
        rendered = render_hand(
            t,
            seat_view(state, seat),
            labels,
            legal,
            ctx.payload_maker(),
            notes=notes,
            selection=selection,
            page=page,
            alerts=ctx.hand_alerts.pop(seat, ()),
        )
        if notify is None:
            # A player who acts again right after their own move (talon, gives, contract, a lead after
            # the trick they took alone...) is looking at the hand they pressed: it is redrawn in place.
            notify = new_deal or (my_turn and (ctx.game_changed or force) and not own_move)
        ctx.to_user(
            seat_user(seat_doc),
            rendered.text,
            key=f"hand:{doc.id}",
            buttons=rendered.buttons,
            notify=notify,
            kind="hand",
            replaceable=(own_move or received) and not my_turn and not notify,
            # A hand asked for (`/hand`, My hand) replaces the one on screen at once: asked for, it is rare.
            series=None if force and asked else f"{doc.serial}:{state.deal_number}",
        )

    def warn_turn(self, ctx: Context, seat: int, warning: str) -> None:
        """The turn's time is running out: the player's hand comes again, new and notifying, with the
        warning on top. Telegram pays one call for it as for a bare warning, and a hand that never
        arrived (its send lost with a crashed process) arrives now, with buttons to act at once."""
        ctx.hand_alerts[seat] = [warning]
        sent = len(ctx.messages)
        self.hand_message(ctx, seat, force=True, notify=True, asked=False)
        ctx.hand_alerts.pop(seat, None)
        ctx.messages[sent:] = [replace(m, alert=warning) for m in ctx.messages[sent:]]

    def keep_turn_buttons(self, ctx: Context) -> None:
        """Every save makes the table's buttons older, and a move needs the exact version: when a command
        changed the table without sending the player to act their hand (a seat's language, a vote, someone
        leaving on another's turn...), their hand is redrawn (an edit, nobody notified) so that its buttons
        stay good."""
        doc = ctx.doc
        state = ctx.state
        if doc is None or state is None or doc.status != "game" or state.finished:
            return
        seat = state.to_act
        if seat is None or seat < 0 or not doc.seats[seat].present:
            return
        key = f"hand:{doc.id}"
        user_key = doc.seats[seat].user
        for m in ctx.messages:
            if m.key == key and isinstance(m.audience, Private) and m.audience.user.key == user_key:
                return
        self.hand_message(ctx, seat, force=True, notify=False)

    def finish(self, ctx: Context, why: str) -> None:
        """End the table: the score sheet to the group; statistics after the save when it was won."""
        doc = ctx.require_doc()
        state = ctx.state
        doc.status = "finished"
        doc.ended = why
        doc.ended_by = ctx.user.key if why == "ended" else None
        doc.turn = None
        doc.kick_votes = {}
        ctx.deadline_reset = True
        ctx.users_removed.update(doc.human_keys)
        ctx.mark(f"finished:{why}")
        t = ctx.t_group()
        labels = seat_labels(doc)
        if state is None:
            return
        winner = state.winner if why == "won" else None
        payload = ctx.payload_maker()
        sheet = render_score_sheet(t, state.results, labels, winner, ended=why, payload=payload)

        def redraw_sheet(t: Translator) -> tuple[str, tuple[tuple[Button, ...], ...]]:
            again = render_score_sheet(t, state.results, labels, winner, ended=why, payload=payload)
            return again.text, again.buttons

        ctx.to_group(
            sheet.text,
            key=f"final:{doc.serial}",
            buttons=sheet.buttons,
            notify=True,
            kind="final",
            redraw=redraw_sheet,
        )
        self._close_hands(ctx, doc)
        if why == "won":
            ctx.after_save.append(lambda: self._chart(ctx, doc, state))
            if self.on_won is not None:
                on_won = self.on_won
                ctx.after_save.append(lambda: on_won(doc, state))

    def _close_hands(self, ctx: Context, doc: TableDoc) -> None:
        """Each person's last hand says the game is over (its buttons go): a hand of a series of its own,
        so an adapter that left the last deal's replaced hands on screen deletes them now. Only the people
        still at the table: one who left or was kicked is no longer sent anything of it."""
        for seat in doc.seats:
            if seat.user is None or seat.kind == "ai" or seat.kicked:
                continue
            t = translator(ctx.user_lang(seat.user))
            ctx.to_user(
                seat_user(seat),
                t._("The game is over."),
                key=f"hand:{doc.id}",
                notify=False,
                kind="hand",
                series=f"{doc.serial}:end",
            )

    async def _chart(self, ctx: Context, doc: TableDoc, state: GameState) -> None:
        """Attach the score chart to the final message (after the save: drawn once per game)."""
        if not self.settings.charts or not state.results:
            return
        t = ctx.t_group()
        names = [s.name for s in doc.seats]
        totals = [r.totals for r in state.results]
        png = await asyncio.to_thread(
            score_chart,
            names,
            totals,
            title=t._("Score progress"),
            xlabel=t._("Deal"),
            ylabel=t._("Total"),
            target=state.rules.target,
        )
        for i, m in enumerate(ctx.messages):
            if m.kind == "final":
                ctx.messages[i] = replace(m, image=png)


def _redraw_result(
    r: DealResult, labels: Sequence[SeatLabel], taken: list[tuple[int, Trick]], state: GameState
) -> Callable[[Translator, int | None], tuple[str, tuple[tuple[Button, ...], ...]]]:
    """A deal's result drawn again in another language for one reader (a public table's private copies)."""
    barrel, sitting_out = _barrel_before(state, r.number), _sitting_out(state, r.dealer)

    def redraw(t: Translator, reader: int | None) -> tuple[str, tuple[tuple[Button, ...], ...]]:
        rendered = render_result(
            t,
            r,
            tuple(labels),
            last_trick=taken[-1][1] if taken else None,
            unseen_tricks=taken[:-1],
            barrel_before=barrel,
            sitting_out=sitting_out,
            rules=state.rules,
            reader=reader,
        )
        return rendered.text, ()

    return redraw


def _tricks_taken(events: Sequence[Event], before: GameState | None, number: int) -> list[tuple[int, Trick]]:
    """The tricks of deal `number` taken among this command's `events` (which end in that deal), as
    (trick number, (cards, seats, winner)). A message drawn now shows the last of them ("Last trick", or
    the result's final trick); the others no message showed: computers and last cards playing on in one
    command took them (the terminal lost a deal by a trick the player never saw)."""
    start = max((i for i, e in enumerate(events) if e.kind == ev.DEAL_STARTED), default=-1)
    base = before.deal.tricks if start < 0 and before is not None and before.deal_number == number else 0
    taken: list[tuple[int, Trick]] = []
    for e in events[start + 1 :]:
        if e.kind == ev.TRICK_TAKEN and e.cards and isinstance(e.detail, tuple):
            taken.append((base + len(taken), (e.cards, tuple(e.detail), e.seat)))
    return taken


def _barrel_before(state: GameState, number: int) -> tuple[bool, ...]:
    """Who was on the barrel when deal `number` began (as the result before it left them)."""
    earlier = [r for r in state.results if r.number < number]
    return earlier[-1].barrel if earlier else ()


def _sitting_out(state: GameState, dealer: int) -> int | None:
    active = active_seats(state.rules, state.players, dealer)
    out = [s for s in range(state.players) if s not in active]
    return out[0] if out else None


def _moved_alone(ctx: Context, seat: int, seat_doc: SeatDoc, before: GameState, state: GameState) -> bool:
    """Whether the seat's player made this command's first move (they pressed or typed it: they know what
    they did) and the hand changed only by what they did: when they act again now, nobody else moved in
    between; when someone else acts now (computers may have moved after them), no card came into the hand.
    """
    if seat_doc.user is None or ctx.user.key != seat_doc.user or before.deal_number != state.deal_number:
        return False
    doc = ctx.require_doc()
    added = doc.game.actions[ctx.actions_at_load :] if doc.game is not None else []
    if not added:
        return False
    seats = [decode_action(a)[0] for a in added]
    if seats[0] != seat:
        return False
    if state.deal.to_act == seat:
        return all(s == seat for s in seats)
    return not state.deal.hands[seat] & ~before.deal.hands[seat]


def _only_received(ctx: Context, seat: int, before: GameState, state: GameState) -> bool:
    """Whether the seat's hand only gained cards given to it (the declarer's gives) and nothing else
    happened to it privately: it shows every card it held, and its next notifying hand (its turn comes
    within a move or two) shows the new ones with who gave them (`_gifts_not_shown`)."""
    if before.deal.hands[seat] & ~state.deal.hands[seat]:
        return False
    private = [e for e in ctx.events if e.audience == seat]
    return bool(private) and all(e.kind == ev.CARD_GIVEN for e in private)


def _gifts_not_shown(t: Translator, names: list[str], state: GameState, seat: int) -> list[str]:
    """ "X gave you Q♠" for the cards given to the seat this deal, until it plays its first card: its hand
    was not redrawn when they came (`_only_received`)."""
    notes: list[str] = []
    for giver, action in state.actions_this_deal():
        if giver == seat and type(action) is Play:
            return []
        if type(action) is Give:
            for target, card in action.cards:
                if target == seat:
                    notes.append(t._("{name} gave you {card}").format(name=names[giver], card=t.card(card)))
    return notes


def _since_deal_start(events: list[Event], state: GameState) -> list[Event]:
    """The events of the current deal among this command's events."""
    start = max((i for i, e in enumerate(events) if e.kind == ev.DEAL_STARTED), default=0)
    return events[start:] if state is not None else events
