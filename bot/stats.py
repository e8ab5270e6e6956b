"""Statistics and ratings, recorded once when a game ends (after the save that ended it succeeded).

Per user, overall and within a chat: games, wins, deals declared, contracts made, the sum of final
scores (the average is sum / games) and marriages declared. Ratings are Elo-style for games with two
or more people: every pair of people at the table is one comparison of final totals (win 1, draw ½),
with K divided by the number of opponents so that a 4-player game moves a rating about as much as a
2-player one. Computer seats are neither counted nor rated.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.table import TableDoc
from core.game import GameState

__all__ = [
    "DEFAULT_RATING",
    "SeatOutcome",
    "board_keys",
    "elo",
    "outcomes",
    "stats_scopes",
]

DEFAULT_RATING = 1500.0
K_FACTOR = 32.0


@dataclass(frozen=True, slots=True)
class SeatOutcome:
    user: str
    name: str
    seat: int
    total: int
    won: bool
    declared: int
    made: int
    marriages: int

    def fields(self) -> dict[str, float]:
        return {
            "games": 1,
            "wins": int(self.won),
            "declared": self.declared,
            "made": self.made,
            "score_sum": self.total,
            "marriages": self.marriages,
        }


def outcomes(doc: TableDoc, state: GameState) -> list[SeatOutcome]:
    """What each person at a finished game did (seats handed to a computer for good are left out)."""
    winner = state.winner
    winners = set(winner) if isinstance(winner, tuple) else {winner} if winner is not None else set()
    out = []
    for i, seat in enumerate(doc.seats):
        if not seat.human or seat.user is None:
            continue
        declared = made = marriages = 0
        for r in state.results:
            marriages += len(r.marriages[i])
            if r.declarer == i and r.ending != "redeal":
                declared += 1
                made += int(bool(r.made))
        out.append(
            SeatOutcome(seat.user, seat.name, i, state.totals[i], i in winners, declared, made, marriages)
        )
    return out


def elo(ratings: list[float], totals: list[int], k: float = K_FACTOR) -> list[float]:
    """New ratings after one game, comparing every pair by final total."""
    n = len(ratings)
    if n < 2:
        return list(ratings)
    scale = k / (n - 1)
    new = []
    for i in range(n):
        delta = 0.0
        for j in range(n):
            if i == j:
                continue
            expected = 1.0 / (1.0 + 10 ** ((ratings[j] - ratings[i]) / 400.0))
            actual = 1.0 if totals[i] > totals[j] else 0.5 if totals[i] == totals[j] else 0.0
            delta += scale * (actual - expected)
        new.append(ratings[i] + delta)
    return new


def stats_scopes(chat_key: str, user_key: str) -> tuple[str, str]:
    """The user's overall scope and their scope within the chat."""
    return f"user:{user_key}", f"chat:{chat_key}:user:{user_key}"


def board_keys(chat_key: str) -> tuple[str, str]:
    """The overall rating board and the chat's."""
    return "rating", f"rating:{chat_key}"
