"""From a deal's outcome to the match totals: rounding, barrels, bolts, bombs, concessions, samosval.

Kept apart from the deal so that every rule about totals is in one place and can be tested with
hand-made outcomes, without playing cards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .cards import ACES, CARD_POINTS, MARRIAGE_MASKS, SUIT_LETTERS, mask_of
from .deal import ACE_SUIT, DealOutcome
from .rules import Barrel, Rounding, RuleSet, SitOutScoring


@dataclass(frozen=True, slots=True)
class MatchTally:
    """What the match remembers between deals."""

    totals: tuple[int, ...]
    on_barrel: tuple[bool, ...]
    """Capped barrel only: the flag; for the declarer-only barrel it follows from the total."""
    barrel_deals: tuple[int, ...]
    bolts: tuple[int, ...]

    @classmethod
    def start(cls, players: int) -> MatchTally:
        zero = (0,) * players
        return cls(zero, (False,) * players, zero, zero)

    def barrel_flags(self, rules: RuleSet) -> tuple[bool, ...]:
        """Who is on the barrel now."""
        if rules.barrel == Barrel.DECLARER_ONLY:
            return tuple(t >= rules.barrel_at for t in self.totals)
        if rules.barrel == Barrel.CAPPED:
            return self.on_barrel
        return (False,) * len(self.totals)


@dataclass(frozen=True, slots=True)
class DealResult:
    """One scored deal, as ``thousand replay`` reports it, plus what the bot shows."""

    number: int
    dealer: int
    declarer: int
    contract: int
    made: bool | None
    points: tuple[int, ...]
    marriages: tuple[tuple[str, ...], ...]
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    ending: str
    blind: bool = False
    four_nines: tuple[int, ...] = ()
    bolts: tuple[int, ...] = ()
    """Seats that got a bolt in this deal."""
    barrel: tuple[bool, ...] = ()
    """Who is on the barrel after this deal."""
    notes: tuple[str, ...] = field(default=())
    talon: tuple[int, ...] = ()
    """The talon as dealt when it was shown to everyone (so the result may name it), else empty: a secret
    talon, two musiki, a blind game's talon dealt out face down."""

    def to_json(self) -> dict[str, Any]:
        return {
            "complete": True,
            "declarer": self.declarer,
            "contract": self.contract,
            "made": self.made,
            "points": list(self.points),
            "marriages": [list(m) for m in self.marriages],
            "scores": list(self.scores),
            "totals": list(self.totals),
        }


def round_defender(rules: RuleSet, points: int) -> int:
    """Nearest multiple of 5: a remainder of 1 or 2 rounds down, 3 or 4 up (or exact)."""
    if rules.rounding == Rounding.EXACT:
        return points
    rem = points % 5
    return points - rem if rem <= 2 else points + 5 - rem


def sit_out_score(rules: RuleSet, outcome: DealOutcome) -> int:
    talon = mask_of(outcome.talon_as_dealt)
    if rules.sit_out_scoring == SitOutScoring.ACES_AND_MARRIAGE:
        score = 50 * (talon & ACES).bit_count()
        for s in range(4):
            if talon & MARRIAGE_MASKS[s] == MARRIAGE_MASKS[s]:
                score += rules.marriage_value(s)
        return score
    return round_defender(rules, sum(CARD_POINTS[c] for c in outcome.talon_as_dealt))


