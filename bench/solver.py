"""Open-hands solver speed: the time to solve whole deals from their first lead, one core.

Each deal is dealt from the seed and taken through the engine with random bids, talon and gives to the
first lead of its play; then ``core.ai.solver.solve`` values it (both sides' exact points). The figure
is the time of that one call per deal: median, p99 and max over the deals. Run it on the plain sources
and on the compiled build (``make bench-solver`` does both); the JSON says which one it timed.

    python bench/solver.py [--deals 1000] [--preset polish] [--players 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time

import core.ai.solver
from core.ai.solver import solve
from core.deal import DealState, Phase
from core.game import new_game
from core.rules import PRESETS


def first_leads(preset: str, players: int, count: int, seed: int) -> list[DealState]:
    """``count`` deals at their first lead, after random bids and exchanges."""
    rng = random.Random(seed)
    rules = PRESETS[preset]
    out: list[DealState] = []
    while len(out) < count:
        state, _ = new_game(rules, players, seed=rng.randrange(1 << 30))
        while state.deal.phase != Phase.PLAY and not state.results:
            seat = state.deal.to_act
            legal = state.legal_actions(seat)
            state.apply_action(seat, legal[rng.randrange(len(legal))])
        if not state.results:
            out.append(state.deal)
    return out


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    k = max(0, min(len(sorted_values) - 1, round(q * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--preset", default="polish", choices=sorted(PRESETS))
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    deals = first_leads(args.preset, args.players, args.deals, args.seed)
    times: list[float] = []
    declarer_points = 0
    for deal in deals:
        start = time.perf_counter()
        value = solve(deal)
        times.append(time.perf_counter() - start)
        declarer_points += value.declarer
    times.sort()
    compiled = not core.ai.solver.__file__.endswith(".py")
    print(
        json.dumps(
            {
                "bench": "solver",
                "build": "compiled (mypyc)" if compiled else "plain CPython",
                "python": platform.python_version(),
                "preset": args.preset,
                "players": args.players,
                "deals": len(deals),
                "seed": args.seed,
                "median_ms": round(1000 * statistics.median(times), 2),
                "p99_ms": round(1000 * percentile(times, 0.99), 2),
                "max_ms": round(1000 * times[-1], 2),
                "mean_ms": round(1000 * statistics.fmean(times), 2),
                "total_s": round(sum(times), 2),
                "mean_declarer_points": round(declarer_points / len(deals), 2),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
