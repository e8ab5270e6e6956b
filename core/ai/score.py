"""What a deal's outcome is worth to a seat, with the match's rules (rounding, barrels, bolts, the race).

The computer players judge every outcome by the engine's own scoring (:func:`core.scoring.score_deal`)
so that barrels, bolts and the end of the game weigh exactly as the rules say; results are cached
because playouts end in few distinct outcomes.
"""

from __future__ import annotations

from typing import Final

from ..deal import DealOutcome
from ..rules import RuleSet
from ..scoring import MatchTally, match_winner, score_deal
from ..view import SeatView

GAME_BONUS: Final = 250.0
"""Utility of winning the game, in points (and minus this for another player's win)."""


class ScoreCtx:
    """Scores outcomes of the current deal for one seat: own score minus the mean of the others'."""

    __slots__ = (
        "_cache",
        "active",
        "blind_seat",
        "dealer",
        "n",
        "number",
        "rules",
        "seat",
        "sitting_out",
        "tally",
    )

    def __init__(self, view: SeatView, blind_seat: int | None = None) -> None:
        self.rules: RuleSet = view.rules
        self.seat = view.seat
        self.n = view.players
        self.active = view.active
        self.dealer = view.dealer
        self.number = view.deal_number
        self.sitting_out = view.dealer if view.dealer not in view.active else None
        self.blind_seat = view.blind_seat if blind_seat is None else blind_seat
        self.tally = MatchTally(view.totals, view.on_barrel, view.barrel_deals, view.bolts)
        self._cache: dict[tuple[int, int, str, bool, tuple[int, ...]], tuple[float, ...]] = {}

    def utilities(
        self, declarer: int, contract: int, points: list[int] | tuple[int, ...], ending: str = "played"
    ) -> tuple[float, ...]:
        """Utility of the outcome for every seat (index by seat)."""
        blind = declarer >= 0 and declarer == self.blind_seat
        key = (declarer, contract, ending, blind, tuple(points))
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        made = points[declarer] >= contract if ending == "played" else None
        outcome = DealOutcome(
            declarer=declarer,
            contract=contract,
            made=made,
            points=tuple(points) if ending == "played" else (0,) * self.n,
            marriages=((),) * self.n,
            ending=ending,
            blind=blind,
            four_nines=(),
            talon_as_dealt=(),
            sitting_out=self.sitting_out,
        )
        result, tally = score_deal(self.rules, self.tally, outcome, self.number, self.dealer)
        scores = result.scores
        winner = match_winner(self.rules, tally.totals, declarer)
        active = self.active
        k = len(active) - 1
        total = sum(scores[s] for s in active)
        out = [0.0] * self.n
        for s in active:
            u = scores[s] - (total - scores[s]) / k
            if winner is not None:
                won = s == winner if isinstance(winner, int) else s in winner
                u += GAME_BONUS if won else -GAME_BONUS
            out[s] = u
        res = tuple(out)
        self._cache[key] = res
        return res

    def utility(
        self,
        seat: int,
        declarer: int,
        contract: int,
        points: list[int] | tuple[int, ...],
        ending: str = "played",
    ) -> float:
        return self.utilities(declarer, contract, points, ending)[seat]
