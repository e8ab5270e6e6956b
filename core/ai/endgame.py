"""The hard player's card play: Monte Carlo sampling with an exact solver of the open-card endgame.

Early in a deal the hard player does what the medium one does with more deals; once few cards are
left, each sampled deal is solved exactly instead of played out by the heuristic, by the open-hands
solver of :mod:`core.ai.solver`: the declarer maximizing their deal points against the defenders as a
team minimizing them, which is what decides the contract.  When a defender decides, its own points
break ties (the team minimizes ``big * declarer points - own points``), so it still takes what it can
for itself.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..actions import Action
from ..cards import CARD_POINTS
from ..view import SeatView
from .bids import BidModel
from .budget import Budget
from .infer import knowledge, sample
from .inference import PlayModel
from .play import declaring_moves, easy_play, known_voids, move_of, world_sim
from .rollout import rollout
from .score import ScoreCtx
from .sim import Sim
from .solver import solve_root as solve_root


def _points_vector(sim: Sim, decl_final: int, me: int, my_final: int) -> list[int]:
    """Final deal points: the declarer's (and the deciding defender's) as solved, the rest of the cards
    to the other defenders."""
    remaining = sim.piles_points
    for h in sim.hands:
        m = h
        while m:
            low = m & -m
            remaining += CARD_POINTS[low.bit_length() - 1]
            m ^= low
    for c in sim.trick:
        remaining += CARD_POINTS[c]
    decl = sim.declarer
    out = list(sim.taken)
    rest = remaining - (decl_final - out[decl])
    out[decl] = decl_final
    if my_final >= 0:
        rest -= my_final - out[me]
        out[me] = my_final
    others = [s for s in range(len(out)) if s != decl and s != me and sim.succ[s] >= 0]
    if others:
        rest = max(0, rest)
        share, extra = divmod(rest, len(others))
        for i, s in enumerate(others):
            out[s] += share + (extra if i == 0 else 0)
    return out


def solve_play(
    view: SeatView,
    legal: Sequence[Action],
    rng: random.Random,
    budget: Budget,
    max_worlds: int,
    endgame_cards: int,
    infer_bids: bool = False,
    public_rollouts: bool = False,
    infer_play: float = 0.0,
    declare_bonus: float = 0.0,
) -> Action:
    """Monte Carlo over consistent deals; each deal solved exactly once few cards are left."""
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
    remaining = sum(view.hand_counts)
    rules = view.rules
    exact = (
        remaining <= endgame_cards
        and not rules.must_beat
        and not rules.ace_marriage
        and not view.crawl
        and view.tricks > 0
    )
    totals = [0.0] * len(moves)
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
        if exact:
            finals, nodes = solve_root(base, moves, me)
            spent = nodes // 2 + 4 * len(moves)
            for i, m in enumerate(moves):
                s = base.clone()
                s.play(m)
                pts = _points_vector(s, finals[i][0], me, finals[i][1]) if not s.done else s.taken
                totals[i] += w * ctx.utility(me, base.declarer, base.contract, pts)
        else:
            for i, m in enumerate(moves):
                s = base.clone()
                s.play(m)
                rollout(s, voids)
                totals[i] += w * ctx.utility(me, s.declarer, s.contract, s.taken)
            spent = cost
        worlds += 1
        if not budget.spend(spent):
            break
    if worlds == 0:
        return easy_play(view, legal)
    if declare_bonus:
        declaring = declaring_moves(view, moves)
        for i in declaring:
            totals[i] += declare_bonus * wsum
    best = max(range(len(moves)), key=lambda i: totals[i])
    return legal[best]
