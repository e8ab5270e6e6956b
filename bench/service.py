"""Service throughput: accepted moves per second through `Service.handle`, one process.

Tables of three people (no computer players, so no thinking) play random legal moves, typed as people
type them (`bot.vocabulary.typed`), each from the chat it belongs to: a secret move (`give`, `discard`:
`bot.commands.SECRET_MOVES`) from the mover's private chat with the bot, everything else in the table's
group. Every table has its own client sending one command after the other, all tables at once; a
finished game opens again in its group (`/new`, `/join`, `/join`, `/start`: timed and counted as lobby
commands). Each command is the whole service path: load, check, apply, render the messages, compare-and-
set back; a private chat's command also finds the sender's table through the users' index.

The bench keeps no cards of its own: before every command it reads the table from the store (a second
store client, not counted) and plays from that state; after the command it reads it again and counts
the command as accepted only if the table's record grew by the move. A refusal is counted by the
reason the service gave (its error message, read back to `bot.render.ERRORS`' code; `silent`: no
answer and no change, as flood control leaves a repeated mistake). More than 1% of
refusals and the rates are withheld (`bench/tally.py`): null, with the reason, exit status 1.

    python bench/service.py [--tables 4] [--commands 4000] [--seed 1]
        [--store redis|memory] [--redis-url URL] [--cluster] [--secret-in-group]

Redis (bench/redis_target.py): `--redis-url` (or REDIS_URL) names the server, `--cluster` says it is a
Redis Cluster; without a URL a private redis-server (or, with `--cluster`, a private 3-master cluster)
is started on loopback. `--store memory`: the in-process store (no Redis; round trips 0).
`--secret-in-group`: type secret moves in the group, the mistake issue 26 found (every one is refused,
so the rates are withheld: a check of the check).

Prints one JSON object: `moves_per_s` (accepted moves), `commands_per_s` (every command timed),
`p50_ms` / `p99_ms` (per command), `redis_round_trips_per_command` and `_per_move` (every request the
service's store wrote, counted at the connection, over the timed commands / accepted moves; with
`--tables 1` also `redis_round_trips_per_move_by_chat`, each kind of move's own), `counted`
(accepted by kind, refused by reason), and the run's parameters.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.redis_target import add_options, redis_target  # noqa: E402
from bench.tally import Tally, emit, refusal_code  # noqa: E402
from bot import vocabulary  # noqa: E402
from bot.commands import SECRET_MOVES, parse_text  # noqa: E402
from bot.handlers import Handlers  # noqa: E402
from bot.model import ChatRef, Message, UserRef  # noqa: E402
from bot.service import Service  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.snapshot import GameCache  # noqa: E402
from bot.storage import MemoryStore, RedisStore, Store  # noqa: E402
from bot.table import TableDoc  # noqa: E402
from core.game import GameState  # noqa: E402

PRESETS = ("polish", "russian", "estonian")
RATES = ("moves_per_s", "commands_per_s", "p50_ms", "p99_ms")


def refusal_reason(messages: list[Message]) -> str | None:
    """The code of the service's refusal among `messages` (None: no error message). The bench's people
    read English: the code is the `ERRORS` entry whose English text the message holds."""
    errors = [m.text for m in messages if m.kind == "error"]
    return refusal_code("\n".join(errors)) if errors else None


@dataclass
class Table:
    """One table of the bench: its group, its three people and their private chats."""

    index: int
    preset: str
    group: ChatRef
    people: list[UserRef]
    privates: list[ChatRef] = field(default_factory=list)

    @classmethod
    def make(cls, i: int) -> Table:
        people = [UserRef("b", str(1000 + 3 * i + s), f"{name}{i}", "en") for s, name in enumerate("ABC")]
        privates = [ChatRef("b", p.user_id, "", private=True) for p in people]
        return cls(i, PRESETS[i % len(PRESETS)], ChatRef("b", f"-{i + 1}", f"bench {i}"), people, privates)


class Observer:
    """Reads the tables back from the store the way the service stores them (not timed, not counted)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.cache = GameCache()

    async def read(self, chat: ChatRef) -> tuple[int, TableDoc | None, GameState | None]:
        stored = await self.store.load(chat.key)
        if stored is None:
            return 0, None, None
        doc = TableDoc.model_validate_json(stored.document)
        if doc.game is None:
            return stored.version, doc, None
        return stored.version, doc, self.cache.state(doc.serial, doc.game.spec, doc.game.actions)


