"""Three bot processes, one per platform, on one Redis, each running `PublicRuntime`: three people queue
on three platforms, a matcher forms their table once, each process shows its own person the table in
their language, and a move applied by one process reaches the other two through the relay."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from botkit import action_text
from kit import until
from redis.asyncio import Redis

from bot.commands import parse_text
from bot.handlers import Handlers
from bot.matchmaking.model import Options, Player
from bot.matchmaking.redis_queue import RedisQueue
from bot.model import ChatRef, Message, UserRef
from bot.public.runtime import PublicRuntime
from bot.relay.redis_relay import Guard, RedisRelay, RelayConsumer
from bot.service import Service
from bot.settings import Settings
from bot.snapshot import GameCache
from bot.storage import RedisStore
from bot.table import TableDoc
from core.ai import choose_action
from core.view import seat_view

PEOPLE = {
    "tg": Player("tg", "90000101", "Ala", "pl"),
    "dc": Player("dc", "90000202", "Boris", "ru"),
    "web": Player("web", "90000303", "Eve", "en"),
}


@dataclass
class Node:
    service: Service
    queue: RedisQueue
    runtime: PublicRuntime
    client: Redis
    shown: list[Message] = field(default_factory=list)


@pytest.fixture
async def nodes(redis_url: str) -> AsyncIterator[dict[str, Node]]:
    out: dict[str, Node] = {}
    for platform in PEOPLE:
        settings = Settings(_env_file=None, redis_url=None, ai_workers=0, charts=False, turn_seconds=0)  # type: ignore[call-arg]
        service = Service(RedisStore.from_url(redis_url), settings, handlers=Handlers)
        queue = RedisQueue.from_url(redis_url)
        client = Redis.from_url(redis_url)
        shown: list[Message] = []

        async def deliver(message: Message, shown: list[Message] = shown) -> None:
            shown.append(message)

        guard = Guard(client)
        relay = RedisRelay(client, platform, deliver, guard=guard)
        consumer = RelayConsumer(client, platform, deliver, guard=guard, name=f"{platform}-1")
        runtime = PublicRuntime(service, queue, relay, platform, consumer=consumer, match_every=0.05)
        out[platform] = Node(service, queue, runtime, client, shown)
    for node in out.values():
        await node.runtime.start()
    yield out
    for node in out.values():
        await node.runtime.stop()
        await node.service.close()
        await node.queue.close()
        await node.client.aclose()


async def test_matched_across_platforms_and_a_move_reaches_everyone(nodes: dict[str, Node]) -> None:
    for platform, player in PEOPLE.items():
        await nodes[platform].queue.join(player, 1500.0, Options("polish", 3, "normal"))
    chats = {p: n for p, n in nodes.items() if p != "web"}
    await until(lambda: all(any(m.kind == "table" for m in n.shown) for n in chats.values()))
    # One table, built once: 3 private copies (the web person's is dropped: the page reads the table).
    assert sum(n.runtime.built for n in nodes.values()) == 3
    assert nodes["web"].shown == []
    for platform, node in chats.items():
        assert {m.audience.user.key for m in node.shown} == {PEOPLE[platform].key}  # type: ignore[union-attr]
        assert {m.language for m in node.shown} == {PEOPLE[platform].language}
    table_id = await nodes["tg"].queue.seated_at(PEOPLE["tg"].key)
    assert table_id is not None and table_id.startswith("pub:")
    assert {await nodes["tg"].queue.seated_at(p.key) for p in PEOPLE.values()} == {table_id}

    stored = await nodes["tg"].service.store.load(table_id)
    assert stored is not None
    doc = TableDoc.model_validate_json(stored.document)
    assert doc.game is not None
    state = GameCache().state(doc.serial, doc.game.spec, doc.game.actions)
    seat = state.to_act
    assert seat is not None
    actor = next(p for p in PEOPLE.values() if doc.seat_of(p.key) == seat)
    action = choose_action("easy", seat_view(state, seat), list(state.legal_actions(seat)), seed=1)
    line = action_text(action, state, seat)
    node = nodes[actor.platform]
    command = parse_text(line, ChatRef(actor.platform, actor.user_id, actor.name, True), _user(actor))
    assert command is not None
    replies = await node.service.handle(command)
    assert not [m for m in replies if m.kind == "error"]
    await node.runtime.dispatch(replies)
    # The next player's hand (their turn now) comes on their own platform, drawn by another process.
    after = await node.service.store.load(table_id)
    assert after is not None and after.version == stored.version + 1
    doc = TableDoc.model_validate_json(after.document)
    assert doc.game is not None
    nxt = GameCache().state(doc.serial, doc.game.spec, doc.game.actions).to_act
    assert nxt is not None and nxt != seat
    other = next(p for p in PEOPLE.values() if doc.seat_of(p.key) == nxt)
    assert other.platform != actor.platform
    if other.platform == "web":
        await asyncio.sleep(0.3)
        assert nodes["web"].shown == []  # nothing is delivered for a web person
        return
    await until(
        lambda: any(m.version == after.version and m.kind == "hand" for m in nodes[other.platform].shown)
    )


def _user(p: Player) -> UserRef:
    return UserRef(p.platform, p.user_id, p.name, p.language)
