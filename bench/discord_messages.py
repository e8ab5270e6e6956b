"""Discord calls per move: whole 3-player games through the real Discord bot and the fake Discord.

Three people play by slash commands and buttons (the Discord test kit's driver), with Discord's
per-channel message limit on (run ten times faster, as in the end-to-end tests). Counted while the table
is past its lobby: channel messages posted, edited and deleted by the bot over REST (what the channel's
budget of 5 per 5 s pays for), and every message call including interaction answers (callbacks, the
edits of interaction responses and followups: ephemeral hands), divided by the accepted moves. Prints
one JSON object.

    python bench/discord_messages.py [--games 2] [--preset polish] [--seed 11]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "tests" / "discord"), str(ROOT / "bench")]

from dckit import E2E, Driver, assert_channel_budget, make_world, running_bot, settings, speed_up  # noqa: E402
from fakes.discord import FakeDiscord, FakeDiscordConfig  # noqa: E402
from telegram_messages import moves_by_deal  # noqa: E402

from bot.storage import MemoryStore  # noqa: E402

CHANNEL_ROUTES = (
    "POST /channels/{channel_id}/messages",
    "PATCH /channels/{channel_id}/messages/{message_id}",
    "DELETE /channels/{channel_id}/messages/{message_id}",
    "POST /channels/{channel_id}/messages/bulk-delete",
)


def _is_interaction_message(route: str) -> bool:
    return route.startswith("POST /interactions/") or "/webhooks/{webhook_id}/{webhook_token}" in route


async def play_game(preset: str, seed: int) -> dict[str, Any]:
    async with FakeDiscord(FakeDiscordConfig()) as fake:
        speed_up(fake)
        world = make_world(fake)
        store = MemoryStore()
        async with running_bot(fake, store, settings(), config=E2E, seed=seed) as bot:
            driver = Driver(fake, world.channel, world.users[:3], [bot], random.Random(seed))
            await driver.open(preset, options=(("barrel_at", "300"), ("target", "400")))
            started = len(fake.requests)
            doc = await driver.play()
        assert doc.status == "finished"
        requests = fake.requests[started:]
        channel = sum(1 for r in requests if r.status < 300 and r.route in CHANNEL_ROUTES)
        answers = sum(1 for r in requests if r.status < 300 and _is_interaction_message(r.route))
        moves = sum(moves_by_deal(doc).values())
        return {
            "moves": moves,
            "deals": len(moves_by_deal(doc)),
            "channel_calls": channel,
            "interaction_calls": answers,
            "rate_limited": fake.rate_limited_count,
            "budget_sends": assert_channel_budget(fake, world.channel, E2E.channel_limit, E2E.channel_window),
        }


async def run(games: int, preset: str, seed: int) -> dict[str, Any]:
    started = time.perf_counter()
    results = [await play_game(preset, seed + 97 * i) for i in range(games)]
    moves = sum(r["moves"] for r in results)
    channel = sum(r["channel_calls"] for r in results)
    answers = sum(r["interaction_calls"] for r in results)
    return {
        "bench": "discord_messages",
        "preset": preset,
        "players": 3,
        "games": games,
        "deals": sum(r["deals"] for r in results),
        "moves": moves,
        "channel_calls_per_move": round(channel / max(1, moves), 2),
        "calls_per_move": round((channel + answers) / max(1, moves), 2),
        "rate_limited": sum(r["rate_limited"] for r in results),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--preset", default="polish")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    print(json.dumps(asyncio.run(run(args.games, args.preset, args.seed))))


if __name__ == "__main__":
    main()
