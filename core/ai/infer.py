"""What a seat can infer about the hidden cards, and deals sampled consistently with it.

From a :class:`~core.view.SeatView` only: voids shown in play (also in the trump of each trick),
cards this seat gave, the talon when it was shown, marriages declared (the other half is still in
the declarer's hand), and bids above 120 (a marriage was held).  :func:`sample` then deals the
unknown cards so that every such fact holds, which is what makes the Monte Carlo of the medium and
hard players honest: they search over deals the seat cannot tell apart from the real one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Final

from ..cards import ACES, DECK_SIZE, FULL_DECK, MARRIAGE_MASKS, CardMask, mask_of
from ..deal import ACE_SUIT, Phase, layout_shape
from ..view import HIDDEN, SeatView

TALON: Final = -2
"""Location id of cards not in any hand (an untaken talon; the piles and discard of two musiki)."""

_SUIT_OF: Final = tuple(c // 6 for c in range(DECK_SIZE))


@dataclass(slots=True)
class Knowledge:
    """Locations of hidden cards and what is known about each."""

    locs: list[int]
    """Seat numbers (or ``TALON``) of the places hidden cards may be."""
    need: list[int]
    """Unknown cards each location still gets."""
    fixed: list[CardMask]
    """Cards known to be at each location."""
    voids: list[int]
    """Suits (bit mask of 4) each location cannot hold."""
    pool: CardMask
    """The unknown cards."""
    floating: CardMask = 0
    """Shown talon cards the declarer may have passed on: at the declarer, or one each at ``float_to``."""
    float_to: list[int] = field(default_factory=list)
    float_weight: int = 10
    float_home: int = -1
    """Location index of the declarer, where shown talon cards stay unless passed on."""
    marriage_needed: list[int] = field(default_factory=list)
    """Locations that must hold a marriage (they bid above 120 before the talon)."""

    def index(self, loc: int) -> int:
        return self.locs.index(loc)


def trick_loc(position: int) -> int:
    """Location id of the face-down card at ``position`` of the current (crawl) trick."""
    return -10 - position


def suit_voids(view: SeatView) -> dict[int, int]:
    """Suits each seat has shown it cannot hold (failed to follow; failed to trump)."""
    voids: dict[int, int] = {}
    crawl_first = view.crawled
    tricks: list[tuple[tuple[int, ...], tuple[int, ...], int]] = list(view.trick_history)
    if view.trick and not view.crawl:
        tricks.append((view.trick, view.trick_seats, view.trump))
    for i, (cards, seats, trump) in enumerate(tricks):
        if i == 0 and crawl_first:
            continue
        led = _SUIT_OF[cards[0]]
        for c, s in zip(cards[1:], seats[1:], strict=True):
            cs = _SUIT_OF[c]
            if cs != led:
                v = voids.get(s, 0) | 1 << led
                if trump >= 0 and cs != trump and led != trump:
                    v |= 1 << trump
                voids[s] = v
    return voids


def knowledge(view: SeatView) -> Knowledge:
    """What ``view.seat`` knows about where the unseen cards are."""
    me = view.seat
    phase = view.phase
    visible = mask_of(c for c in view.trick if c != HIDDEN)
    hand = view.hand if view.hand_known else 0
    known = hand | view.played | visible
    locs: list[int] = []
    need: list[int] = []
    fixed: list[CardMask] = []
    decl = view.declarer
    talon = mask_of(view.talon)
    discard = mask_of(view.discard)
    for s in view.active:
        if s == me and view.hand_known:
            continue
        locs.append(s)
        need.append(view.hand_counts[s])
        fixed.append(0)
    talon_open = phase in (Phase.BLIND, Phase.BIDDING, Phase.TALON, Phase.SALE)
    two_piles = view.talon_size == 4 and view.players == 2 and view.rules.two_musiki
    if talon_open:
        locs.append(TALON)
        need.append(view.talon_size)
        fixed.append(0)
    elif two_piles:
        # The pile not taken stays face down, and the declarer's discard joins it at the end.
        locs.append(TALON)
        need.append(2 + (2 if view.exchanged else 0))
        fixed.append(0)
    # Face-down crawl cards of other seats in the current trick: one unknown card each.
    for j, c in enumerate(view.trick):
        if c == HIDDEN:
            locs.append(trick_loc(j))
            need.append(1)
            fixed.append(0)
    k = Knowledge(locs, need, fixed, [0] * len(locs), 0)

    def put(loc: int, cards: CardMask) -> None:
        i = k.locs.index(loc)
        k.fixed[i] |= cards
        k.need[i] -= cards.bit_count()

    # Cards this seat gave, still unplayed, are with their receivers.
    for target, c in view.given:
        if not (known >> c & 1) and target in locs:
            put(target, 1 << c)
            known |= 1 << c
    # The talon this seat saw.
    if talon:
        if talon_open:
            put(TALON, talon & ~known)
            known |= talon
        elif two_piles:
            if discard:
                put(TALON, discard & ~known)
                known |= discard
        elif decl != me and decl in locs:
            rest = talon & ~known
            if view.exchanged:
                # One card went to each other defender: maybe a talon card.
                takers = [s for s in view.active if s not in (me, decl)]
                for cards, seats, _ in view.trick_history:
                    for c, s in zip(cards, seats, strict=True):
                        if s in takers and talon >> c & 1:
                            takers.remove(s)
                if takers and rest:
                    k.floating = rest
                    k.float_to = [k.locs.index(s) for s in takers]
                    per_hand = layout_shape(view.rules, view.players)[1]
                    k.float_weight = per_hand + view.talon_size - rest.bit_count()
                    k.float_home = k.locs.index(decl)
                else:
                    put(decl, rest)
            else:
                put(decl, rest)
            known |= talon
    # The other half of a declared marriage stays with its declarer until played.
    for s in view.active:
        if s == me:
            continue
        for suit in view.marriages[s]:
            m = ACES if suit == ACE_SUIT else MARRIAGE_MASKS[suit]
            rest = m & ~known & ~k.floating
            if rest and s in locs:
                put(s, rest)
                known |= rest
    voids = suit_voids(view)
    for s, v in voids.items():
        if s in locs:
            k.voids[k.locs.index(s)] = v
    k.pool = FULL_DECK & ~known & ~k.floating
    # Bids above 120 need a marriage in hand at that time.
    if phase in (Phase.BIDDING, Phase.TALON, Phase.SALE):
        limit = view.rules.marriage_needed_above
        if limit is not None:
            for s, value in view.auction:
                if value > limit and s != me and s != view.blind_seat and s in locs:
                    i = k.locs.index(s)
                    if i not in k.marriage_needed:
                        k.marriage_needed.append(i)
    return k


def _feasible(need: list[int], classes: dict[int, int]) -> bool:
    n = len(need)
    for sub in range(1, 1 << n):
        cap = 0
        for i in range(n):
            if sub >> i & 1:
                cap += need[i]
        cnt = 0
        for cls, c in classes.items():
            if c and cls & ~sub == 0:
                cnt += c
        if cnt > cap:
            return False
    return True


def _has_marriage(hand: CardMask) -> bool:
    return any(hand & m == m for m in MARRIAGE_MASKS)


def sample(k: Knowledge, rng: random.Random, tries: int = 12) -> list[CardMask] | None:
    """One deal of the unknown cards consistent with ``k`` (masks per location), or None if impossible."""
    result: list[CardMask] | None = None
    for _ in range(tries):
        result = _sample_once(k, rng)
        if result is None:
            continue
        if all(_has_marriage(result[i]) for i in k.marriage_needed):
            return result
    return result


def _sample_once(k: Knowledge, rng: random.Random) -> list[CardMask] | None:
    nloc = len(k.locs)
    need = k.need.copy()
    out = k.fixed.copy()
    pool = k.pool
    if k.floating:
        assignment = _float_assignment(k, rng)
        if assignment is None:
            return None
        for t, c in assignment:
            out[t] |= 1 << c
            need[t] -= 1
    cards = list(_bits(pool))
    if sum(need) != len(cards):
        return None
    full = 0
    for i in range(nloc):
        if need[i] > 0:
            full |= 1 << i
    allowed: list[int] = []
    constrained: list[int] = []
    free: list[int] = []
    classes: dict[int, int] = {}
    for c in cards:
        a = 0
        suit_bit = 1 << _SUIT_OF[c]
        for i in range(nloc):
            if need[i] > 0 and not k.voids[i] & suit_bit:
                a |= 1 << i
        if a == 0:
            return None
        if a == full:
            free.append(c)
        else:
            constrained.append(c)
            allowed.append(a)
            classes[a] = classes.get(a, 0) + 1
    if constrained:
        if not _feasible(need, classes):
            return None
        order = list(range(len(constrained)))
        rng.shuffle(order)
        order.sort(key=lambda j: allowed[j].bit_count())
        for j in order:
            c = constrained[j]
            a = allowed[j]
            classes[a] -= 1
            choices = [i for i in range(nloc) if a >> i & 1 and need[i] > 0]
            while True:
                total = sum(need[i] for i in choices)
                if total <= 0:
                    return None
                r = rng.randrange(total)
                for pick in choices:
                    r -= need[pick]
                    if r < 0:
                        break
                need[pick] -= 1
                if _feasible(need, classes):
                    break
                need[pick] += 1
                choices.remove(pick)
                if not choices:
                    return None
            out[pick] |= 1 << c
    rng.shuffle(free)
    pos = 0
    for i in range(nloc):
        n = need[i]
        if n:
            out[i] |= mask_of(free[pos : pos + n])
            pos += n
    return out


def _float_assignment(k: Knowledge, rng: random.Random) -> list[tuple[int, int]] | None:
    """Where the shown talon cards are: each possible taker got one of them or not (weighted by the
    chance a give picks a talon card), the rest stayed with the declarer; voids and counts hold."""
    fl = _bits(k.floating)
    home = k.float_home
    options: list[tuple[float, list[tuple[int, int]]]] = []

    def rec(i: int, used: int, chosen: list[tuple[int, int]], weight: float) -> None:
        if i == len(k.float_to):
            stay = [c for c in fl if not used >> c & 1]
            if len(stay) > k.need[home] or any(k.voids[home] >> _SUIT_OF[c] & 1 for c in stay):
                return
            options.append((weight, [*chosen, *((home, c) for c in stay)]))
            return
        t = k.float_to[i]
        rec(i + 1, used, chosen, weight * k.float_weight)
        if k.need[t] > 0:
            for c in fl:
                if not used >> c & 1 and not k.voids[t] >> _SUIT_OF[c] & 1:
                    chosen.append((t, c))
                    rec(i + 1, used | 1 << c, chosen, weight)
                    chosen.pop()

    rec(0, 0, [], 1.0)
    if not options:
        return None
    r = rng.random() * sum(w for w, _ in options)
    for w, assignment in options:
        r -= w
        if r <= 0:
            return assignment
    return options[-1][1]


def _bits(mask: CardMask) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