@dataclass(frozen=True)
class Typed:
    """A move as a person sends it: the text, the chat it belongs to, the sender, the command's name."""

    text: str
    chat: ChatRef
    person: UserRef
    name: str


def choose(table: Table, state: GameState, rng: random.Random, *, secret_in_group: bool = False) -> Typed:
    """A random legal move of the seat to act, typed (`bot.vocabulary.typed`) in the chat it belongs to:
    a secret move (`SECRET_MOVES`) in the mover's private chat, the rest in the group."""
    seat = state.to_act
    assert seat is not None, "a live game with nobody to act"
    legal = state.legal_actions(seat)
    action = legal[rng.randrange(len(legal))]
    text = vocabulary.typed(action, vocabulary.Mover.of_state(state, seat))
    name = text[1:].split(" ", 1)[0]
    secret = name in SECRET_MOVES and not secret_in_group
    return Typed(text, table.privates[seat] if secret else table.group, table.people[seat], name)


async def open_table(service: Service, table: Table) -> None:
    """`/new`, `/join`, `/join`, `/start` in the table's group; refused, the bench stops."""
    for seat, text in [(0, f"/new {table.preset}"), (1, "/join"), (2, "/join"), (0, "/start")]:
        command = parse_text(text, table.group, table.people[seat])
        assert command is not None
        reason = refusal_reason(await service.handle(command))
        if reason is not None:
            raise SystemExit(f"{text} refused: {reason}")


def moves_of(doc: TableDoc | None) -> tuple[str, int]:
    if doc is None or doc.game is None:
        return "", 0
    return doc.serial, len(doc.game.actions)


