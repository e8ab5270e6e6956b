"""Decision time of one level: whole games with the level in every seat, each of its decisions timed.

Wall clock (what a player waits, as the arena reports it) and the process's CPU time (what the decision
cost, whatever else the machine runs: on a shared machine the wall clock of a busy minute says more
about the neighbours than about the player).  Decisions run without the budget's wall-clock guard, so
each does all the work its budget counts whatever the load (the service keeps the guard, which only
ever cuts a decision short); the JSON says how many took longer than the guard would allow.

    python bench/decisions.py [--level hard] [--games 4] [--preset polish] [--players 3] [--seed 1]

Run it on the plain sources and on the compiled build (``PYTHONPATH=build/native:. python
bench/decisions.py``); the JSON says which one it timed.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import core.ai.solver
from core.ai import choose_action, default_budget
from core.game import new_game
from core.rules import PRESETS
from core.view import seat_view


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    k = max(0, min(len(sorted_values) - 1, round(q * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


def summary(values: list[float]) -> dict[str, float]:
    v = sorted(values)
    return {
        "mean_ms": round(1000 * statistics.fmean(v), 2),
        "p50_ms": round(1000 * percentile(v, 0.5), 2),
        "p99_ms": round(1000 * percentile(v, 0.99), 2),
        "max_ms": round(1000 * v[-1], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--level", default="hard")
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--preset", default="polish", choices=sorted(PRESETS))
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-deals", type=int, default=20, help="Deals played per game at most.")
    args = parser.parse_args()
    wall: list[float] = []
    cpu: list[float] = []
    guarded = 0
    deals = 0
    guard = min(1.9, 4 * default_budget(args.level))
    for game in range(args.games):
        state, _ = new_game(PRESETS[args.preset], args.players, seed=args.seed * 1_000_003 + game)
        index = 0
        while not state.finished and len(state.results) < args.max_deals:
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            view = seat_view(state, seat)
            w0 = time.perf_counter()
            c0 = time.process_time()
            action = choose_action(args.level, view, legal, seed=game * 100_000 + index, hard_stop=False)
            cpu.append(time.process_time() - c0)
            wall.append(time.perf_counter() - w0)
            guarded += wall[-1] >= guard
            state.apply_action(seat, action)
            index += 1
        deals += len(state.results)
    print(
        json.dumps(
            {
                "bench": "decisions",
                "build": "plain CPython" if core.ai.solver.__file__.endswith(".py") else "compiled (mypyc)",
                "python": platform.python_version(),
                "level": args.level,
                "preset": args.preset,
                "players": args.players,
                "games": args.games,
                "deals": deals,
                "seed": args.seed,
                "decisions": len(wall),
                "wall": summary(wall),
                "cpu": summary(cpu),
                "past_guard": guarded,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
