"""Bot API calls per move at a public table: three Telegram people matched by Play now play in their private
chats through the real adapter and the fake Bot API (the Telegram-like flood limits on, a virtual clock).

`calls_per_move`: every sendMessage, sendPhoto, sendDocument, editMessageText, editMessageReplyMarkup,
deleteMessage and deleteMessages the bot made in the three private chats from the queue's "found" on,
divided by the moves accepted at the table (a group table's figure is `bench/telegram_messages.py`'s; a
public table has no group: everything goes to each person privately, so it costs more). Each person's
move is counted by the table's record (`counted`: accepted when it grew, refused when not); past 1%
refused the per-move figures are withheld (null, the reason, exit status 1; bench/tally.py). Prints JSON.

    python bench/public_messages.py [--games 2] [--deals 0] [--seed 1]

`--deals N`: stop each game after N deals (0: play it to its end).
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

from test_play_now import PublicRig, PublicTable, person, seated, until  # noqa: E402
from tgkit import settings  # noqa: E402

from bench.tally import Tally, emit  # noqa: E402
from bench.telegram_messages import actions_of  # noqa: E402
from fakes.telegram.calls import COUNTED_METHODS  # noqa: E402
from fakes.telegram.fake import ApiResponse  # noqa: E402
from fakes.telegram.models import UploadedFile  # noqa: E402


async def play_game(seed: int, deals: int) -> dict[str, Any]:
    rig = PublicRig(settings_=settings(public_computers_after=600.0))
    rig.rng = random.Random(seed)
    await rig.start()
    await rig.start_public()
    try:
        people = [person(rig, name, "en") for name in ("Alice", "Bob", "Carol")]
        chats = {str(u.id) for u in people}
        counting = False
        calls = 0
        original = rig.fake.handle

        async def handle(
            token: str, method: str, params: Any, files: dict[str, UploadedFile] | None = None
        ) -> ApiResponse:
            nonlocal calls
            response = await original(token, method, params, files)
            if counting and method.lower() in COUNTED_METHODS and str(params.get("chat_id")) in chats:
                calls += 1
            return response

        rig.fake.handle = handle  # type: ignore[method-assign]
        await rig.settle()
        for user in people:
            await rig.say(user, user, "/play polish 3 slow")
        counting = True  # from the table's first message on (the status edit "found" included)
        for user in people:
            await until(lambda user=user: seated(rig, user), 20.0)
        table_id = await seated(rig, people[0])
        assert table_id is not None
        await rig.settle()
        table = PublicTable(rig, None, {u.first_name: u for u in people})  # type: ignore[arg-type]
        table.public_id = table_id
        table.rng = random.Random(seed + 1)
        tally = Tally()
        for _ in range(20_000):
            before, state = await table.state()
            if state is None or state.finished or (deals and state.deal_number > deals):
                break
            if not await table.move():
                break
            # Counted by the table's record: accepted when it grew, refused when it did not.
            after, _ = await table.state()
            if actions_of(after) > actions_of(before):
                tally.accept("move")
            else:
                tally.refuse("no_change")
        await rig.settle()
        counting = False
        doc, state = await table.state()
        assert doc.game is not None
        moves = len(doc.game.actions)
        return {
            "calls": calls,
            "moves": moves,
            "tally": {"accepted": dict(tally.accepted), "refused": dict(tally.refused)},
            "deals": len(state.results) if state is not None else 0,
            "finished": bool(state is not None and state.finished),
            "too_many_requests": rig.fake.stats.too_many_requests,
            "virtual_seconds": round(rig.clock.now() - 1_800_000_000.0),
        }
    finally:
        await rig.close()


async def run(games: int, deals: int, seed: int) -> tuple[dict[str, Any], int]:
    """The figures and the exit status: 1 (the per-move figures null) past 1% refused moves."""
    started = time.perf_counter()
    results = [await play_game(seed + 97 * i, deals) for i in range(games)]
    tally = Tally()
    for r in results:
        tally.merge(r["tally"])
    figures = {
        "bench": "public_messages",
        "games": games,
        "deals_limit": deals,
        "deals": sum(r["deals"] for r in results),
        "moves": sum(r["moves"] for r in results),
        "calls": sum(r["calls"] for r in results),
        "calls_per_move": round(
            sum(r["calls"] for r in results) / max(1, sum(r["moves"] for r in results)), 2
        ),
        "calls_per_move_by_game": [round(r["calls"] / max(1, r["moves"]), 2) for r in results],
        "too_many_requests": sum(r["too_many_requests"] for r in results),
        "telegram_minutes_per_game": round(statistics.fmean(r["virtual_seconds"] for r in results) / 60, 1),
        "wall_seconds": round(time.perf_counter() - started, 1),
    }
    return tally.report(figures, ("calls_per_move", "calls_per_move_by_game"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--deals", type=int, default=0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    result, status = asyncio.run(run(args.games, args.deals, args.seed))
    return emit(result, status)


if __name__ == "__main__":
    raise SystemExit(main())
