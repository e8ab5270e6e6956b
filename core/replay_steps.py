"""A game record as a list of steps with every hand open, for the replay page (`thousand replay FILE
--html`, and the web's /replay/<token>): the page only draws them, it holds no rules of its own.

One step before each deal's first action (the cards as dealt) and one after every action. A step
carries what the table looked like then: hands, the talon until it was taken, the trick as it formed
(a completed trick stays in the step of its last card, with the winner), bids, declarer, contract,
trump, marriages and the totals; the last step of a deal carries its result.
"""

from __future__ import annotations

from typing import Any

from .actions import BLIND_NO, BLIND_YES, Play, to_record
from .cards import CARD_NAMES, SUIT_LETTERS, cards_of, trick_winner
from .deal import DealState, active_seats
from .errors import IllegalAction
from .game import GameState, new_game, replace_deal
from .record import Record, parse_record
from .rules import RuleSet

__all__ = ["replay_steps", "steps_of_text"]

_EARLY = ("bidding", "blind", "sale", "talon")


def _suit(s: int) -> str | None:
    if 0 <= s < 4:
        return SUIT_LETTERS[s]
    return "A" if s == 4 else None


def _snapshot(deal: DealState, totals: tuple[int, ...]) -> dict[str, Any]:
    return {
        "phase": deal.phase,
        "to_act": deal.to_act,
        "dealer": deal.dealer,
        "hands": [[CARD_NAMES[c] for c in cards_of(h)] for h in deal.hands],
        "talon": [CARD_NAMES[c] for c in deal.talon_as_dealt] if deal.phase in _EARLY else None,
        "trick": [
            {"seat": s, "card": CARD_NAMES[c]} for c, s in zip(deal.trick, deal.trick_seats, strict=True)
        ],
        "winner": None,
        "bid": deal.bid,
        "declarer": deal.declarer,
        "contract": deal.contract,
        "trump": _suit(deal.trump),
        "marriages": [[x for x in (_suit(m) for m in ms) if x] for ms in deal.marriages],
        "points": list(deal.taken),
        "totals": list(totals),
        "result": None,
    }


def replay_steps(record: Record, rules: RuleSet) -> list[dict[str, Any]]:
    """The steps of a record checked by `core.record.parse_record`; an illegal action ends them (the
    steps before it are still shown)."""
    steps: list[dict[str, Any]] = []
    state: GameState | None = None
    for d, rdeal in enumerate(record.deals):
        if state is not None and state.finished:
            break
        layout = rdeal.layout()
        try:
            state = (
                new_game(rules, len(record.players), layout=layout)[0]
                if state is None
                else replace_deal(state, layout)[0]
            )
            if rules.blind:
                opener = active_seats(rules, len(record.players), rdeal.dealer)[0]
                state.apply_action(opener, BLIND_YES if rdeal.blind is not None else BLIND_NO)
        except (IllegalAction, ValueError):
            break
        number = state.deal_number
        first = _snapshot(state.deal, state.totals)
        steps.append({"deal": d + 1, "seat": None, "action": None, **first})
        for ract in rdeal.actions:
            if state.deal_number != number:
                return steps
            before = state
            action = ract.to_action()
            try:
                state = before.clone()  # `before` stays as it was: the step that ends a deal reads it
                state.apply_action(ract.seat, action)
            except IllegalAction:
                return steps
            step: dict[str, Any] = {"deal": d + 1, "seat": ract.seat, "action": to_record(action)}
            if state.deal_number == number:
                step.update(_snapshot(state.deal, state.totals))
                if isinstance(action, Play) and not state.deal.trick and state.deal.trick_history:
                    cards, seats, _ = state.deal.trick_history[-1]
                    step["trick"] = [
                        {"seat": s, "card": CARD_NAMES[c]} for c, s in zip(cards, seats, strict=True)
                    ]
                    step["winner"] = state.deal.last_winner
            else:  # the deal ended with this action: the table as it was, with the result
                step.update(_snapshot(before.deal, before.totals))
                result = state.results[-1]
                if isinstance(action, Play):
                    card = CARD_NAMES[action.card]
                    step["hands"][ract.seat] = [c for c in step["hands"][ract.seat] if c != card]
                    step["trick"] = [*step["trick"], {"seat": ract.seat, "card": card}]
                    trick = (*before.deal.trick, action.card)
                    seats = (*before.deal.trick_seats, ract.seat)
                    complete = len(trick) == len(before.deal.active)
                    winner = trick_winner(trick, before.deal.trump, before.deal.crawl)
                    step["winner"] = seats[winner] if complete else None
                step.update(
                    phase="done",
                    to_act=-1,
                    totals=list(result.totals),
                    points=list(result.points),
                    result=result.to_json(),
                )
            steps.append(step)
    return steps


def steps_of_text(text: str) -> tuple[Record, list[dict[str, Any]]]:
    """Parse a record (raising `core.record.RecordError`) and step it."""
    record, rules = parse_record(text)
    return record, replay_steps(record, rules)
