"""Card play: the easy heuristic and the Monte Carlo of the medium and hard players.

Monte Carlo here is "perfect information Monte Carlo": deal the unseen cards many times consistently
with what the seat knows (:mod:`core.ai.infer`), try every legal card in each deal, play the rest out,
and keep the card with the best average outcome.  All candidate cards see the same deals, so their
differences are measured with little noise even with few deals.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..actions import CRAWL as CRAWL_ACTION
from ..actions import PLAYS, PLAYS_DECLARING, Action, Crawl, Play
from ..cards import CARD_POINTS, FULL_DECK, MARRIAGE_MASKS, SUIT_MASKS, CardMask
from ..deal import successor_seats
from ..rules import Declaration
from ..view import SeatView
from .bids import BidModel
from .budget import Budget
from .infer import TALON, Knowledge, knowledge, sample, suit_voids
from .inference import PlayModel
from .rollout import heuristic_move, rollout
from .score import ScoreCtx
from .sim import CRAWL, DECLARE, PlayRules, Sim, new_sim


def move_of(action: Action) -> int:
    if type(action) is Crawl:
        return CRAWL
    assert type(action) is Play
    return action.card | DECLARE if action.declare else action.card


def action_of(move: int) -> Action:
    if move == CRAWL:
        return CRAWL_ACTION
    if move & DECLARE:
        return PLAYS_DECLARING[move & 31]
    return PLAYS[move]


def _base_sim(view: SeatView, hands: list[CardMask], trick: list[int], piles_points: int = 0) -> Sim:
    return new_sim(
        PlayRules(view.rules),
        view.active,
        successor_seats(view.players, view.active),
        view.declarer,
        view.contract,
        hands,
        piles_points=piles_points,
        trump=view.trump,
        trick=trick,
        trick_seats=list(view.trick_seats),
        leader=view.leader,
        to_act=view.to_act,
        tricks=view.tricks,
        taken=list(view.taken),
        declared=view.declared,
        crawl=view.crawl,
    )


def possibility_sim(view: SeatView) -> Sim:
    """A :class:`Sim` where each other seat "holds" every card it might hold: for quick judgements."""
    visible = 0
    for c in view.trick:
        if c >= 0:
            visible |= 1 << c
    # Cards not in this hand and not out of play: shown talon cards are in someone's hand.
    unknown = FULL_DECK & ~(view.hand | view.played | visible)
    for c in view.discard:
        unknown &= ~(1 << c)
    voids = suit_voids(view)
    hands = [0] * view.players
    for s in view.active:
        if s == view.seat:
            hands[s] = view.hand
        else:
            m = unknown
            v = voids.get(s, 0)
            for suit in range(4):
                if v >> suit & 1:
                    m &= ~SUIT_MASKS[suit]
            hands[s] = m
    return _base_sim(view, hands, list(view.trick))


def world_sim(view: SeatView, k: Knowledge, masks: list[CardMask]) -> Sim:
    """The determinization of a play-phase view for one sampled deal of the unknown cards."""
    hands = [0] * view.players
    hands[view.seat] = view.hand
    trick = list(view.trick)
    piles = 0
    for i, loc in enumerate(k.locs):
        if loc >= 0:
            hands[loc] = masks[i]
        elif loc == TALON:
            piles = sum(CARD_POINTS[c] for c in _bits(masks[i]))
        else:
            pos = -10 - loc
            trick[pos] = masks[i].bit_length() - 1
    return _base_sim(view, hands, trick, piles)


def _bits(mask: CardMask) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def declaring_moves(view: SeatView, moves: list[int]) -> list[int]:
    """Indices of the moves that declare a marriage now (explicitly, or automatically by the lead)."""
    if view.trick or not view.trick_history or view.hand.bit_count() < view.rules.marriage_min_cards:
        return []
    out = []
    for i, m in enumerate(moves):
        if m == CRAWL:
            continue
        c = m & 31
        if c % 6 not in (2, 3):
            continue
        pair = MARRIAGE_MASKS[c // 6]
        if view.hand & pair == pair and (m & DECLARE or view.rules.declaration == Declaration.AUTOMATIC):
            out.append(i)
    return out


def known_voids(view: SeatView) -> list[int]:
    """Suits each seat is known to lack, as a list of 4-bit masks indexed by seat."""
    out = [0] * view.players
    for s, v in suit_voids(view).items():
        out[s] = v
    return out


def easy_play(view: SeatView, legal: Sequence[Action]) -> Action:
    sim = possibility_sim(view)
    move = heuristic_move(sim)
    action = action_of(move)
    if action in legal:
        return action
    plain = PLAYS[move & 31]
    return plain if plain in legal else legal[0]


def pimc_play(
    view: SeatView,
    legal: Sequence[Action],
    rng: random.Random,
    budget: Budget,
    max_worlds: int,
    infer_bids: bool = False,
    public_rollouts: bool = False,
    infer_play: float = 0.0,
    declare_bonus: float = 0.0,
) -> Action:
    """Perfect-information Monte Carlo over deals consistent with the view, heuristic playouts."""
    moves = [move_of(a) for a in legal]
    k = knowledge(view)
    model = BidModel(view, k) if infer_bids else None
    if model is not None and not model.useful:
        model = None
    voids = known_voids(view) if public_rollouts else None
    plays = PlayModel(view, infer_play) if infer_play > 0 else None
    if plays is not None and not plays.useful:
        plays = None
    ctx = ScoreCtx(view)
    me = view.seat
    totals = [0.0] * len(moves)
    remaining = sum(view.hand_counts)
    cost = max(1, remaining * len(moves))
    worlds = 0
    wsum = 0.0
    while worlds < max_worlds:
        masks = sample(k, rng)
        if masks is None:
            break
        base = world_sim(view, k, masks)
        w = model.weight(masks) if model is not None else 1.0
        if plays is not None:
            w *= plays.weight(base.hands)
        wsum += w
        for i, m in enumerate(moves):
            s = base.clone()
            s.play(m)
            rollout(s, voids)
            totals[i] += w * ctx.utility(me, s.declarer, s.contract, s.taken)
        worlds += 1
        if not budget.spend(cost):
            break
    if worlds == 0:
        return easy_play(view, legal)
    if declare_bonus:
        declaring = declaring_moves(view, moves)
        for i in declaring:
            totals[i] += declare_bonus * wsum
    best = max(range(len(moves)), key=lambda i: totals[i])
    return legal[best]
