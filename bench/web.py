"""Live updates of the web table: how long a move takes to reach every open page.

A web server process (a child started by this script: aiohttp, the real app, its own service and Redis
connections) holds `--pages` open event streams of one table (three players and spectators). This
process plays the table's moves through its own service on the same Redis, as another bot process
would, and times each move from the moment its command returns (stored) to the moment each page
received the new view. The moves are bench/service.py's: random legal moves typed in the chat they
belong to (a give from the mover's private chat), chosen from the table as read back from Redis; each
is counted accepted or refused by reason (bench/tally.py), and past 1% unintended refusals the timings
are withheld (null, with the reason, exit status 1). Progress goes to the terminal (stderr), one JSON
object to stdout: `p50_ms`, `p99_ms`, `max_ms` over every (move, page) pair, `missed` (views not
received within 5 s), `counted`, and the run's parameters.

    python bench/web.py [--pages 300] [--moves 40] [--redis-url URL] [--cluster] [--seed 1]

Redis (bench/redis_target.py): `--redis-url` (or REDIS_URL), `--cluster` for a Redis Cluster; without a
URL a private redis-server (with `--cluster`, a private 3-master cluster) is started on loopback. The
server's per-address rate limit is raised for the run: every page comes from 127.0.0.1 here.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import platform
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.redis_target import add_options, redis_target
from bench.service import Observer, Table, choose, open_table, refusal_reason
from bench.tally import Tally, emit
from bot.commands import parse_text
from bot.handlers import Handlers
from bot.model import UserRef
from bot.service import Service
from bot.settings import Settings
from bot.storage import RedisStore
from bot.weblinks import Claims, signer_for

SECRET = "bench-web-secret-0123456789"
TABLE = Table.make(0)
CHAT = TABLE.group
RATES = ("p50_ms", "p99_ms", "max_ms")


def settings_for(url: str, prefix: str, cluster: bool) -> Settings:
    return Settings(
        _env_file=None,
        redis_url=url,
        redis_cluster=cluster,
        redis_prefix=prefix,
        ai_workers=0,
        charts=False,
        turn_seconds=0,
        web_secret=SECRET,
        public_url="http://127.0.0.1",
    )


async def serve(url: str, prefix: str, port: int, cluster: bool) -> None:
    """The server child: the web table on 127.0.0.1:port until killed."""
    from aiohttp import web

    from adapters.web.app import WebOptions, WebTable, make_app
    from bot.presence import Presence

    settings = settings_for(url, prefix, cluster)
    store = RedisStore.from_url(url, prefix=prefix, cluster=cluster)
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


async def run(
    url: str, pages: int, moves: int, seed: int, cluster: bool = False
) -> tuple[dict[str, object], int]:
    prefix = f"benchweb{seed}-{random.randrange(1 << 30):x}"
    settings = settings_for(url, prefix, cluster)
    port = free_port()
    serve_args = ["--serve", "--port", str(port), "--redis-url", url, "--prefix", prefix]
    child = subprocess.Popen(
        [sys.executable, __file__, *serve_args, *(["--cluster"] if cluster else [])],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        line = await asyncio.to_thread(child.stdout.readline)
        if line.strip() != "ready":
            raise SystemExit("bench/web.py: the server did not start")
        return await _measure(url, prefix, settings, port, pages, moves, seed, cluster)
    finally:
        child.terminate()
        child.wait(10)


async def _measure(
    url: str, prefix: str, settings: Settings, port: int, pages: int, moves: int, seed: int, cluster: bool
) -> tuple[dict[str, object], int]:
    store = RedisStore.from_url(url, prefix=prefix, cluster=cluster)
    service = Service(store, settings, handlers=Handlers, rng=random.Random(seed))
    observer = Observer(store)
    rng = random.Random(seed)
    tally = Tally()
    await open_table(service, TABLE)
    signer = signer_for(settings)
    assert signer is not None
    base = f"http://127.0.0.1:{port}"
    users = [*TABLE.people, *(UserRef("b", f"watcher{i}", f"W{i}", "en") for i in range(max(0, pages - 3)))][
        :pages
    ]
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
            # The table as stored (the bench keeps no cards of its own), the move in its own chat.
            before, _, state = await observer.read(CHAT)
            if state is None or state.finished:
                break
            move = choose(TABLE, state, rng)
            command = parse_text(move.text, move.chat, move.person)
            assert command is not None
            out = await service.handle(command)
            stored_at = time.perf_counter()
            version, _, _ = await observer.read(CHAT)
            reason = refusal_reason(out)
            if reason is not None or version <= before:
                tally.refuse(f"{move.name}:{reason or 'silent'}")
                continue
            tally.accept("move")
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
    figures = {
        "redis": "cluster" if cluster else "single",
        "pages": pages,
        "moves": n // max(1, pages),
        "p50_ms": round(latencies[n // 2] * 1000, 2) if n else None,
        "p99_ms": round(latencies[min(n - 1, int(n * 0.99))] * 1000, 2) if n else None,
        "max_ms": round(latencies[-1] * 1000, 2) if n else None,
        "missed": missed,
        "samples": n,
        "python": platform.python_version(),
    }
    return tally.report(figures, RATES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=300, help="open event streams on the server")
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--seed", type=int, default=1)
    add_options(parser)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--prefix", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.redis_url, args.prefix, args.port, args.cluster))
        return 0
    with redis_target(args.redis_url, args.cluster) as (url, cluster):
        result, status = asyncio.run(run(url, args.pages, args.moves, args.seed, cluster))
    return emit(result, status)


if __name__ == "__main__":
    raise SystemExit(main())
