"""The moves: the move commands, how their arguments are read, and the hand on request."""

from __future__ import annotations

from collections.abc import Sequence

from bot.context import Context, Refusal
from bot.handlers.base import NO, YES, HandlerBase, parse_number
from bot.i18n import Translator, parse_card_in
from bot.ports import Handler
from bot.render import give_order, page_start
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
    Contract,
    Discard,
    Give,
    Play,
    TakeTalon,
    bid_action,
    contract_action,
)
from core.cards import CardParseError, mask_of
from core.deal import Phase
from core.rules import Declaration

_DECLARE = frozenset({"!", "+", "★", "declare", "marriage"})


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

    def _card(self, ctx: Context, token: str) -> int:
        # A button carries the international notation (`KS`): read with a Turkish reader's letters first,
        # its K (kız, the queen) would be another card. Typed cards are read with the reader's letters.
        langs = (ctx.user_lang(), ctx.group_lang()) if ctx.command.source != "button" else ()
        try:
            return parse_card_in(token.rstrip("!"), langs)
        except CardParseError:
            raise Refusal("bad_card") from None

    def _cards(self, ctx: Context, args: Sequence[str]) -> list[int]:
        tokens = [part for arg in args for part in arg.replace(",", " ").split()]
        return [self._card(ctx, tok) for tok in tokens]

    def _parse_move(self, ctx: Context, name: str, seat: int) -> Action | None:
        """The action a move command names; None when a button picked part of a multi-card move."""
        args = ctx.command.args
        state = ctx.state
        assert state is not None
        if name == "pass":
            return PASS
        if name in ("bid", "contract"):
            if not args:
                raise Refusal("missing_argument")
            page = page_start(args[0]) if ctx.command.source == "button" else None
            if page is not None:
                # A page of the values: the hand redrawn at it, nothing saved (the version stays, and
                # with it every button of the page).
                self.flow.hand_message(ctx, seat, force=True, notify=False, page=page)
                return None
            value = parse_number(args[0])
            return bid_action(value) if name == "bid" else contract_action(value)
        if name == "play":
            if not args:
                raise Refusal("missing_argument")
            card = self._card(ctx, args[0])
            declare = args[0].endswith("!") or any(a.lower() in _DECLARE for a in args[1:])
            if state.rules.declaration != Declaration.CHOICE:
                declare = False
            return Play(card, declare)
        if name == "give":
            deal = state.deal
            others = give_order(deal.active, seat)
            cards = self._cards(ctx, args)
            if len(cards) < len(others) and ctx.command.source == "button":
                self._selection(ctx, seat, cards)
                return None
            if len(cards) != len(others):
                raise Refusal("bad_give")
            return Give(tuple(sorted(zip(others, cards, strict=True))))
        if name == "discard":
            cards = self._cards(ctx, args)
            if len(cards) < 2 and ctx.command.source == "button":
                self._selection(ctx, seat, cards)
                return None
            if len(cards) != 2:
                raise Refusal("bad_discard")
            return Discard(tuple(sorted(cards)))
        if name == "take":
            pile = parse_number(args[0]) - 1 if args else 0
            if pile < 0:
                raise Refusal("no_such_pile")
            return TakeTalon(pile)
        if name == "blind":
            if not args:
                return BLIND_YES
            word = args[0].lower()
            if word in YES:
                return BLIND_YES
            if word in NO:
                return BLIND_NO
            raise Refusal("bad_value")
        if name == "sell":
            return SELL
        if name == "bomb":
            return BOMB
        if name == "concede":
            return CONCEDE
        return CRAWL

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
