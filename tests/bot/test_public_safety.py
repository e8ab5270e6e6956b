"""Among strangers (issue 20): /block and /report at or after a public table, by seat number or name as
shown, through the service and the real (memory) queue. A blocked pair is never matched again; a report
keeps platform keys for operators and never shows them to a player; only people who sat at the table
may block or report its players; at a group table both are refused."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from botkit import Clock, errors, quiet_settings

from bot.commands import parse_text
from bot.handlers import Handlers
from bot.handlers.public_safety import REPORTS_PER_DAY, PublicSafety
from bot.matchmaking.ladder_store import MemoryLadder
from bot.matchmaking.memory import MemoryQueue
from bot.matchmaking.model import Options, Player
from bot.model import ChatRef, Command, Message, UserRef
from bot.public.builder import build_matches, free_seats
from bot.reports import MemoryReports
from bot.service import Service
from bot.storage import MemoryStore, Store
from bot.table import TableDoc

ALA = Player("tg", "90000101", "Ala", "pl")
BORIS = Player("dc", "90000202", "Boris", "ru")
EVE = Player("web", "90000303", "Eve", "en")
DAN = Player("tg", "90000404", "Dan", "en")
ZED = UserRef("tg", "90000909", "Zed", "en")
IDS = ("90000101", "90000202", "90000303", "90000404")


def user(p: Player) -> UserRef:
    return UserRef(p.platform, p.user_id, p.name, p.language)


def dm(u: UserRef) -> ChatRef:
    return ChatRef(u.platform, u.user_id, u.name, True)


@dataclass
class Public:
    service: Service
    store: Store
    queue: MemoryQueue
    reports: MemoryReports
    ladder: MemoryLadder
    table_id: str = ""

    async def say(self, who: UserRef | Player, text: str, chat: ChatRef | None = None) -> list[Message]:
        u = who if isinstance(who, UserRef) else user(who)
        command = parse_text(text, chat or dm(u), u)
        assert command is not None, text
        return await self.service.handle(command)

    async def doc(self) -> TableDoc:
        stored = await self.store.load(self.table_id)
        assert stored is not None
        return TableDoc.model_validate_json(stored.document)

    async def seat_no(self, p: Player) -> int:
        doc = await self.doc()
        return next(i for i, s in enumerate(doc.seats) if s.user == p.key) + 1


@pytest.fixture
async def pub(clock: Clock) -> Public:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(), handlers=Handlers, clock=clock)
    queue = MemoryQueue(clock=clock)
    for platform in ("tg", "dc", "web"):
        await queue.heartbeat(platform)
    reports = MemoryReports(clock)
    ladder = MemoryLadder(clock=clock)
    safety = PublicSafety(store, queue, reports, ladder, language_of=service.language_of, clock=clock)
    service.safety_commands = safety.handle
    service.ladder = ladder
    service.public_seats = safety.seats_freed(free_seats(queue))
    h = Public(service, store, queue, reports, ladder)
    for i, p in enumerate((ALA, BORIS, EVE)):
        await queue.join(p, 1500.0 + i, Options("polish", 3, "normal"))
    await build_matches(service, queue)
    seated = await queue.seated_at(ALA.key)
    assert seated is not None and seated.startswith("pub:")
    h.table_id = seated
    return h


def shows_no_id(messages: list[Message]) -> None:
    for m in messages:
        for ident in IDS:
            assert ident not in m.text, m.text


async def test_a_blocked_player_is_never_matched_again_through_the_real_queue(pub: Public) -> None:
    boris = await pub.seat_no(BORIS)
    replies = await pub.say(ALA, f"/block {boris}")
    assert not errors(replies), [m.text for m in replies]
    assert "Boris" in replies[0].text and replies[0].language == "pl"
    shows_no_id(replies)
    assert await pub.queue.blocked_by(ALA.key) == {BORIS.key}
    # The table is over for everyone; all three and a fourth queue again at once.
    for p in (ALA, BORIS, EVE):
        await pub.queue.unseat(p.key)
    for i, p in enumerate((ALA, BORIS, EVE, DAN)):
        await pub.queue.join(p, 1500.0 + i, Options("polish", 3, "normal"))
    matches = await pub.queue.match()
    assert len(matches) == 1
    seated = {e.player.key for e in matches[0].players}
    assert not {ALA.key, BORIS.key} <= seated
    # Unblocked by name: the two may sit together again.
    replies = await pub.say(ALA, "/unblock boris")
    assert not errors(replies) and "Boris" in replies[0].text
    assert await pub.queue.blocked_by(ALA.key) == set()


async def test_block_after_leaving_finds_the_last_public_table(pub: Public) -> None:
    assert not errors(await pub.say(ALA, "/leave"))
    assert await pub.queue.seated_at(ALA.key) is None
    replies = await pub.say(ALA, "/block Eve")
    assert not errors(replies), [m.text for m in replies]
    assert await pub.queue.blocked_by(ALA.key) == {EVE.key}
    # Leaving was counted once (the queue's record_leave, through free_seats), not twice.
    assert pub.queue._leaves[ALA.key].value == "1"


async def test_a_stranger_may_not_block_or_report_players_of_a_table(pub: Public) -> None:
    for text in ("/block 1", "/report 1 abuse"):
        replies = await pub.say(ZED, text)
        assert [m.kind for m in replies] == ["error"]
        shows_no_id(replies)
    # Naming the table (a button of it reaching a stranger) does not help.
    command = Command("block", ("1",), dm(ZED), ZED, table_id=pub.table_id)
    replies = await pub.service.handle(command)
    assert [m.kind for m in replies] == ["error"]
    assert "Only the players" in replies[0].text
    command = Command("report", ("2", "abuse"), dm(ZED), ZED, table_id=pub.table_id)
    assert [m.kind for m in await pub.service.handle(command)] == ["error"]
    assert await pub.queue.blocked_by(ZED.key) == set()
    assert await pub.reports.list() == []


async def test_block_and_report_at_a_group_table_are_refused(pub: Public, clock: Clock) -> None:
    group = ChatRef("tg", "-1001", "Friday cards")
    for text in ("/block 2", "/report 2 abuse", "/unblock 2"):
        replies = await pub.say(ALA, text, chat=group)
        assert [m.kind for m in replies] == ["error"]
        assert "/kick" in replies[0].text or "kick" in replies[0].text
    assert await pub.queue.blocked_by(ALA.key) == set()
    assert await pub.reports.list() == []


async def test_a_report_keeps_the_record_and_the_keys_for_operators_only(pub: Public) -> None:
    boris = await pub.seat_no(BORIS)
    replies = await pub.say(EVE, f"/report {boris} abuse")
    assert [m.kind for m in replies] == ["info"], [m.text for m in replies]
    assert "Boris" in replies[0].text and "abuse of phrases" in replies[0].text
    shows_no_id(replies)
    [report] = await pub.reports.list()
    assert (report.reporter, report.reported, report.reason) == (EVE.key, BORIS.key, "abuse")
    assert (report.reporter_name, report.reported_name) == ("Eve", "Boris")
    assert report.table_id == pub.table_id and report.preset == "polish"
    assert report.record["format"] == "thousand-record/1" and report.record["deals"] == []
    assert await pub.reports.get(report.id) == report


async def test_report_input_is_checked_and_limited(pub: Public) -> None:
    doc = await pub.doc()
    computer = next(i for i, s in enumerate(doc.seats) if s.kind == "ai") + 1 if len(doc.seats) > 3 else None
    boris = await pub.seat_no(BORIS)
    ala = await pub.seat_no(ALA)
    bad = [f"/report {boris}", f"/report {boris} rude", "/report 9 abuse", f"/report {ala} abuse", "/report"]
    if computer is not None:
        bad.append(f"/report {computer} abuse")
    for text in bad:
        replies = await pub.say(ALA, text)
        assert [m.kind for m in replies] == ["error"], text
        shows_no_id(replies)
    assert await pub.reports.list() == []
    for _ in range(REPORTS_PER_DAY):
        assert [m.kind for m in await pub.say(ALA, f"/report {boris} 2")] == ["info"]
    replies = await pub.say(ALA, f"/report {boris} other")
    assert [m.kind for m in replies] == ["error"]
    assert len(await pub.reports.list()) == REPORTS_PER_DAY
    assert {r.reason for r in await pub.reports.list()} == {"leaving"}


async def test_on_redis_a_report_and_a_block_leave_only_keys_with_a_lifetime(redis_url: str) -> None:
    """The wiring production uses (`public_safety_for` on a Redis store): the report is in Redis for
    `thousand reports`, and every key written for it (the report, its index, the recent table, the
    daily counter) has a lifetime."""
    import redis.asyncio as aioredis

    from bot.handlers.public_safety import public_safety_for
    from bot.reports import REPORT_SECONDS, RedisReports
    from bot.storage import RedisStore

    store = RedisStore.from_url(redis_url)
    service = Service(store, quiet_settings(), handlers=Handlers)
    queue = MemoryQueue()
    for platform in ("tg", "dc", "web"):
        await queue.heartbeat(platform)
    safety = public_safety_for(service, queue, language_of=service.language_of, clock=service.clock)
    assert isinstance(safety.reports, RedisReports)
    service.safety_commands = safety.handle
    service.public_seats = safety.seats_freed(free_seats(queue))
    for i, p in enumerate((ALA, BORIS, EVE)):
        await queue.join(p, 1500.0 + i, Options("polish", 3, "normal"))
    await build_matches(service, queue)
    h = Public(service, store, queue, MemoryReports(), MemoryLadder())
    h.table_id = await queue.seated_at(ALA.key) or ""
    assert not errors(await h.say(BORIS, "/leave"))
    replies = await h.say(BORIS, "/report ala 4")
    assert [m.kind for m in replies] == ["info"], [m.text for m in replies]
    [filed] = await safety.reports.list()
    assert (filed.reporter, filed.reported, filed.reason) == (BORIS.key, ALA.key, "other")
    raw = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for pattern in ("thousand:report*", "thousand:{pubrecent:*", "thousand:{reports:*"):
            keys = await raw.keys(pattern)
            assert keys, pattern
            for key in keys:
                assert 0 < await raw.ttl(key) <= REPORT_SECONDS, key
    finally:
        await raw.aclose()
        await service.close()
        await store.close()


async def test_block_and_report_count_against_the_command_budget(clock: Clock) -> None:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(command_limit=2), handlers=Handlers, clock=clock)
    queue = MemoryQueue(clock=clock)
    for platform in ("tg", "dc", "web"):
        await queue.heartbeat(platform)
    reports = MemoryReports(clock)
    safety = PublicSafety(store, queue, reports, MemoryLadder(clock=clock), language_of=service.language_of)
    service.safety_commands = safety.handle
    for i, p in enumerate((ALA, BORIS, EVE)):
        await queue.join(p, 1500.0 + i, Options("polish", 3, "normal"))
    await build_matches(service, queue)
    h = Public(service, store, queue, reports, MemoryLadder())
    h.table_id = await queue.seated_at(ALA.key) or ""
    boris = await h.seat_no(BORIS)
    answers = [await h.say(ALA, f"/report {boris} abuse") for _ in range(4)]
    assert [m.kind for m in answers[0] + answers[1]] == ["info", "info"]
    assert [m.kind for m in answers[2]] == ["throttled"] and answers[3] == []
    assert len(await reports.list()) == 2
    assert await h.say(ALA, f"/block {boris}") == []
    assert await queue.blocked_by(ALA.key) == set()
    await service.close()


async def test_a_shared_name_asks_for_the_seat_number_and_names_are_escaped(clock: Clock) -> None:
    from bot.markup import escape

    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(), handlers=Handlers, clock=clock)
    queue = MemoryQueue(clock=clock)
    for platform in ("tg", "dc", "web"):
        await queue.heartbeat(platform)
    safety = PublicSafety(
        store, queue, MemoryReports(clock), MemoryLadder(clock=clock), language_of=service.language_of
    )
    service.safety_commands = safety.handle
    kim, kim2, odd = Player("tg", "1", "Kim"), Player("dc", "2", "kim"), Player("web", "3", "B*o_b")
    for p in (kim, kim2, odd):
        await queue.join(p, 1500.0, Options("polish", 3, "normal"))
    await build_matches(service, queue)
    h = Public(service, store, queue, MemoryReports(), MemoryLadder())
    h.table_id = await queue.seated_at(odd.key) or ""
    [answer] = await h.say(odd, "/block KIM")
    assert answer.kind == "error" and "(1–3)" in answer.text
    assert await queue.blocked_by(odd.key) == set()
    [answer] = await h.say(kim, "/block b*o_b")
    assert answer.kind == "info" and escape("B*o_b") in answer.text
    assert await queue.blocked_by(kim.key) == {odd.key}
    await service.close()
