"""The hard player's card play: Monte Carlo sampling with an exact solver of the open-card endgame.

Early in a deal the hard player does what the medium one does with more deals; once few cards are
left, each sampled deal is solved exactly instead of played out by the heuristic: an alpha-beta
search of the declarer (maximizing their deal points) against the defenders as a team (minimizing
them), which is what decides the contract.  When a defender decides, its own points break ties (the
team minimizes ``BIG * declarer points - own points``), so it still takes what it can for itself.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from ..actions import Action
from ..cards import CARD_POINTS, SUIT_MASKS, CardMask
from ..view import SeatView
from .bids import BidModel
from .budget import Budget
from .infer import knowledge, sample
from .inference import PlayModel
from .play import declaring_moves, easy_play, known_voids, move_of, world_sim
from .rollout import rollout
from .score import ScoreCtx
from .sim import DECLARE, QK_ALL, Sim

_INF: Final = 1 << 30
BIG: Final = 1024
"""Weight of a declarer point against a point of the deciding defender in the solver's objective."""


def _bits_high_first(mask: CardMask) -> list[int]:
    out = []
    while mask:
        c = mask.bit_length() - 1
        out.append(c)
        mask ^= 1 << c
    return out


class Solver:
    """Exact play of a small open-card position (no ``must_beat``, no crawl)."""

    __slots__ = ("auto", "big", "decl", "hands", "me", "mvals", "n", "nodes", "piles", "pr", "succ", "table")

    def __init__(self, sim: Sim, me: int = -1) -> None:
        self.hands = sim.hands.copy()
        self.succ = sim.succ
        self.decl = sim.declarer
        self.n = sim.n_active
        self.piles = sim.piles_points
        self.pr = sim.pr
        self.mvals = sim.pr.mvals
        self.auto = not sim.pr.choice
        self.nodes = 0
        self.table: dict[tuple[int, ...], tuple[int, int]] = {}
        # A defender deciding also counts its own points, below the declarer's.
        self.me = me if me >= 0 and me != sim.declarer else -1
        self.big = BIG if self.me >= 0 else 1

    def moves(self, seat: int, trick: list[int], trump: int) -> list[int]:
        hand = self.hands[seat]
        if trick:
            led = trick[0] // 6
            m = hand & SUIT_MASKS[led]
            if not m and trump >= 0:
                m = hand & SUIT_MASKS[trump]
            return _bits_high_first(m or hand)
        out = _bits_high_first(hand)
        if hand.bit_count() >= self.pr.min_cards and hand & QK_ALL:
            for s in range(4):
                mm = SUIT_MASKS[s] & QK_ALL
                if hand & mm == mm:
                    if self.auto:
                        continue
                    out.append((6 * s + 3) | DECLARE)
                    out.append((6 * s + 2) | DECLARE)
        return out

    def search(
        self,
        seat: int,
        trick: list[int],
        seats: list[int],
        trump: int,
        alpha: int,
        beta: int,
    ) -> int:
        """Declarer's points from here on, with the defenders minimizing."""
        self.nodes += 1
        hands = self.hands
        if not trick:
            # Between tricks the future depends only on the hands, the leader and the trump.
            key = (*hands, seat, trump)
            entry = self.table.get(key)
            a0, b0 = alpha, beta
            if entry is not None:
                lo, hi = entry
                if lo >= beta:
                    return lo
                if hi <= alpha:
                    return hi
                if lo == hi:
                    return lo
                alpha = max(alpha, lo)
                beta = min(beta, hi)
                a0, b0 = alpha, beta
            v = self._search(seat, trick, seats, trump, alpha, beta)
            if v <= a0:
                self.table[key] = (entry[0] if entry else -_INF, v)
            elif v >= b0:
                self.table[key] = (v, entry[1] if entry else _INF)
            else:
                self.table[key] = (v, v)
            return v
        return self._search(seat, trick, seats, trump, alpha, beta)

    def _search(
        self,
        seat: int,
        trick: list[int],
        seats: list[int],
        trump: int,
        alpha: int,
        beta: int,
    ) -> int:
        hands = self.hands
        maximize = seat == self.decl
        best_v = -_INF if maximize else _INF
        for move in self.moves(seat, trick, trump):
            c = move & 31
            gain = 0
            new_trump = trump
            if not trick and c % 6 in (2, 3):
                suit = c // 6
                mm = SUIT_MASKS[suit] & QK_ALL
                hand = hands[seat]
                if (
                    hand & mm == mm
                    and hand.bit_count() >= self.pr.min_cards
                    and (self.auto or move & DECLARE)
                ):
                    new_trump = suit
                    if seat == self.decl:
                        gain = self.mvals[suit] * self.big
                    elif seat == self.me:
                        gain = -self.mvals[suit]
            hands[seat] ^= 1 << c
            trick.append(c)
            seats.append(seat)
            if len(trick) == self.n:
                winner = seats[_winner(trick, new_trump)]
                add = gain
                if winner == self.decl or winner == self.me:
                    pts = 0
                    for x in trick:
                        pts += CARD_POINTS[x]
                    if not hands[winner]:
                        pts += self.piles
                    add += pts * self.big if winner == self.decl else -pts
                saved_t = list(trick)
                saved_s = list(seats)
                trick.clear()
                seats.clear()
                if hands[winner]:
                    v = add + self.search(winner, trick, seats, new_trump, alpha - add, beta - add)
                else:
                    v = add
                trick.extend(saved_t)
                seats.extend(saved_s)
            else:
                v = gain + self.search(self.succ[seat], trick, seats, new_trump, alpha - gain, beta - gain)
            trick.pop()
            seats.pop()
            hands[seat] ^= 1 << c
            if maximize:
                if v > best_v:
                    best_v = v
                if best_v > alpha:
                    alpha = best_v
            else:
                if v < best_v:
                    best_v = v
                if best_v < beta:
                    beta = best_v
            if alpha >= beta:
                break
        return best_v


def _winner(trick: list[int], trump: int) -> int:
    led = trick[0] // 6
    best = 0
    best_card = trick[0]
    best_trump = led == trump
    for i in range(1, len(trick)):
        c = trick[i]
        s = c // 6
        if s == trump:
            if not best_trump or c > best_card:
                best, best_card, best_trump = i, c, True
        elif not best_trump and s == led and c > best_card:
            best, best_card = i, c
    return best


def solve_root(sim: Sim, moves: list[int], me: int = -1) -> tuple[list[tuple[int, int]], int]:
    """For each root move, the final deal points of the declarer and of ``me`` (a defender; -1 when
    ``me`` is the declarer or not given) with exact play afterwards; and the positions searched."""
    out: list[tuple[int, int]] = []
    nodes = 0
    table: dict[tuple[int, ...], tuple[int, int]] = {}
    decl = sim.declarer
    track = me >= 0 and me != decl
    for m in moves:
        s = sim.clone()
        s.play(m)
        if s.done:
            out.append((s.taken[decl], s.taken[me] if track else -1))
            continue
        solver = Solver(s, me)
        solver.table = table
        v = solver.search(s.to_act, list(s.trick), list(s.trick_seats), s.trump, -_INF, _INF)
        nodes += solver.nodes
        if track:
            d = -((-v) // BIG)
            out.append((s.taken[decl] + d, s.taken[me] + BIG * d - v))
        else:
            out.append((s.taken[decl] + v, -1))
    return out, nodes


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
