"""The service on a real Redis: several instances sharing tables, restarts mid-deal, deadlines fired once,
and Redis going away and coming back."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from actionlog import played_for_them
from botkit import Clock, Harness, action_text, errors, make_user, quiet_settings
from redis_server import RedisServer

from bot import vocabulary
from bot.commands import SECRET_MOVES, decode_payload, encode_payload, from_payload, parse_text
from bot.handlers import Handlers
from bot.model import ChatRef, Command, Message
from bot.service import Service
from bot.snapshot import GameCache, GameSpec, decode_action
from bot.storage import MemoryStore, RedisStore, VersionConflict
from bot.table import TableDoc
from core.game import GameState

TABLES = 5
HUMANS = [make_user(i) for i in range(3)]
OPENING = [(HUMANS[0], "/new"), (HUMANS[1], "/join"), (HUMANS[2], "/join"), (HUMANS[0], "/start")]


def redis_store(url: str, prefix: str = "thousand") -> RedisStore:
    return RedisStore.from_url(url, prefix=prefix)


@pytest.fixture
async def pair(redis_url: str) -> AsyncIterator[tuple[Service, Service, Clock]]:
    """Two service instances, each with its own Redis connection pool, on one clock."""
    clock = Clock()
    settings = quiet_settings(turn_seconds=90, warn_seconds=30)
    a = Service(redis_store(redis_url), settings, handlers=Handlers, clock=clock, rng=random.Random(7))
    b = Service(redis_store(redis_url), settings, handlers=Handlers, clock=clock, rng=random.Random(8))
    yield a, b, clock
    for s in (a, b):
        await s.close()
        await s.store.close()


async def load(service: Service, table_id: str) -> tuple[int, TableDoc]:
    version, doc = await service.load(table_id)
    assert doc is not None
    return version, doc


def state_of(cache: GameCache, doc: TableDoc) -> GameState:
    assert doc.game is not None
    return cache.state(doc.serial, doc.game.spec, doc.game.actions)


async def open_tables(service: Service, n: int) -> list[ChatRef]:
    chats = [ChatRef("t", f"-{1000 + i}", f"Group {i}") for i in range(n)]
    for chat in chats:
        for user, text in OPENING:
            command = parse_text(text, chat, user)
            assert command is not None
            assert not errors(await service.handle(command))
    return chats


async def test_two_instances_interleaving_a_thousand_commands(
    pair: tuple[Service, Service, Clock],
) -> None:
    a, b, _ = pair
    chats = await open_tables(a, TABLES)
    conflicts = Counter[str]()
    for name, service in (("a", a), ("b", b)):
        save = service.store.save

        async def counting_save(*args: Any, _save: Any = save, _name: str = name, **kwargs: Any) -> int:
            try:
                result: int = await _save(*args, **kwargs)
            except VersionConflict:
                conflicts[_name] += 1
                raise
            return result

        service.store.save = counting_save  # type: ignore[method-assign]
    rng = random.Random(3)
    cache = GameCache()
    accepted: dict[str, list[tuple[str, str]]] = {c.key: [] for c in chats}
    sent = 0

    async def one_step(chat: ChatRef) -> int:
        """The player to act sends their move through both instances at once; exactly one may win."""
        version, doc = await load(a, chat.key)
        if doc.status != "game":
            return 0
        state = state_of(cache, doc)
        seat = state.to_act
        assert seat is not None
        user = next(u for u in HUMANS if u.key == doc.seats[seat].user)
        legal = list(state.legal_actions(seat))
        action = legal[rng.randrange(len(legal))]
        commands: list[Command] = []
        # Cards, bids, passes and contracts by button half the time; a give or a lay-down always (whole: the
        # service reads one press with every card as the move).
        words = vocabulary.words(action, vocabulary.Mover.of_state(state, seat))
        as_button = words if action.kind in ("play", "bid", "pass", "contract", "give", "discard") else None
        if as_button is not None and (rng.random() < 0.5 or as_button[0] in SECRET_MOVES):
            payload = encode_payload(as_button[0], as_button[1], version, chat.key)
            commands = [from_payload(payload, chat, user)] * 2
        else:
            command = parse_text(action_text(action, state, seat), chat, user)
            assert command is not None
            commands = [command, command]
        # A bystander's read-only command goes through as well, in the same moment.
        bystander = HUMANS[(seat + 1) % 3]
        extra = parse_text(rng.choice(["/score", "/hand", "/rules", "/pass"]), chat, bystander)
        assert extra is not None
        results = await asyncio.gather(a.handle(commands[0]), b.handle(commands[1]), a.handle(extra))
        wins = [not errors(r) for r in results[:2]]
        assert sum(wins) == 1, [[m.text for m in r] for r in results[:2]]
        accepted[chat.key].append((user.key, commands[0].name))
        if extra.name == "pass" and not errors(results[2]):
            accepted[chat.key].append((bystander.key, "pass"))  # their turn came first: a real pass
        return 3

    while sent < 1050:
        counts = await asyncio.gather(*(one_step(c) for c in chats))
        if not any(counts):
            break
        sent += sum(counts)
    assert sent >= 1000
    assert sum(conflicts.values()) > 0, "the instances raced for the same versions"

    for chat in chats:
        version, doc = await load(a, chat.key)
        assert doc.game is not None
        entries = [json.loads(e) for e in await a.store.read_events(chat.key)]
        versions = [e["v"] for e in entries]
        assert versions == list(range(1, version + 1)), "versions strictly increase, none skipped"
        stored = [x for e in entries for x in e.get("a", [])]
        assert stored == doc.game.actions, "the stream holds each action once, in order"
        accepted_actions = len(accepted[chat.key]) + played_for_them(doc)  # and the last cards
        assert len(doc.game.actions) == accepted_actions, "one stored action per accepted command"
        moves = Counter((e["user"], e["cmd"]) for e in entries if e.get("a"))
        assert moves == Counter(accepted[chat.key]), "each accepted command was applied once"

        # A serial replay of the accepted commands through a fresh service gives the same table.
        serial = Service(MemoryStore(), quiet_settings(), handlers=Handlers, rng=random.Random(0))
        spec = GameSpec.from_json(doc.game.spec)
        serial.handlers.rng = _FixedSeed(spec.seed)
        solo = ChatRef("t", "solo", "")
        for user, text in OPENING:
            command = parse_text(text, solo, user)
            assert command is not None
            await serial.handle(command)
        for i, raw in enumerate(doc.game.actions):
            seat, action = decode_action(raw)
            at, mine = await serial.load(solo.key)
            assert mine is not None and mine.game is not None
            if len(mine.game.actions) > i:  # a last card, played by itself after the move before it
                assert mine.game.actions[i] == raw
                continue
            mover = vocabulary.Mover.of_state(state_of(GameCache(), mine), seat)
            command = parse_text(vocabulary.typed(action, mover), solo, HUMANS[seat])
            name, args = vocabulary.words(action, mover)
            if name in SECRET_MOVES:  # never typed in a group: the hand's buttons
                payload = encode_payload(name, args, at, solo.key)
                command = from_payload(payload, solo, HUMANS[seat])
            assert command is not None
            assert not errors(await serial.handle(command))
        _, replayed = await serial.load(solo.key)
        assert replayed is not None and replayed.game is not None
        assert replayed.game.actions == doc.game.actions
        s1, s2 = state_of(cache, doc), state_of(GameCache(), replayed)
        assert (s1.totals, s1.results, s1.deal_number, s1.deal.hands, s1.to_act) == (
            s2.totals,
            s2.results,
            s2.deal_number,
            s2.deal.hands,
            s2.to_act,
        )
        await serial.close()


class _FixedSeed(random.Random):
    """Makes the next game of a service use a given seed (for the serial replay)."""

    def __init__(self, seed: int) -> None:
        super().__init__(0)
        self.seed_value = seed

    def getrandbits(self, k: int) -> int:
        return self.seed_value


async def test_a_new_instance_continues_a_game_stopped_mid_deal(redis_url: str) -> None:
    clock = Clock()
    first = Service(redis_store(redis_url), quiet_settings(), handlers=Handlers, clock=clock)
    h = Harness(first, first.store, clock)
    await h.open_table(HUMANS, preset="russian")
    rng = random.Random(4)
    users = {i: u for i, u in enumerate(HUMANS)}
    for _ in range(12):
        assert await h.play_turn(rng, users)
    version, doc = await load(first, h.table_id)
    assert doc.game is not None
    middle = len(doc.game.actions)
    middle_auto = played_for_them(doc)
    state = state_of(GameCache(), doc)
    assert state.deal_number == 0 and state.deal.phase != "done"
    await first.close()
    await first.store.close()

    second = Service(redis_store(redis_url), quiet_settings(), handlers=Handlers, clock=clock)
    h2 = Harness(second, second.store, clock)
    out = await h2.text(HUMANS[state.to_act or 0], "/hand")
    hand = [m for m in out if m.kind == "hand"]
    assert hand and all(decode_payload(b.payload)[2] == version for row in hand[0].buttons for b in row)
    for _ in range(60):
        assert await h2.play_turn(rng, users)
    _, doc = await load(second, h.table_id)
    assert doc.game is not None
    assert len(doc.game.actions) - played_for_them(doc) == middle - middle_auto + 60
    assert state_of(GameCache(), doc).deal_number >= 1
    await second.close()
    await second.store.close()


async def test_a_deadline_fires_once_with_two_instances_polling(
    pair: tuple[Service, Service, Clock],
) -> None:
    a, b, clock = pair
    (chat,) = await open_tables(a, 1)
    _, doc = await load(a, chat.key)
    assert doc.game is not None and doc.turn is not None
    absent = doc.turn.seat
    actions = len(doc.game.actions)

    async def poll() -> list[Message]:
        results = await asyncio.gather(*(s.tick() for s in (a, b) for _ in range(5)))
        return [m for r in results for m in r]

    clock.advance(61)
    warnings = [m for m in await poll() if m.alert]
    assert len(warnings) == 1
    assert [m for m in await poll() if m.alert] == []
    clock.advance(30)
    out = await poll()
    out += await poll()
    _, doc = await load(a, chat.key)
    assert doc.game is not None
    assert len(doc.game.actions) == actions + 1, "the computer played the absent turn exactly once"
    assert doc.seats[absent].missed == 1
    timeouts = [e for e in map(json.loads, await a.store.read_events(chat.key)) if e["cmd"] == "timer"]
    assert len(timeouts) == 1
    assert sum(1 for m in out if "Time is up" in m.text) == 1


async def test_redis_away_and_back(redis_factory: Callable[..., RedisServer]) -> None:
    server = redis_factory(appendonly=True)
    store = RedisStore.from_url(server.url, retries=1, socket_timeout=0.5, connect_timeout=0.3)
    settings = quiet_settings()
    service = Service(store, settings, handlers=Handlers, clock=Clock())
    chat = ChatRef("t", "-5", "G")
    user = HUMANS[0]

    async def send(text: str) -> list[Message]:
        command = parse_text(text, chat, user)
        assert command is not None
        return await service.handle(command)

    assert not errors(await send("/new"))
    server.stop()
    out = await send("/add_ai")
    assert [m.kind for m in out] == ["error"] and "temporarily unavailable" in out[0].text
    assert await service.tick() == []
    server.start()
    for _ in range(20):  # the client reconnects by itself
        out = await send("/add_ai")
        if not errors(out):
            break
        await asyncio.sleep(0.1)
    assert not errors(out)
    _, doc = await service.load(chat.key)
    assert doc is not None and len(doc.seats) == 2
    await service.close()
    await store.close()
