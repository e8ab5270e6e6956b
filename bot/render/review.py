"""A person's review of a finished deal, for them alone: their two or three costliest choices.

Only the reader's own decisions and options are named, and those are cards of their own hand, bids and
contracts: nothing another player held (`tests/bot/test_review_chat.py` checks it with the card spy).
"""

from __future__ import annotations

from bot.i18n import Translator
from core.actions import (
    Action,
    Bid,
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
)
from core.ai.review import COSTLY, DealReview, DecisionReview, costliest
from core.deal import Phase

__all__ = ["render_choice", "render_review", "render_review_late"]

SHOWN = 3
"""Choices told at most."""


def render_choice(t: Translator, action: Action) -> str:
    """An option of the reader's own, in words: a card, a bid, a contract, the cards given or laid down."""
    match action:
        case Play(card, declare):
            return t.card(card) + (" " + t._("with the marriage") if declare else "")
        case Bid(value):
            return t._("bid {value}").format(value=value)
        case Contract(value):
            return t._("contract {value}").format(value=value)
        case Pass():
            return t._("pass")
        case Give(cards):
            return t._("giving {cards}").format(cards=t.cards(c for _, c in cards))
        case Discard(cards):
            return t._("laying down {cards}").format(cards=t.cards(cards))
        case TakeTalon(pile):
            return t._("pile {n}").format(n=pile + 1)
        case Bomb():
            return t._("the bomb")
        case Concede():
            return t._("conceding")
        case SellTalon():
            return t._("selling the talon")
        case Crawl():
            return t._("the crawl")
    return t._("another choice")


def _where(t: Translator, d: DecisionReview) -> str:
    if d.phase == Phase.PLAY and d.trick is not None:
        return t._("Deal {deal}, trick {trick}").format(deal=d.deal, trick=d.trick)
    if d.phase == Phase.BIDDING:
        return t._("Deal {deal}, bidding").format(deal=d.deal)
    if d.phase == Phase.CONTRACT:
        return t._("Deal {deal}, the contract").format(deal=d.deal)
    return t._("Deal {deal}, the talon and the exchange").format(deal=d.deal)


def render_review(t: Translator, review: DealReview) -> str:
    lines = [t._("**Your review of deal {deal}**").format(deal=review.deal)]
    if review.makeable is not None:
        lines.append(
            t._("With every hand open, your contract {value} could be made.").format(value=review.contract)
            if review.makeable
            else t._("Even with every hand open, your contract {value} could not be made.").format(
                value=review.contract
            )
        )
    shown = costliest(review, SHOWN)
    if not shown:
        lines.append(t._("No choice of yours cost a point: well played."))
    for d in shown:
        lines.append(
            t._("{where}: {chosen} cost about {points} points; {best} was best.").format(
                where=_where(t, d),
                chosen=render_choice(t, d.chosen),
                points=round(d.cost),
                best=render_choice(t, d.best),
            )
        )
    if any(d.cost >= COSTLY for d in shown):
        lines.append(t._("Points are expected points over the deals you could not tell apart."))
    return "\n".join(lines)


def render_review_late(t: Translator) -> str:
    return t._("The review is taking too long now; ask again in a while.")
