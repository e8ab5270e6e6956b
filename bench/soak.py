"""Soak: many simultaneous tables played by simulated people through real bot processes, with faults.

What runs (all on 127.0.0.1): one redis-server (append-only file, fsync every second); the fake Bot API of
`fakes/telegram` over HTTP with Telegram's flood limits on; a round-robin load balancer; two
`thousand telegram` processes in webhook mode behind it, sharing the Redis; and, in this process, the people:
three per table, each in a group with the bot and in a private chat with it. A person waits for the hand
message that asks for their move, thinks one to four seconds (`--think`), and presses one of its buttons
(now and then they let the turn time run out instead, so that deadlines fire; when their hand does not
come they press the group's My hand button; when a computer took their seat they send /back).

Faults during the soak (bench/faults.py): a bot process killed with SIGKILL at random moments and started
again at once; Redis killed and started again from its append-only file; Redis stopped for 10 s; Telegram
answering 502/500, not answering, or answering 429 for bursts of calls.

Afterwards, from Redis and the fake: every press whose answer said it was done is in its table's record
(except, after the Redis crash, what was acknowledged in the last moment before it), no table is stuck,
every idle turn was played by its deadline, every table's version, stream and state agree, no group
message showed a private card, no log line holds the token, no 429 came from the flood limits, 429s
were obeyed, and no message appeared twice beyond what lost answers force.

    python bench/soak.py [--tables 100] [--minutes 5] [--kills 10] [--seed 1] [--workdir DIR]
        [--redis-url URL] [--cluster]

`--redis-url URL` plays on that Redis instead of starting one (`--cluster`: URL names a node of a Redis
Cluster; the bots get REDIS_CLUSTER=1 and this process's clients are cluster clients); `--cluster` alone
starts a private 3-master cluster on loopback. On a Redis it did not start itself as one server the soak
cannot crash or stop it: the Redis faults are off (`redis.faults` in the output says so), the keys get a
prefix of their own (`soak-<random>`) and are left in place.

Prints one JSON object (the figures of RELIABILITY.md); progress goes to stderr when it is a terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import json
import logging
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import redis.asyncio as aioredis  # noqa: E402
from redis.asyncio.cluster import RedisCluster  # noqa: E402
from redis.asyncio.retry import Retry  # noqa: E402
from redis.backoff import ExponentialBackoff  # noqa: E402
from redis.exceptions import ConnectionError as RedisConnectionError  # noqa: E402
from redis.exceptions import RedisError  # noqa: E402
from redis.exceptions import TimeoutError as RedisTimeoutError  # noqa: E402

from adapters.telegram.limits import BUDGETED_METHODS  # noqa: E402
from bench.faults import Balancer, BotProcess, FaultEvent, FaultPlan, environment, free_port  # noqa: E402
from bench.redis_nodes import LocalRedisCluster, RedisServer  # noqa: E402
from bench.redis_target import add_options  # noqa: E402
from bench.tally import Tally, emit, refusal_code  # noqa: E402
from bot.commands import MOVE_COMMANDS, from_payload  # noqa: E402
from bot.model import ChatRef, Command, UserRef  # noqa: E402
from bot.snapshot import GameCache  # noqa: E402
from bot.storage import RedisStore, StorageError  # noqa: E402
from bot.table import TableDoc  # noqa: E402
from fakes.cardspy import Part, leaks, secret_cards, telegram_parts  # noqa: E402
from fakes.telegram import FakeChat, FakeMessage, FakeTelegram, FakeTelegramServer, FakeUser  # noqa: E402
from fakes.telegram.calls import COUNTED_METHODS, SEND_METHODS  # noqa: E402
from fakes.telegram.fake import ApiResponse  # noqa: E402
from fakes.telegram.faults import Fault, FaultKind  # noqa: E402

UNAVAILABLE = "temporarily unavailable"
PRESS_RACES = frozenset({"stale_button", "unavailable", "unanswered"})
"""Refusals the soak provokes: a button pressed after a timer or another process moved the table on, an
answer during the Redis outage, a press whose process was killed before it answered."""
PREFIX = "soak"
SECRET = "s0ak-webhook-secret"
DEAL_RE = re.compile(r"\bDeal (\d+)\b")
HAND_DEAL_RE = re.compile(r"\bdeal (\d+)\b")

log = logging.getLogger("soak")

_INJECTED: contextvars.ContextVar[bool] = contextvars.ContextVar("injected", default=False)
"""Whether the fake's answer to the call in progress was an injected fault (not its own limits)."""


# --------------------------------------------------------------------------- records


@dataclass
class Press:
    qid: str
    at: float
    table: str
    user: str
    name: str
    args: tuple[str, ...]
    version: int
    final: bool
    answered_at: float | None = None
    text: str | None = None
    answered: bool = False

    @property
    def acknowledged(self) -> bool:
        """Answered without an alert: the bot said it was done."""
        return self.answered and self.text is None


@dataclass
class IdleTurn:
    table: str
    version: int
    at: float
    user: str = ""


@dataclass
class TableRun:
    index: int
    chat: FakeChat
    people: list[FakeUser]

    @property
    def table_id(self) -> str:
        return f"tg:{self.chat.id}"


@dataclass
class Human:
    user: FakeUser
    table: TableRun
    rng: random.Random
    last_key: tuple[int, frozenset[str]] = (0, frozenset())
    """The message and buttons last pressed: pressed and answered, they are not pressed again; the same
    buttons on a newer message (the turn's warning, My hand) are a new hand in front of the person."""
    seen_key: tuple[int, frozenset[str]] = (0, frozenset())
    seen_at: float = 0.0
    idle_shape: frozenset[tuple[str, tuple[str, ...]]] = frozenset()
    idle_version: int = -1
    """The turn the person lets run out: its choices, and its table version (the turn's warning brings
    the hand again without a card picked half-way through a give: other choices, the same turn)."""
    retry_at: float = 0.0
    changed_at: float = 0.0
    last_message: tuple[int, str] = (0, "")
    asked_hand_at: float = 0.0
    back_sent_for: int = 0
    stale: set[tuple[int, tuple[str, ...]]] = field(default_factory=set)
    """Hand messages whose buttons were answered "out of date" (one left behind, not the current one)."""
    done_version: int = -1
    done_at: float = 0.0
    """The table version of the person's last move that was answered as done, and when."""

    @property
    def key(self) -> str:
        return f"tg:{self.user.id}"


@dataclass
class Call:
    at: float
    method: str
    chat_id: int
    status: int | None = None


@dataclass
class Figures:
    """Everything counted during the run."""

    presses: list[Press] = field(default_factory=list)
    idle: list[IdleTurn] = field(default_factory=list)
    version_calls: dict[tuple[str, int], list[float]] = field(default_factory=lambda: defaultdict(list))
    turn_hands: dict[tuple[str, int], list[float]] = field(default_factory=lambda: defaultdict(list))
    """Private sends and edits showing move buttons of (table, version): the acting player's hand."""
    answers: dict[str, float] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    floods: list[tuple[float, int, float]] = field(default_factory=list)
    """(time, chat id, retry_after) of every 429 answered to a send."""
    limit_floods: list[tuple[float, str, int, list[str]]] = field(default_factory=list)
    """(time, method, chat id) of every 429 from the fake's flood limits (not an injected one)."""
    group_per_deal: Counter[tuple[str, int]] = field(default_factory=Counter)
    private_per_deal: Counter[tuple[str, int]] = field(default_factory=Counter)
    leaks: list[str] = field(default_factory=list)
    privacy_checked: int = 0
    privacy_skipped: int = 0
    injected: Counter[str] = field(default_factory=Counter)
    forced_duplicates: int = 0
    hand_requests: int = 0
    backs: int = 0
    recoveries: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    private_kinds: Counter[str] = field(default_factory=Counter)
    """Private sends and edits by method, whether they carry move buttons, and their first line."""
    tally: Tally = field(default_factory=lambda: Tally(intended=PRESS_RACES))
    """Every press by its answer (bench/tally.py): a move, a pick or page, or the refusal's reason."""


