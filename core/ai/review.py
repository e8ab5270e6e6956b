"""A review of a person's decisions in a finished deal: what each option was worth given what they knew.

For every decision of the reviewed seat (bids, the talon, a sale, the cards laid down or given, bomb or
concession, the contract, each card played) the options are valued over deals consistent with the
seat's view at that moment (:func:`core.ai.infer.sample`, the computer players' own sampling), each
sampled deal valued exactly by the open-hands solver (:mod:`core.ai.solver`):

- a card played: the points of the player's side (the declarer's own when the seat declares, the
  defenders' together when it defends) with open-hands play after the card, in the sampled deal;
  ``open_hands`` is the same in the real deal (what the card was worth had every hand been seen);
- a decision before the card play: the option is applied to the sampled deal, the rest of the auction
  and exchange is played by the easy player's choices for every seat (the reviewed one included: a
  choice in microseconds; the medium player's Monte Carlo inside each sample would multiply the work by
  its own samples), and the deal is then solved from the first lead.  Such a decision decides who
  declares and at what, so it is valued by the deal's score for the seat, before rounding, barrels and
  bolts: the contract (twice for a blind game) when the declarer makes it with open hands, minus it when
  not; a defender's own points (the defenders minimize the declarer, then the seat takes what it can);
  a bomb or a concession the engine's score.

The cost of a choice is the best option's mean minus the chosen one's, in those points.  Work is
bounded per deal (:class:`Limits`: samples per decision and a budget of solver positions, counted, so a
review is the same for the same seed on any machine).  Pure and synchronous like the rest of ``core``.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from ..actions import BLIND_NO, BLIND_YES, PASS, Action, Bid, Contract, Discard, Give, discard_action
from ..cards import FULL_DECK, CardMask
from ..deal import DealState, Phase, active_seats
from ..game import GameState, new_game, replace_deal
from ..record import Record
from ..rules import RuleSet
from ..view import seat_view
from . import choose_action
from .hand import give_candidates, ranked_cards
from .infer import TALON, Knowledge, knowledge, sample
from .play import move_of, world_sim
from .sim import Sim, sim_from_deal
from .simulate import max_bid_for
from .solver import INF, NO_LIMIT, NodeLimit, OpenHandsValue, Solver, big_weight, team_weights

REVIEWED = (
    Phase.BIDDING,
    Phase.TALON,
    Phase.SALE,
    Phase.DISCARD,
    Phase.EXCHANGE,
    Phase.CONTRACT,
    Phase.PLAY,
)
"""Phases whose decisions are reviewed (the blind choice is made in the record's layout)."""

COSTLY = 10.0
"""A choice costing at least this many expected points is marked (replay page, chats)."""


@dataclass(frozen=True, slots=True)
class Limits:
    """The work a review may do per deal."""

    samples: int = 10
    """Sampled deals per card played."""
    early_samples: int = 4
    """Sampled deals per decision before the card play (each option there is a full deal to solve)."""
    min_samples: int = 1
    """Sampled deals per decision even when the budget is spent."""
    candidates: int = 4
    """Gives or lay-downs valued besides the chosen one."""
    nodes: int = 1_500_000
    """Solver positions per deal review (all its decisions), shared out over the decisions left."""


@dataclass(frozen=True, slots=True)
class OptionReview:
    action: Action
    expected: float
    """Mean points of the player's side (card play) or the seat's deal score (earlier) over the samples."""
    open_hands: int | None = None
    """Card play: the exact open-hands points of the player's side in the real deal after this option."""
    makes: float | None = None
    """Share of the samples where the declarer makes the contract after this option (card play)."""


@dataclass(frozen=True, slots=True)
class DecisionReview:
    deal: int
    """1-based number of the deal in the record."""
    seat: int
    step: int
    """Index of the action in the deal's actions."""
    phase: str
    trick: int | None
    """1-based trick of a card played."""
    chosen: Action
    options: tuple[OptionReview, ...]
    best: Action
    cost: float
    samples: int
    contract_lost: bool = False
    """Card play: with open hands the best option decided the contract one way and the chosen the other."""

    def option(self, action: Action) -> OptionReview:
        for o in self.options:
            if o.action == action:
                return o
        raise KeyError(action)


@dataclass(frozen=True, slots=True)
class DealReview:
    deal: int
    seat: int
    declarer: int
    contract: int
    makeable: bool | None
    """For the declarer: whether the contract could be made with open hands from the first lead."""
    decisions: tuple[DecisionReview, ...]
    nodes: int
    """Solver positions searched."""


@dataclass(slots=True)
class _Work:
    limits: Limits
    nodes: int = 0
    left: int = 0
    cache: dict[tuple[object, ...], float] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------- the record


def played_deals(record: Record, rules: RuleSet) -> list[tuple[GameState, list[tuple[int, Action]]]]:
    """Each complete deal of a record: the game as the deal began (after the blind choice) and its
    actions; a deal cut short (an illegal action, the record's end) is left out."""
    out: list[tuple[GameState, list[tuple[int, Action]]]] = []
    state: GameState | None = None
    for rdeal in record.deals:
        if state is not None and state.finished:
            break
        layout = rdeal.layout()
        state = (
            new_game(rules, len(record.players), layout=layout)[0]
            if state is None
            else replace_deal(state, layout)[0]
        )
        if rules.blind:
            opener = active_seats(rules, len(record.players), rdeal.dealer)[0]
            state.apply_action(opener, BLIND_YES if rdeal.blind is not None else BLIND_NO)
        start = state
        state = state.clone()
        number = state.deal_number
        actions = [(a.seat, a.to_action()) for a in rdeal.actions]
        for seat, action in actions:
            state.apply_action(seat, action)
        if state.deal_number == number and not state.finished:
            break
        out.append((start, actions))
    return out


def review_record(
    record: Record,
    rules: RuleSet,
    seats: Sequence[int] | None = None,
    *,
    deals: Sequence[int] | None = None,
    seed: int = 0,
    limits: Limits | None = None,
    progress: object = None,
) -> list[DealReview]:
    """Reviews of the record's complete deals (1-based ``deals``, default all) for ``seats`` (default
    every seat that played).  ``progress``, if callable, is called with (deal, seat) before each."""
    out: list[DealReview] = []
    for d, (start, actions) in enumerate(played_deals(record, rules), start=1):
        if deals is not None and d not in deals:
            continue
        for seat in start.deal.active if seats is None else seats:
            if seat not in start.deal.active:
                continue
            if callable(progress):
                progress(d, seat)
            out.append(review_deal(start, actions, seat, deal=d, seed=seed, limits=limits))
    return out


# ---------------------------------------------------------------------------------------- one deal


def review_deal(
    start: GameState,
    actions: Sequence[tuple[int, Action]],
    seat: int,
    *,
    deal: int = 1,
    seed: int = 0,
    limits: Limits | None = None,
    steps: Collection[int] | None = None,
) -> DealReview:
    """The review of ``seat``'s decisions in one deal: ``start`` is the game as the deal began and
    ``actions`` every action of the deal, in order (``steps``: only the decisions at these indexes)."""
    lim = limits or Limits()
    work = _Work(lim)
    state = start.clone()
    number = state.deal_number
    todo: list[int] = []
    for i, (s, action) in enumerate(actions):
        wanted = steps is None or i in steps
        if s == seat and wanted and state.deal.phase in REVIEWED and len(state.legal_actions(s)) > 1:
            todo.append(i)
        state.apply_action(s, action)
        if state.deal_number != number:
            break
    work.left = len(todo)
    decisions: list[DecisionReview] = []
    makeable: bool | None = None
    state = start
    for i, (s, action) in enumerate(actions):
        if state.deal.phase == Phase.PLAY and makeable is None and state.deal.declarer == seat:
            makeable = _solve_real(state, work).declarer >= state.deal.contract
        if i in todo:
            rng = random.Random(seed * 1_000_003 + deal * 1009 + seat * 101 + i)
            decisions.append(_decision(state, s, action, i, deal, rng, work))
            work.left -= 1
        end = state
        state = state.clone()
        state.apply_action(s, action)
        if state.deal_number != number:
            state = end
            break
    d = state.deal
    return DealReview(deal, seat, d.declarer, d.contract, makeable, tuple(decisions), work.nodes)


def _solve_real(state: GameState, work: _Work) -> OpenHandsValue:
    sim = sim_from_deal(state.deal)
    w, big = team_weights(sim)
    solver = Solver(sim, w)
    v = solver.value()
    work.nodes += solver.nodes
    return _decode(sim, v, big)


def _decode(sim: Sim, v: int, big: int) -> OpenHandsValue:
    d = -((-v) // big)
    e = big * d - v
    decl = sim.declarer
    taken_e = sum(sim.taken[s] for s in range(len(sim.succ)) if s != decl and sim.succ[s] >= 0)
    return OpenHandsValue(decl, sim.taken[decl] + d, taken_e + e)


def _decision(
    state: GameState, seat: int, chosen: Action, step: int, deal: int, rng: random.Random, work: _Work
) -> DecisionReview:
    phase = state.deal.phase
    legal = list(state.legal_actions(seat))
    view = seat_view(state, seat)
    k = knowledge(view)
    lim = work.limits
    play = phase == Phase.PLAY
    options = legal if play else _early_options(state, seat, chosen, legal, lim)
    want = lim.samples if play else lim.early_samples
    allowance = max(0, lim.nodes - work.nodes) // max(1, work.left)
    spent0 = work.nodes
    totals = [0.0] * len(options)
    makes = [0] * len(options)
    samples = 0
    while samples < want:
        if samples >= lim.min_samples and work.nodes - spent0 >= allowance:
            break
        masks = sample(k, rng)
        if masks is None:
            break
        # Past the first samples a solve stops at what is left of the decision's share of the budget.
        cap = NO_LIMIT if samples < lim.min_samples else max(1, spent0 + allowance - work.nodes)
        try:
            if play:
                sim = world_sim(view, k, masks)
                values = _play_values(sim, options, work, cap)
                for j, v in enumerate(values):
                    totals[j] += v.side(seat)
                    makes[j] += v.declarer >= sim.contract
            else:
                world = _world(state, k, masks, rng)
                early = [_early_value(world, seat, o, samples, rng, work, cap) for o in options]
                for j, value in enumerate(early):
                    totals[j] += value
        except NodeLimit:
            break
        samples += 1
    n = max(1, samples)
    real = _play_values(sim_from_deal(state.deal), options, work) if play else None
    contract = state.deal.contract
    reviewed: list[OptionReview] = []
    for j, option in enumerate(options):
        reviewed.append(
            OptionReview(
                option,
                round(totals[j] / n, 2),
                real[j].side(seat) if real is not None else None,
                round(makes[j] / n, 3) if play and samples else None,
            )
        )
    best = max(reviewed, key=lambda o: o.expected)
    mine = next(o for o in reviewed if o.action == chosen)
    lost = False
    if real is not None:
        by = {o.action: real[j] for j, o in enumerate(reviewed)}
        made = [v.declarer >= contract for v in real]
        chosen_made = by[chosen].declarer >= contract
        # The declarer lost a contract open hands could make; a defender let one through.
        lost = (
            (any(made) and not chosen_made)
            if seat == state.deal.declarer
            else (not all(made) and chosen_made)
        )
    trick = state.deal.tricks + 1 if play else None
    return DecisionReview(
        deal,
        seat,
        step,
        phase,
        trick,
        chosen,
        tuple(reviewed),
        best.action,
        round(max(0.0, best.expected - mine.expected), 2),
        samples,
        lost,
    )


def _play_values(
    sim: Sim, options: Sequence[Action], work: _Work, cap: int = NO_LIMIT
) -> list[OpenHandsValue]:
    w, big = team_weights(sim)
    solver = Solver(sim, w)
    solver.limit = cap
    try:
        return [_decode(sim, solver.move_value(move_of(a), -INF, INF), big) for a in options]
    finally:
        work.nodes += solver.nodes


# ---------------------------------------------------------------------------------------- before the play


def _early_options(
    state: GameState, seat: int, chosen: Action, legal: list[Action], lim: Limits
) -> list[Action]:
    """The options valued before the card play: every one where there are few; for a bid the pass,
    the next bid and the bid made; for a give or a lay-down the chosen one and the likeliest others."""
    phase = state.deal.phase
    out: list[Action] = [chosen]

    def add(a: Action) -> None:
        if a in legal and a not in out:
            out.append(a)

    if phase in (Phase.BIDDING, Phase.SALE):
        add(PASS)
        bids = [a for a in legal if type(a) is Bid]
        if bids:
            add(bids[0])
        for a in legal:
            if type(a) is not Bid:
                add(a)
    elif phase == Phase.CONTRACT:
        # The bid, and one step either side of the choice: open hands favour the declarer, who sees every
        # card, so higher contracts would look better than they are.
        top = max_bid_for(state.rules, state.players, state.deal.hands[seat])
        step = state.rules.bid_step
        value = chosen.value if type(chosen) is Contract else state.deal.bid
        add(Contract(state.deal.bid))
        for v in (value - step, value + step):
            if v <= top:
                add(Contract(v))
    elif phase in (Phase.EXCHANGE, Phase.DISCARD):
        deal = state.deal
        hand = deal.hands[seat]
        unseen = FULL_DECK & ~hand
        mvals = tuple(state.rules.marriage_value(s) for s in range(4))
        if phase == Phase.EXCHANGE:
            receivers = tuple(sorted(s for s in deal.active if s != seat))
            for g in give_candidates(hand, receivers, unseen, mvals, lim.candidates + 1):
                add(Give(g))
        else:
            ranked = [c for _, c in ranked_cards(hand, unseen, mvals)][:4]
            for i, c1 in enumerate(ranked):
                for c2 in ranked[i + 1 :]:
                    add(discard_action((c1, c2)))
        del out[1 + lim.candidates :]
        for a in legal:
            if type(a) not in (Give, Discard):
                add(a)
    else:
        for a in legal:
            add(a)
    return out


def _world(state: GameState, k: Knowledge, masks: list[CardMask], rng: random.Random) -> GameState:
    """The game with the cards the seat could not see dealt as in one sample."""
    deal = state.deal.copy()
    hands = deal.hands
    talon: list[int] | None = None
    for i, loc in enumerate(k.locs):
        if loc >= 0:
            hands[loc] = masks[i]
        elif loc == TALON:
            talon = _bits(masks[i])
    if talon is not None:
        rng.shuffle(talon)
        _place_talon(deal, talon)
    world = state.clone()
    world.deal = deal
    return world


def _place_talon(deal: DealState, talon: list[int]) -> None:
    if deal.piles is not None:
        if deal.pile < 0:
            half = len(talon) // 2
            deal.piles = (tuple(talon[:half]), tuple(talon[half:]))
            deal.talon_as_dealt = deal.piles[0] + deal.piles[1]
        else:
            rest = tuple(c for c in talon if c not in deal.discard)
            piles = [deal.piles[0], deal.piles[1]]
            piles[1 - deal.pile] = rest
            deal.piles = (piles[0], piles[1])
        return
    deal.talon_as_dealt = tuple(talon)
    if deal.talon:
        deal.talon = tuple(talon)


def _early_value(
    world: GameState,
    seat: int,
    option: Action,
    sample_no: int,
    rng: random.Random,
    work: _Work,
    cap: int = NO_LIMIT,
) -> float:
    state = world.clone()
    state.apply_action(seat, option)
    number = world.deal_number
    results = len(world.results)
    for _ in range(64):
        if state.deal_number != number or len(state.results) > results:
            return float(state.results[results].scores[seat])
        deal = state.deal
        if deal.phase == Phase.PLAY:
            break
        s = deal.to_act
        legal = list(state.legal_actions(s))
        a = choose_action("easy", seat_view(state, s), legal, seed=rng.randrange(1 << 30))
        state.apply_action(s, a)
    deal = state.deal
    if deal.phase != Phase.PLAY:
        return 0.0
    key = (sample_no, tuple(deal.hands), deal.declarer, deal.to_act, deal.contract, deal.piles, seat)
    hit = work.cache.get(key)
    if hit is not None:
        return hit
    sim = sim_from_deal(deal)
    decl = sim.declarer
    if seat == decl:
        w, big = team_weights(sim)
    else:
        # The defenders keep the declarer low first; among those lines the seat takes what it can.
        big = big_weight(sim)
        w = [0] * len(sim.succ)
        w[decl] = big
        w[seat] = -1
    solver = Solver(sim, w)
    solver.limit = cap
    try:
        v = solver.value()
    finally:
        work.nodes += solver.nodes
    if seat == decl:
        pts = _decode(sim, v, big).declarer
        score = deal.contract * (2 if deal.blind_seat == decl else 1)
        value = float(score if pts >= deal.contract else -score)
    else:
        d = -((-v) // big)
        value = float(sim.taken[seat] + big * d - v)
    work.cache[key] = value
    return value


def _bits(mask: CardMask) -> list[int]:
    out: list[int] = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def costliest(review: DealReview, count: int = 3, at_least: float = 1.0) -> list[DecisionReview]:
    """The seat's costliest choices of the deal, most costly first (ties: the earlier first)."""
    costly = [d for d in review.decisions if d.cost >= at_least]
    costly.sort(key=lambda d: (-d.cost, d.step))
    return costly[:count]


__all__ = [
    "COSTLY",
    "REVIEWED",
    "DealReview",
    "DecisionReview",
    "Limits",
    "OptionReview",
    "costliest",
    "played_deals",
    "review_deal",
    "review_record",
]