def score_deal(
    rules: RuleSet, tally: MatchTally, outcome: DealOutcome, number: int, dealer: int
) -> tuple[DealResult, MatchTally]:
    """Score one finished deal against the totals before it."""
    n = len(tally.totals)
    marriages = tuple(tuple("A" if s == ACE_SUIT else SUIT_LETTERS[s] for s in m) for m in outcome.marriages)
    if outcome.ending == "redeal":
        result = DealResult(
            number, dealer, outcome.declarer, outcome.contract, None, (0,) * n, ((),) * n, (0,) * n,
            tally.totals, "redeal", barrel=tally.barrel_flags(rules), talon=_public_talon(outcome),
        )  # fmt: skip
        return result, tally

    barrel_mode = rules.barrel
    started_on = tally.barrel_flags(rules)
    d = outcome.declarer
    ending = outcome.ending
    raw = [0] * n
    for s in range(n):
        if s == d:
            if ending == "played":
                value = outcome.contract if outcome.made else -outcome.contract
                raw[s] = value * 2 if outcome.blind else value
            elif ending == "concede":
                raw[s] = -outcome.contract
        elif s == outcome.sitting_out:
            raw[s] = sit_out_score(rules, outcome)
        elif ending == "played":
            raw[s] = round_defender(rules, outcome.points[s])
        elif ending == "bomb":
            raw[s] = rules.bomb_points
        elif ending == "concede":
            raw[s] = rules.concede_points
        if s in outcome.four_nines:
            raw[s] += rules.four_nines_bonus
        if started_on[s] and s != d:
            raw[s] = 0
        elif started_on[s]:
            # On the barrel a declarer scores exactly the contract: no bonus, no doubling beyond blind's.
            if ending == "played":
                value = outcome.contract if outcome.made else -outcome.contract
                raw[s] = value * 2 if outcome.blind else value
            elif ending == "concede":
                raw[s] = -outcome.contract

    bolts = list(tally.bolts)
    bolt_seats: list[int] = []
    if rules.bolts and ending != "concede":
        for s in range(n):
            if s != d and s != outcome.sitting_out and not started_on[s] and raw[s] == 0:
                bolts[s] += 1
                bolt_seats.append(s)
                if bolts[s] % 3 == 0:
                    raw[s] = -rules.bolt_penalty

    totals = [tally.totals[s] + raw[s] for s in range(n)]
    on_barrel = list(tally.on_barrel)
    barrel_deals = list(tally.barrel_deals)
    notes: list[str] = []
    if barrel_mode == Barrel.CAPPED:
        for s in range(n):
            if started_on[s]:
                if s == d and ending == "played" and outcome.made:
                    if totals[s] < rules.target:
                        totals[s] = rules.barrel_at
                elif s == d:
                    on_barrel[s] = False
                    barrel_deals[s] = 0
                if on_barrel[s] and totals[s] < rules.target:
                    barrel_deals[s] += 1
                    if barrel_deals[s] >= rules.barrel_deals:
                        totals[s] -= rules.barrel_penalty
                        on_barrel[s] = False
                        barrel_deals[s] = 0
                        notes.append(f"barrel_penalty:{s}")
            elif rules.barrel_at <= totals[s] < rules.target:
                totals[s] = rules.barrel_at
                on_barrel[s] = True
                barrel_deals[s] = 0
    if rules.samosval:
        for s in range(n):
            if totals[s] in (555, -555):
                totals[s] = 0
                notes.append(f"samosval:{s}")

    new_tally = MatchTally(tuple(totals), tuple(on_barrel), tuple(barrel_deals), tuple(bolts))
    scores = tuple(totals[s] - tally.totals[s] for s in range(n))
    result = DealResult(
        number=number,
        dealer=dealer,
        declarer=d,
        contract=outcome.contract,
        made=outcome.made,
        points=outcome.points,
        marriages=marriages,
        scores=scores,
        totals=tuple(totals),
        ending=ending,
        blind=outcome.blind,
        four_nines=tuple(s for s in outcome.four_nines if not started_on[s]),
        bolts=tuple(bolt_seats),
        barrel=new_tally.barrel_flags(rules),
        notes=tuple(notes),
        talon=_public_talon(outcome),
    )
    return result, new_tally


def _public_talon(outcome: DealOutcome) -> tuple[int, ...]:
    return tuple(outcome.talon_as_dealt) if outcome.talon_public else ()


def match_winner(rules: RuleSet, totals: tuple[int, ...], declarer: int) -> int | tuple[int, ...] | None:
    """The winner after a deal: None while nobody reached the target; a tuple for a shared win."""
    if max(totals) < rules.target:
        return None
    best = max(totals)
    leaders = tuple(s for s, t in enumerate(totals) if t == best)
    if len(leaders) == 1:
        return leaders[0]
    if declarer in leaders:
        return declarer
    return leaders
