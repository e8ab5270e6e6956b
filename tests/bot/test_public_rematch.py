"""Play again at a public table with several processes on one Redis (`bot.public.rematch`): the offer's
deadline fires once however many processes tick at that moment, and answers given at once through two
processes open one new table. Whole games and what people read are the adapters' tests (Telegram's,
Discord's and the web's `test_*rematch*.py`); here the finished game is written as the end of a won game
leaves it, to keep the test about concurrency.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from botkit import Clock, quiet_settings

from bot.commands import encode_payload, from_payload, table_tag
from bot.handlers import Handlers
from bot.handlers.queue import seated_where
from bot.matchmaking import RedisQueue
from bot.model import ChatRef, Message, Private, UserRef
from bot.public.again import PublicRematch
from bot.public.rematch import REMATCH_SECONDS
from bot.public.tables import PublicMatch, open_public_table
from bot.service import Service
from bot.storage import Deadline, RedisStore
from bot.table import RematchDoc, TableDoc, TurnDoc

PEOPLE = (
    UserRef("tg", "101", "Ala", "pl"),
    UserRef("dc", "202", "Boris", "ru"),
    UserRef("web", "303", "Eve", "en"),
)


class Processes:
    def __init__(self, url: str, prefix: str, clock: Clock) -> None:
        self.stores = [RedisStore.from_url(url, prefix=prefix) for _ in range(2)]
        self.services = [
            Service(store, quiet_settings(), handlers=Handlers, clock=clock) for store in self.stores
        ]
        self.queues = [RedisQueue(store) for store in self.stores]
        for service, queue, store in zip(self.services, self.queues, self.stores, strict=True):
            service.rematch = PublicRematch(
                service, queue, seated_elsewhere=lambda key, store=store: seated_where(store, key)
            )
        self.clock = clock

    async def close(self) -> None:
        for service in self.services:
            await service.close()
        for store in self.stores:
            await store.close()


@pytest.fixture
async def procs(redis_url: str, redis_prefix: str, clock: Clock) -> AsyncIterator[Processes]:
    p = Processes(redis_url, redis_prefix, clock)
    try:
        yield p
    finally:
        await p.close()


async def finished_game(p: Processes) -> tuple[str, TableDoc]:
    """A public table of three people whose game was just won: as `GameFlow.finish` and the save leave it
    (finished, the seats freed, the offer and its deadline)."""
    service, queue = p.services[0], p.queues[0]
    table_id, _ = await open_public_table(service, PublicMatch(PEOPLE, "polish", 3, "slow", match_id="m-1"))
    stored = await service.store.load(table_id)
    assert stored is not None
    doc = TableDoc.model_validate_json(stored.document)
    doc.status, doc.ended = "finished", "won"
    doc.rematch = RematchDoc(deadline=p.clock() + REMATCH_SECONDS)
    doc.turn = TurnDoc(kind="rematch", token=f"{doc.serial}.R", deadline=doc.rematch.deadline)
    await service.store.save(
        table_id,
        stored.version,
        doc.model_dump_json(),
        ttl_seconds=3600,
        users_removed=[u.key for u in PEOPLE],
        deadline=Deadline(doc.turn.deadline, f"{doc.turn.token}:r"),
    )
    for user in PEOPLE:
        await queue.unseat(user.key)
    return table_id, doc


def press(table_id: str, doc: TableDoc, version: int, user: UserRef, yes: bool = True) -> object:
    payload = encode_payload("again", () if yes else ("no",), version, table_id, table_tag(doc.serial))
    return from_payload(payload, ChatRef(user.platform, user.user_id, user.name, True), user)


def kinds(messages: list[Message], kind: str) -> list[Message]:
    return [m for m in messages if m.kind == kind]


async def test_the_deadline_fires_once_with_two_processes_ticking(procs: Processes) -> None:
    p = procs
    table_id, doc = await finished_game(p)
    version = (await p.stores[0].version(table_id)) or 0
    answer = await p.services[1].handle(press(table_id, doc, version, PEOPLE[0]))  # type: ignore[arg-type]
    assert len(kinds(answer, "rematch")) == 3  # the status to the three, Ala's yes on it
    p.clock.advance(REMATCH_SECONDS + 1)
    ticks = await asyncio.gather(p.services[0].tick(), p.services[1].tick(), p.services[0].tick())
    out = [m for messages in ticks for m in messages]
    assert len(kinds(out, "rematch")) == 3, [m.text for m in out]  # decided once: one status each
    tables = {m.table for m in out if m.kind == "table"}
    assert len(tables) == 1
    new_id = tables.pop()
    assert new_id is not None
    stored = await p.stores[0].load(new_id)
    assert stored is not None
    new = TableDoc.model_validate_json(stored.document)
    assert [s.user for s in new.seats if s.human] == [PEOPLE[0].key]
    assert [s.kind for s in new.seats].count("ai") == 2
    assert await p.queues[1].seated_at(PEOPLE[0].key) == new_id
    assert await p.queues[1].seated_at(PEOPLE[1].key) is None
    # Nothing of the finished table fires again later (the new table's own turn timers do).
    p.clock.advance(600)
    later = [*await p.services[0].tick(), *await p.services[1].tick()]
    assert not [m for m in later if m.table == table_id]


async def test_answers_at_once_through_two_processes_open_one_table(procs: Processes) -> None:
    p = procs
    table_id, doc = await finished_game(p)
    version = (await p.stores[0].version(table_id)) or 0
    answers = await asyncio.gather(
        *(
            p.services[i % 2].handle(press(table_id, doc, version, user))  # type: ignore[arg-type]
            for i, user in enumerate(PEOPLE)
        )
    )
    out = [m for messages in answers for m in messages]
    tables = {m.table for m in out if m.kind == "table"}
    assert len(tables) == 1, tables
    new_id = tables.pop()
    assert new_id is not None
    stored = await p.stores[1].load(new_id)
    assert stored is not None
    new = TableDoc.model_validate_json(stored.document)
    assert sorted(s.user or "" for s in new.seats if s.human) == sorted(u.key for u in PEOPLE)
    for user in PEOPLE:
        assert await p.queues[0].seated_at(user.key) == new_id
    # Each person got the new table once (its first message to them), the web person too.
    firsts = [m for m in out if m.kind == "table" and isinstance(m.audience, Private)]
    assert sorted(m.audience.user.key for m in firsts if isinstance(m.audience, Private)) == sorted(
        u.key for u in PEOPLE
    )
    # A press now: too late, in the presser's language; nothing changes.
    before = await p.stores[0].version(table_id)
    late = await p.services[0].handle(press(table_id, doc, version, PEOPLE[1], yes=False))  # type: ignore[arg-type]
    assert [m.text for m in late] == ["Сыграть ещё за этим столом уже поздно."]
    assert await p.stores[0].version(table_id) == before


async def test_a_new_table_that_failed_to_open_opens_on_the_next_press(
    procs: Processes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decision is saved, then opening the new table fails (the store went away): the people read
    that it started, and one who agreed pressing Play again again opens it (once)."""
    import bot.public.again as flow  # where the new table is opened

    p = procs
    table_id, doc = await finished_game(p)
    version = (await p.stores[0].version(table_id)) or 0
    real = flow.open_public_table

    async def broken(*args: object, **kwargs: object) -> object:
        raise ConnectionError("redis went away")

    monkeypatch.setattr(flow, "open_public_table", broken)
    for user in PEOPLE[:2]:
        await p.services[0].handle(press(table_id, doc, version, user))  # type: ignore[arg-type]
    out = await p.services[0].handle(press(table_id, doc, version, PEOPLE[2], yes=False))  # type: ignore[arg-type]
    assert not [m for m in out if m.kind == "table"]
    stored = await p.stores[0].load(table_id)
    assert stored is not None
    offer = TableDoc.model_validate_json(stored.document).rematch
    assert offer is not None and offer.closed and offer.next is not None
    assert await p.stores[0].load(offer.next) is None
    monkeypatch.setattr(flow, "open_public_table", real)
    # One who declined gets "too late"; one who agreed opens it.
    late = await p.services[1].handle(press(table_id, doc, version, PEOPLE[2]))  # type: ignore[arg-type]
    assert [m.text for m in late] == ["It is too late to play again at this table."]
    out = await p.services[1].handle(press(table_id, doc, version, PEOPLE[1]))  # type: ignore[arg-type]
    assert {m.table for m in out if m.kind == "table"} == {offer.next}
    stored = await p.stores[1].load(offer.next)
    assert stored is not None
    new = TableDoc.model_validate_json(stored.document)
    assert [s.user for s in new.seats if s.human] == [PEOPLE[0].key, PEOPLE[1].key]
    again = await p.services[0].handle(press(table_id, doc, version, PEOPLE[0]))  # type: ignore[arg-type]
    assert not [m for m in again if m.kind == "table"]  # opened once
