"""A public table played by three processes on one Redis, one per platform (Telegram, Discord, web): each
applies its own players' commands, shows its own platform's messages and hands the others' over through
the relay. Every person sees the table in their own language on their own platform, the newest version
last, and no private card reaches anyone else."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from botkit import action_text
from redis.asyncio import Redis

from bot.commands import parse_text
from bot.handlers import Handlers
from bot.model import ChatRef, Message, Private, Sender, UserRef
from bot.public.tables import PublicMatch, open_public_table
from bot.relay.redis_relay import RedisRelay, RelayConsumer
from bot.service import Service
from bot.settings import Settings
from bot.snapshot import GameCache
from bot.storage import RedisStore
from bot.table import TableDoc
from core.ai import choose_action
from core.cards import cards_of
from core.game import GameState
from core.view import seat_view
from fakes import cardspy

ALA = UserRef("tg", "90000101", "Ala", "pl")
BORIS = UserRef("dc", "90000202", "Boris", "ru")
EVE = UserRef("web", "90000303", "Eve", "en")
PEOPLE = {u.key: u for u in (ALA, BORIS, EVE)}


@dataclass
class Process:
    """One deployment's process: its service on the shared Redis, its relay, its consumer, its screen."""

    platform: str
    service: Service
    relay: RedisRelay
    consumer: RelayConsumer
    shown: list[Message] = field(default_factory=list)


def settings() -> Settings:
    return Settings(_env_file=None, redis_url=None, ai_workers=0, charts=False, turn_seconds=0)  # type: ignore[call-arg]


@pytest.fixture
async def processes(redis_url: str) -> AsyncIterator[dict[str, Process]]:
    out: dict[str, Process] = {}
    clients: list[Redis] = []
    for platform in ("tg", "dc", "web"):
        client = Redis.from_url(redis_url)
        clients.append(client)
        service = Service(RedisStore.from_url(redis_url), settings(), handlers=Handlers)
        shown: list[Message] = []

        async def deliver(message: Message, shown: list[Message] = shown) -> None:
            shown.append(message)

        relay = RedisRelay(client, platform, deliver)
        consumer = RelayConsumer(client, platform, deliver, name=f"{platform}-1")
        await consumer.ensure_group()
        out[platform] = Process(platform, service, relay, consumer, shown)
    yield out
    for p in out.values():
        await p.service.close()
    for c in clients:
        await c.aclose()


async def test_one_deal_across_three_processes(processes: dict[str, Process]) -> None:
    tg = processes["tg"]
    table_id, opened = await open_public_table(tg.service, PublicMatch((ALA, BORIS, EVE), "polish", 3))
    await tg.relay.dispatch(opened)
    cache = GameCache()
    rng = random.Random(11)
    known: dict[int, int] = {}

    async def state_now() -> tuple[TableDoc, GameState]:
        stored = await tg.service.store.load(table_id)
        assert stored is not None
        doc = TableDoc.model_validate_json(stored.document)
        assert doc.game is not None
        return doc, cache.state(doc.serial, doc.game.spec, doc.game.actions)

    async def pump() -> None:
        for p in processes.values():
            await p.consumer.poll(block_ms=5)

    await pump()
    doc, state = await state_now()
    seats = {u: doc.seat_of(u) for u in PEOPLE}
    first = state.deal_number
    for _ in range(300):
        doc, state = await state_now()
        if state.deal_number != first or state.finished:
            break
        for s, hand in enumerate(state.deal.hands):
            known[s] = known.get(s, 0) | hand
        seat = state.to_act
        assert seat is not None
        user = next(PEOPLE[k] for k, v in seats.items() if v == seat)
        legal = list(state.legal_actions(seat))
        action = choose_action("easy", seat_view(state, seat), legal, seed=rng.getrandbits(32))
        command = parse_text(
            action_text(action, state, seat), ChatRef(user.platform, user.user_id, user.name, True), user
        )
        assert command is not None
        process = processes[user.platform]  # each person's commands reach their own platform's process
        replies = await process.service.handle(command)
        assert not [m.text for m in replies if m.kind == "error"]
        await process.relay.dispatch(replies)
        await pump()
        _, after = await state_now()
        secret = set(cardspy.secret_cards(after))
        for m in replies:
            assert isinstance(m.audience, (Private, Sender))
            reader = seats[m.audience.user.key]
            assert reader is not None
            private = secret - set(
                cards_of(known.get(reader, 0) | (after.deal.hands[reader] if not after.finished else 0))
            )
            assert not cardspy.leaks(cardspy.message_parts(m.text, m.buttons), private, [m.language])
    assert state.deal_number > first or state.finished
    for platform, p in processes.items():
        # Each platform showed only its own people's messages, each in their own language.
        assert p.shown
        assert {m.audience.user.platform for m in p.shown} == {platform}  # type: ignore[union-attr]
        person = next(u for u in PEOPLE.values() if u.platform == platform)
        odd = [(m.kind, m.text[:70]) for m in p.shown if m.language != person.language]
        assert not odd, odd
        assert any(m.kind == "result" for m in p.shown)
        # Per key, the versions shown never go down.
        last: dict[str | None, int] = {}
        for m in p.shown:
            if m.key is None or m.version is None:
                continue
            assert m.version >= last.get(m.key, -1), (m.key, m.version, last.get(m.key))
            last[m.key] = m.version
