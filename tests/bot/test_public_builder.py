"""From the matchmaker's queue to public tables: a match is built into one table (also when two processes
build it), its players are seated at it, and a lone player's match gets computers."""

from __future__ import annotations

from botkit import Clock, quiet_settings

from bot.commands import parse_text
from bot.handlers import Handlers
from bot.matchmaking.memory import MemoryQueue
from bot.matchmaking.model import Options, Player
from bot.model import ChatRef, Private, UserRef
from bot.public.builder import build_match, build_matches, free_seats
from bot.public.tables import public_table_id
from bot.service import Service
from bot.storage import MemoryStore
from bot.table import TableDoc

PLAYERS = (
    Player("tg", "90000101", "Ala", "pl"),
    Player("dc", "90000202", "Boris", "ru"),
    Player("web", "90000303", "Eve", "en"),
)


async def queue_of(clock: Clock) -> MemoryQueue:
    queue = MemoryQueue(clock=clock)
    for platform in ("tg", "dc", "web"):
        await queue.heartbeat(platform)
    return queue


async def test_a_match_becomes_one_table_with_its_players_seated(clock: Clock) -> None:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(), handlers=Handlers, clock=clock)
    queue = await queue_of(clock)
    for i, player in enumerate(PLAYERS):
        await queue.join(player, 1500.0 + 10 * i, Options("polish", 3, "fast"))
    messages = await build_matches(service, queue)
    keys = {p.key for p in PLAYERS}
    tables = [m for m in messages if m.kind == "table"]
    assert {m.audience.user.key for m in tables if isinstance(m.audience, Private)} == keys
    seated = {await queue.seated_at(k) for k in keys}
    assert len(seated) == 1
    table_id = seated.pop()
    assert table_id is not None and table_id.startswith("pub:")
    stored = await store.load(table_id)
    assert stored is not None
    doc = TableDoc.model_validate_json(stored.document)
    assert doc.status == "game" and doc.settings.turn_seconds == 30  # fast
    assert {s.user for s in doc.seats} == keys
    assert {s.lang for s in doc.seats} == {"pl", "ru", "en"}
    await service.close()


async def test_two_processes_building_one_match_open_one_table(clock: Clock) -> None:
    store = MemoryStore(clock=clock)
    first = Service(store, quiet_settings(), handlers=Handlers, clock=clock)
    second = Service(store, quiet_settings(), handlers=Handlers, clock=clock)
    queue = await queue_of(clock)
    for player in PLAYERS:
        await queue.join(player, 1500.0, Options("polish", 3, "normal"))
    (match,) = await queue.match()
    table_id, messages = await build_match(first, queue, match)
    version = (await store.load(table_id)).version  # type: ignore[union-attr]
    again_id, again = await build_match(second, queue, match)  # the first was slow, not dead
    assert again_id == table_id == public_table_id(match.match_id)
    assert messages and again == []
    assert (await store.load(table_id)).version == version  # type: ignore[union-attr]
    await first.close()
    await second.close()


async def test_a_lone_player_who_takes_computers_gets_them(clock: Clock) -> None:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(), handlers=Handlers, clock=clock)
    queue = await queue_of(clock)
    await queue.join(PLAYERS[1], 1500.0, Options("polish", 3, "slow"))
    clock.advance(61)
    match = await queue.take_with_computers(PLAYERS[1].key)
    assert match is not None
    table_id, messages = await build_match(service, queue, match)
    doc = TableDoc.model_validate_json((await store.load(table_id)).document)  # type: ignore[union-attr]
    assert [s.kind for s in doc.seats] == ["human", "ai", "ai"] and doc.settings.turn_seconds == 240
    assert {m.language for m in messages} == {"ru"}
    await service.close()


async def test_leaving_frees_that_seat_and_counts_the_leave(clock: Clock) -> None:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(), handlers=Handlers, clock=clock)
    queue = await queue_of(clock)
    service.public_seats = free_seats(queue)
    for player in PLAYERS:
        await queue.join(player, 1500.0, Options("polish", 3, "normal"))
    await build_matches(service, queue)
    table_id = await queue.seated_at(PLAYERS[0].key)
    assert table_id is not None and table_id.startswith("pub:")
    boris = UserRef("dc", "90000202", "Boris", "ru")
    left = await service.handle(parse_text("/leave", ChatRef("dc", "90000202", "Boris", True), boris))  # type: ignore[arg-type]
    assert not [m for m in left if m.kind == "error"]
    assert await queue.seated_at(PLAYERS[1].key) is None
    assert await queue.record_leave(PLAYERS[1].key) == 2  # the leave was counted (this call is the second)
    assert await queue.seated_at(PLAYERS[0].key) == table_id  # the others play on
    await service.close()