async def run(
    *,
    store: Store,
    observer_store: Store,
    tables: int = 4,
    commands: int = 4000,
    seed: int = 1,
    secret_in_group: bool = False,
) -> tuple[dict[str, Any], int]:
    settings = Settings(_env_file=None, ai_workers=0, charts=False)
    service = Service(store, settings, handlers=Handlers, rng=random.Random(seed))
    observer = Observer(observer_store)
    rng = random.Random(seed)
    tally = Tally()
    typed_in: Counter[str] = Counter()
    trips_in: Counter[str] = Counter()  # round trips of the accepted moves by kind (one table: exact)
    latencies: list[float] = []
    all_tables = [Table.make(i) for i in range(tables)]
    per_table = commands // tables

    async def send(table: Table, text: str, chat: ChatRef, person: UserRef) -> list[Message]:
        command = parse_text(text, chat, person)
        assert command is not None, text
        start = time.perf_counter()
        out = await service.handle(command)
        latencies.append(time.perf_counter() - start)
        return out

    async def lobby(table: Table) -> int:
        """Open the table again: four commands, each counted."""
        steps = [(0, f"/new {table.preset}"), (1, "/join"), (2, "/join"), (0, "/start")]
        for seat, text in steps:
            before = await observer.read(table.group)
            out = await send(table, text, table.group, table.people[seat])
            after = await observer.read(table.group)
            reason = refusal_reason(out)
            if reason is None and after[0] > before[0]:
                tally.accept("lobby")
            else:
                tally.refuse(f"lobby:{reason or 'silent'}")
        return len(steps)

    async def client(table: Table) -> None:
        sent = 0
        while sent < per_table:
            _, doc, state = await observer.read(table.group)
            if doc is None or state is None or state.finished or doc.status == "finished":
                sent += await lobby(table)
                continue
            move = choose(table, state, rng, secret_in_group=secret_in_group)
            name, chat = move.name, move.chat
            before = moves_of(doc)
            trips_at = store.round_trips
            out = await send(table, move.text, chat, move.person)
            trips = store.round_trips - trips_at
            sent += 1
            _, doc_after, _ = await observer.read(table.group)
            after = moves_of(doc_after)
            reason = refusal_reason(out)
            if reason is None and after[0] == before[0] and after[1] > before[1]:
                tally.accept("move")
                kind = f"{name} in {'private' if chat.private else 'group'}"
                typed_in[kind] += 1
                trips_in[kind] += trips
            else:
                tally.refuse(f"{name}:{reason or 'silent'}")

    for table in all_tables:
        await lobby(table)
    await asyncio.gather(*(store.ping() for _ in range(tables)))  # connections opened before timing
    lobby_counts = dict(tally.accepted)
    tally = Tally()
    latencies.clear()
    trips_before = store.round_trips
    wall = time.perf_counter()
    await asyncio.gather(*(client(t) for t in all_tables))
    elapsed = time.perf_counter() - wall
    trips = store.round_trips - trips_before
    await service.close()
    latencies.sort()
    n = len(latencies)
    moves = tally.accepted["move"]
    figures: dict[str, Any] = {
        "moves_per_s": round(moves / elapsed, 1),
        "commands_per_s": round(n / elapsed, 1),
        "p50_ms": round(latencies[n // 2] * 1000, 2) if n else None,
        "p99_ms": round(latencies[min(n - 1, int(n * 0.99))] * 1000, 2) if n else None,
        "redis_round_trips_per_command": round(trips / n, 3) if n else None,
        "redis_round_trips_per_move": round(trips / moves, 3) if moves else None,
        "moves": moves,
        "commands_timed": n,
        "tables": tables,
        "elapsed_s": round(elapsed, 2),
        "first_lobby_untimed": lobby_counts,
        "accepted_moves_by_chat": dict(sorted(typed_in.items())),
        # With one table no other command runs meanwhile, so each command's round trips are its own.
        "redis_round_trips_per_move_by_chat": (
            {kind: round(trips_in[kind] / n, 2) for kind, n in sorted(typed_in.items())}
            if tables == 1
            else None
        ),
        "seed": seed,
        "secret_in_group": secret_in_group,
        "python": platform.python_version(),
    }
    return tally.report(figures, RATES)


async def run_on(args: argparse.Namespace) -> tuple[dict[str, Any], int]:
    options = {"tables": args.tables, "commands": args.commands, "seed": args.seed}
    options["secret_in_group"] = args.secret_in_group
    if args.store == "memory":
        memory = MemoryStore()
        result, status = await run(store=memory, observer_store=memory, **options)
        result["store"] = "memory"
        result["redis_round_trips_per_command"] = result["redis_round_trips_per_move"] = None
        return result, status
    prefix = f"bench-svc-{random.randrange(1 << 30):x}"
    store = RedisStore.from_url(args.url, prefix=prefix, cluster=args.cluster_on)
    observer = RedisStore.from_url(args.url, prefix=prefix, cluster=args.cluster_on)
    try:
        result, status = await run(store=store, observer_store=observer, **options)
    finally:
        await store.close()
        await observer.close()
    result["store"] = "redis-cluster" if args.cluster_on else "redis"
    return result, status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=4, help="tables played at once (concurrency)")
    parser.add_argument("--commands", type=int, default=4000, help="commands timed, all tables together")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--store", choices=("redis", "memory"), default="redis")
    parser.add_argument(
        "--secret-in-group", action="store_true", help="type give/discard in the group (refused: a check)"
    )
    add_options(parser)
    args = parser.parse_args(argv)
    if args.store == "memory":
        result, status = asyncio.run(run_on(args))
    else:
        with redis_target(args.redis_url, args.cluster) as (url, cluster_on):
            args.url, args.cluster_on = url, cluster_on
            result, status = asyncio.run(run_on(args))
    return emit(result, status)


if __name__ == "__main__":
    raise SystemExit(main())
