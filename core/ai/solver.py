"""The exact open-hands (double-dummy) value of the card play of a deal, from any position of it.

Every hand is open: the declarer plays to maximize their own deal points (cards taken, marriages they
declare, the other pile and the discard of the two-musiki game for the last trick), the defenders
together play to minimize them.  Among the lines that give the declarer that much, the defenders take
as much as they can for themselves, so both sides' points are exact values of one zero-sum game
(objective ``big * declarer - defenders``, ``big`` above anything the defenders can take).

The rules are those of the engine (:mod:`core.deal`) for every preset and option: following suit,
trumping, ``must_beat``, marriages only by the player on lead from the second trick on (the
``marriage_min_cards`` count, ``automatic`` or ``choice`` declaration, both the declaring and the plain
lead where it is a choice), the ace marriage, 2 to 4 players in play (a sitting-out dealer holds no
cards) and the crawl.  ``tests/ai/test_solver.py`` checks the values against an exhaustive search over
the engine's own ``legal_actions`` and ``apply``.

Not covered: the crawl's face-down cards are treated as seen (open hands: every card is visible, so a
defender following in a crawl is credited with knowing the declarer's card); what happens after the
deal (rounding, barrels, bolts, the four-nines bonus, which do not depend on the card play) is not part
of the value.

The search is an alpha-beta over bit masks (:class:`Solver`): a transposition table of bounds keyed
between tricks by who holds which card, the leader and the trump; the best lead found kept there to be
tried first next time; a cut-off when the points left and the marriages still in hands cannot reach
the window; cheap move ordering (winning cards high first, the rest low first, points and
rank being in the same order within a suit); the last trick counted without search.  The hard
player's endgame (:mod:`core.ai.endgame`) uses the same solver with its own weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ..actions import CRAWL as CRAWL_ACTION
from ..actions import PLAYS, PLAYS_DECLARING, Action, Crawl, Play
from ..cards import ACES, CARD_POINTS, MARRIAGE_MASKS, SUIT_MASKS, CardMask, beats
from ..deal import ACE_SUIT, DealState, Phase
from ..game import GameState
from .sim import CRAWL, DECLARE, Sim, sim_from_deal

INF: Final = 1 << 40
_DECL: Final = 32
"""Internal lead flag: this lead declares (a marriage, or the ace marriage)."""
_CRAWL: Final = 64
_OFF: Final = 1 << 23
"""Offset of the bounds packed in a table entry: 24 bits each, values stay far inside (a deal gives
at most some hundreds of points, times the declarer's weight)."""
_FIELD: Final = (1 << 24) - 1
_QK_ALL: Final = MARRIAGE_MASKS[0] | MARRIAGE_MASKS[1] | MARRIAGE_MASKS[2] | MARRIAGE_MASKS[3]
_RANK_MASKS: Final = tuple(sum(1 << (6 * s + r) for s in range(4)) for r in range(6))
_BELOW: Final = tuple((1 << c) - 1 for c in range(25))
"""Cards numbered below ``c`` (any suit)."""
NO_LIMIT: Final = 1 << 62


class NodeLimit(Exception):
    """A search passed its node limit (:attr:`Solver.limit`); the solver is left unusable."""


def _above(c: int) -> CardMask:
    """Higher cards of the suit of ``c``."""
    return SUIT_MASKS[c // 6] & ~_BELOW[c + 1]


class Solver:
    """Alpha-beta search of one open-hands position; values are the future points weighted per seat.

    ``weights[seat]`` multiplies every point ``seat`` takes from here on (cards, marriages, the piles):
    the declarer's weight is positive and the declarer maximizes, the defenders minimize.  Inside, the
    seats in play are positions 0 to n-1 in playing order and each hand is a field of its own (a
    machine integer once compiled).
    """

    __slots__ = (
        "ace",
        "ace_value",
        "best",
        "bits",
        "choice",
        "crawl",
        "crawl_rule",
        "decl",
        "first",
        "h0",
        "h1",
        "h2",
        "h3",
        "key",
        "kshift",
        "limit",
        "min_cards",
        "must_beat",
        "mvals",
        "n",
        "nodes",
        "piles",
        "pos_of",
        "rem",
        "root",
        "seat_of",
        "table",
        "tb",
        "tc",
        "tn",
        "trump",
        "ts",
        "w",
        "wmin",
    )

    def __init__(self, sim: Sim, weights: Sequence[int]) -> None:
        pr = sim.pr
        seats: list[int] = []
        s = sim.declarer
        while True:
            seats.append(s)
            s = sim.succ[s]
            if s == sim.declarer:
                break
        pos_of = [-1] * len(sim.succ)
        for p, seat in enumerate(seats):
            pos_of[seat] = p
        self.seat_of: list[int] = seats
        self.pos_of: list[int] = pos_of
        self.n: int = len(seats)
        hands = [sim.hands[seat] for seat in seats] + [0] * (4 - len(seats))
        self.h0: int = hands[0]
        self.h1: int = hands[1]
        self.h2: int = hands[2]
        self.h3: int = hands[3]
        self.decl: int = 0
        self.w: list[int] = [weights[seat] for seat in seats]
        self.mvals: list[int] = list(pr.mvals)
        self.choice: bool = pr.choice
        self.min_cards: int = pr.min_cards
        self.ace: bool = pr.ace and not sim.declared >> ACE_SUIT & 1
        self.ace_value: int = pr.ace_value
        self.must_beat: bool = pr.must_beat
        self.crawl_rule: bool = pr.crawl
        self.piles: int = sim.piles_points
        rem = 0
        for seat in seats:
            h = sim.hands[seat]
            while h:
                low = h & -h
                rem += CARD_POINTS[low.bit_length() - 1]
                h ^= low
        self.rem: int = rem
        """Card points in the hands."""
        self.wmin: int = min(0, *self.w)
        """The lowest weight: a defender's, never above 0."""
        self.first: bool = sim.tricks == 0
        self.crawl: bool = sim.crawl
        self.trump: int = sim.trump
        # The cards and positions of the trick under way from ``tb`` on (4 entries a trick, one trick
        # after the other down the search, so that closing a trick copies nothing).
        self.tc: list[int] = [0] * 64
        self.ts: list[int] = [0] * 64
        self.tb: int = 0
        self.tn: int = len(sim.trick)
        for i, c in enumerate(sim.trick):
            self.tc[i] = c
            self.ts[i] = pos_of[sim.trick_seats[i]]
        self.root: int = pos_of[sim.to_act] if sim.to_act >= 0 else -1
        self.bits: int = 2 if self.n <= 3 else 3
        self.kshift: int = 24 * self.bits
        key = 0
        for p in range(self.n):
            h = hands[p]
            while h:
                low = h & -h
                key += (p + 1) << (self.bits * (low.bit_length() - 1))
                h ^= low
        self.key: int = key
        self.table: dict[int, int] = {}
        self.nodes: int = 0
        self.limit: int = NO_LIMIT
        """Positions after which a search raises :class:`NodeLimit` (checked between tricks): a caller
        with a budget (the hard player) falls back to something cheaper instead of waiting."""
        self.best: int = -1

    # ------------------------------------------------------------------ hands

    def hand(self, p: int) -> int:
        if p == 0:
            return self.h0
        if p == 1:
            return self.h1
        if p == 2:
            return self.h2
        return self.h3

    def _toggle(self, p: int, c: int) -> None:
        """Take card ``c`` out of position ``p``'s hand, or put it back."""
        bit = 1 << c
        if p == 0:
            self.h0 ^= bit
        elif p == 1:
            self.h1 ^= bit
        elif p == 2:
            self.h2 ^= bit
        else:
            self.h3 ^= bit
        self.key ^= (p + 1) << (self.bits * c)

    def _next(self, p: int) -> int:
        return p + 1 if p + 1 < self.n else 0

    # ------------------------------------------------------------------ entry points

    def value(self) -> int:
        """The weighted future points of the position the solver was built on."""
        return self.search(-INF, INF)

    def search(self, alpha: int, beta: int) -> int:
        p = self.root
        if p < 0:
            return 0
        if self.tn == 0:
            return self.lead(p, alpha, beta)
        return self.follow(p, self._winner_index(), alpha, beta)

    def root_moves(self) -> list[int]:
        """The legal moves at the root, as :class:`~core.ai.sim.Sim` moves."""
        p = self.root
        if self.tn:
            return _bits_asc(self._playable(p))
        out = []
        for m in self._leads(p, -1):
            if m == _CRAWL:
                out.append(CRAWL)
            elif m & _DECL and self.choice:
                out.append((m & 31) | DECLARE)
            else:
                out.append(m & 31)
        return out

    def move_value(self, move: int, alpha: int = -INF, beta: int = INF) -> int:
        """The weighted future points after the root move ``move`` (a :class:`Sim` move), counted from
        the root: the points of the move itself (a marriage) included."""
        p = self.root
        if self.tn:
            return self.after_follow(p, move & 31, self._winner_index(), alpha, beta)
        if move == CRAWL:
            return self.after_lead(p, _CRAWL, alpha, beta)
        c = move & 31
        m = c | _DECL if self._declares(p, c, bool(move & DECLARE)) else c
        return self.after_lead(p, m, alpha, beta)

    # ------------------------------------------------------------------ rules

    def _declares(self, p: int, c: int, asked: bool) -> bool:
        """Whether leading ``c`` (with the declare flag ``asked``) declares, as the engine decides."""
        if self.first or self.crawl:
            return False
        if self.choice and not asked:
            return False
        hand = self.hand(p)
        if hand.bit_count() < self.min_cards:
            return False
        r = c % 6
        if r == 2 or r == 3:
            m = MARRIAGE_MASKS[c // 6]
            return hand & m == m
        return r == 5 and self.ace and hand & ACES == ACES

    def _playable(self, p: int) -> CardMask:
        """The engine's ``DealState.playable`` on the solver's trick."""
        hand = self.hand(p)
        tn = self.tn
        if tn == 0 or self.crawl:
            return hand
        tc = self.tc
        tb = self.tb
        led = tc[tb] // 6
        follow = hand & SUIT_MASKS[led]
        trump = self.trump
        if not self.must_beat:
            if follow:
                return follow
            if trump >= 0:
                t = hand & SUIT_MASKS[trump]
                if t:
                    return t
            return hand
        if follow:
            best = -1
            for i in range(tb, tb + tn):
                c = tc[i]
                s = c // 6
                if s == trump and led != trump:
                    return follow
                if s == led and c > best:
                    best = c
            return (follow & _above(best)) or follow
        if trump >= 0:
            t = hand & SUIT_MASKS[trump]
            if t:
                best = -1
                for i in range(tb, tb + tn):
                    c = tc[i]
                    if c // 6 == trump and c > best:
                        best = c
                if best < 0:
                    return t
                return (t & _above(best)) or t
        return hand

    def _winner_index(self) -> int:
        tc = self.tc
        tb = self.tb
        best = 0
        for i in range(1, self.tn):
            if self._beats(tc[tb + i], tc[tb + best]):
                best = i
        return best

    def _beats(self, c: int, w: int) -> bool:
        """Whether ``c``, played after the trick's current winner ``w``, takes over (``core.cards.beats``)."""
        return beats(c, w, self.trump, self.crawl)

    # ------------------------------------------------------------------ search

    def _leads(self, p: int, hint: int) -> list[int]:
        """Leads in the order to try: the table's best, declarations, masters high, the rest low."""
        hand = self.hand(p)
        out: list[int] = []
        tried_plain = 0
        tried_decl = 0
        if hint >= 0:
            out.append(hint)
            if hint & _DECL:
                tried_decl |= 1 << (hint & 31)
            else:
                tried_plain |= 1 << hint
        if not self.first and not self.crawl and hand.bit_count() >= self.min_cards:
            decl = 0
            for s in range(4):
                m = MARRIAGE_MASKS[s]
                if hand & m == m:
                    decl |= m
            if self.ace and hand & ACES == ACES:
                decl |= ACES
            if decl:
                m = decl & ~tried_decl
                while m:
                    c = m.bit_length() - 1
                    m ^= 1 << c
                    out.append(c | _DECL)
                if not self.choice:
                    tried_plain |= decl
        others = (self.h0 | self.h1 | self.h2 | self.h3) & ~hand
        rest = hand & ~tried_plain
        masters = 0
        for s in range(4):
            mine = rest & SUIT_MASKS[s]
            if mine:
                top = mine.bit_length() - 1
                if not others & _above(top):
                    masters |= 1 << top
        m = masters
        while m:
            c = m.bit_length() - 1
            m ^= 1 << c
            out.append(c)
        _append_low_first(out, rest & ~masters)
        if self.first and self.crawl_rule and not self.crawl and p == self.decl and not hand & ACES:
            out.append(_CRAWL)
        return out

    def lead(self, p: int, alpha: int, beta: int) -> int:
        """Value of the position between tricks, position ``p`` to lead."""
        self.nodes += 1
        if self.nodes > self.limit:
            raise NodeLimit
        if self.first:
            return self._lead_search(p, alpha, beta, -1)
        hand = self.hand(p)
        if hand & (hand - 1) == 0:
            return self._last_trick(p)
        # Neither side can take more than the points left (and the marriages still in hands).
        left = self.rem + self.piles
        if left * self.w[self.decl] <= alpha:
            top = (left + self._marriages(True)) * self.w[self.decl]
            if top <= alpha:
                return top
        if left * self.wmin >= beta:
            bottom = (left + self._marriages(False)) * self.wmin
            if bottom >= beta:
                return bottom
        key = self.key | (p << self.kshift) | ((self.trump + 1) << (self.kshift + 2))
        table = self.table
        entry = table.get(key)
        hint = -1
        lo = -INF
        hi = INF
        if entry is not None:
            lo = (entry & _FIELD) - _OFF
            hi = ((entry >> 24) & _FIELD) - _OFF
            hint = (entry >> 48) - 1
            if lo >= beta:
                return lo
            if hi <= alpha:
                return hi
            if lo == hi:
                return lo
            if lo > alpha:
                alpha = lo
            if hi < beta:
                beta = hi
        v = self._lead_search(p, alpha, beta, hint)
        if v <= alpha:
            hi = v
        elif v >= beta:
            lo = v
        else:
            lo = hi = v
        if lo < -_OFF + 1:
            lo = -_OFF + 1
        if hi > _OFF - 1:
            hi = _OFF - 1
        table[key] = (lo + _OFF) | ((hi + _OFF) << 24) | ((self.best + 1) << 48)
        return v

    def _marriages(self, declarer: bool) -> int:
        """The most the declarer's (or the defenders') marriages still held could give."""
        total = 0
        for p in range(self.n):
            if (p == self.decl) != declarer:
                continue
            hand = self.hand(p)
            if hand & _QK_ALL:
                for s in range(4):
                    m = MARRIAGE_MASKS[s]
                    if hand & m == m:
                        total += self.mvals[s]
            if self.ace and hand & ACES == ACES:
                total += self.ace_value
        return total

    def _lead_search(self, p: int, alpha: int, beta: int, hint: int) -> int:
        """Best value over the leads; the best lead is left in ``self.best`` (-1 for the crawl)."""
        maximize = p == self.decl
        best_v = -INF if maximize else INF
        best_m = -1
        for m in self._leads(p, hint):
            v = self.after_lead(p, m, alpha, beta)
            if maximize:
                if v > best_v:
                    best_v = v
                    best_m = m
                    if v > alpha:
                        alpha = v
            elif v < best_v:
                best_v = v
                best_m = m
                if v < beta:
                    beta = v
            if alpha >= beta:
                break
        self.best = -1 if best_m == _CRAWL else best_m
        return best_v

    def after_lead(self, p: int, m: int, alpha: int, beta: int) -> int:
        if m == _CRAWL:
            self.crawl = True
            v = self.lead(p, alpha, beta)
            self.crawl = False
            return v
        c = m & 31
        gain = 0
        trump = self.trump
        if m & _DECL:
            if c % 6 == 5:
                gain = self.ace_value * self.w[p]
            else:
                gain = self.mvals[c // 6] * self.w[p]
                self.trump = c // 6
        self._toggle(p, c)
        self.rem -= CARD_POINTS[c]
        tb = self.tb
        self.tc[tb] = c
        self.ts[tb] = p
        self.tn = 1
        v = gain + self.follow(self._next(p), 0, alpha - gain, beta - gain)
        self.tn = 0
        self._toggle(p, c)
        self.rem += CARD_POINTS[c]
        self.trump = trump
        return v

    def follow(self, p: int, win: int, alpha: int, beta: int) -> int:
        """Value with the trick under way, position ``p`` to play, ``win`` the index of its winning card.

        The cards are tried in two groups, each by rank: when the trick is the own side's, all cards
        low first (high first for the last card: points to the own trick); else the cards that take
        the trick over high first, then the others low first.
        """
        self.nodes += 1
        left = self.rem + self.piles
        tb = self.tb
        for i in range(tb, tb + self.tn):
            left += CARD_POINTS[self.tc[i]]
        if left * self.w[self.decl] <= alpha:
            top = (left + self._marriages(True)) * self.w[self.decl]
            if top <= alpha:
                return top
        if left * self.wmin >= beta:
            bottom = (left + self._marriages(False)) * self.wmin
            if bottom >= beta:
                return bottom
        legal = self._playable(p)
        maximize = p == self.decl
        wc = self.tc[tb + win]
        mine = (self.ts[tb + win] == self.decl) == maximize
        if mine:
            first = legal
            first_high = self.tn == self.n - 1
            second = 0
        else:
            first = legal & _above(wc)
            trump = self.trump
            if not self.crawl and trump >= 0 and wc // 6 != trump:
                first |= legal & SUIT_MASKS[trump]
            first_high = True
            second = legal & ~first
        best_v = -INF if maximize else INF
        group = first
        high = first_high
        while True:
            r = 5 if high else 0
            while group:
                rm = group & _RANK_MASKS[r]
                group ^= rm
                while rm:
                    c = rm.bit_length() - 1 if high else (rm & -rm).bit_length() - 1
                    rm ^= 1 << c
                    v = self.after_follow(p, c, win, alpha, beta)
                    if maximize:
                        if v > best_v:
                            best_v = v
                            if v > alpha:
                                alpha = v
                                if alpha >= beta:
                                    return best_v
                    elif v < best_v:
                        best_v = v
                        if v < beta:
                            beta = v
                            if alpha >= beta:
                                return best_v
                r = r - 1 if high else r + 1
            if not second:
                return best_v
            group = second
            second = 0
            high = False

    def after_follow(self, p: int, c: int, win: int, alpha: int, beta: int) -> int:
        tn = self.tn
        tb = self.tb
        tc = self.tc
        if self._beats(c, tc[tb + win]):
            win = tn
        self._toggle(p, c)
        self.rem -= CARD_POINTS[c]
        tc[tb + tn] = c
        self.ts[tb + tn] = p
        if tn + 1 < self.n:
            self.tn = tn + 1
            v = self.follow(self._next(p), win, alpha, beta)
        else:
            winner = self.ts[tb + win]
            pts = 0
            for i in range(tb, tb + tn + 1):
                pts += CARD_POINTS[tc[i]]
            if not self.hand(winner):
                v = (pts + self.piles) * self.w[winner]
            else:
                add = pts * self.w[winner]
                first = self.first
                crawl = self.crawl
                self.first = False
                self.crawl = False
                self.tn = 0
                self.tb = tb + 4
                v = add + self.lead(winner, alpha - add, beta - add)
                self.tb = tb
                self.first = first
                self.crawl = crawl
        self.tn = tn
        self._toggle(p, c)
        self.rem += CARD_POINTS[c]
        return v

    def _last_trick(self, p: int) -> int:
        """Every hand holds one card: the trick plays itself."""
        trump = self.trump
        c0 = self.hand(p).bit_length() - 1
        best = c0
        winner = p
        pts = CARD_POINTS[c0]
        q = self._next(p)
        while q != p:
            c = self.hand(q).bit_length() - 1
            pts += CARD_POINTS[c]
            cs = c // 6
            if (cs == best // 6 and c > best) or (cs == trump and best // 6 != trump):
                best = c
                winner = q
            q = self._next(q)
        return (pts + self.piles) * self.w[winner]


def _append_high_first(out: list[int], mask: CardMask) -> None:
    """Cards of ``mask`` by rank (so by points) from the highest, aces first."""
    r = 5
    while mask and r >= 0:
        m = mask & _RANK_MASKS[r]
        mask ^= m
        while m:
            c = m.bit_length() - 1
            m ^= 1 << c
            out.append(c)
        r -= 1


def _append_low_first(out: list[int], mask: CardMask) -> None:
    """Cards of ``mask`` by rank from the lowest, nines first."""
    r = 0
    while mask and r < 6:
        m = mask & _RANK_MASKS[r]
        mask ^= m
        while m:
            low = m & -m
            m ^= low
            out.append(low.bit_length() - 1)
        r += 1


def _bits_asc(mask: CardMask) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        mask ^= low
        out.append(low.bit_length() - 1)
    return out


# ---------------------------------------------------------------------- the engine's states


@dataclass(frozen=True, slots=True)
class OpenHandsValue:
    """Final deal points with all hands open and exact play from the position on (points already taken
    included): the declarer's and the defenders' together."""

    declarer_seat: int
    declarer: int
    defenders: int

    def side(self, seat: int) -> int:
        """The points of ``seat``'s side: the declarer's, or the defenders' total."""
        return self.declarer if seat == self.declarer_seat else self.defenders


def big_weight(sim: Sim) -> int:
    """A weight for the declarer's points above anything the defenders can take in the deal."""
    pr = sim.pr
    return 1 + 120 + sim.piles_points + sum(abs(v) for v in pr.mvals) + (abs(pr.ace_value) if pr.ace else 0)


def team_weights(sim: Sim) -> tuple[list[int], int]:
    big = big_weight(sim)
    w = [0] * len(sim.succ)
    for seat in range(len(w)):
        if sim.succ[seat] >= 0:
            w[seat] = big if seat == sim.declarer else -1
    return w, big


def _decode(sim: Sim, v: int, big: int) -> OpenHandsValue:
    d = -((-v) // big)
    e = big * d - v
    decl = sim.declarer
    taken_d = sim.taken[decl]
    taken_e = sum(sim.taken[s] for s in range(len(sim.succ)) if s != decl and sim.succ[s] >= 0)
    return OpenHandsValue(decl, taken_d + d, taken_e + e)


def _play_sim(state: DealState | GameState) -> Sim:
    deal = state.deal if isinstance(state, GameState) else state
    if deal.phase != Phase.PLAY:
        raise ValueError(f"the deal is not in its card play (phase {deal.phase})")
    return sim_from_deal(deal)


def solve(state: DealState | GameState) -> OpenHandsValue:
    """The open-hands value of a deal in its card play, from the position it is in."""
    sim = _play_sim(state)
    w, big = team_weights(sim)
    return _decode(sim, Solver(sim, w).value(), big)


def _action(move: int) -> Action:
    if move == CRAWL:
        return CRAWL_ACTION
    return PLAYS_DECLARING[move & 31] if move & DECLARE else PLAYS[move & 31]


def move_of_action(action: Action) -> int:
    if type(action) is Crawl:
        return CRAWL
    if type(action) is not Play:
        raise ValueError(f"not a card play: {action!r}")
    return action.card | DECLARE if action.declare else action.card


def option_values(state: DealState | GameState) -> dict[Action, OpenHandsValue]:
    """For each legal action of the seat to play, the open-hands value after it (the points of the
    acting seat's side: ``value.side(seat)``)."""
    sim = _play_sim(state)
    w, big = team_weights(sim)
    solver = Solver(sim, w)
    out: dict[Action, OpenHandsValue] = {}
    for move in solver.root_moves():
        out[_action(move)] = _decode(sim, solver.move_value(move), big)
    return out


def solve_root(
    sim: Sim, moves: list[int], me: int = -1, limit: int = NO_LIMIT
) -> tuple[list[tuple[int, int]], int]:
    """For each root move of ``sim``, the final deal points of the declarer and of ``me`` (a defender
    whose own points break the defenders' ties; -1 when ``me`` is the declarer or not given) with exact
    play afterwards; and the positions searched.  The hard player's endgame.  Past ``limit`` positions
    it raises :class:`NodeLimit`."""
    decl = sim.declarer
    track = me >= 0 and me != decl
    big = big_weight(sim) if track else 1
    w = [0] * len(sim.succ)
    w[decl] = big
    if track:
        w[me] = -1
    solver = Solver(sim, w)
    solver.limit = limit
    out: list[tuple[int, int]] = []
    for m in moves:
        v = solver.move_value(m)
        if track:
            d = -((-v) // big)
            out.append((sim.taken[decl] + d, sim.taken[me] + big * d - v))
        else:
            out.append((sim.taken[decl] + v, -1))
    return out, solver.nodes
