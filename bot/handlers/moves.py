"""The moves: the move commands, how their arguments are read, and the hand on request."""

from __future__ import annotations

from bot.context import Context, Refusal
from bot.handlers.base import HandlerBase
from bot.i18n import Translator
from bot.ports import Handler
from bot.vocabulary import MoveError, Mover, Page, Pick, parse_move
from core.actions import Action, Bid, Contract, Play
from core.cards import mask_of
from core.deal import Phase


class MoveHandlers(HandlerBase):
    """One handler per move command (`bot.commands.MOVE_COMMANDS`), all through `move`."""

    def _move_handler(self, name: str) -> Handler:
        async def handler(ctx: Context) -> None:
            await self.move(ctx, name)

        return handler

    async def move(self, ctx: Context, name: str) -> None:
        doc = self._game(ctx)
        self._check_button(ctx, exact=True)
        seat = doc.seat_of(ctx.user.key)
        if seat is None:
            raise Refusal("not_seated")
        if doc.seats[seat].away:
            raise Refusal("you_are_away")
        state = ctx.state
        assert state is not None
        if state.to_act != seat:
            raise Refusal("not_your_turn")
        action = self._parse_move(ctx, name, seat)
        if action is None:
            return
        doc.seats[seat].missed = 0
        try:
            self.flow.apply_action(ctx, seat, action)
        except Refusal as refusal:
            refusal.extra = _legal_hint(ctx.t_user(), ctx, seat)
            raise
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx)

    def _parse_move(self, ctx: Context, name: str, seat: int) -> Action | None:
        """The action a move command names (`bot.vocabulary.parse_move`); None when a button turned a page
        of values or picked part of a multi-card move (the hand is redrawn with it, nothing is saved)."""
        state = ctx.state
        assert state is not None
        button = ctx.command.source == "button"
        # Typed cards are read with the reader's letters first; a button's carry the notation (`KS`).
        langs = () if button else (ctx.user_lang(), ctx.group_lang())
        try:
            parsed = parse_move(
                name, ctx.command.args, Mover.of_state(state, seat), langs=langs, button=button
            )
        except MoveError as error:
            raise Refusal(error.code) from None
        if isinstance(parsed, Page):
            # The version stays, and with it every button of the page.
            self.flow.hand_message(ctx, seat, force=True, notify=False, page=parsed.start)
            return None
        if isinstance(parsed, Pick):
            self._selection(ctx, seat, list(parsed.cards))
            return None
        return parsed

    def _selection(self, ctx: Context, seat: int, cards: list[int]) -> None:
        """Part of a give or lay-down picked with buttons: show the hand with the choice so far."""
        state = ctx.state
        assert state is not None
        hand = state.deal.hands[seat]
        if mask_of(cards) & ~hand or len(set(cards)) != len(cards):
            raise Refusal("card_not_in_hand")
        self.flow.hand_message(ctx, seat, force=True, selection=tuple(cards), notify=False)

    async def hand(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = self._game(ctx)
        seat = self._seated(ctx)
        if not doc.seats[seat].present:
            raise Refusal("you_are_away")
        # Asked for: a new message at the bottom of the chat, even when nothing in it changed.
        self.flow.hand_message(ctx, seat, force=True, notify=True)


def _legal_hint(t: Translator, ctx: Context, seat: int) -> str | None:
    """What the player may do instead, for a refused move."""
    state = ctx.state
    if state is None or state.to_act != seat:
        return None
    legal = state.legal_actions(seat)
    phase = state.deal.phase
    if phase in (Phase.BIDDING, Phase.SALE):
        bids = [a.value for a in legal if type(a) is Bid]
        if len(bids) == 1:
            return t._("You may bid {value} only.").format(value=bids[0])
        if bids:
            return t._("You may bid {low} to {high} (steps of {step}).").format(
                low=bids[0], high=bids[-1], step=state.rules.bid_step
            )
        return t._("You can only pass.")
    if phase == Phase.CONTRACT:
        values = [a.value for a in legal if type(a) is Contract]
        if len(values) == 1:
            return t._("Contract: {value} only.").format(value=values[0])
        return t._("Contract: {low} to {high}.").format(low=values[0], high=values[-1])
    if phase == Phase.PLAY:
        cards = sorted({a.card for a in legal if type(a) is Play})
        return t._("You may play: {cards}").format(cards=t.cards(cards))
    return None
