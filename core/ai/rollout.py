"""The playout policy: a quick, sensible card player for determinized deals.

Monte Carlo search is only as good as the games it plays out, and it plays thousands per decision, so
this policy is a handful of bit operations per card.  It looks at all hands of the determinization
(the usual "double dummy" shortcut of playouts) to know whether a card is a sure winner; the search
above it only ever sees the seat's own knowledge.
"""

from __future__ import annotations

import random
from typing import Final

from ..cards import ACES, CARD_POINTS, MARRIAGE_MASKS, SUIT_MASKS, CardMask
from ..deal import ACE_SUIT
from .sim import CRAWL, DECLARE, QK_ALL, Sim

RANK_MASKS: Final = tuple(sum(1 << (6 * s + r) for s in range(4)) for r in range(6))
_TENS: Final = RANK_MASKS[4]
_ABOVE: Final = tuple(SUIT_MASKS[c // 6] & ~((1 << (c + 1)) - 1) for c in range(24))
"""Cards of the same suit higher than each card."""
_DECLARABLE: Final = QK_ALL | ACES
_VOID_CARDS: Final = tuple(sum(SUIT_MASKS[s] for s in range(4) if v >> s & 1) for v in range(16))
"""The cards of the suits in a 4-bit suit mask."""


def intact_marriages(hand: CardMask) -> CardMask:
    out = 0
    qk = hand & QK_ALL
    if qk:
        for m in MARRIAGE_MASKS:
            if qk & m == m:
                out |= m
    return out


def lowest_rank(mask: CardMask) -> int:
    """A card of the lowest rank in ``mask`` (rank order is also point order)."""
    for rm in RANK_MASKS:
        m = mask & rm
        if m:
            return (m & -m).bit_length() - 1
    return -1


def highest_rank(mask: CardMask) -> int:
    for r in range(5, -1, -1):
        m = mask & RANK_MASKS[r]
        if m:
            return m.bit_length() - 1
    return -1


def cheapest(mask: CardMask, keep: CardMask, trump_mask: CardMask) -> int:
    """The card that hurts least to give up: low, not half of a marriage, not a trump."""
    m = mask & ~keep & ~trump_mask
    if m:
        return lowest_rank(m)
    m = mask & ~keep
    if m:
        return lowest_rank(m)
    return lowest_rank(mask & ~trump_mask) if mask & ~trump_mask else lowest_rank(mask)


def richest(mask: CardMask, keep: CardMask, trump_mask: CardMask) -> int:
    """The card with most points that is not precious (marriage half, trump) when possible."""
    m = mask & ~keep & ~trump_mask
    if m:
        return highest_rank(m)
    m = mask & ~keep
    if m:
        return highest_rank(m)
    return highest_rank(mask)


def heuristic_move(sim: Sim, seen: list[CardMask] | None = None) -> int:
    """The policy's move for the seat to act (a simulator move: card, ``| DECLARE``).

    ``seen``: what the seat believes the others may hold (default: their real hands).
    """
    seat = sim.to_act
    trick = sim.trick
    if not trick:
        if sim.crawl:
            return _crawl_lead(sim.hands[seat])
        return _lead(sim.hands, seat, sim.trump, sim.declarer, sim.tricks, sim, seen)
    if sim.crawl or sim.pr.must_beat:
        playable = sim.playable(seat)
        hand = sim.hands[seat]
        trump_mask = SUIT_MASKS[sim.trump] if sim.trump >= 0 else 0
        if sim.crawl:
            return cheapest(playable, intact_marriages(hand), trump_mask)
        wi = sim.winner_index()
        return _follow(
            sim.hands, seat, playable, trick[wi], sim.trick_seats[wi], trick[0] // 6, sim.trick_seats[0],
            sim.trump, sim.declarer, sim.succ, seen,
        )  # fmt: skip
    wi = sim.winner_index()
    led = trick[0] // 6
    return _follow(
        sim.hands, seat, _playable(sim.hands[seat], led, sim.trump), trick[wi], sim.trick_seats[wi], led,
        sim.trick_seats[0], sim.trump, sim.declarer, sim.succ, seen,
    )  # fmt: skip


def _playable(hand: CardMask, led: int, trump: int) -> CardMask:
    follow = hand & SUIT_MASKS[led]
    if follow:
        return follow
    if trump >= 0:
        trumps = hand & SUIT_MASKS[trump]
        if trumps:
            return trumps
    return hand


def _crawl_lead(hand: CardMask) -> int:
    """Face down, declarer first: a high card of the longest suit."""
    best_suit = max(range(4), key=lambda s: ((hand & SUIT_MASKS[s]).bit_count(), s))
    return (hand & SUIT_MASKS[best_suit]).bit_length() - 1


def _lead(
    hands: list[CardMask],
    seat: int,
    trump: int,
    declarer: int,
    tricks: int,
    sim: Sim,
    seen: list[CardMask] | None = None,
) -> int:
    """``seen``: what the leader believes each other seat may hold (default: the real hands)."""
    hand = hands[seat]
    if tricks:
        decl = sim.declarable(seat) if hand & _DECLARABLE else 0
        if decl:
            qk = decl & QK_ALL
            pr = sim.pr
            if qk:
                mvals = pr.mvals
                suit = max((s for s in range(4) if qk & MARRIAGE_MASKS[s]), key=lambda s: mvals[s])
                c = 6 * suit + 2
            else:
                c = (decl & -decl).bit_length() - 1
            return c | DECLARE if pr.choice else c
    keep = intact_marriages(hand)
    trump_mask = SUIT_MASKS[trump] if trump >= 0 else 0
    others = 0
    # Opponents that could ruff a side suit: void in it while holding trumps.
    ruff = 0
    for o, h in enumerate(hands if seen is None else seen):
        if o == seat or not h:
            continue
        others |= h
        if trump_mask and h & trump_mask and (seat == declarer or o == declarer):
            for s in range(4):
                if not h & SUIT_MASKS[s]:
                    ruff |= 1 << s
    best = -1
    best_v = -1
    for s in range(4):
        mine = hand & SUIT_MASKS[s]
        if not mine:
            continue
        top = mine.bit_length() - 1
        if others & _ABOVE[top]:
            continue
        if s != trump and ruff >> s & 1:
            continue
        v = CARD_POINTS[top] + 1
        if s == trump and seat == declarer and others & trump_mask:
            v += 30
        if keep >> top & 1:
            v -= 25
        if v > best_v:
            best, best_v = top, v
    if best >= 0:
        return best
    # Nothing sure: lead a cheap card, from a side suit if possible.
    return cheapest(hand, keep, trump_mask)


def _follow(
    hands: list[CardMask],
    seat: int,
    playable: CardMask,
    best: int,
    best_seat: int,
    led: int,
    first: int,
    trump: int,
    declarer: int,
    succ: tuple[int, ...],
    seen: list[CardMask] | None = None,
) -> int:
    if playable & (playable - 1) == 0:
        return playable.bit_length() - 1
    trump_mask = SUIT_MASKS[trump] if trump >= 0 else 0
    hand = hands[seat]
    keep = intact_marriages(hand)
    partner_wins = seat != declarer and best_seat != declarer
    led_mask = SUIT_MASKS[led]
    # What the opponents still to play could beat with.
    opp_led = 0
    opp_ruff = 0
    last = True
    s = succ[seat]
    while s != first:
        last = False
        if seat == declarer or s == declarer:
            h = hands[s] if seen is None else seen[s]
            if h & led_mask:
                opp_led |= h & led_mask
            elif trump_mask:
                opp_ruff |= h & trump_mask
        s = succ[s]
    # Cards safe from the opponents after this seat.
    if led == trump:
        safe = led_mask & ~((1 << opp_led.bit_length()) - 1)
    elif opp_ruff:
        safe = trump_mask & ~((1 << opp_ruff.bit_length()) - 1)
    else:
        safe = (led_mask & ~((1 << opp_led.bit_length()) - 1)) | trump_mask
    if partner_wins and (safe >> best & 1):
        return richest(playable, keep, trump_mask)
    if best // 6 == trump:
        winners = playable & _ABOVE[best]
    else:
        winners = (playable & _ABOVE[best]) | (playable & trump_mask)
    sure = winners & safe
    if sure:
        if last:
            # Cash a ten whose ace is still out.
            tens = sure & _TENS
            while tens:
                low = tens & -tens
                ten = low.bit_length() - 1
                tens ^= low
                if not hand >> (ten + 1) & 1:
                    return ten
        return cheapest(sure, keep, trump_mask)
    return cheapest(playable, keep, trump_mask)


def rollout(sim: Sim, voids: list[int] | None = None) -> None:
    """Play the deal out with the policy of :func:`heuristic_move` (in place).

    The loop keeps the trick's current winner as it goes instead of asking the simulator each card:
    this is where the Monte Carlo players spend their time.  With ``voids`` (the suits each seat is
    known to lack, bit masks) every player judges the others by what the table has seen rather than
    by their real hands: playouts of players who cannot look into other hands.
    """
    if sim.crawl or sim.pr.must_beat or any(c < 0 for c in sim.trick):
        while sim.to_act >= 0 and (sim.crawl or sim.pr.must_beat):
            sim.play(heuristic_move(sim))
        if sim.to_act < 0:
            return
    hands = sim.hands
    taken = sim.taken
    succ = sim.succ
    declarer = sim.declarer
    n = sim.n_active
    pr = sim.pr
    choice = pr.choice
    trump = sim.trump
    tricks = sim.tricks
    trick = sim.trick
    seats = sim.trick_seats
    seat = sim.to_act
    if trick:
        wi = sim.winner_index()
        best = trick[wi]
        best_seat = seats[wi]
        led = trick[0] // 6
    else:
        best = best_seat = led = -1
    public = voids is not None
    if voids is not None:
        voids = voids.copy()
    seen: list[CardMask] | None = None
    while True:
        hand = hands[seat]
        if voids is not None:
            unknown = 0
            for h in hands:
                unknown |= h
            unknown &= ~hand
            seen = [unknown & ~_VOID_CARDS[v] for v in voids]
        if not trick:
            sim.trump = trump
            sim.tricks = tricks
            move = _lead(hands, seat, trump, declarer, tricks, sim, seen)
            c = move & 31
            bit = 1 << c
            if tricks and bit & _DECLARABLE and (move & DECLARE or not choice) and sim.declarable(seat) & bit:
                if c % 6 == 5:
                    sim.declared |= 1 << ACE_SUIT
                    taken[seat] += pr.ace_value
                else:
                    suit = c // 6
                    sim.declared |= 1 << suit
                    taken[seat] += pr.mvals[suit]
                    trump = suit
            led = c // 6
            best = c
            best_seat = seat
        else:
            c = _follow(
                hands,
                seat,
                _playable(hand, led, trump),
                best,
                best_seat,
                led,
                seats[0],
                trump,
                declarer,
                succ,
                seen,
            )
            bit = 1 << c
            s = c // 6
            if public and s != led and voids is not None:
                voids[seat] |= 1 << led
                if trump >= 0 and s != trump and led != trump:
                    voids[seat] |= 1 << trump
            if s == best // 6:
                if c > best:
                    best = c
                    best_seat = seat
            elif s == trump:
                best = c
                best_seat = seat
        hands[seat] = hand ^ bit
        trick.append(c)
        seats.append(seat)
        if len(trick) < n:
            seat = succ[seat]
            continue
        pts = 0
        for x in trick:
            pts += CARD_POINTS[x]
        taken[best_seat] += pts
        tricks += 1
        trick.clear()
        seats.clear()
        seat = best_seat
        if not hands[seat]:
            taken[seat] += sim.piles_points
            break
    sim.trump = trump
    sim.tricks = tricks
    sim.leader = seat
    sim.last_winner = seat
    sim.to_act = -1


def random_rollout(sim: Sim, rng: random.Random) -> None:
    while sim.to_act >= 0:
        moves = sim.legal()
        m = moves[rng.randrange(len(moves))]
        if m == CRAWL:
            m = moves[0]
        sim.play(m)
