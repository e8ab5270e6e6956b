"""Discord calls per move: whole 3-player games through the real Discord bot and the fake Discord.

Three people play by slash commands and buttons (the Discord test kit's driver), with Discord's
per-channel message limit on (run ten times faster, as in the end-to-end tests). Counted while the table
is past its lobby: channel messages posted, edited and deleted by the bot over REST (what the channel's
budget of 5 per 5 s pays for), and every message call including interaction answers (callbacks, the
edits of interaction responses and followups: ephemeral hands), divided by the accepted moves; and the
same from Start to the first deal's result (`first_deal_*`, the span issue 18 measured). Also what
players see go wrong: requests Discord refused with Unknown Message (10008), pings in the channel when
each deal's result was posted (one is right: the next turn's, or the last mover's) and at the end, and
the most table messages posted for one deal. Every person's step is counted against the table's record
(`counted`: a step the record does not show was refused); past 1% refused the per-move figures are
withheld (null, the reason, exit status 1; bench/tally.py). `--quick`:
people who act the moment it is their turn (`dckit.QuickDriver`) instead of after the bot is idle. Prints
one JSON object.

    python bench/discord_messages.py [--games 2] [--preset polish] [--seed 11] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "discord"), str(ROOT / "bench")]

from dckit import (  # noqa: E402
    E2E,
    Driver,
    QuickDriver,
    assert_channel_budget,
    make_world,
    running_bot,
    settings,
    speed_up,
)
from telegram_messages import moves_by_deal  # noqa: E402

from bench.tally import Tally, emit  # noqa: E402
from bot.storage import MemoryStore  # noqa: E402
from fakes.discord import FakeDiscord, FakeDiscordConfig  # noqa: E402

RATES = (
    "channel_calls_per_move",
    "calls_per_move",
    "first_deal_channel_calls_per_move",
    "first_deal_calls_per_move",
)
CHANNEL_ROUTES = (
    "POST /channels/{channel_id}/messages",
    "PATCH /channels/{channel_id}/messages/{message_id}",
    "DELETE /channels/{channel_id}/messages/{message_id}",
    "POST /channels/{channel_id}/messages/bulk-delete",
)


def _is_interaction_message(route: str) -> bool:
    return route.startswith("POST /interactions/") or "/webhooks/{webhook_id}/{webhook_token}" in route


def _budget_kept(fake: Any, world: Any) -> bool:
    """The channel's sends kept to the budget as Discord saw them arrive (`dckit.assert_channel_budget`)."""
    try:
        assert_channel_budget(fake, world.channel, E2E.channel_limit, E2E.channel_window)
    except AssertionError as exc:
        print("budget exceeded:", exc, file=sys.stderr)
        return False
    return True


def _counts(requests: list[Any]) -> tuple[int, int]:
    """(channel calls, interaction message calls) among `requests`, successful ones."""
    channel = sum(1 for r in requests if r.status < 300 and r.route in CHANNEL_ROUTES)
    answers = sum(1 for r in requests if r.status < 300 and _is_interaction_message(r.route))
    return channel, answers