# --------------------------------------------------------------------------- the soak


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.prefix = PREFIX
        self.redis_target = ""
        self.workdir = Path(args.workdir or tempfile.mkdtemp(prefix="thousand-soak-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.f = Figures()
        self.tables: list[TableRun] = []
        self.humans: list[Human] = []
        self.table_of_chat: dict[int, TableRun] = {}
        self.stopping = False
        self.faults_over = False
        self.grace = 0.0
        self.processes: list[BotProcess] = []
        self.soak_started = 0.0
        self.soak_ended = 0.0
        self.cache = GameCache(512)
        self.last_deal: dict[int, int] = {}
        self.fault_times: dict[str, list[float]] = defaultdict(list)
        self.fault_windows: list[tuple[float, float]] = []
        self.aof_sizes: list[tuple[float, int]] = []
        self.outage: tuple[float, float] | None = None
        self.crash_at: float | None = None
        self.aof_cut_at = 0.0
        self.before_crash: dict[str, int] = {}
        self.after_crash: dict[str, int] = {}
        """Table versions just before the Redis crash and just after its restart: the saves in between
        were stored, acknowledged, and lost with the append-only file's unsynced end."""
        self.versions_after_faults: dict[str, int] = {}
        self.last_call_at = 0.0

    # --- wiring --------------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        try:
            return await self._run()
        finally:
            await self._cleanup()

    async def _cleanup(self) -> None:
        """Whatever happened: no process, server or Redis left behind."""
        for process in getattr(self, "processes", []):
            await process.kill()
        for closer in ("balancer", "server"):
            part = getattr(self, closer, None)
            if part is not None:
                with contextlib.suppress(Exception):
                    await part.stop()
        if hasattr(self, "fake"):
            await self.fake.close()
        for client in ("store", "raw"):
            part = getattr(self, client, None)
            if part is not None:
                with contextlib.suppress(Exception):
                    await (part.close() if client == "store" else part.aclose())
        if hasattr(self, "redis"):
            self.redis.close()
        if hasattr(self, "cluster"):
            self.cluster.close()

    def _start_redis(self) -> str:
        """The Redis URL to play on: the one given, a private cluster, or (the default) a private server
        this soak may crash and stop. Anything but the last turns the Redis faults off."""
        args = self.args
        if args.redis_url or args.cluster:
            args.no_redis_faults = True
            if not args.redis_url:
                self.cluster = LocalRedisCluster(self.workdir / "redis-cluster", size=3)
                self.cluster.start()
                self.redis_target = "private 3-master cluster"
                return str(self.cluster.url)
            self.prefix = f"{PREFIX}-{random.randrange(1 << 30):x}"
            self.redis_target = "given cluster" if args.cluster else "given server"
            return str(args.redis_url)
        self.redis = RedisServer(
            data_dir=self.workdir / "redis",
            appendonly=True,
            extra_args=("--appendfsync", "everysec"),
        )
        self.redis.start()
        self.redis_target = "private server"
        return str(self.redis.url)

    async def _used_memory(self) -> int:
        """Bytes Redis uses (every master's together in a cluster)."""
        if not self.args.cluster:
            return int((await self.raw.info("memory"))["used_memory"])
        infos = await self.raw.info("memory", target_nodes=RedisCluster.PRIMARIES)
        return sum(int(info["used_memory"]) for info in infos.values())

    async def _run(self) -> dict[str, Any]:
        args = self.args
        redis_url = self._start_redis()
        common: dict[str, Any] = {"decode_responses": True, "socket_timeout": 2}
        raw: Any  # one server's client or a cluster's: the same commands here
        if args.cluster:
            raw = RedisCluster.from_url(redis_url, **common)
        else:
            raw = aioredis.Redis.from_url(
                redis_url,
                retry=Retry(ExponentialBackoff(cap=1.0), 5),
                retry_on_error=[RedisConnectionError, RedisTimeoutError],
                **common,
            )
        self.raw = raw
        baseline = await self._used_memory()
        self.store = RedisStore.from_url(
            redis_url, prefix=self.prefix, cluster=args.cluster, retries=2, socket_timeout=1.0
        )
        self.fake = FakeTelegram()
        self._observe()
        self.server = FakeTelegramServer(self.fake)
        await self.server.start()
        self.processes = []
        ports = [(free_port(), free_port()) for _ in range(args.processes)]
        self.balancer = Balancer([f"http://127.0.0.1:{p}/telegram" for p, _ in ports])
        url = await self.balancer.start()
        env = environment()
        env.update(
            {
                "TELEGRAM_TOKEN": self.fake.token,
                "TELEGRAM_API_URL": self.server.root_url,
                "REDIS_URL": redis_url,
                "REDIS_CLUSTER": "1" if args.cluster else "0",
                "REDIS_PREFIX": self.prefix,
                "AI_WORKERS": "0",
                "DEFAULT_AI_LEVEL": "easy",
                "TURN_SECONDS": str(args.turn_seconds),
                # The default warning (30 s) only fits turns longer than that (check-config refuses it).
                "WARN_SECONDS": "30" if args.turn_seconds > 30 else "0",
                "METRICS_HOST": "127.0.0.1",
                "LOG_FORMAT": "json",
                "LOG_LEVEL": "INFO",
                "DRAIN_SECONDS": "10",
                "PYTHONPATH": str(ROOT),
            }
        )
        for i, (listen, metrics) in enumerate(ports):
            process = BotProcess(f"bot{i}", env, url, listen, metrics, SECRET, self.workdir / f"bot{i}.log")
            await process.start()
            self.processes.append(process)
        for process in self.processes:
            await process.ready()
        began = time.time()
        await self.setup()
        setup_seconds = time.time() - began
        self.progress(f"{len(self.tables)} tables playing; soak for {args.minutes} min")
        plan = FaultPlan.build(
            args.minutes * 60,
            kills=args.kills,
            processes=args.processes,
            redis_crash=not args.no_redis_faults,
            outage_seconds=0 if args.no_redis_faults else args.outage,
            telegram_bursts=args.telegram_bursts,
            rng=self.rng,
        )
        self.soak_started = time.time()
        before = await self.snapshot_tables()
        workers = [asyncio.create_task(self.human(h)) for h in self.humans]
        faults = asyncio.create_task(self.faults(plan))
        aof = asyncio.create_task(self.watch_aof())
        reporter = asyncio.create_task(self.reporter())
        await asyncio.sleep(args.minutes * 60)
        self.faults_over = True
        await faults
        self.grace = await self.until_every_table_moved(limit=args.turn_seconds + 30)
        self.stopping = True
        self.soak_ended = time.time()
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        reporter.cancel()
        aof.cancel()
        await self.settle()
        after = await self.snapshot_tables()
        memory = await self.memory(baseline)
        verdict = await self.verify(before, after)
        verdict["clean_exits"] = [await p.stop() for p in self.processes]
        verdict["token_in_logs"] = self.tokens_in_logs()
        verdict["errors_logged"] = self.errors_in_logs()
        return self.report(setup_seconds, memory, verdict, plan, before, after)

    async def until_every_table_moved(self, limit: float) -> float:
        """After the soak's time, the people play on (no more faults) until every table moved on since the
        last fault, for at most `limit` seconds (an idle turn takes --turn-seconds): the seconds it took."""
        began = time.time()
        while time.time() - began < limit:
            current = await self.versions()
            if all(current.get(t, 0) > v for t, v in self.versions_after_faults.items()):
                break
            await asyncio.sleep(1.0)
        return round(time.time() - began, 1)

    def progress(self, text: str) -> None:
        if sys.stderr.isatty() or self.args.verbose:
            print(f"[soak {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)

    async def reporter(self) -> None:
        while True:
            await asyncio.sleep(15)
            acked = sum(1 for p in self.f.presses if p.acknowledged and p.final)
            self.progress(
                f"{time.time() - self.soak_started:.0f}s: {len(self.f.presses)} presses, {acked} moves done, "
                f"429 from limits {self.fake.stats.flood_rejections}, faults {dict(self.f.injected)}"
            )

    # --- what the fake sees ----------------------------------------------------------------------------

    def _observe(self) -> None:
        fake = self.fake
        original = fake.handle
        take = fake.faults.take

        def taking(method: str) -> Fault | None:
            fault = take(method)
            if fault is not None:
                _INJECTED.set(True)
                self.f.injected[f"{fault.kind.value}:{method}"] += 1
                if fault.kind is FaultKind.HANG and fault.apply and method in SEND_METHODS:
                    self.f.forced_duplicates += 1
            return fault

        fake.faults.take = taking  # type: ignore[method-assign,unused-ignore]

        async def handle(token: str, method: str, params: Any, files: Any = None) -> ApiResponse:
            at = time.time()
            self.last_call_at = at
            m = method.lower()
            chat_id = _int(params.get("chat_id"))
            call = Call(at, m, chat_id)
            if self.soak_started and not self.soak_ended:
                self.f.calls.append(call)
            injected = _INJECTED.set(False)
            response = await original(token, method, params, files)
            call.status = response.status
            if response.status == 429 and not _INJECTED.get():
                self.f.limit_floods.append((at, m, chat_id, self._short_buckets(chat_id)))
            _INJECTED.reset(injected)
            if m == "answercallbackquery" and response.status == 200:
                self.f.answers[str(params.get("callback_query_id"))] = time.time()
            if response.status == 429 and m in BUDGETED_METHODS:
                retry = float(response.json().get("parameters", {}).get("retry_after", 0))
                self.f.floods.append((at, chat_id, retry))
            if response.status == 200 and m in BUDGETED_METHODS:
                self._sent(m, chat_id, params, response, time.time())
                if chat_id > 0 and self.soak_started and not self.soak_ended:
                    moves = bool(_payload_versions(params.get("reply_markup"), moves_only=True))
                    lines = str(params.get("text") or "").split("\n")
                    first = re.sub(r"\d+", "#", lines[1] if len(lines) > 1 else lines[0])[:60]
                    self.f.private_kinds[f"{m}:{'moves' if moves else 'no moves'}:{first}"] += 1
            return response

        fake.handle = handle  # type: ignore[method-assign,unused-ignore]

    def _sent(self, method: str, chat_id: int, params: Any, response: ApiResponse, at: float) -> None:
        for table, version in _payload_versions(params.get("reply_markup")):
            self.f.version_calls[(table, version)].append(at)
        if chat_id > 0:
            for table, version in _payload_versions(params.get("reply_markup"), moves_only=True):
                self.f.turn_hands[(table, version)].append(at)
        result = response.json().get("result")
        text = ""
        if isinstance(result, dict):
            text = result.get("text") or result.get("caption") or ""
        run = self.table_of_chat.get(chat_id)
        if run is None:
            return
        if chat_id < 0:
            found = DEAL_RE.search(text)
            if found:
                self.last_deal[chat_id] = int(found.group(1))
            self.f.group_per_deal[(run.table_id, self.last_deal.get(chat_id, 0))] += 1
            parts = telegram_parts(result if isinstance(result, dict) else None)
            parts += telegram_parts(params if isinstance(params, dict) else None)
            asyncio.get_running_loop().create_task(self._privacy(run, text, parts, found))
        else:
            found = HAND_DEAL_RE.search(text)
            deal = int(found.group(1)) if found else self.last_deal.get(run.chat.id, 0)
            self.f.private_per_deal[(run.table_id, deal)] += 1

    async def _privacy(
        self, run: TableRun, text: str, parts: list[Part], header: re.Match[str] | None
    ) -> None:
        """At every group send and edit: no card that is private now (in a hand, face down) in the text,
        caption, button labels or callback data (the tests' one detector, `tests/cardspy.py`)."""
        try:
            stored = await self.store.load(run.table_id)
        except StorageError:
            self.f.privacy_skipped += 1
            return
        if stored is None:
            return
        doc = TableDoc.model_validate_json(stored.document)
        if doc.game is None or doc.status != "game":
            return
        state = self.cache.state(doc.serial, doc.game.spec, doc.game.actions)
        if state.finished or (header is not None and int(header.group(1)) != state.deal.number + 1):
            self.f.privacy_skipped += 1  # a message about another deal than the one being played
            return
        self.f.privacy_checked += 1
        leaked = leaks(parts, secret_cards(state), [doc.settings.language])
        if leaked:
            self.f.leaks.append(f"{run.table_id}: {'; '.join(leaked)}")

    # --- setting up ------------------------------------------------------------------------------------

    async def setup(self) -> None:
        fake = self.fake
        n = self.args.tables
        names = ("Ala", "Bartek", "Celina", "Dorota", "Emil", "Fiona", "Gosia", "Hubert", "Iga")
        for i in range(n):
            people = [
                fake.add_user(f"{names[(3 * i + k) % len(names)]}{i}", language_code="en") for k in range(3)
            ]
            chat = fake.add_group(f"Table {i}", members=people[1:], admins=people[:1])
            run = TableRun(i, chat, people)
            self.tables.append(run)
            self.table_of_chat[chat.id] = run
            for person in people:
                self.table_of_chat[person.id] = run
                self.humans.append(Human(person, run, random.Random(self.rng.getrandbits(32))))
        for run in self.tables:
            for person in run.people:
                fake.user_starts_bot(person)
        await self.wait(lambda: all(fake.bot_messages(h.user) for h in self.humans), 300, "help messages")
        await asyncio.gather(*(self.open_table(run) for run in self.tables))

    async def wait(self, condition: Any, timeout: float, what: str) -> None:
        began = time.time()
        while not condition():
            if time.time() - began > timeout:
                raise TimeoutError(f"soak setup: no {what} after {timeout} s")
            await asyncio.sleep(0.2)

    async def open_table(self, run: TableRun) -> None:
        fake = self.fake
        await asyncio.sleep(self.rng.uniform(0, 5))
        first = run.people[0]
        fake.user_sends(run.chat, first, "/new polish")

        def lobby() -> FakeMessage | None:
            for m in reversed(fake.bot_messages(run.chat)):
                for data in m.callback_data:
                    if _command(data).name == "join":
                        return m
            return None

        await self.wait(lobby, 300, "lobby")
        for person in run.people[1:]:
            message = lobby()
            assert message is not None
            join = next(d for d in message.callback_data if _command(d).name == "join")
            fake.user_presses(run.chat, person, message.message_id, join)
            await asyncio.sleep(0.5)

        def seated() -> bool:
            message = lobby()
            return message is not None and "3." in message.content

        await self.wait(seated, 300, "seats")
        message = lobby()
        assert message is not None
        start = next(d for d in message.callback_data if _command(d).name == "start")
        fake.user_presses(run.chat, first, message.message_id, start)
        await self.wait(lambda: any(self.hand(h) for h in self.humans if h.table is run), 300, "hands")

    # --- the people -----------------------------------------------------------------------------------

    def hand(self, h: Human) -> tuple[FakeMessage, list[tuple[str, Command]]] | None:
        """The person's newest hand message of their table, with its buttons read as commands; None while
        that one is spent (its move made, the next hand not come yet) or answered "out of date".

        Only the newest: the hands a deal replaced stay on screen until the next deal's first hand, and
        the mover's hand is not redrawn after their move, so older messages with buttons are left behind
        and a person reads the last one (pressing those, one after another, is not playing)."""
        chat = self.fake.private_chat(h.user)
        for m in reversed(chat.messages):
            if m.deleted or not m.from_bot or not m.callback_data:
                continue
            commands = [(d, _command(d)) for d in m.callback_data]
            if not any(c.table_id == h.table.table_id for _, c in commands):
                continue
            if (m.message_id, tuple(m.callback_data)) in h.stale:
                return None  # answered "out of date": the current hand comes with the answer
            if any(c.name in MOVE_COMMANDS and (c.version or 0) <= h.done_version for _, c in commands):
                return None  # the move of this version is made: not redrawn, or not yet
            return m, commands
        return None

    async def human(self, h: Human) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while not self.stopping:
                await asyncio.sleep(h.rng.uniform(0.3, 0.6))
                try:
                    await self.step(h)
                except Exception as exc:  # the fake refuses a press on a message just deleted: look again
                    if type(exc).__name__ != "FakeUsageError":
                        log.exception("person %s", h.key)

    async def step(self, h: Human) -> None:
        now = time.time()
        self.maybe_back(h)
        found = self.hand(h)
        if found is None:
            return
        message, commands = found
        stamp = (message.message_id, message.content + "|".join(message.callback_data))
        if stamp != h.last_message:
            h.last_message, h.changed_at = stamp, now
        moves = [(d, c) for d, c in commands if c.name in MOVE_COMMANDS]
        if not moves:
            if now - h.changed_at > 45 and now - h.asked_hand_at > 45:
                self.ask_hand(h)
            return
        key = (message.message_id, frozenset(d for d, _ in moves))
        if key == h.last_key and now < h.retry_at:
            return
        if key == h.last_key and h.retry_at == 0.0:
            if now - h.changed_at > 45 and now - h.asked_hand_at > 45:
                self.ask_hand(h)  # pressed, answered, and still the same buttons: the hand did not come
            return
        # The same choices under a newer version (the hand redrawn after someone's /back) are the same turn.
        shape = frozenset((c.name, c.args) for _, c in moves)
        version = moves[0][1].version or 0
        idle = shape == h.idle_shape or version == h.idle_version
        if key != h.seen_key:
            h.seen_key, h.seen_at = key, now
            if not idle and h.rng.random() < self.args.idle:
                h.idle_shape, h.idle_version, idle = shape, version, True
                self.f.idle.append(IdleTurn(h.table.table_id, version, now, h.key))
        if idle:
            return  # letting the turn's time run out
        if now < h.seen_at + h.rng.uniform(*self.args.think):
            return
        data, command = self.choose(h, moves)
        await self.press(h, message, data, command, key)

    def choose(self, h: Human, moves: list[tuple[str, Command]]) -> tuple[str, Command]:
        by_name: dict[str, list[tuple[str, Command]]] = defaultdict(list)
        for pair in moves:
            by_name[pair[1].name].append(pair)
        rng = h.rng
        if "pass" in by_name and (rng.random() < 0.7 or len(by_name) == 1):
            return by_name["pass"][0]
        for name in ("bid", "contract"):
            # The lowest value shown; a page button ("bid p180": more values) only when no value is.
            values = [p for p in by_name.get(name, []) if not p[1].args or p[1].args[0].isdigit()]
            if values:
                return min(values, key=lambda p: int(p[1].args[0]) if p[1].args else 0)
            if name in by_name:
                return by_name[name][0]
        for name in ("blind", "take", "play", "give", "discard"):
            if name in by_name:
                options = by_name[name]
                if name == "blind":
                    options = [p for p in options if p[1].args == ("no",)] or options
                return rng.choice(options)
        return rng.choice(moves)

    async def press(
        self, h: Human, message: FakeMessage, data: str, command: Command, key: tuple[int, frozenset[str]]
    ) -> None:
        fake = self.fake
        final = command.name not in ("give", "discard") or _selection_complete(command)
        page = bool(command.args[:1]) and command.args[0].startswith("p")  # bid p180: more values
        pressed = (message.message_id, tuple(message.callback_data))
        qid = fake.user_presses(h.user, h.user, message.message_id, data)
        press = Press(
            qid, time.time(), h.table.table_id, h.key, command.name, command.args, command.version or 0, final
        )
        self.f.presses.append(press)
        query = fake.callback_query(qid)
        began = time.time()
        while not query.answered and time.time() - began < 12:
            await asyncio.sleep(0.1)
        h.last_key = key
        tally = self.f.tally
        if query.answered:
            press.answered, press.answered_at, press.text = True, time.time(), query.text
            if query.text is None:
                tally.accept("page" if page else "move" if final else "pick")
            elif "out of date" in query.text:
                tally.refuse("stale_button")
            elif UNAVAILABLE in query.text:
                tally.refuse("unavailable")
            else:
                tally.refuse(refusal_code(query.text))
        else:
            tally.refuse("unanswered")
        if query.answered:
            if query.text is not None and "out of date" in query.text:
                h.stale.add(pressed)
            if query.text is None and final and not page:
                h.done_version, h.done_at = max(h.done_version, press.version), time.time()
            if query.text is None or "out of date" in query.text:
                h.retry_at = 0.0
                return
        # Not answered (the process that took it died) or refused for now (storage): try again shortly.
        self.f.recoveries += 1
        h.retry_at = time.time() + h.rng.uniform(2.0, 4.0)

    def ask_hand(self, h: Human) -> None:
        """The hand did not come: press My hand on the group's newest table message."""
        h.asked_hand_at = time.time()
        for m in reversed(self.fake.bot_messages(h.table.chat)):
            for data in m.callback_data:
                if _command(data).name == "hand":
                    self.fake.user_presses(h.table.chat, h.user, m.message_id, data)
                    self.f.hand_requests += 1
                    return

    def maybe_back(self, h: Human) -> None:
        """A computer took the seat after missed turns: the person sends /back."""
        chat = self.fake.private_chat(h.user)
        for m in reversed(chat.messages[-6:]):
            if m.from_bot and "Send /back" in m.content and m.message_id > h.back_sent_for:
                h.back_sent_for = m.message_id
                self.fake.user_sends(h.user, h.user, "/back")
                self.f.backs += 1
                return

    # --- faults ---------------------------------------------------------------------------------------

    async def faults(self, plan: FaultPlan) -> None:
        for event in plan.events:
            delay = self.soak_started + event.at - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            if self.faults_over:
                break
            await self.fault(event)
        self.last_fault_end = time.time()
        self.versions_after_faults = await self.versions()

    async def fault(self, event: FaultEvent) -> None:
        at = time.time()
        record: dict[str, Any] = {"at": round(at - self.soak_started, 1), "kind": event.kind}
        if event.kind == "kill":
            process = self.processes[event.target]
            await process.kill()
            await process.start()
            record["process"] = process.name
            record["ready_after_s"] = round(await process.ready(), 2)
        elif event.kind == "redis_crash":
            # SIGKILL loses nothing Redis wrote to the kernel; the machine dying loses what was not yet
            # fsynced. With fsync every second that is at most the last second: cut the append-only file
            # back to its size of one second before (unless --redis-crash kill).
            self.before_crash = await self.versions()
            self.crash_at = time.time()
            await asyncio.to_thread(self.redis.kill)
            if self.args.redis_crash == "power-loss":
                record["aof_bytes_cut"] = self.cut_aof(self.crash_at - 1.0)
                # The size sampler runs in this busy loop: the sample used may be older than 1 s.
                if self.aof_cut_at:
                    record["aof_cut_back_s"] = round(self.crash_at - self.aof_cut_at, 2)
            await asyncio.to_thread(self.redis.start, 60)
            record["down_s"] = round(time.time() - at, 2)
            self.after_crash = await self.versions()
            for h in self.humans:
                # The record is a prefix of what it was: the versions from the one it went back to come
                # again, so a move of those versions is no longer made (a hand drawn at the version the
                # table is at now is valid again, the same state).
                h.done_version = min(h.done_version, self.after_crash.get(h.table.table_id, 0) - 1)
                if h.idle_version > self.after_crash.get(h.table.table_id, 0):
                    h.idle_version = -1  # the turn let run out was taken back: its version is a new turn
            record["saves_lost"] = sum(
                max(0, v - self.after_crash.get(t, 0)) for t, v in self.before_crash.items()
            )
            record["inconsistent_after_restart"] = await self.consistency()
        elif event.kind == "redis_outage":
            await asyncio.to_thread(self.redis.stop)
            await asyncio.sleep(event.seconds)
            await asyncio.to_thread(self.redis.start, 60)
            self.outage = (at, time.time())
            record["down_s"] = round(time.time() - at, 2)
        elif event.kind == "tg_5xx":
            self.fake.faults.fail_next(event.count, status=self.rng.choice([500, 502, 503]))
        elif event.kind == "tg_timeout":
            half = max(1, event.count // 2)
            self.fake.faults.hang_next(half, seconds=None)
            self.fake.faults.hang_next(event.count - half, seconds=7.0, apply=True)
        elif event.kind == "tg_flood":
            # Sends and edits: the calls whose 429 holds a chat's budget (the rest are retried in place).
            methods = ["sendMessage", "editMessageText", "sendPhoto"]
            self.fake.faults.flood_next(event.count, retry_after=self.rng.randint(2, 6), methods=methods)
        record["count"] = event.count or None
        self.fault_times[event.kind].append(at)
        self.fault_windows.append((at, time.time() + (10.0 if event.kind.startswith("tg_") else 0.0)))
        self.f.events.append(record)
        self.progress(f"fault {record}")

    async def watch_aof(self) -> None:
        """The append-only file's size every 0.1 s (to cut it back to an earlier moment)."""
        path = self.workdir / "redis" / "appendonly.aof"
        while True:
            with contextlib.suppress(OSError):
                self.aof_sizes.append((time.time(), path.stat().st_size))
                del self.aof_sizes[:-200]
            await asyncio.sleep(0.1)

    def cut_aof(self, moment: float) -> int:
        path = self.workdir / "redis" / "appendonly.aof"
        earlier = [(at, size) for at, size in self.aof_sizes if at <= moment]
        if not earlier:
            return 0
        size = path.stat().st_size
        self.aof_cut_at, kept = earlier[-1]
        os.truncate(path, kept)
        return size - kept

    # --- the end --------------------------------------------------------------------------------------

    async def settle(self, quiet: float = 5.0, limit: float = 90.0) -> None:
        """Wait until every update was delivered and no call came for `quiet` seconds."""
        began = time.time()
        while time.time() - began < limit:
            if not self.fake.pending_updates and time.time() - self.last_call_at > quiet:
                return
            await asyncio.sleep(0.5)

    async def versions(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for run in self.tables:
            with contextlib.suppress(StorageError, RedisError):
                stored = await self.store.load(run.table_id)
                if stored is not None:
                    out[run.table_id] = stored.version
        return out

    async def snapshot_tables(self) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for run in self.tables:
            stored = await self.store.load(run.table_id)
            if stored is None:
                continue
            doc = TableDoc.model_validate_json(stored.document)
            state = (
                None if doc.game is None else self.cache.state(doc.serial, doc.game.spec, doc.game.actions)
            )
            out[run.table_id] = {
                "version": stored.version,
                "actions": 0 if doc.game is None else len(doc.game.actions),
                "deals": 0 if state is None else len(state.results),
                "status": doc.status,
                "deal": None if state is None else state.deal.number,
            }
        return out

    async def memory(self, baseline: int) -> dict[str, Any]:
        used = await self._used_memory()
        keys = await self.raw.dbsize()
        sample: list[int] = []
        for run in self.tables[:20]:
            for kind in ("table", "stream", "refs"):
                size = await self.raw.memory_usage(f"{self.prefix}:{{{run.table_id}}}:{kind}")
                sample.append(int(size or 0))
        by_kind: Counter[str] = Counter()
        async for key in self.raw.scan_iter(match=f"{self.prefix}:*", count=1000):
            kind = key.split("}:", 1)[-1].split(":", 1)[0]
            by_kind[kind] += int(await self.raw.memory_usage(key) or 0)
        n = max(1, len(self.tables))
        return {
            "bytes_per_table_by_kind": {k: round(v / n) for k, v in by_kind.most_common()},
            "used_memory_bytes": used,
            "baseline_bytes": baseline,
            "per_table_bytes": round((used - baseline) / n),
            "keys": keys,
            "table_doc_stream_refs_bytes": round(sum(sample) / max(1, min(20, len(self.tables)))),
        }

    async def consistency(self) -> list[str]:
        problems: list[str] = []
        for run in self.tables:
            try:
                problems += await self.consistent(run.table_id)
            except (StorageError, RedisError) as exc:
                problems.append(f"{run.table_id}: unreadable: {exc}")
        return problems

    async def consistent(self, table_id: str) -> list[str]:
        """Table, stream and deadline read in one MULTI/EXEC: the bots keep saving meanwhile, and reads
        spread over several round trips could straddle a save and see a disagreement that is not there.
        The deadline's token lives in the table's hash (`dt`, issue 26), so one slot on a cluster too."""
        keys = self.store.keys
        async with self.raw.pipeline(transaction=True) as pipe:
            pipe.hmget(keys.table(table_id), "v", "d", "dt")
            pipe.xrange(keys.stream(table_id))
            read = await pipe.execute()
        (raw_version, document, token), entries = read[0], read[1]
        if raw_version is None or document is None:
            return []
        version = int(raw_version)
        doc = TableDoc.model_validate_json(document)
        events = [json.loads(fields["e"]) for _, fields in entries]
        out: list[str] = []
        if not events or events[-1].get("v") != version:
            out.append(f"{table_id}: version {version}, stream ends at {events[-1:]}")
        versions = [int(e.get("v", -1)) for e in events]
        if versions and versions != list(range(versions[0], versions[0] + len(versions))):
            out.append(f"{table_id}: stream versions do not rise by one")
        if doc.game is not None:
            if events and events[-1].get("n") != len(doc.game.actions):
                out.append(f"{table_id}: {len(doc.game.actions)} actions, stream says {events[-1].get('n')}")
            try:
                self.cache.state(doc.serial, doc.game.spec, doc.game.actions)
            except Exception as exc:
                out.append(f"{table_id}: actions do not replay: {exc!r}")
        if doc.turn is None and token is not None:
            out.append(f"{table_id}: a deadline {token} for a table without a turn")
        if doc.turn is not None and (token is None or not token.startswith(doc.turn.token)):
            out.append(f"{table_id}: turn {doc.turn.token} but deadline {token}")
        return out

    async def stream(self, table_id: str) -> list[tuple[float, dict[str, Any]]]:
        """The table's stream entries with the time Redis wrote each (the entry id's milliseconds)."""
        entries = cast(
            list[tuple[str, dict[str, str]]], await self.raw.xrange(f"{self.prefix}:{{{table_id}}}:stream")
        )
        return [(int(i.split("-")[0]) / 1000, json.loads(fields["e"])) for i, fields in entries]

    async def verify(
        self, before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        streams: dict[str, dict[int, tuple[float, dict[str, Any]]]] = {}
        for run in self.tables:
            streams[run.table_id] = {e["v"]: (at, e) for at, e in await self.stream(run.table_id)}
        # Acknowledged moves are in the record.
        lost: list[dict[str, Any]] = []
        lost_in_crash: list[float] = []
        blank_in_outage: list[dict[str, Any]] = []
        acked = [p for p in self.f.presses if p.acknowledged and p.final]
        for p in acked:
            if p.args[:1] and p.args[0].startswith("p"):
                continue  # a page of bid or contract values (bid p180): answered, and nothing to store
            entry = streams[p.table].get(p.version + 1)
            ok = entry is not None and entry[1].get("user") == p.user and entry[1].get("cmd") == p.name
            if ok:
                continue
            answered = self.f.answers.get(p.qid, p.answered_at or p.at)
            age = None if self.crash_at is None else self.crash_at - answered
            # Saved before the crash (pressed before it), and the table went back past it.
            saved = p.version + 1
            rolled_back = self.after_crash.get(p.table, 0) < saved <= self.before_crash.get(p.table, 0)
            if age is not None and ((rolled_back and p.at <= self.crash_at) or -0.5 <= age <= 3.0):
                lost_in_crash.append(round(age, 3))
            elif self.outage is not None and self.outage[0] - 0.5 <= answered <= self.outage[1] + 1.0:
                blank_in_outage.append({"table": p.table, "version": p.version, "cmd": p.name})
            else:
                lost.append(
                    {
                        "table": p.table,
                        "version": p.version,
                        "cmd": p.name,
                        "user": p.user,
                        "args": list(p.args),
                        "pressed_at": round(p.at - self.soak_started, 1),
                        "answered_after_s": round(answered - p.at, 2),
                        "after_fault": self._after_fault(answered),
                        "saved_next": None if entry is None else entry[1],
                    }
                )
        # Deadlines: every idle turn was played by the timer, about on time.
        late: list[float] = []
        not_fired = 0
        idle_lost_in_crash = 0
        idle_lost_examples: list[dict[str, Any]] = []
        not_fired_examples: list[dict[str, Any]] = []
        due = [i for i in self.f.idle if i.at + self.args.turn_seconds + 10 < self.soak_ended]
        for idle in due:
            # The first save after the idle turn's that applied actions must be the timer's. Saves in
            # between without actions (someone's /back, a leave) set the turn's deadline again.
            stream = streams[idle.table]
            saved = began = stream.get(idle.version)
            v = idle.version + 1
            while v in stream and not stream[v][1].get("a") and stream[v][1].get("cmd") != "timer":
                began = stream[v]
                v += 1
            fired = stream.get(v)
            taken_back = (
                self.after_crash.get(idle.table, 0) < idle.version <= self.before_crash.get(idle.table, 0)
            )
            if taken_back and (began is None or began[0] > idle.at):
                # The save that holds this version now came after the person saw the turn: the one they
                # saw was in the second the Redis crash lost, the table went back, and that turn no
                # longer exists (its version came again, maybe as someone else's turn). A hand of such a
                # version may still arrive after the crash (queued, or slowed by Telegram), so these are
                # counted by version, not by time; a turn the crash did not take back must have fired.
                idle_lost_in_crash += 1
                idle_lost_examples.append(
                    {
                        "table": idle.table,
                        "version": idle.version,
                        "at": round(idle.at - self.soak_started, 1),
                        "saved_at": None if saved is None else round(saved[0] - self.soak_started, 1),
                        "deadline_set_at": None if began is None else round(began[0] - self.soak_started, 1),
                        "crash_at": round(self.crash_at - self.soak_started, 1),
                    }
                )
                continue
            if began is None or fired is None or fired[1].get("cmd") != "timer":
                not_fired += 1
                if len(not_fired_examples) < 5:
                    not_fired_examples.append(
                        {
                            "table": idle.table,
                            "version": idle.version,
                            "at": round(idle.at - self.soak_started, 1),
                            "user": idle.user,
                            "presses": [
                                (round(p.at - self.soak_started, 1), p.name, p.version, p.text)
                                for p in self.f.presses
                                if p.user == idle.user and abs(p.version - idle.version) <= 1
                            ],
                            "next": None if fired is None else fired[1],
                        }
                    )
                continue
            late.append(fired[0] - (began[0] + self.args.turn_seconds))
        # A deadline (in its table's hash since issue 26) more than 40 s past that nothing fired.
        overdue = []
        for run in self.tables:
            when = await self.raw.hget(self.store.keys.table(run.table_id), "dw")
            if when and float(when) < time.time() - 40:
                overdue.append(run.table_id)
        # No table stuck: each moved on after the last fault.
        stuck = [t for t, v in self.versions_after_faults.items() if after.get(t, {}).get("version", 0) <= v]
        not_advanced = [t for t, b in before.items() if after[t]["version"] <= b["version"]]
        # 429s obeyed: no send to a chat before its retry_after ran out.
        early = 0
        by_chat: dict[int, list[float]] = defaultdict(list)
        for c in self.f.calls:
            if c.method in BUDGETED_METHODS:
                by_chat[c.chat_id].append(c.at)
        for at, chat, retry in self.f.floods:
            early += sum(1 for t in by_chat[chat] if at < t < at + retry - 0.2)
        unavailable = [p for p in self.f.presses if p.text and UNAVAILABLE in p.text]
        in_outage = 0
        if self.outage is not None:
            a, b = self.outage
            in_outage = sum(1 for p in unavailable if a - 1 <= p.at <= b + 5)
        return {
            "acknowledged_moves": len(acked),
            "acknowledged_moves_lost": len(lost),
            "lost_examples": lost[:12],
            "acknowledged_lost_in_redis_crash": len(lost_in_crash),
            "blank_answers_without_effect_during_outage": len(blank_in_outage),
            "lost_in_crash_max_age_s": max(lost_in_crash, default=0.0),
            "tables_stuck_after_faults": len(stuck),
            "tables_not_advanced": len(not_advanced),
            "idle_turns": len(self.f.idle),
            "idle_turns_due_before_the_end": len(due),
            "idle_turns_played_by_timer": len(late),
            "idle_turns_not_fired": not_fired,
            "idle_turns_lost_in_redis_crash": idle_lost_in_crash,
            "idle_turns_lost_in_redis_crash_examples": idle_lost_examples[:5],
            "idle_turns_not_fired_examples": not_fired_examples,
            "deadline_late_s": {"p50": _q(late, 0.5), "max": round(max(late, default=0.0), 2)},
            "deadlines_overdue_at_end": len(overdue),
            "inconsistent_tables": await self.consistency(),
            "private_cards_in_group_messages": len(self.f.leaks),
            "leak_examples": self.f.leaks[:3],
            "privacy_checks": self.f.privacy_checked,
            "privacy_skipped": self.f.privacy_skipped,
            "sends_before_retry_after": early,
            "unavailable_answers": len(unavailable),
            "unavailable_answers_during_outage": in_outage,
            "duplicate_messages": self.duplicates(),
            "hand_messages_left_behind": self.hands_left_behind(),
            "duplicates_forced_by_lost_answers": self.f.forced_duplicates,
        }

    def hands_left_behind(self) -> dict[str, Any]:
        """Private chats showing hand messages of more than one deal of their table at the end (the hands a
        deal replaced go with the next deal's first hand), and people who pressed one left behind."""
        chats = 0
        example: list[dict[str, Any]] = []
        for h in self.humans:
            visible = [
                m
                for m in self.fake.private_chat(h.user).messages
                if m.from_bot
                and not m.deleted
                and any(_command(d).table_id == h.table.table_id for d in m.callback_data)
            ]
            # The hands replaced during a deal stay until the next deal's hand comes (then they go in one
            # deleteMessages call): only hands of more than one deal are left behind.
            deals = {_deal_of(m.content) for m in visible}
            chats += len(deals) > 1
            if len(deals) > 1 and not example:
                example = [
                    {
                        "id": m.message_id,
                        "deleted": m.deleted,
                        "edits": len(m.history),
                        "versions": sorted({c.version for c in map(_command, m.callback_data) if c.version}),
                        "first_line": m.content.splitlines()[0][:60] if m.content else "",
                    }
                    for m in self.fake.private_chat(h.user).messages[-8:]
                    if m.from_bot
                ]
        return {
            "private_chats": chats,
            "people_who_pressed_one": sum(1 for h in self.humans if h.stale),
            "example_chat_end": example,
        }

    def duplicates(self) -> int:
        """Visible messages repeating the bot's previous message in the chat within 15 s."""
        count = 0
        chats = [run.chat for run in self.tables] + [self.fake.private_chat(h.user) for h in self.humans]
        for chat in chats:
            previous: FakeMessage | None = None
            for m in chat.messages:
                if not m.from_bot:
                    continue
                if (
                    previous is not None
                    and not m.deleted
                    and not previous.deleted
                    and m.content == previous.content
                    and m.callback_data == previous.callback_data
                    and m.date - previous.date <= 15
                ):
                    count += 1
                previous = m
        return count

    def errors_in_logs(self) -> dict[str, Any]:
        """ERROR lines the bot processes logged (the JSON log's level), with a few examples."""
        count = 0
        examples: list[str] = []
        for process in self.processes:
            for line in process.log_path.read_text(errors="replace").splitlines():
                if '"level": "error"' in line or '"level": "critical"' in line:
                    count += 1
                    if len(examples) < 5:
                        examples.append(line[:400])
        return {"count": count, "examples": examples}

    def tokens_in_logs(self) -> dict[str, int]:
        token = self.fake.token
        needles = {"token": token, "token_secret_part": token.split(":", 1)[1], "webhook_secret": SECRET}
        found = dict.fromkeys(needles, 0)
        lines = 0
        for process in self.processes:
            text = process.log_path.read_text(errors="replace")
            for line in text.splitlines():
                lines += 1
                for name, needle in needles.items():
                    if needle in line:
                        found[name] += 1
        found["log_lines"] = lines
        return found

    def _after_fault(self, at: float) -> str | None:
        """The last fault that began before `at` and how long before, e.g. "redis_crash+1.2s"."""
        began = [(t, kind) for kind, times in self.fault_times.items() for t in times if t <= at]
        if not began:
            return None
        t, kind = max(began)
        return f"{kind}+{at - t:.1f}s"

    def _short_buckets(self, chat_id: int) -> list[str]:
        """Which of the fake's token buckets refused (read right after its 429, on its monotonic clock)."""
        flood = self.fake._flood
        now = time.monotonic()
        buckets = {"global": flood._global, "chat": flood._chats.get(chat_id)}
        buckets["group"] = flood._groups.get(chat_id)
        return [name for name, b in buckets.items() if b is not None and b.wait_time(now) > 0.05]

    def _flood_example(self, at: float, method: str, chat_id: int, short: list[str]) -> dict[str, Any]:
        return {
            "at": round(at - self.soak_started, 1),
            "method": method,
            "chat": "group" if chat_id < 0 else "private",
            "short": short,
            "after_fault": self._after_fault(at),
        }

    def report(
        self,
        setup_seconds: float,
        memory: dict[str, Any],
        verdict: dict[str, Any],
        plan: FaultPlan,
        before: dict[str, dict[str, Any]],
        after: dict[str, dict[str, Any]],
    ) -> dict[str, Any]:
        latencies: list[float] = []
        first_call: list[float] = []
        quiet: list[float] = []
        to_hand: list[float] = []
        to_hand_quiet: list[float] = []
        """Press -> the hand of the player who must act next (a private message with the move buttons of
        the version the press made)."""
        """Presses well away from any fault (a second before to 30 s after), where only load counts."""
        superseded = 0
        acked = [p for p in self.f.presses if p.acknowledged and p.final]
        next_press: dict[tuple[str, int], float] = {}
        for p in sorted(acked, key=lambda p: p.at, reverse=True):
            p_next = next_press.get((p.table, p.version + 1), float("inf"))
            calls = [t for t in self.f.version_calls.get((p.table, p.version + 1), []) if p.at <= t < p_next]
            answer = self.f.answers.get(p.qid)
            if not calls:
                superseded += 1
                continue
            latency = max([*calls, *([answer] if answer else [])]) - p.at
            latencies.append(latency)
            first_call.append(min(calls) - p.at)
            away = not any(start - 1.0 <= p.at <= end + 30.0 for start, end in self.fault_windows)
            if away:
                quiet.append(latency)
            hands = [t for t in self.f.turn_hands.get((p.table, p.version + 1), []) if p.at <= t < p_next]
            if hands:
                to_hand.append(min(hands) - p.at)
                if away:
                    to_hand_quiet.append(min(hands) - p.at)
            next_press[(p.table, p.version)] = p.at
        ack = [self.f.answers[p.qid] - p.at for p in self.f.presses if p.qid in self.f.answers]
        complete = self._complete_deals(before, after)
        group = [self.f.group_per_deal[d] for d in complete]
        private = [self.f.private_per_deal[d] for d in complete]
        actions = sum(after[t]["actions"] - before[t]["actions"] for t in before if t in after)
        deals = sum(after[t]["deals"] - before[t]["deals"] for t in before if t in after)
        load = os.getloadavg()
        figures = {
            "bench": "soak",
            "tables": len(self.tables),
            "players": len(self.humans),
            "processes": len(self.processes),
            "minutes": self.args.minutes,
            "think_seconds": list(self.args.think),
            "setup_seconds": round(setup_seconds, 1),
            "soak_seconds": round(self.soak_ended - self.soak_started, 1),
            "grace_seconds_until_every_table_moved": self.grace,
            "presses": len(self.f.presses),
            "moves_acknowledged": len(acked),
            "actions_applied": actions,
            "actions_per_s": round(actions / max(1.0, self.soak_ended - self.soak_started), 2),
            "calls_per_action": round(
                sum(1 for c in self.f.calls if c.method in COUNTED_METHODS and c.status == 200)
                / max(1, actions),
                2,
            ),
            "calls_by_method": self._calls_by_method(),
            "budgeted_calls_per_s": self._budgeted_rate(),
            "private_calls_by_kind": dict(self.f.private_kinds.most_common(25)),
            "deals_completed": deals,
            "tables_advanced": sum(
                1 for t in before if after.get(t, {}).get("version", 0) > before[t]["version"]
            ),
            "too_many_requests_from_limits": self.fake.stats.flood_rejections,
            "too_many_requests_examples": [self._flood_example(*f) for f in self.f.limit_floods[:20]],
            "latency_update_to_last_call_ms": _summary(latencies),
            "latency_update_to_first_call_ms": _summary(first_call),
            "latency_update_to_last_call_away_from_faults_ms": _summary(quiet),
            "latency_samples_superseded": superseded,
            "latency_press_to_acting_hand_ms": _summary(to_hand),
            "latency_press_to_acting_hand_away_from_faults_ms": _summary(to_hand_quiet),
            "button_answer_ms": _summary(ack),
            "group_calls_per_deal": _ints(group),
            "private_calls_per_deal": _ints(private),
            "redis_memory": memory,
            "redis": {
                "target": self.redis_target,
                "cluster": bool(self.args.cluster),
                "prefix": self.prefix,
                "faults": "off" if self.args.no_redis_faults else "crash and outage",
            },
            "faults": {
                "planned": plan.summary(),
                "bot_kills": sum(p.kills for p in self.processes),
                "bot_starts": sum(p.starts for p in self.processes),
                "telegram_injected": dict(self.f.injected),
                "events": self.f.events,
            },
            "people": {
                "recoveries": self.f.recoveries,
                "my_hand_presses": self.f.hand_requests,
                "back_sent": self.f.backs,
            },
            "balancer": {"forwarded": self.balancer.forwarded, "failovers": self.balancer.failovers},
            "verification": verdict,
            "machine": {"cpus": os.cpu_count(), "loadavg_at_end": [round(x, 2) for x in load]},
            "workdir": str(self.workdir),
        }
        # The rates mean moves only if the presses were moves: withheld past 1% unintended refusals.
        return self.f.tally.report(figures, ("actions_per_s", "calls_per_action"))[0]

    def _calls_by_method(self) -> dict[str, int]:
        """Successful calls during the soak by method and chat kind, to see where a move's calls go."""
        counted: Counter[str] = Counter()
        for c in self.f.calls:
            if c.status == 200:
                kind = "group" if c.chat_id < 0 else "private" if c.chat_id > 0 else "-"
                counted[f"{c.method}:{kind}"] += 1
        return dict(counted.most_common())

    def _budgeted_rate(self) -> dict[str, float]:
        """Calls the bot-wide budget counts, per second over the soak: the mean and the busiest seconds."""
        per_second: Counter[int] = Counter(
            int(c.at - self.soak_started)
            for c in self.f.calls
            if c.status == 200 and c.method in BUDGETED_METHODS
        )
        span = max(1, int(self.soak_ended - self.soak_started))
        rates = sorted(per_second.get(s, 0) for s in range(span))
        return {
            "mean": round(sum(rates) / span, 2),
            "p50": float(rates[len(rates) // 2]),
            "p90": float(rates[int(len(rates) * 0.9)]),
            "max": float(rates[-1]),
            "seconds_at_29_or_more": sum(1 for r in rates if r >= 29),
            "by_second": [per_second.get(s, 0) for s in range(span)],
        }

    def _complete_deals(
        self, before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]
    ) -> list[tuple[str, int]]:
        """Deals that ended by the end of the run, as messages number them (from 1); the lobby and the
        game's first announcement count for none (deal 0)."""
        return [(table, d) for table, a in after.items() for d in range(1, a.get("deals", 0) + 1)]


def _int(value: object) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def _command(data: str) -> Command:
    nobody = UserRef("tg", "0", "")
    return from_payload(data, ChatRef("tg", "0", "", True), nobody)


def _payload_versions(markup: object, *, moves_only: bool = False) -> list[tuple[str, int]]:
    if isinstance(markup, str):
        try:
            markup = json.loads(markup)
        except ValueError:
            return []
    if not isinstance(markup, dict):
        return []
    out = set()
    for row in markup.get("inline_keyboard", []):
        for button in row:
            data = button.get("callback_data") if isinstance(button, dict) else None
            if data:
                c = _command(data)
                wanted = not moves_only or c.name in MOVE_COMMANDS
                if c.table_id is not None and c.version is not None and wanted:
                    out.add((c.table_id, c.version))
    return sorted(out)


def _selection_complete(command: Command) -> bool:
    """Whether a give/discard button completes the move: at three seats a give is one card to each of the
    two others, and a lay-down (two musiki) is two cards."""
    return len(command.args) >= 2


def _q(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    return round(sorted(values)[min(len(values) - 1, int(q * len(values)))], 2)


def _summary(seconds: list[float]) -> dict[str, Any]:
    ms = sorted(x * 1000 for x in seconds)
    if not ms:
        return {"count": 0}
    return {
        "count": len(ms),
        "p50": round(ms[len(ms) // 2]),
        "p90": round(ms[int(0.9 * (len(ms) - 1))]),
        "p99": round(ms[int(0.99 * (len(ms) - 1))]),
        "max": round(ms[-1]),
    }


def _ints(values: list[int]) -> dict[str, Any]:
    if not values:
        return {"deals": 0}
    return {
        "deals": len(values),
        "median": statistics.median(values),
        "p90": sorted(values)[int(0.9 * (len(values) - 1))],
        "max": max(values),
        "mean": round(statistics.fmean(values), 2),
    }


def _seconds_range(text: str) -> tuple[float, float]:
    low, _, high = text.partition("-")
    try:
        a, b = float(low), float(high or low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not MIN-MAX seconds") from None
    if not 0 <= a <= b:
        raise argparse.ArgumentTypeError(f"{text!r}: need 0 <= MIN <= MAX")
    return a, b


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tables", type=int, default=100)
    p.add_argument("--minutes", type=float, default=5.0)
    p.add_argument("--processes", type=int, default=2)
    p.add_argument("--kills", type=int, default=10, help="bot processes killed with SIGKILL (and restarted)")
    p.add_argument("--outage", type=float, default=10.0, help="seconds Redis is stopped")
    p.add_argument("--no-redis-faults", action="store_true", help="neither crash nor stop Redis")
    p.add_argument(
        "--redis-crash",
        choices=("power-loss", "kill"),
        default="power-loss",
        help="power-loss: SIGKILL and the append-only file cut back by its last second; kill: SIGKILL only",
    )
    p.add_argument("--telegram-bursts", type=int, default=6, help="bursts of 5xx, timeouts and 429s")
    p.add_argument(
        "--think",
        type=_seconds_range,
        default=(1.0, 4.0),
        help="seconds a person thinks before a move, as MIN-MAX (default 1-4)",
    )
    p.add_argument("--idle", type=float, default=0.03, help="share of turns a person lets run out")
    p.add_argument("--turn-seconds", type=int, default=60, help="time for a turn (15-3600)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", default=None, help="logs and Redis data (default: a new temporary folder)")
    p.add_argument("--keep", action="store_true", help="keep the work folder")
    p.add_argument("--verbose", action="store_true", help="progress on stderr even when it is not a terminal")
    add_options(p, from_env=False)
    return p.parse_args(argv)


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    runner = Soak(args)
    try:
        return await runner.run()
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(runner.workdir, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    result = asyncio.run(soak(args))
    return emit(result, 1 if result.get("rate_withheld") else 0)


_DEAL = re.compile(r"· deal (\d+) ·")


def _deal_of(text: str | None) -> str:
    """The deal a hand message shows ("Your hand · deal 3 · play"), or the whole first lines without one."""
    found = _DEAL.search(text or "")
    return found.group(1) if found else (text or "")[:80]


if __name__ == "__main__":
    raise SystemExit(main())
