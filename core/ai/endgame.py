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
from typing import Final

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
from .solver import NO_LIMIT, NodeLimit, Solver
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


VERDICT_WORLDS: Final = 48
"""Sampled deals the verdicts' positions are shared out for (more are played while the budget lasts)."""
MIN_SHARE: Final = 500
"""Positions a deal's verdicts may always search."""


def declarer_verdicts(sim: Sim, moves: list[int], limit: int) -> tuple[list[int], int]:
    """For each root move, a bound on the declarer's final points with open hands, searched with the
    null window at the contract (whether the declarer can still make it is all it decides): at least
    the contract when it is made, at most one below it when not; -1 where the node limit cut the search
    off.  And the positions searched.  A null window is much cheaper than the exact value (from the
    first lead of a deal: hundreds of positions against tens of thousands), so the hard player asks it
    from the first trick on."""
    decl = sim.declarer
    taken = sim.taken[decl]
    need = sim.contract - taken
    w = [0] * len(sim.succ)
    w[decl] = 1
    solver = Solver(sim, w)
    solver.limit = limit
    out = [-1] * len(moves)
    try:
        for i, m in enumerate(moves):
            out[i] = taken + solver.move_value(m, need - 1, need)
    except NodeLimit:
        pass
    return out, solver.nodes


def position_verdict(sim: Sim, limit: int) -> tuple[int, int]:
    """:func:`declarer_verdicts` of the position itself (the deal's first lead, for bids and the
    exchange): a bound on the declarer's final points, -1 when cut off; and the positions searched."""
    decl = sim.declarer
    taken = sim.taken[decl]
    need = sim.contract - taken
    w = [0] * len(sim.succ)
    w[decl] = 1
    solver = Solver(sim, w)
    solver.limit = limit
    try:
        return taken + solver.search(need - 1, need), solver.nodes
    except NodeLimit:
        return -1, solver.nodes


def align(points: list[int], sim: Sim, bound: int, contract: int, only_fail: bool = False) -> list[int]:
    """A playout's points moved so that the contract is made or failed as the open-hands verdict says.

    The heuristic playout misplays whole contracts (a contract-losing card, a make thrown away); the
    verdict decides the contract, the playout keeps deciding how the other points fall.  Points moved to
    or from the declarer are taken from or given to the defenders evenly.  ``only_fail``: a made verdict
    leaves the playout as it is (the verdict may only fail a contract the playout made)."""
    if bound < 0 or (only_fail and bound >= contract):
        return points
    decl = sim.declarer
    d = points[decl]
    made = bound >= contract
    target = d if (d >= contract) == made else bound
    delta = target - d
    if not delta:
        return points
    out = list(points)
    out[decl] = target
    others = [s for s in range(len(out)) if s != decl and sim.succ[s] >= 0]
    if not others:
        return out
    share, extra = divmod(-delta, len(others))
    for i, s in enumerate(others):
        out[s] += share + (1 if i < extra else 0)
    for s in others:
        if out[s] < 0:
            out[s] = 0
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
    node_cap: int = 0,
) -> Action:
    """Monte Carlo over consistent deals; each deal solved exactly once few cards are left, and before
    that each playout's contract decided by the open-hands verdict (``node_cap`` > 0).

    Every search runs under ``node_cap`` positions: an exact solve that passes it is not tried again
    in this decision (the playout and the verdict take over).  The verdicts of one sampled deal may
    search that deal's share of the budget left (over :data:`VERDICT_WORLDS` deals); cut off, the deal is
    judged by its playouts alone.  Positions searched are spent from the budget one unit each."""
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
    cap = node_cap if node_cap > 0 else NO_LIMIT
    exact = remaining <= endgame_cards
    verdicts = node_cap > 0
    totals = [0.0] * len(moves)
    cost = max(1, remaining * len(moves))
    worlds = 0
    cuts = 0
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
        spent = 0
        solved = False
        if exact:
            # Capped, and within a small budget's means too (a test's 0.01 s must not search for 0.1 s).
            allow = min(cap, max(MIN_SHARE, budget.total // 4))
            try:
                finals, nodes = solve_root(base, moves, me, allow)
            except NodeLimit:
                exact = False
                spent += allow
            else:
                spent += nodes + 4 * len(moves)
                for i, m in enumerate(moves):
                    s = base.clone()
                    s.play(m)
                    pts = _points_vector(s, finals[i][0], me, finals[i][1]) if not s.done else s.taken
                    totals[i] += w * ctx.utility(me, base.declarer, base.contract, pts)
                solved = True
        if not solved:
            bounds: list[int] = []
            if verdicts:
                # Each deal's share of what is left, so that a few hard deals do not eat the sample.
                share = budget.left // max(1, VERDICT_WORLDS - worlds)
                bounds, nodes = declarer_verdicts(base, moves, min(cap, max(MIN_SHARE, share)))
                spent += nodes
                if min(bounds) < 0:
                    # Cut off: this deal is judged by its playouts alone, every card alike; when most
                    # are, the verdicts are too dear here (a tight contract at the first tricks) and
                    # the rest of the budget goes to more playouts.
                    bounds = []
                    cuts += 1
                    if cuts >= 3 and 2 * cuts > worlds:
                        verdicts = False
            for i, m in enumerate(moves):
                s = base.clone()
                s.play(m)
                rollout(s, voids)
                pts = align(s.taken, s, bounds[i], s.contract) if bounds else s.taken
                totals[i] += w * ctx.utility(me, s.declarer, s.contract, pts)
            spent += cost
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