async def play_game(preset: str, seed: int, quick: bool) -> dict[str, Any]:
    async with FakeDiscord(FakeDiscordConfig()) as fake:
        speed_up(fake)
        world = make_world(fake)
        store = MemoryStore()
        async with running_bot(fake, store, settings(), config=E2E, seed=seed) as bot:
            kind = QuickDriver if quick else Driver
            driver = kind(fake, world.channel, world.users[:3], [bot], random.Random(seed))
            await driver.open(preset, options=(("barrel_at", "300"), ("target", "400")))
            if isinstance(driver, QuickDriver):
                driver.quick = True
            started = len(fake.requests)
            doc = await driver.play()
            await Driver.settle(driver)
        assert doc.status == "finished"
        requests = fake.requests[started:]
        first_result = min(
            m.created_at
            for m in world.channel.messages
            if m.embeds and ": result**" in (m.embeds[0].get("description") or "")
        )
        messages = world.channel.messages
        pings = [m for m in messages if not m.ephemeral and m.content.startswith("<@")]
        results = [m for m in messages if m.embeds and ": result**" in (m.embeds[0].get("description") or "")]

        def live_pings(at: float) -> int:
            return sum(1 for p in pings if p.created_at <= at and (p.deleted_at is None or p.deleted_at > at))

        tables: dict[str, int] = {}
        for m in messages:
            if m.embeds and any(c.startswith("h|") for c in m.custom_ids()):
                deal = (m.embeds[0].get("description") or "").split("\n", 1)[0].split("·")[0].strip()
                tables[deal] = tables.get(deal, 0) + 1
        channel, answers = _counts(requests)
        first_channel, first_answers = _counts([r for r in requests if r.at <= first_result])
        moves = moves_by_deal(doc)
        # Every driver step is one person's move (no computers sit here): a step the record does not show
        # was refused. Counted at the end, as a quick player's step may return before its save.
        steps = driver.stats["steps"]
        return {
            "steps": steps,
            "moves": sum(moves.values()),
            "first_deal_moves": moves[min(moves)],
            "deals": len(moves),
            "channel_calls": channel,
            "interaction_calls": answers,
            "first_deal_channel_calls": first_channel,
            "first_deal_interaction_calls": first_answers,
            "rate_limited": fake.rate_limited_count,
            "unknown_message": sum(1 for r in requests if r.code == 10008),
            "pings_left_at_results": [live_pings(m.created_at) for m in results],
            "pings_left_at_end": live_pings(float("inf")),
            "max_tables_per_deal": max(tables.values(), default=0),
            "budget_kept": _budget_kept(fake, world),
        }


async def run(games: int, preset: str, seed: int, quick: bool = False) -> tuple[dict[str, Any], int]:
    """The figures and the exit status: 1 (the per-move figures null) past 1% refused moves."""
    started = time.perf_counter()
    results = [await play_game(preset, seed + 97 * i, quick) for i in range(games)]

    def total(name: str) -> int:
        return sum(r[name] for r in results)

    moves, first_moves = total("moves"), total("first_deal_moves")
    channel, answers = total("channel_calls"), total("interaction_calls")
    first_channel, first_answers = total("first_deal_channel_calls"), total("first_deal_interaction_calls")
    tally = Tally()
    tally.accept("move", min(moves, total("steps")))
    if total("steps") > moves:
        tally.refuse("no_change", total("steps") - moves)
    figures = {
        "bench": "discord_messages",
        "preset": preset,
        "players": 3,
        "quick": quick,
        "games": games,
        "deals": total("deals"),
        "moves": moves,
        "channel_calls_per_move": round(channel / max(1, moves), 2),
        "calls_per_move": round((channel + answers) / max(1, moves), 2),
        "first_deal_moves": first_moves,
        "first_deal_channel_calls_per_move": round(first_channel / max(1, first_moves), 2),
        "first_deal_calls_per_move": round((first_channel + first_answers) / max(1, first_moves), 2),
        "rate_limited": total("rate_limited"),
        "budget_kept": all(r["budget_kept"] for r in results),
        "unknown_message": total("unknown_message"),
        "pings_left_at_results_max": max(max(r["pings_left_at_results"], default=0) for r in results),
        "pings_left_at_results_mean": round(
            sum(sum(r["pings_left_at_results"]) for r in results)
            / max(1, sum(len(r["pings_left_at_results"]) for r in results)),
            2,
        ),
        "pings_left_at_end": total("pings_left_at_end"),
        "max_tables_per_deal": max(r["max_tables_per_deal"] for r in results),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    return tally.report(figures, RATES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--preset", default="polish")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--quick", action="store_true", help="players act the moment it is their turn")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    result, status = asyncio.run(run(args.games, args.preset, args.seed, args.quick))
    return emit(result, status)


if __name__ == "__main__":
    raise SystemExit(main())
