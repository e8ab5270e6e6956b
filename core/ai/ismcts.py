"""Information-set Monte Carlo tree search for the card play (single observer, "SO-ISMCTS").

Perfect-information Monte Carlo judges each card as if everybody would see all cards afterwards; a
tree search over the seat's information set instead grows one tree of moves for all sampled deals:
each iteration deals the unseen cards anew (consistently with the view), walks down the tree by
UCB among the moves legal in that deal (counting how often each was available), adds one node, and
plays the rest out with the playout policy.  Each node keeps the outcome for the seat that moved
into it, so every seat in the tree plays for its own score.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Final

from ..actions import Action
from ..view import SeatView
from .budget import Budget
from .infer import knowledge, sample
from .play import easy_play, move_of, world_sim
from .rollout import rollout
from .score import ScoreCtx

EXPLORATION: Final = 0.7
SCALE: Final = 150.0
"""Utilities are divided by this before UCB (deal outcomes span a few hundred points)."""


class Node:
    __slots__ = ("avail", "children", "player", "total", "visits")

    def __init__(self, player: int) -> None:
        self.player = player
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.avail = 1
        self.total = 0.0


def ismcts_play(
    view: SeatView,
    legal: Sequence[Action],
    rng: random.Random,
    budget: Budget,
    max_iterations: int,
) -> Action:
    root_moves = [move_of(a) for a in legal]
    allowed = set(root_moves)
    k = knowledge(view)
    ctx = ScoreCtx(view)
    me = view.seat
    root = Node(-1)
    remaining = sum(view.hand_counts)
    cost = remaining + 6
    it = 0
    while it < max_iterations:
        masks = sample(k, rng)
        if masks is None:
            break
        sim = world_sim(view, k, masks)
        node = root
        path: list[Node] = []
        first = True
        while sim.to_act >= 0:
            moves = sim.legal()
            if first:
                moves = [m for m in moves if m in allowed]
                first = False
            children = node.children
            untried = []
            for m in moves:
                child = children.get(m)
                if child is None:
                    untried.append(m)
                else:
                    child.avail += 1
            if untried:
                m = untried[rng.randrange(len(untried))]
                child = Node(sim.to_act)
                children[m] = child
                sim.play(m)
                path.append(child)
                break
            best_m = moves[0]
            best_v = -1e18
            for m in moves:
                child = children[m]
                v = child.total / (child.visits * SCALE) + EXPLORATION * math.sqrt(
                    math.log(child.avail) / child.visits
                )
                if v > best_v:
                    best_v, best_m = v, m
            node = children[best_m]
            sim.play(best_m)
            path.append(node)
        if sim.to_act >= 0:
            rollout(sim)
        utils = ctx.utilities(sim.declarer, sim.contract, sim.taken)
        for n in path:
            n.visits += 1
            n.total += utils[n.player]
        it += 1
        if not budget.spend(cost):
            break
    if not root.children:
        return easy_play(view, legal)
    best = max(
        range(len(root_moves)),
        key=lambda i: (
            root.children[root_moves[i]].visits if root_moves[i] in root.children else -1,
            root.children[root_moves[i]].total if root_moves[i] in root.children else 0.0,
        ),
    )
    _ = me
    return legal[best]
