"""Every decision of a deal, for each level: blind, bids, talon, sale, discard, exchange, contract, play.

``easy`` decides from hand-made judgements (:mod:`core.ai.hand`, :mod:`core.ai.rollout`); ``medium``
and ``hard`` simulate: they deal the unseen cards consistently with the view many times and compare
the candidate actions by the average outcome, scored with the match's rules (:mod:`core.ai.score`),
so that the barrel, bolts and the race to 1000 shape bids and concessions.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..actions import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    PASS,
    TAKE_PILE,
    Action,
    Bid,
    Contract,
    Give,
    Pass,
    discard_action,
)
from ..cards import FULL_DECK, CardMask
from ..deal import Phase, layout_shape, successor_seats
from ..rules import Barrel, Opening
from ..view import SeatView
from .bids import BidModel
from .budget import Budget
from .endgame import align, position_verdict, solve_play
from .hand import (
    choose_discard,
    choose_give,
    estimate_points,
    give_candidates,
    p_make,
    p_make_after,
    ranked_cards,
)
from .infer import TALON, Knowledge, knowledge, sample
from .play import easy_play, pimc_play
from .rollout import rollout
from .score import ScoreCtx
from .sim import Sim
from .simulate import DealSim, max_bid_for, points

EASY_BID_CHANCE = 0.58
"""The easy player bids on while the chance of making the next bid is at least this."""


@dataclass(frozen=True, slots=True)
class Level:
    name: str
    budget: float
    play_worlds: int
    bid_worlds: int
    exchange_worlds: int
    candidates: int
    endgame: int
    """Solve the play exactly when at most this many cards are left in all hands (0: never)."""
    bid_margin: float = 0.0
    """Bid on when declaring is worth this much more than defending."""
    auction_model: bool = True
    """Judge a pass by playing the rest of the auction out (else: the strongest other hand declares)."""
    infer_bids: bool = False
    """Weight sampled deals by how likely they make the auction that was seen."""
    public_rollouts: bool = False
    """Playouts in which players judge the others by what the table saw, not by their real hands."""
    infer_play: float = 0.0
    """Weight sampled deals by how natural the cards played look in them (weight of each unexpected
    card; 0: off)."""
    declare_bonus: float = 0.0
    """Utility added to declaring a marriage now over waiting (playouts assume the lead comes back)."""
    node_cap: int = 0
    """Open-hands verdicts (:mod:`core.ai.solver`) decide each sampled deal's contract, every search
    capped at this many positions (0: off; playouts alone)."""
    bid_verdicts: int = 0
    """Before the card play (bids, talon, gives, contract): 0 playouts alone, 1 the verdict decides the
    contract, 2 the verdict may only fail a contract the playout made (open hands flatter the declarer,
    who cannot see the cards when bidding)."""


LEVEL_PARAMS: dict[str, Level] = {
    "random": Level("random", 0.001, 0, 0, 0, 0, 0),
    "easy": Level("easy", 0.002, 0, 0, 0, 0, 0),
    # Medium samples few deals: it beats easy by far (bench/results/ai.md), stays quick on a busy bot,
    # and leaves hard's extra sampling and exact endgame a measurable edge over it.
    "medium": Level("medium", 0.08, 16, 12, 8, 3, 0),
    # Hard: the open-hands solver values every sampled deal (docs/AI.md, "The hard player").
    "hard": Level("hard", 0.4, 160, 128, 48, 7, 15, node_cap=20_000),
}


def decide(
    level: Level, view: SeatView, legal: Sequence[Action], rng: random.Random, budget: Budget
) -> Action:
    if len(legal) == 1:
        return legal[0]
    if level.name == "random":
        return legal[rng.randrange(len(legal))]
    phase = view.phase
    simulate = level.name != "easy"
    if phase == Phase.PLAY:
        if not simulate:
            return easy_play(view, legal)
        if level.endgame:
            return solve_play(
                view,
                legal,
                rng,
                budget,
                level.play_worlds,
                level.endgame,
                level.infer_bids,
                level.public_rollouts,
                level.infer_play,
                level.declare_bonus,
                level.node_cap,
            )
        return pimc_play(
            view,
            legal,
            rng,
            budget,
            level.play_worlds,
            level.infer_bids,
            level.public_rollouts,
            level.infer_play,
            level.declare_bonus,
        )
    if phase == Phase.BIDDING:
        return _bidding(level, view, legal, rng, budget)
    if phase == Phase.BLIND:
        if not simulate:
            return BLIND_NO
        return BLIND_YES if _blind_value(view, rng, budget, level.bid_worlds) > 5.0 else BLIND_NO
    if phase == Phase.TALON:
        if TAKE_PILE[1] in legal:
            return TAKE_PILE[rng.randrange(2)]
        return TAKE_PILE[0]
    if phase == Phase.SALE:
        return _sale(view, legal)
    if phase == Phase.DISCARD:
        return _discard(level, view, legal, rng, budget)
    if phase == Phase.EXCHANGE:
        return _exchange(level, view, legal, rng, budget)
    if phase == Phase.CONTRACT:
        return _contract(level, view, legal, rng, budget)
    return legal[0]


# ---------------------------------------------------------------------------------------------- bidding


def _unseen_count(view: SeatView) -> int:
    return (FULL_DECK & ~view.hand).bit_count()


def _talon_gain(view: SeatView) -> int:
    """Unknown cards a declarer adds to the hand from the talon (net of cards laid down)."""
    if view.players == 2 and view.rules.two_musiki:
        return 2
    return view.talon_size


def easy_estimate(view: SeatView, hand: CardMask | None = None, talon: int | None = None) -> float:
    mvals = tuple(view.rules.marriage_value(s) for s in range(4))
    h = view.hand if hand is None else hand
    return estimate_points(h, mvals, _talon_gain(view) if talon is None else talon, _unseen_count(view))


def _declarer_only_barrel(view: SeatView) -> bool:
    return view.rules.barrel == Barrel.DECLARER_ONLY and view.totals[view.seat] >= view.rules.barrel_at


def _bidding(
    level: Level, view: SeatView, legal: Sequence[Action], rng: random.Random, budget: Budget
) -> Action:
    bids = [a for a in legal if type(a) is Bid]
    can_pass = PASS in legal
    if not bids:
        return PASS
    nxt = bids[0]
    if not can_pass:
        if level.name == "easy" or not view.hand_known:
            return nxt
        # A compulsory opening: open at the minimum, or higher when the hand is worth it? Keep it low.
        return nxt
    if not view.hand_known:
        # Blind bidder: the value of a blind contract does not depend on a hand nobody has seen.
        if level.name == "easy":
            return PASS
        value = _blind_value(view, rng, budget, level.bid_worlds, upto=nxt.value)
        return nxt if value > -10.0 else PASS
    if level.name == "easy":
        expected = easy_estimate(view)
        threshold = 0.45 if _declarer_only_barrel(view) else EASY_BID_CHANCE
        return nxt if p_make(expected, nxt.value) >= threshold else PASS
    u_decl, u_def = _bid_values(view, nxt.value, rng, budget, level)
    return nxt if u_decl > u_def + level.bid_margin else PASS


def _bid_values(
    view: SeatView, value: int, rng: random.Random, budget: Budget, level: Level
) -> tuple[float, float]:
    """Mean utility of declaring at ``value`` and of defending instead, over sampled deals."""
    k = knowledge(view)
    model = _bid_model(view, k, level)
    max_worlds = level.bid_worlds
    total_w = 0.0
    ctx = ScoreCtx(view)
    ds = DealSim(view)
    me = view.seat
    ti = k.locs.index(TALON)
    u_decl = 0.0
    u_def = 0.0
    worlds = 0
    cost = 2 * sum(view.hand_counts) + 16
    while worlds < max_worlds:
        masks = sample(k, rng)
        if masks is None:
            break
        hands = [0] * view.players
        hands[me] = view.hand
        for i, loc in enumerate(k.locs):
            if loc >= 0:
                hands[loc] = masks[i]
        talon = masks[ti]
        w = model.weight(masks) if model is not None else 1.0
        total_w += w
        # As declarer.
        sim = ds.start(hands.copy(), me, value, talon, rng)
        pts, nodes = _played(sim, level.node_cap, level.bid_verdicts)
        u_decl += w * ctx.utility(me, me, sim.contract, pts)
        # As a defender: the others bid on (by the easy rule of thumb) and one of them declares.
        if level.auction_model:
            other, contract = _auction_without(view, hands, ds.mvals)
        else:
            other, contract = _strongest_other(view, hands, ds.mvals, value)
        sim = ds.start(hands.copy(), other, contract, talon, rng)
        pts, more = _played(sim, level.node_cap, level.bid_verdicts)
        u_def += w * ctx.utility(me, other, sim.contract, pts)
        worlds += 1
        if not budget.spend(cost + nodes + more):
            break
    if worlds == 0 or total_w <= 0:
        return 0.0, 0.0
    return u_decl / total_w, u_def / total_w


def _played(sim: Sim, node_cap: int, mode: int) -> tuple[list[int], int]:
    """The points of a sampled deal played out from its first lead (in place), the contract made or
    failed as the open-hands verdict says when ``node_cap`` > 0; and the positions searched."""
    if node_cap <= 0 or mode == 0:
        rollout(sim)
        return sim.taken, 0
    bound, nodes = position_verdict(sim, node_cap)
    rollout(sim)
    return align(sim.taken, sim, bound, sim.contract, mode == 2), nodes


def _bid_model(view: SeatView, k: Knowledge, level: Level) -> BidModel | None:
    if not level.infer_bids:
        return None
    model = BidModel(view, k)
    return model if model.useful else None


def _strongest_other(
    view: SeatView, hands: list[CardMask], mvals: tuple[int, ...], value: int
) -> tuple[int, int]:
    other = -1
    best = -1.0
    for s in view.active:
        if s != view.seat:
            e = estimate_points(hands[s], mvals, _talon_gain(view), 17)
            if e > best:
                other, best = s, e
    step = view.rules.bid_step
    level = max(value, int(best - 10) // step * step)
    return other, min(level, max(value, max_bid_for(view.rules, view.players, hands[other])))


def _auction_without(view: SeatView, hands: list[CardMask], mvals: tuple[int, ...]) -> tuple[int, int]:
    """Who declares at what if this seat passes now: the others bid on while their hand, judged by
    :func:`estimate_points`, makes the next bid likely enough."""
    rules = view.rules
    step = rules.bid_step
    me = view.seat
    active = view.active
    succ = successor_seats(view.players, active)
    passed = view.passed | 1 << me
    bid = view.bid
    bidder = view.bidder
    has_bid = 0
    for s, v in view.auction:
        if v:
            has_bid |= 1 << s
    gain = _talon_gain(view)
    est = {s: estimate_points(hands[s], mvals, gain, 17) for s in active if s != me}
    tops = {s: max_bid_for(rules, view.players, hands[s], s == view.blind_seat) for s in active if s != me}
    compulsory = rules.opening == Opening.COMPULSORY
    opener = active[0]
    seat = succ[me]
    for _ in range(64):
        left = [s for s in active if not passed >> s & 1]
        if len(left) <= 1:
            break
        if passed >> seat & 1:
            seat = succ[seat]
            continue
        nxt = bid + step if bid else (max(rules.opening_bid, 120) if view.golden else rules.opening_bid)
        must_open = compulsory and seat == opener and not has_bid >> seat & 1
        wants = seat != view.blind_seat and nxt <= tops[seat] and p_make(est[seat], nxt) >= EASY_BID_CHANCE
        if must_open or wants:
            bid, bidder = nxt, seat
            has_bid |= 1 << seat
        else:
            passed |= 1 << seat
        seat = succ[seat]
    left = [s for s in active if not passed >> s & 1]
    declarer = left[0] if left else bidder
    return declarer, max(bid, rules.opening_bid)


def _blind_value(
    view: SeatView, rng: random.Random, budget: Budget, max_worlds: int, upto: int | None = None
) -> float:
    """Best mean utility of a blind contract (at ``upto``, or the best level up to the blind cap)."""
    k = knowledge(view)
    ctx = ScoreCtx(view, blind_seat=view.seat)
    ds = DealSim(view)
    me = view.seat
    ti = k.locs.index(TALON)
    rules = view.rules
    lo = max(rules.opening_bid, view.bid + rules.bid_step if view.bid else rules.opening_bid)
    levels = [upto] if upto is not None else list(range(lo, rules.blind_max_bid + 1, rules.bid_step))
    totals = [0.0] * len(levels)
    worlds = 0
    cost = sum(view.hand_counts) + 8
    while worlds < max_worlds:
        masks = sample(k, rng)
        if masks is None:
            break
        hands = [0] * view.players
        for i, loc in enumerate(k.locs):
            if loc >= 0:
                hands[loc] = masks[i]
        sim = ds.start(hands, me, levels[0], masks[ti], rng, blind=True)
        rollout(sim)
        for j, v in enumerate(levels):
            totals[j] += ctx.utility(me, me, v, sim.taken)
        worlds += 1
        if not budget.spend(cost):
            break
    if worlds == 0:
        return -1e9
    return max(totals) / worlds


def _sale(view: SeatView, legal: Sequence[Action]) -> Action:
    bids = [a for a in legal if type(a) is Bid]
    if not bids:
        return PASS
    expected = easy_estimate(view, view.hand | _mask(view.talon), 0)
    return bids[0] if p_make(expected, bids[0].value) >= 0.62 else PASS


def _mask(cards: Sequence[int]) -> CardMask:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


# ---------------------------------------------------------------------------------------------- exchange


def _mvals(view: SeatView) -> tuple[int, int, int, int]:
    r = view.rules
    return (r.marriage_value(0), r.marriage_value(1), r.marriage_value(2), r.marriage_value(3))


def _contract_levels(view: SeatView, hand: CardMask) -> list[int]:
    rules = view.rules
    if not rules.contract_step:
        return [view.bid]
    top = max_bid_for(rules, view.players, hand)
    return [view.bid, *range(view.bid + rules.bid_step, top + 1, rules.bid_step)]


def _best_level(
    ctx: ScoreCtx, me: int, levels: list[int], results: list[tuple[float, list[int]]]
) -> tuple[float, int]:
    """Best mean utility over contract levels for weighted playout points; skips hopeless raises."""
    total = sum(w for w, _ in results) or 1.0
    best_u = -1e18
    best_v = levels[0]
    for j, v in enumerate(levels):
        if j and sum(w for w, r in results if r[me] >= v) * 2 < total:
            break
        u = sum(w * ctx.utility(me, me, v, r) for w, r in results) / total
        if u > best_u:
            best_u, best_v = u, v
    return best_u, best_v


def _exchange(
    level: Level, view: SeatView, legal: Sequence[Action], rng: random.Random, budget: Budget
) -> Action:
    me = view.seat
    hand = view.hand
    mvals = _mvals(view)
    receivers = tuple(sorted(s for s in view.active if s != me))
    unseen = FULL_DECK & ~hand
    default = Give(choose_give(hand, receivers, unseen, mvals))
    ctx = ScoreCtx(view)
    zeros = [0] * view.players
    bomb_u = ctx.utility(me, me, view.bid, zeros, "bomb") if BOMB in legal else None
    concede_u = ctx.utility(me, me, view.bid, zeros, "concede") if CONCEDE in legal else None
    if level.name == "easy":
        expected = easy_estimate(view, hand, 0)
        p = p_make_after(expected, view.bid)
        if bomb_u is not None and p < 0.3:
            return BOMB
        if concede_u is not None and p < 0.15:
            return CONCEDE
        return default if default in legal else legal[0]
    cands = [Give(g) for g in give_candidates(hand, receivers, unseen, mvals, level.candidates)]
    cands = [g for g in cands if g in legal] or [default]
    k = knowledge(view)
    model = _bid_model(view, k, level)
    ds = DealSim(view)
    results: list[list[tuple[float, list[int]]]] = [[] for _ in cands]
    worlds = 0
    cost = len(cands) * sum(view.hand_counts)
    while worlds < level.exchange_worlds:
        masks = sample(k, rng)
        if masks is None:
            break
        w = model.weight(masks) if model is not None else 1.0
        base = [0] * view.players
        base[me] = hand
        for i, loc in enumerate(k.locs):
            if loc >= 0:
                base[loc] = masks[i]
        spent = 0
        for ci, g in enumerate(cands):
            hands = base.copy()
            for target, c in g.cards:
                hands[me] &= ~(1 << c)
                hands[target] |= 1 << c
            sim = ds.after_give(hands, me, view.bid)
            pts, nodes = _played(sim, level.node_cap, level.bid_verdicts)
            spent += nodes
            results[ci].append((w, pts))
        worlds += 1
        if not budget.spend(cost + spent):
            break
    if worlds == 0:
        return default if default in legal else legal[0]
    best_a: Action = cands[0]
    best_u = -1e18
    for ci, g in enumerate(cands):
        after = hand
        for _, c in g.cards:
            after &= ~(1 << c)
        u, _ = _best_level(ctx, me, _contract_levels(view, after), results[ci])
        if u > best_u:
            best_u, best_a = u, g
    if bomb_u is not None and bomb_u > best_u:
        return BOMB
    if concede_u is not None and concede_u > best_u:
        return CONCEDE
    return best_a


def _contract(
    level: Level, view: SeatView, legal: Sequence[Action], rng: random.Random, budget: Budget
) -> Action:
    values = [a.value for a in legal if type(a) is Contract]
    if level.name == "easy":
        expected = easy_estimate(view, view.hand, 0)
        best = values[0]
        for v in values:
            if p_make_after(expected, v) >= 0.7:
                best = max(best, v)
        return _pick_contract(legal, best)
    k = knowledge(view)
    model = _bid_model(view, k, level)
    ds = DealSim(view)
    ctx = ScoreCtx(view)
    me = view.seat
    results: list[tuple[float, list[int]]] = []
    piles = 0
    cost = sum(view.hand_counts)
    while len(results) < level.exchange_worlds:
        masks = sample(k, rng)
        if masks is None:
            break
        w = model.weight(masks) if model is not None else 1.0
        hands = [0] * view.players
        hands[me] = view.hand
        for i, loc in enumerate(k.locs):
            if loc >= 0:
                hands[loc] = masks[i]
            elif loc == TALON:
                piles = points(masks[i])
        sim = ds.after_give(hands, me, view.bid, piles)
        pts, nodes = _played(sim, level.node_cap, level.bid_verdicts)
        results.append((w, pts))
        if not budget.spend(cost + nodes):
            break
    if not results:
        return legal[0]
    _, v = _best_level(ctx, me, values, results)
    return _pick_contract(legal, v)


def _pick_contract(legal: Sequence[Action], value: int) -> Action:
    for a in legal:
        if type(a) is Contract and a.value == value:
            return a
    return legal[0]


def _discard(
    level: Level, view: SeatView, legal: Sequence[Action], rng: random.Random, budget: Budget
) -> Action:
    hand = view.hand
    mvals = _mvals(view)
    unseen = FULL_DECK & ~hand
    default = discard_action(choose_discard(hand, unseen, mvals))
    if level.name == "easy":
        return default if default in legal else legal[0]
    ranked = [c for _, c in ranked_cards(hand, unseen, mvals)][:5]
    cands = [discard_action((a, b)) for i, a in enumerate(ranked) for b in ranked[i + 1 :]][
        : level.candidates + 1
    ]
    cands = [d for d in cands if d in legal] or [default]
    k = knowledge(view)
    model = _bid_model(view, k, level)
    ds = DealSim(view)
    ctx = ScoreCtx(view)
    me = view.seat
    results: list[list[tuple[float, list[int]]]] = [[] for _ in cands]
    worlds = 0
    cost = len(cands) * sum(view.hand_counts)
    while worlds < level.exchange_worlds:
        masks = sample(k, rng)
        if masks is None:
            break
        w = model.weight(masks) if model is not None else 1.0
        base = [0] * view.players
        other = 0
        for i, loc in enumerate(k.locs):
            if loc >= 0:
                base[loc] = masks[i]
            elif loc == TALON:
                other = masks[i]
        spent = 0
        for ci, d in enumerate(cands):
            hands = base.copy()
            dm = _mask(d.cards)
            hands[me] = hand & ~dm
            sim = ds.after_give(hands, me, view.bid, points(other | dm))
            pts, nodes = _played(sim, level.node_cap, level.bid_verdicts)
            spent += nodes
            results[ci].append((w, pts))
        worlds += 1
        if not budget.spend(cost + spent):
            break
    if worlds == 0:
        return default if default in legal else legal[0]
    best_a: Action = cands[0]
    best_u = -1e18
    for ci, d in enumerate(cands):
        u, _ = _best_level(ctx, me, _contract_levels(view, hand & ~_mask(d.cards)), results[ci])
        if u > best_u:
            best_u, best_a = u, d
    return best_a


__all__ = ["LEVEL_PARAMS", "Level", "decide", "easy_estimate", "layout_shape"]
_unused = (Pass,)
