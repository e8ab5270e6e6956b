"""The public ladder's mathematics: Glicko-2 (Glickman, "Example of the Glicko-2 system", 2012), pure.

Why Glicko-2 and not Elo with a provisional period: a public ladder mixes regulars with people who play
twice and vanish. Glicko-2 carries each player's uncertainty (RD): a newcomer's rating moves fast and
settles as games accumulate, without a hand-tuned provisional period and K-factor schedule, and an idle
player's RD grows again so their first games back count more. Volatility tracks players whose strength
really changes. Elo would need all three bolted on. The cost is a little arithmetic per game.

1000 is played by two to four at once; a game becomes pairwise results between its human players (the
higher final score wins the pair, equal scores draw; seats a computer played from the start are not
rated), and the whole game is one rating period for each of them. Leaving a started public game is a
loss to every other human at the table, whatever the score then. Storage: bot/matchmaking/ladder_store.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "DEFAULT_RATING",
    "PROVISIONAL_RD",
    "Rating",
    "age",
    "pairwise_results",
    "rate",
    "update_game",
]

SCALE = 173.7178
TAU = 0.5
"""The system constant: how fast volatility may change (Glickman suggests 0.3 to 1.2)."""
EPSILON = 0.000001
MAX_RD = 350.0
PROVISIONAL_RD = 110.0
"""Above this RD a rating is provisional: shown with a '?' and kept off the top of the ladder."""


@dataclass(frozen=True, slots=True)
class Rating:
    rating: float = 1500.0
    rd: float = MAX_RD
    volatility: float = 0.06
    games: int = 0

    @property
    def provisional(self) -> bool:
        return self.rd > PROVISIONAL_RD


DEFAULT_RATING = Rating()


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _e(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _volatility(phi: float, sigma: float, delta: float, v: float, tau: float) -> float:
    """Step 5 of the paper: the Illinois algorithm on f(x) = 0."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (x - a) / (
            tau * tau
        )

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def rate(player: Rating, results: Sequence[tuple[Rating, float]], tau: float = TAU) -> Rating:
    """One rating period: `results` are (opponent's rating before the period, score 1/0.5/0).
    No results: only the RD grows (step 6), as for an idle period."""
    mu = (player.rating - 1500.0) / SCALE
    phi = player.rd / SCALE
    sigma = player.volatility
    if not results:
        return age(player, 1)
    v_inv = 0.0
    total = 0.0
    for opponent, score in results:
        mu_j = (opponent.rating - 1500.0) / SCALE
        phi_j = opponent.rd / SCALE
        e = _e(mu, mu_j, phi_j)
        g = _g(phi_j)
        v_inv += g * g * e * (1.0 - e)
        total += g * (score - e)
    v = 1.0 / v_inv
    delta = v * total
    sigma_new = _volatility(phi, sigma, delta, v, tau)
    phi_star = math.sqrt(phi * phi + sigma_new * sigma_new)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    mu_new = mu + phi_new * phi_new * total
    return Rating(
        rating=SCALE * mu_new + 1500.0,
        rd=min(MAX_RD, SCALE * phi_new),
        volatility=sigma_new,
        games=player.games + 1,
    )


def age(player: Rating, periods: float) -> Rating:
    """The rating after `periods` idle rating periods: RD grows (up to the newcomer's 350)."""
    if periods <= 0:
        return player
    phi = player.rd / SCALE
    phi_new = math.sqrt(phi * phi + periods * player.volatility * player.volatility)
    return Rating(player.rating, min(MAX_RD, SCALE * phi_new), player.volatility, player.games)


def pairwise_results(
    scores: Mapping[str, int], leavers: Sequence[str] = ()
) -> dict[str, list[tuple[str, float]]]:
    """Each human's results against every other human of the game: the higher final score wins the pair
    (1), equal scores draw (0.5); a leaver lost to everyone who stayed (and two leavers draw)."""
    left = set(leavers)
    out: dict[str, list[tuple[str, float]]] = {p: [] for p in scores}
    for a in scores:
        for b in scores:
            if a == b:
                continue
            if a in left or b in left:
                s = 0.5 if a in left and b in left else (0.0 if a in left else 1.0)
            else:
                s = 1.0 if scores[a] > scores[b] else 0.5 if scores[a] == scores[b] else 0.0
            out[a].append((b, s))
    return out


def update_game(
    before: Mapping[str, Rating], scores: Mapping[str, int], leavers: Sequence[str] = (), tau: float = TAU
) -> dict[str, Rating]:
    """New ratings of a finished (or abandoned) public game's human players; `before` holds each one's
    rating as of the game's start (aged for idle time by the caller)."""
    results = pairwise_results(scores, leavers)
    return {p: rate(before[p], [(before[o], s) for o, s in results[p]], tau) for p in scores}
