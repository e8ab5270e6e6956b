"""Fuzz the engine: random games of every preset and player count, checking invariants at every step.

At each step: the cards are conserved and hands agree (core.invariants), the chosen legal action is
accepted, and now and then an action that is not listed (another seat's turn, a card not in hand, a bid
out of range) must be refused with IllegalAction and leave the state exactly as it was.  After each deal:
card points add up to 120 and the scores match the totals.  After each game: its record replays to the
same totals.  Prints one JSON object; progress on stderr when it is a terminal.

    python bench/fuzz.py --deals 1000000 [--jobs 2] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import random
import sys
import time
from dataclasses import dataclass

from core.actions import PLAYS, Action, Bid, Contract, bid_action
from core.errors import IllegalAction
from core.game import GameState, new_game
from core.invariants import InvariantError, check_deal, check_finished_deal
from core.record import build_record, replay_text
from core.rules import PRESETS, RuleSet, preset

MAX_GAME_DEALS = 40
OPTION_SETS: dict[str, dict[str, object]] = {
    "": {},
    "+options": {
        "must_beat": True,
        "ace_marriage": True,
        "samosval": True,
        "golden_rounds": 2,
        "sell_talon": True,
    },
    "+redeal": {"redeal_four_nines": True, "four_nines_bonus": 0, "bolts": True, "concede": True},
}
VARIANTS = [
    (name + label, n) for label in OPTION_SETS for name, rules in PRESETS.items() for n in rules.player_counts
]


def variant_rules(label: str) -> RuleSet:
    name, _, extra = label.partition("+")
    return preset(name, OPTION_SETS["+" + extra if extra else ""] or None)


@dataclass
class Tally:
    deals: int = 0
    actions: int = 0
    refusals_checked: int = 0
    games_replayed: int = 0
    errors: int = 0
    first_error: str = ""


def _fingerprint(state: GameState) -> tuple[object, ...]:
    d = state.deal
    return (tuple(d.hands), d.phase, d.to_act, d.bid, d.trick, d.trick_seats, tuple(d.taken), state.totals)


def _illegal_candidates(
    state: GameState, seat: int, legal: list[Action], rng: random.Random
) -> list[tuple[int, Action]]:
    deal = state.deal
    other = next(s for s in deal.active if s != seat)
    out: list[tuple[int, Action]] = [(other, legal[0])]
    not_held = [c for c in range(24) if not deal.hands[seat] >> c & 1]
    out.append((seat, PLAYS[rng.choice(not_held)]))
    out.append((seat, bid_action(rng.choice([5, 7, 95, 1000, deal.bid]))))
    out.append((seat, Contract(deal.bid - 10)))
    return [(s, a) for s, a in out if not (s == seat and a in legal)]


def run_variant(variant: str, players: int, deals: int, seed: int) -> Tally:
    rules = variant_rules(variant)
    rng = random.Random(seed)
    tally = Tally()
    while tally.deals < deals:
        state = new_game(rules, players, seed=rng.randrange(1 << 30))[0]
        names = [f"p{i}" for i in range(players)]
        try:
            while not state.finished and state.deal_number < MAX_GAME_DEALS and tally.deals < deals:
                seat = state.deal.to_act
                legal = list(state.legal_actions(seat))
                if not legal:
                    raise InvariantError(f"no legal action for seat {seat} in phase {state.deal.phase}")
                if rng.random() < 0.02:
                    before = _fingerprint(state)
                    for s, bad in _illegal_candidates(state, seat, legal, rng):
                        try:
                            state.clone().apply_action(s, bad)  # an accepted one must not count
                        except IllegalAction:
                            tally.refusals_checked += 1
                        else:
                            if isinstance(bad, Bid | Contract) or s != seat:
                                raise InvariantError(f"unlisted action accepted: seat {s} {bad}")
                        if _fingerprint(state) != before:
                            raise InvariantError("a refused action changed the state")
                action = legal[rng.randrange(len(legal))]
                number = state.deal_number
                after = state.clone()  # `state` is the deal before, for the checks
                after.apply_action(seat, action)
                tally.actions += 1
                if after.deal_number != number:
                    tally.deals += 1
                    check_finished_deal(state, after)
                if not after.finished:
                    check_deal(after.deal)
                state = after
            record = build_record(state, names)
            report = replay_text(json.dumps(record))
            if not report["ok"] or report["totals"] != list(state.totals):
                raise InvariantError(f"record replays differently: {report.get('error')}")
            tally.games_replayed += 1
        except (InvariantError, IllegalAction) as exc:
            tally.errors += 1
            if not tally.first_error:
                tally.first_error = f"{variant}-{players} seed {seed}: {type(exc).__name__}: {exc}"
    return tally


def _job(args: tuple[str, int, int, int]) -> tuple[str, Tally]:
    variant, players, deals, seed = args
    return f"{variant}-{players}", run_variant(variant, players, deals, seed)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--deals", type=int, default=10_000, help="total deals over all variants")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--chunk", type=int, default=2_000, help="deals per work unit")
    args = parser.parse_args()
    per_variant = max(1, -(-args.deals // len(VARIANTS)))  # round up: at least --deals in all
    units = []
    for i, (variant, players) in enumerate(VARIANTS):
        left = per_variant
        k = 0
        while left > 0:
            n = min(args.chunk, left)
            units.append((variant, players, n, args.seed * 1_000_003 + i * 10_007 + k))
            left -= n
            k += 1
    totals: dict[str, Tally] = {f"{p}-{n}": Tally() for p, n in VARIANTS}
    started = time.time()
    show = sys.stderr.isatty()
    done = 0
    with multiprocessing.Pool(args.jobs) as pool:
        for key, t in pool.imap_unordered(_job, units):
            agg = totals[key]
            agg.deals += t.deals
            agg.actions += t.actions
            agg.refusals_checked += t.refusals_checked
            agg.games_replayed += t.games_replayed
            agg.errors += t.errors
            agg.first_error = agg.first_error or t.first_error
            done += t.deals
            if show:
                rate = done / max(time.time() - started, 1e-9)
                print(
                    f"\r{done:,}/{per_variant * len(VARIANTS):,} deals, {rate:,.0f}/s",
                    end="",
                    file=sys.stderr,
                )
    if show:
        print(file=sys.stderr)
    elapsed = time.time() - started
    errors = sum(t.errors for t in totals.values())
    print(
        json.dumps(
            {
                "deals": sum(t.deals for t in totals.values()),
                "actions": sum(t.actions for t in totals.values()),
                "refusals_checked": sum(t.refusals_checked for t in totals.values()),
                "games_replayed": sum(t.games_replayed for t in totals.values()),
                "errors": errors,
                "first_errors": [t.first_error for t in totals.values() if t.first_error],
                "seconds": round(elapsed, 1),
                "jobs": args.jobs,
                "per_variant": {k: t.deals for k, t in totals.items()},
            },
            indent=1,
        )
    )
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
