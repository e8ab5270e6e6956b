"""The arena: one computer level measured against another on duplicate deals (``thousand arena``,
``make arena``; the command is ``adapters.cli_arena``).

How it plays (documented in ``bench/results/ai.md`` too):

* Games, not loose deals: each game seed is a whole match to the target (1000), and it is played once
  with the candidate in every seat and the baseline level in the other seats.  The deals of a game
  come from its seed by number, and the dealer moves one seat per deal, so deal *k* of a game has the
  same cards and dealer in every rotation: each deal is played with the candidate in every seat.
* ``--deals D`` plays whole game seeds until the deals played, averaged over the rotations, reach
  ``D``.  A game still unfinished after ``MAX_DEALS`` deals ends there (highest total wins).
* Points per deal is the candidate's score in a deal minus the mean score of the other seats in the
  same deal (the baseline players), averaged over all deals of all rotations; its 95% interval treats
  each game seed (all its rotations) as one independent sample.  Game win share counts a shared win
  as a fraction; its Wilson interval counts each game of each rotation as one trial.
* Decision times are wall-clock times of ``choose_action`` per level (single legal actions included,
  as the service also asks then).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from core.ai import choose_action
from core.cards import MARRIAGE_MASKS
from core.deal import Phase
from core.game import new_game
from core.rules import preset
from core.view import seat_view

MAX_DEALS = 60
"""A game still running after this many deals is stopped (the highest total wins)."""


@dataclass(slots=True)
class GameResult:
    """One game of one rotation: the candidate in seat ``rotation``."""

    game: int
    rotation: int
    deals: int
    points: float
    """Sum over deals of (candidate score - mean score of the other seats)."""
    candidate_points: int
    baseline_points: float
    win: float
    """1 for a sole win, 1/k for a win shared by k players, else 0."""
    declared: dict[str, int]
    made: dict[str, int]
    marriages: dict[str, list[int]]
    """Per role: [marriages held when the play began, of them declared]."""
    times: dict[str, list[float]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ArenaSpec:
    candidate: str
    baseline: str
    preset: str
    players: int
    seed: int
    candidate_budget: float | None = None
    baseline_budget: float | None = None


def _decision_seed(game_seed: int, rotation: int, index: int) -> int:
    return (game_seed * 1_000_003 + rotation * 7_919 + index * 104_729) & 0x7FFF_FFFF


def play_game(spec: ArenaSpec, game: int, rotation: int) -> GameResult:
    """Play one whole game with the candidate in seat ``rotation``; pure apart from timing."""
    rules = preset(spec.preset)
    game_seed = spec.seed * 100_003 + game
    state, _ = new_game(rules, spec.players, seed=game_seed)
    levels = [spec.baseline] * spec.players
    budgets = [spec.baseline_budget] * spec.players
    levels[rotation] = spec.candidate
    budgets[rotation] = spec.candidate_budget
    roles = ["baseline"] * spec.players
    roles[rotation] = "candidate"
    times: dict[str, list[float]] = {spec.candidate: [], spec.baseline: []}
    declared = {"candidate": 0, "baseline": 0}
    made = {"candidate": 0, "baseline": 0}
    marriages = {"candidate": [0, 0], "baseline": [0, 0]}
    held: list[int] = []
    points = 0.0
    cand_points = 0
    base_points = 0.0
    index = 0
    while not state.finished and len(state.results) < MAX_DEALS:
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions(seat)
        view = seat_view(state, seat)
        t0 = time.perf_counter()
        action = choose_action(
            levels[seat], view, legal, seed=_decision_seed(game_seed, rotation, index), budget_s=budgets[seat]
        )
        times[levels[seat]].append(time.perf_counter() - t0)
        index += 1
        before = len(state.results)
        state.apply_action(seat, action)
        if not held and state.deal.phase == Phase.PLAY and len(state.results) == before:
            held = [_marriages_in(state.deal.hands[s]) for s in range(spec.players)]
        if len(state.results) > before:
            res = state.results[-1]
            if held:
                for s in range(spec.players):
                    if held[s]:
                        marriages[roles[s]][0] += held[s].bit_count()
                        marriages[roles[s]][1] += sum(
                            1 for m in res.marriages[s] if m != "A" and held[s] >> "CSHD".index(m) & 1
                        )
            held = []
            others = [res.scores[s] for s in range(spec.players) if s != rotation]
            mean_others = sum(others) / len(others)
            points += res.scores[rotation] - mean_others
            cand_points += res.scores[rotation]
            base_points += mean_others
            if res.ending != "redeal":
                role = roles[res.declarer]
                declared[role] += 1
                if res.made:
                    made[role] += 1
    totals = state.totals
    best = max(totals)
    leaders = [s for s, t in enumerate(totals) if t == best]
    if state.finished and state.winner is not None:
        winners = [state.winner] if isinstance(state.winner, int) else list(state.winner)
    else:
        winners = leaders
    win = 1.0 / len(winners) if rotation in winners else 0.0
    return GameResult(
        game,
        rotation,
        len(state.results),
        points,
        cand_points,
        base_points,
        win,
        declared,
        made,
        marriages,
        times,
    )


def _marriages_in(hand: int) -> int:
    """Suits (bit mask) whose marriage ``hand`` holds."""
    out = 0
    for s, m in enumerate(MARRIAGE_MASKS):
        if hand & m == m:
            out |= 1 << s
    return out


def _task(args: tuple[ArenaSpec, int, int]) -> GameResult:
    return play_game(*args)


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def wilson(successes: float, trials: int, z: float = 1.96) -> tuple[float, float]:
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def summarize(spec: ArenaSpec, results: list[GameResult], elapsed: float) -> dict[str, Any]:
    """The arena's figures from per-game results (see the module docstring for the method)."""
    clusters: dict[int, list[GameResult]] = {}
    for r in results:
        clusters.setdefault(r.game, []).append(r)
    n_deals = sum(r.deals for r in results)
    total = sum(r.points for r in results)
    mean = total / n_deals if n_deals else 0.0
    c = len(clusters)
    if c > 1 and n_deals:
        ss = 0.0
        for rs in clusters.values():
            p = sum(r.points for r in rs)
            n = sum(r.deals for r in rs)
            ss += (p - mean * n) ** 2
        se = math.sqrt(c / (c - 1) * ss) / n_deals
    else:
        se = float("inf")
    games = len(results)
    wins = sum(r.win for r in results)
    declared = {k: sum(r.declared[k] for r in results) for k in ("candidate", "baseline")}
    made = {k: sum(r.made[k] for r in results) for k in ("candidate", "baseline")}
    held = {k: sum(r.marriages[k][0] for r in results) for k in ("candidate", "baseline")}
    called = {k: sum(r.marriages[k][1] for r in results) for k in ("candidate", "baseline")}
    times: dict[str, list[float]] = {}
    for r in results:
        for level, ts in r.times.items():
            times.setdefault(level, []).extend(ts)
    return {
        "candidate": spec.candidate,
        "baseline": spec.baseline,
        "preset": spec.preset,
        "players": spec.players,
        "seed": spec.seed,
        "games": games,
        "game_seeds": c,
        "deals": n_deals // spec.players if spec.players else n_deals,
        "seat_deals": n_deals,
        "points_per_deal": round(mean, 3),
        "ci95": [round(mean - 1.96 * se, 3), round(mean + 1.96 * se, 3)],
        "candidate_points_per_deal": round(sum(r.candidate_points for r in results) / max(1, n_deals), 3),
        "baseline_points_per_deal": round(sum(r.baseline_points for r in results) / max(1, n_deals), 3),
        "win_share": round(wins / games, 4) if games else 0.0,
        "wilson95": [round(x, 4) for x in wilson(wins, games)],
        "fair_share": round(1 / spec.players, 4),
        "contracts_made": {
            k: {
                "declared": declared[k],
                "made": made[k],
                "rate": round(made[k] / declared[k], 4) if declared[k] else None,
            }
            for k in ("candidate", "baseline")
        },
        "marriages_declared": {
            k: {
                "held": held[k],
                "declared": called[k],
                "rate": round(called[k] / held[k], 4) if held[k] else None,
            }
            for k in ("candidate", "baseline")
        },
        "decision_ms": {
            level: {
                "p50": round(_quantile(ts, 0.5) * 1000, 3),
                "p99": round(_quantile(ts, 0.99) * 1000, 3),
                "max": round(max(ts) * 1000, 3) if ts else 0.0,
                "mean": round(statistics.fmean(ts) * 1000, 3) if ts else 0.0,
                "decisions": len(ts),
            }
            for level, ts in sorted(times.items())
        },
        "seconds": round(elapsed, 1),
    }


