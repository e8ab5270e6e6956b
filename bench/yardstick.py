"""Declarer play against open hands: the open-hands yardstick of issue 27.

Deals are played from the start of a game seed with ``--setup`` (medium) in every seat up to the first
lead of the card play, so every level is measured on the same positions; from there the declarer's
cards are chosen by the level under test and the defenders' by ``--defence`` (medium).  Before and after
each of the declarer's cards the position is solved with every hand open (``core.ai.solver``): the
card's cost is the declarer's best open-hands value minus the value after the card, and a card is
contract-losing when the value before is at least the contract and after it below.

    python bench/yardstick.py [--levels hard,medium] [--deals 100] [--preset polish] [--players 3] [--seed 1]

Run it on the compiled build for speed (``PYTHONPATH=build/native:. python bench/yardstick.py``):
decisions count work, not seconds, and run with no wall-clock guard, so the figures are the same on
either build.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from typing import Any

import core.ai.solver
from core.ai import choose_action
from core.ai.solver import option_values
from core.deal import Phase
from core.game import GameState, new_game
from core.rules import PRESETS
from core.view import seat_view


def first_leads(preset: str, players: int, count: int, seed: int, setup: str) -> list[GameState]:
    """``count`` games at the first lead of their first deal with a declarer, bids and exchange by
    ``setup`` in every seat (deals ended before the play are skipped by dealing the next seed)."""
    rules = PRESETS[preset]
    out: list[GameState] = []
    game = 0
    while len(out) < count:
        game += 1
        state, _ = new_game(rules, players, seed=seed * 1_000_003 + game)
        index = 0
        while state.deal.phase != Phase.PLAY and not state.results:
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            view = seat_view(state, seat)
            action = choose_action(setup, view, legal, seed=game * 1000 + index, hard_stop=False)
            state.apply_action(seat, action)
            index += 1
        if not state.results:
            out.append(state)
    return out


def play_deal(start: GameState, level: str, defence: str, seed: int) -> dict[str, Any]:
    """Play the card play of ``start`` with ``level`` as declarer; the declarer's cards judged."""
    state = start.clone()
    deal = state.deal
    declarer = deal.declarer
    contract = deal.contract
    lost = 0
    losing = 0
    cards = 0
    times: list[float] = []
    index = 0
    before_value = -1
    losing_at: list[int] = []
    while not state.results and state.deal.phase == Phase.PLAY:
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions(seat)
        view = seat_view(state, seat)
        who = level if seat == declarer else defence
        t0 = time.perf_counter()
        action = choose_action(who, view, legal, seed=seed * 1000 + index, hard_stop=False)
        dt = time.perf_counter() - t0
        if seat == declarer and len(legal) > 1:
            times.append(dt)
            values = option_values(state)
            best = max(v.declarer for v in values.values())
            after = values[action].declarer
            if before_value < 0:
                before_value = best
            lost += best - after
            cards += 1
            if best >= contract > after:
                losing += 1
                losing_at.append(sum(h.bit_count() for h in state.deal.hands))
        state.apply_action(seat, action)
        index += 1
    return {
        "lost": lost,
        "losing_cards": losing,
        "losing_at": losing_at,
        "cards": cards,
        "times": times,
        "open_value": before_value,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="hard,medium")
    parser.add_argument("--deals", type=int, default=100)
    parser.add_argument("--preset", default="polish", choices=sorted(PRESETS))
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--setup", default="medium")
    parser.add_argument("--defence", default="medium")
    args = parser.parse_args()
    starts = first_leads(args.preset, args.players, args.deals, args.seed, args.setup)
    report: dict[str, Any] = {
        "bench": "yardstick",
        "build": "plain CPython" if core.ai.solver.__file__.endswith(".py") else "compiled (mypyc)",
        "preset": args.preset,
        "players": args.players,
        "deals": len(starts),
        "seed": args.seed,
        "setup": args.setup,
        "defence": args.defence,
        "levels": {},
    }
    lost_by_level: dict[str, list[int]] = {}
    for level in args.levels.split(","):
        rows = [play_deal(s, level, args.defence, args.seed * 7919 + i) for i, s in enumerate(starts)]
        lost = [r["lost"] for r in rows]
        lost_by_level[level] = lost
        times = sorted(t for r in rows for t in r["times"])
        makeable = sum(1 for r, s in zip(rows, starts, strict=True) if r["open_value"] >= s.deal.contract)
        report["levels"][level] = {
            "deals_with_losing_card": sum(1 for r in rows if r["losing_cards"]),
            "losing_cards": sum(r["losing_cards"] for r in rows),
            "losing_at_cards_left": sorted(c for r in rows for c in r["losing_at"]),
            "makeable_open": makeable,
            "mean_points_lost": round(statistics.fmean(lost), 2),
            "ci95_points_lost": round(1.96 * statistics.stdev(lost) / math.sqrt(len(lost)), 2),
            "declarer_cards_judged": sum(r["cards"] for r in rows),
            "decision_ms_mean": round(1000 * statistics.fmean(times), 2) if times else 0.0,
            "decision_ms_p99": round(1000 * times[int(0.99 * (len(times) - 1))], 2) if times else 0.0,
            "decision_ms_max": round(1000 * times[-1], 2) if times else 0.0,
        }
    names = list(lost_by_level)
    if len(names) == 2:
        # Paired on the same positions: the first level's points lost minus the second's, deal by deal.
        diff = [a - b for a, b in zip(lost_by_level[names[0]], lost_by_level[names[1]], strict=True)]
        report["paired"] = {
            "levels": names,
            "mean_difference": round(statistics.fmean(diff), 2),
            "ci95": round(1.96 * statistics.stdev(diff) / math.sqrt(len(diff)), 2) if len(diff) > 1 else 0.0,
        }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
