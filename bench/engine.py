"""Engine speed: random complete deals per second through the public API, one core.

Each step asks ``legal_actions`` for the seat to act, picks one at random and applies it, with every
rule of the preset on; a deal counts when it is scored.  A game restarts when it ends or after 50 deals
(random players rarely reach 1000, and real games are that short), so the figure is per deal, not per
ever-growing game.  Prints one JSON object; progress goes to stderr when it is a terminal.

    python bench/engine.py [--seconds 3] [--only polish-3] [--functional]
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

import core.deal
from core.game import GameState, new_game
from core.rules import PRESETS

# Appended, not put first: `make bench` puts the compiled core on PYTHONPATH, which must win.
sys.path.append(str(Path(__file__).resolve().parents[1]))
from bench.tally import Tally, emit

MAX_GAME_DEALS = 50


def run_deals(
    preset: str, players: int, seconds: float, seed: int, functional: bool
) -> tuple[float, int, int]:
    """Deals per second of process time for one preset and player count, the deals and the actions
    applied. Every action is one `legal_actions` listed: a refusal (IllegalAction) ends the bench."""
    rules = PRESETS[preset]
    rng = random.Random(seed)
    rnd = rng.random
    state: GameState = new_game(rules, players, seed=rng.randrange(1 << 30))[0]
    deals = actions = 0
    start = time.process_time()
    stop = start + seconds
    while True:
        for _ in range(256):
            seat = state.deal.to_act
            legal = state.legal_actions(seat)
            action = legal[int(rnd() * len(legal))]
            number = state.deal_number
            if functional:
                state = state.clone()
            state.apply_action(seat, action)
            if state.deal_number != number:
                deals += 1
                if state.finished or state.deal_number >= MAX_GAME_DEALS:
                    state = new_game(rules, players, seed=rng.randrange(1 << 30))[0]
        actions += 256
        now = time.process_time()
        if now >= stop:
            return deals / (now - start), deals, actions


def progress_printer() -> Callable[[str], None]:
    if not sys.stderr.isatty():
        return lambda _label: None
    from rich.console import Console

    console = Console(stderr=True)
    return lambda label: console.print(f"[dim]measuring[/] {label} ...")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=3.0, help="process time per preset and player count")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", action="append", help="PRESET-PLAYERS to measure (repeatable)")
    parser.add_argument(
        "--functional", action="store_true", help="clone before every action (as the service does)"
    )
    args = parser.parse_args()
    show = progress_printer()
    figures: dict[str, int] = {}
    counted: dict[str, dict[str, int]] = {}
    tally = Tally()
    for name, rules in PRESETS.items():
        for players in rules.player_counts:
            key = f"{name}-{players}"
            if args.only and key not in args.only:
                continue
            show(key)
            run_deals(name, players, min(0.3, args.seconds), args.seed, args.functional)  # warm-up
            rate, deals, actions = run_deals(name, players, args.seconds, args.seed, args.functional)
            figures[key] = round(rate)
            counted[key] = {"deals": deals, "actions": actions}
            tally.accept("action", actions)
    compiled = not core.deal.__file__.endswith(".py")
    result, status = tally.report(
        {
            "deals_per_s": figures,
            "deals_and_actions": counted,
            "apply": "clone + apply_action (copying)" if args.functional else "apply_action (in place)",
            "engine": "mypyc-compiled" if compiled else "pure Python",
            "python": platform.python_version(),
            "seconds_each": args.seconds,
        },
        ["deals_per_s"],
    )
    return emit(result, status, indent=1)


if __name__ == "__main__":
    raise SystemExit(main())