def run_arena(
    spec: ArenaSpec,
    deals: int,
    *,
    workers: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Play game seeds until ``deals`` deals (per rotation) are done; the figures as a dict.

    The batches of game seeds are chosen from the results so far only, so the figures are the same
    whatever the number of workers.
    """
    start = time.perf_counter()
    results: list[GameResult] = []
    done_deals = 0.0
    next_game = 0
    pool = ProcessPoolExecutor(workers) if workers > 1 else None
    try:
        while done_deals < deals:
            if results:
                per_game = sum(r.deals for r in results) / len(results)
                batch = max(1, math.ceil((deals - done_deals) / max(per_game, 1.0)))
            else:
                batch = 2
            tasks = [(spec, g, r) for g in range(next_game, next_game + batch) for r in range(spec.players)]
            next_game += batch
            runner: Iterator[GameResult] = pool.map(_task, tasks) if pool is not None else map(_task, tasks)
            for res in runner:
                results.append(res)
                done_deals += res.deals / spec.players
                if progress is not None:
                    progress(min(int(done_deals), deals), deals)
    finally:
        if pool is not None:
            pool.shutdown()
    results.sort(key=lambda r: (r.game, r.rotation))
    return summarize(spec, results, time.perf_counter() - start)


def format_text(report: dict[str, Any]) -> str:
    lo, hi = report["ci95"]
    wlo, whi = report["wilson95"]
    ppd = report["points_per_deal"]
    lines = [
        f"arena {report['candidate']} vs {report['baseline']}: {report['preset']}, "
        f"{report['players']} players, {report['deals']} deals in {report['game_seeds']} game seeds "
        f"x {report['players']} rotations",
        f"points per deal (candidate - others): {ppd:+.2f}  95% CI [{lo:+.2f}, {hi:+.2f}]",
        f"game win share: {report['win_share']:.3f}  Wilson 95% [{wlo:.3f}, {whi:.3f}]  "
        f"(fair share {report['fair_share']:.3f})",
    ]
    for role in ("candidate", "baseline"):
        cm = report["contracts_made"][role]
        rate = "-" if cm["rate"] is None else f"{cm['rate']:.3f}"
        lines.append(f"contracts made as declarer, {role}: {cm['made']}/{cm['declared']} ({rate})")
    for role in ("candidate", "baseline"):
        md = report["marriages_declared"][role]
        rate = "-" if md["rate"] is None else f"{md['rate']:.3f}"
        lines.append(
            f"marriages declared of those held at the first lead, {role}: "
            f"{md['declared']}/{md['held']} ({rate})"
        )
    for level, t in report["decision_ms"].items():
        lines.append(
            f"decision time {level}: p50 {t['p50']:.2f} ms, p99 {t['p99']:.2f} ms, max {t['max']:.2f} ms "
            f"({t['decisions']} decisions)"
        )
    lines.append(f"elapsed {report['seconds']} s")
    return "\n".join(lines)
