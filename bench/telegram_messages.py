"""Telegram messages per deal: complete 3-player games through the real adapter and the fake Bot API.

Three people play each game in a group, every move by pressing the hand message's buttons or typing the
command (an easy computer player decides what a person would do), with the fake's Telegram-like flood
limits on. A virtual clock stands in for waiting: the bot's rate limiter and the fake's flood control
share it, so a game that Telegram's limits would stretch over an hour runs in seconds while every send is
still checked against the same budgets (a 429 would be counted below).

Counted per deal: group sends and edits (what the group's budget of 20 a minute pays for) and private
sends and edits (hand messages). And `calls_per_move`: every sendMessage, sendPhoto, sendDocument,
editMessageText, editMessageReplyMarkup, deleteMessage and deleteMessages the bot made in any chat while
the game was past its lobby, divided by the moves accepted meanwhile (bids, passes, talon, gives, contract,
cards; whoever made them). Each person's move is counted by the table's record (accepted when it grew,
refused when not: `counted`); past 1% refused moves the per-move and per-deal figures are withheld (null,
with the reason, exit status 1; bench/tally.py). Prints one JSON object.

    python bench/telegram_messages.py [--games 3] [--preset polish] [--players 3] [--target 1000] [--seed 1]
        [--think 0] [--autoplay]

`--think S`: people take S seconds (virtual) between moves. With 0 (the default, the worst case for the
budget) everything a move causes is sent before the next move; at a human pace the table also shows the
trick as it forms (`TABLE_TRICK_SECONDS`), and the figures say what that costs.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "telegram")]

from tgkit import Rig, seat_everyone  # noqa: E402

from bench.tally import Tally, emit  # noqa: E402
from bot.snapshot import GameSpec, decode_action  # noqa: E402
from bot.table import TableDoc  # noqa: E402

RATES = ("calls_per_move", "calls_per_move_by_deal", "group_calls_per_deal", "private_calls_per_deal")


def actions_of(doc: TableDoc) -> int:
    return 0 if doc.game is None else len(doc.game.actions)


def moves_by_deal(doc: TableDoc) -> dict[int, int]:
    """Accepted moves (every player's, computers' too) per deal, replayed from the table's action log."""
    assert doc.game is not None
    state = GameSpec.from_json(doc.game.spec).start()
    counts: dict[int, int] = {}
    for text in doc.game.actions:
        number = state.deal.number
        seat, action = decode_action(text)
        state.apply_action(seat, action)
        counts[number] = counts.get(number, 0) + 1
    return counts


def _summary(values: list[int]) -> dict[str, float]:
    if not values:
        return {"median": 0, "max": 0, "mean": 0.0}
    return {
        "median": statistics.median(values),
        "max": max(values),
        "mean": round(statistics.fmean(values), 2),
        "p90": sorted(values)[int(0.9 * (len(values) - 1))],
    }


def _summary_float(values: list[float]) -> dict[str, float]:
    if not values:
        return {"median": 0.0, "max": 0.0, "p90": 0.0}
    ordered = sorted(values)
    return {
        "median": round(statistics.median(ordered), 2),
        "max": ordered[-1],
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
    }


async def play_game(
    preset: str, target: int, seed: int, players: int = 3, autoplay: bool = False, think: float = 0.0
) -> dict[str, Any]:
    rig = Rig()
    rig.rng = random.Random(seed)
    await rig.start()
    try:
        fake = rig.fake
        people = [fake.add_user(name) for name in ("Alice", "Bob", "Carol", "Dave")[:players]]
        chat = rig.group("Cards", people)
        table = await seat_everyone(rig, chat, people, preset=preset, short=False)
        if autoplay:
            await rig.say(chat, people[0], "/set autoplay on")
        if target != 1000:
            first = people[0]
            await rig.say(chat, first, f"/settings barrel_at {max(0, target - 120)}")
            await rig.say(chat, first, f"/settings target {target}")
        table.rng = random.Random(seed + 1)

        async def pause(_: int) -> None:
            rig.clock.advance(think)

        tally = Tally()
        for i in range(20_000):
            # Each person's move is counted by the table's record: accepted when it grew (by the move, or
            # more with autoplay's forced cards), refused when it did not.
            before, _ = await table.state()
            if not await table.move():
                break
            after, _ = await table.state()
            if actions_of(after) > actions_of(before):
                tally.accept("move")
            else:
                tally.refuse("no_change")
            if think > 0:
                await pause(i)
        else:
            raise AssertionError("the game did not end")
        doc, state = await table.state()
        assert doc.status == "finished" and state is not None
        per_deal = rig.watch.per_deal()
        private = [rig.watch.private_by_deal[d] for d in sorted(rig.watch.private_by_deal)]
        moves = moves_by_deal(doc)
        counted = rig.watch.counted_by_deal
        return {
            "calls": sum(counted.values()),
            "counted_moves": sum(moves.values()),
            "calls_per_move_by_deal": [
                round(counted[d] / moves[d], 2) for d in sorted(moves) if moves[d] and d in counted
            ],
            "group": per_deal,
            "private": private,
            "deals": len(state.results),
            "moves": table.moves,
            "pressed": table.pressed,
            "typed": table.typed_moves,
            "tally": {"accepted": dict(tally.accepted), "refused": dict(tally.refused)},
            "too_many_requests": fake.stats.too_many_requests,
            "leaks": len(rig.watch.leaks),
            "virtual_seconds": round(rig.clock.now() - 1_800_000_000.0),
        }
    finally:
        await rig.close()


async def run(
    games: int,
    preset: str,
    target: int,
    seed: int,
    players: int = 3,
    autoplay: bool = False,
    think: float = 0.0,
) -> tuple[dict[str, Any], int]:
    """The figures and the exit status: 1 (the per-move figures null) past 1% refused moves."""
    started = time.perf_counter()
    results = [await play_game(preset, target, seed + 97 * i, players, autoplay, think) for i in range(games)]
    group = [n for r in results for n in r["group"]]
    private = [n for r in results for n in r["private"]]
    tally = Tally()
    for r in results:
        tally.merge(r["tally"])
    figures = {
        "bench": "telegram_messages",
        "preset": preset,
        "players": players,
        "autoplay": autoplay,
        "games": games,
        "target": target,
        "think_seconds": think,
        "deals": sum(r["deals"] for r in results),
        "group_calls_per_deal": _summary(group),
        "private_calls_per_deal": _summary(private),
        "calls_per_move": round(
            sum(r["calls"] for r in results) / max(1, sum(r["counted_moves"] for r in results)), 2
        ),
        "calls_per_move_by_deal": _summary_float([x for r in results for x in r["calls_per_move_by_deal"]]),
        "moves": sum(r["moves"] for r in results),
        "moves_by_button": sum(r["pressed"] for r in results),
        "moves_typed": sum(r["typed"] for r in results),
        "too_many_requests": sum(r["too_many_requests"] for r in results),
        "private_cards_in_group_messages": sum(r["leaks"] for r in results),
        "telegram_minutes_per_game": round(statistics.fmean(r["virtual_seconds"] for r in results) / 60, 1),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    return tally.report(figures, RATES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--preset", default="polish")
    parser.add_argument("--target", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--players", type=int, default=3, choices=(3, 4))
    parser.add_argument("--think", type=float, default=0.0, help="seconds people take between moves")
    parser.add_argument("--autoplay", action="store_true", help="the chat's autoplay on (forced cards play)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    result, status = asyncio.run(
        run(args.games, args.preset, args.target, args.seed, args.players, args.autoplay, args.think)
    )
    return emit(result, status)


if __name__ == "__main__":
    raise SystemExit(main())
