"""Live updates of the web table: how long a move takes to reach every open page.

A web server process (a child started by this script: aiohttp, the real app, its own service and Redis
connections) holds `--pages` open event streams of one table (three players and spectators). This
process plays the table's moves through its own service on the same Redis, as another bot process
would, and times each move from the moment its command returns (stored) to the moment each page
received the new view. Progress goes to the terminal (stderr), one JSON object to stdout:
`p50_ms`, `p99_ms`, `max_ms` over every (move, page) pair, `missed` (views not received within 5 s),
and the run's parameters.

    python bench/web.py [--pages 300] [--moves 40] [--redis-url URL] [--seed 1]

Without --redis-url (or REDIS_URL) a private redis-server is started on a free loopback port. The
server's per-address rate limit is raised for the run: every page comes from 127.0.0.1 here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.service import PEOPLE, open_table, private_redis, typed
from bot.commands import parse_text
from bot.handlers import Handlers
from bot.model import ChatRef, UserRef
from bot.service import Service
from bot.settings import Settings
from bot.storage import RedisStore
from bot.weblinks import Claims, signer_for
from core.game import GameState, apply

SECRET = "bench-web-secret-0123456789"
CHAT = ChatRef("b", "-1", "bench web")


def settings_for(url: str, prefix: str) -> Settings:
    return Settings(  # type: ignore[call-arg]
        _env_file=None,
        redis_url=url,
        redis_prefix=prefix,
        ai_workers=0,
        charts=False,
        turn_seconds=0,
        web_secret=SECRET,
        public_url="http://127.0.0.1",
    )


async def serve(url: str, prefix: str, port: int) -> None:
    """The server child: the web table on 127.0.0.1:port until killed."""
    from aiohttp import web

    from adapters.web.app import WebOptions, WebTable, make_app
    from bot.presence import Presence

    settings = settings_for(url, prefix)
    store = RedisStore.from_url(url, prefix=prefix)
    service = Service(store, settings, handlers=Handlers, presence=Presence(store))
    signer = signer_for(settings)
    assert signer is not None
    table = WebTable(service, signer, WebOptions(rate=1e6, burst=1e6))
    runner = web.AppRunner(make_app(table), access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port, backlog=1024).start()
    print("ready", flush=True)
    await asyncio.Event().wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def progress(text: str) -> None:
    sys.stderr.write(f"\r{text:<70}")
    sys.stderr.flush()


async def run(url: str, pages: int, moves: int, seed: int) -> dict[str, object]:
    prefix = f"benchweb{seed}"
    settings = settings_for(url, prefix)
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--port", str(port), "--redis-url", url, "--seed", str(seed)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        line = await asyncio.to_thread(child.stdout.readline)
        if line.strip() != "ready":
            raise SystemExit("bench/web.py: the server did not start")
        return await _measure(url, prefix, settings, port, pages, moves, seed)
    finally:
        child.terminate()
        child.wait(10)


async def _measure(
    url: str, prefix: str, settings: Settings, port: int, pages: int, moves: int, seed: int
) -> dict[str, object]:
    store = RedisStore.from_url(url, prefix=prefix)
    service = Service(store, settings, handlers=Handlers, rng=random.Random(seed))
    rng = random.Random(seed)
    state: GameState = await open_table(service, CHAT, "polish")
    signer = signer_for(settings)
    assert signer is not None
    base = f"http://127.0.0.1:{port}"
    users = [*PEOPLE, *(UserRef("b", f"watcher{i}", f"W{i}", "en") for i in range(max(0, pages - 3)))][:pages]
    received: dict[int, dict[int, float]] = {}  # version -> page -> when
    connected = 0
    all_open = asyncio.Event()

    async def page(session: aiohttp.ClientSession, i: int, user: UserRef) -> None:
        nonlocal connected
        link = signer.sign(Claims("link", CHAT.key, user.user_id, user.name, "en", "b", time.time() + 600))
        async with session.post(f"{base}/api/session", json={"link": link}, headers={"Origin": base}) as r:
            token = (await r.json())["session"]
        async with session.post(f"{base}/api/ticket", json={"session": token}, headers={"Origin": base}) as r:
            ticket = (await r.json())["ticket"]
        async with session.get(f"{base}/api/events", params={"ticket": ticket}) as stream:
            first = True
            event = ""
            async for raw in stream.content:
                line = raw.decode()
                if line.startswith("event: "):
                    event = line[7:].strip()
                elif line.startswith("data: ") and event == "view":
                    version = json.loads(line[6:])["version"]
                    received.setdefault(version, {})[i] = time.perf_counter()
                    if first:
                        first = False
                        connected += 1
                        progress(f"pages open: {connected}/{pages}")
                        if connected == pages:
                            all_open.set()

    connector = aiohttp.TCPConnector(limit=0)
    latencies: list[float] = []
    missed = 0
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=None)
    ) as session:
        tasks = [asyncio.create_task(page(session, i, u)) for i, u in enumerate(users)]
        await asyncio.wait_for(all_open.wait(), 120)
        for n in range(moves):
            if state.finished:
                break
            seat = state.to_act
            assert seat is not None
            legal = state.legal_actions(seat)
            action = legal[rng.randrange(len(legal))]
            command = parse_text(typed(action, state, seat), CHAT, PEOPLE[seat])
            assert command is not None
            out = await service.handle(command)
            stored_at = time.perf_counter()
            if any(m.kind == "error" for m in out):
                continue
            state = apply(state, seat, action)[0]
            version = await store.version(CHAT.key)
            assert version is not None
            deadline = stored_at + 5.0
            while len(received.get(version, {})) < pages and time.perf_counter() < deadline:
                await asyncio.sleep(0.005)
            got = received.get(version, {})
            missed += pages - len(got)
            latencies.extend(max(0.0, t - stored_at) for t in got.values())
            ordered = sorted(latencies)
            p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000 if ordered else 0.0
            progress(f"move {n + 1}/{moves}: {len(got)}/{pages} pages, p99 so far {p99:.1f} ms")
            await asyncio.sleep(0.05)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    sys.stderr.write("\n")
    await service.close()
    await store.close()
    latencies.sort()
    n = len(latencies)
    return {
        "pages": pages,
        "moves": n // max(1, pages),
        "p50_ms": round(latencies[n // 2] * 1000, 2) if n else None,
        "p99_ms": round(latencies[min(n - 1, int(n * 0.99))] * 1000, 2) if n else None,
        "max_ms": round(latencies[-1] * 1000, 2) if n else None,
        "missed": missed,
        "samples": n,
        "python": platform.python_version(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=300, help="open event streams on the server")
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.redis_url, f"benchweb{args.seed}", args.port))
        return
    if args.redis_url:
        result = asyncio.run(run(args.redis_url, args.pages, args.moves, args.seed))
    else:
        with private_redis() as url:
            result = asyncio.run(run(url, args.pages, args.moves, args.seed))
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
