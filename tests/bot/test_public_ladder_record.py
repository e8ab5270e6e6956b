"""The public ladder recorded and shown (issue 20): a public game's end rates its players once (its serial
is the game id: a retried hook does not rate again), a leaver loses to everyone and has the leave counted
once; the group boards are untouched; `/stats` shows the public rating per preset with its last changes
(provisional marked) and `/top public` the established players, with display names only."""

from __future__ import annotations

import random

import pytest
from botkit import Clock, action_text, errors, quiet_settings

from bot.commands import parse_text
from bot.handlers import Handlers
from bot.handlers.public_safety import PublicSafety, ladder_ratings
from bot.matchmaking.ladder_store import MemoryLadder
from bot.matchmaking.memory import MemoryQueue
from bot.matchmaking.model import Options, Player
from bot.model import ChatRef, Message, UserRef
from bot.public.builder import build_matches, free_seats
from bot.reports import MemoryReports
from bot.service import Service
from bot.snapshot import GameCache
from bot.storage import MemoryStore
from bot.table import TableDoc
from core.ai import choose_action
from core.view import seat_view

ALA = Player("tg", "90000101", "Ala", "en")
BORIS = Player("dc", "90000202", "Boris", "en")
EVE = Player("web", "90000303", "Eve", "en")
PEOPLE = (ALA, BORIS, EVE)


def user(p: Player) -> UserRef:
    return UserRef(p.platform, p.user_id, p.name, p.language)


def dm(p: Player) -> ChatRef:
    return ChatRef(p.platform, p.user_id, p.name, True)


class Table:
    def __init__(self, clock: Clock) -> None:
        self.store = MemoryStore(clock=clock)
        self.service = Service(self.store, quiet_settings(), handlers=Handlers, clock=clock)
        self.queue = MemoryQueue(clock=clock)
        self.ladder = MemoryLadder(clock=clock)
        self.safety = PublicSafety(
            self.store,
            self.queue,
            MemoryReports(clock),
            self.ladder,
            language_of=self.service.language_of,
            clock=clock,
        )
        self.service.safety_commands = self.safety.handle
        self.service.ladder = self.ladder
        self.freed = self.safety.seats_freed(free_seats(self.queue))
        self.service.public_seats = self.freed
        self.table_id = ""
        self.cache = GameCache()

    async def open(self) -> None:
        for platform in ("tg", "dc", "web"):
            await self.queue.heartbeat(platform)
        for i, p in enumerate(PEOPLE):
            await self.queue.join(p, 1500.0 + i, Options("polish", 3, "normal"))
        await build_matches(self.service, self.queue)
        seated = await self.queue.seated_at(ALA.key)
        assert seated is not None
        self.table_id = seated

    async def say(self, p: Player, text: str, chat: ChatRef | None = None) -> list[Message]:
        command = parse_text(text, chat or dm(p), user(p))
        assert command is not None
        return await self.service.handle(command)

    async def doc(self) -> TableDoc:
        stored = await self.store.load(self.table_id)
        assert stored is not None
        return TableDoc.model_validate_json(stored.document)

    async def play_out(self, players: tuple[Player, ...], seed: int = 3) -> TableDoc:
        """The people still seated play sensible moves until the game is over."""
        rng = random.Random(seed)
        for _ in range(5000):
            doc = await self.doc()
            if doc.status == "finished":
                return doc
            assert doc.game is not None
            state = self.cache.state(doc.serial, doc.game.spec, doc.game.actions)
            seat = state.to_act
            assert seat is not None
            who = next(p for p in players if doc.seat_of(p.key) == seat)
            legal = list(state.legal_actions(seat))
            action = choose_action("easy", seat_view(state, seat), legal, seed=rng.getrandbits(32))
            replies = await self.say(who, action_text(action, state, seat))
            assert not errors(replies), [m.text for m in replies]
        raise AssertionError("the game did not end")


@pytest.fixture
async def table(clock: Clock) -> Table:
    t = Table(clock)
    await t.open()
    return t


async def test_a_finished_public_game_is_rated_once_and_a_leaver_loses_to_everyone(table: Table) -> None:
    assert not errors(await table.say(EVE, "/leave"))
    doc = await table.play_out((ALA, BORIS))
    assert doc.ended == "won"
    histories = {p.key: await table.ladder.history("polish", p.key) for p in PEOPLE}
    assert {k: [h.game_id for h in v] for k, v in histories.items()} == {p.key: [doc.serial] for p in PEOPLE}
    eve = await table.ladder.get("polish", EVE.key)
    assert eve.rating < 1500 and eve.games == 1  # lost to both, whatever the score
    assert await table.queue.seated_at(ALA.key) is None  # the seats were freed after rating
    assert table.queue._leaves[EVE.key].value == "1"  # the leave counted once, by free_seats
    assert ALA.key not in table.queue._leaves and BORIS.key not in table.queue._leaves
    # The hook runs again (a retry after a timeout, another process): the ladder does not move.
    before = {p.key: (await table.ladder.get("polish", p.key)).rating for p in PEOPLE}
    await table.freed(doc, [ALA.key, BORIS.key])
    assert {p.key: (await table.ladder.get("polish", p.key)).rating for p in PEOPLE} == before
    assert [len(await table.ladder.history("polish", p.key)) for p in PEOPLE] == [1, 1, 1]
    # The queue reads these ratings at join (`ladder_ratings`, a QueueDesk's `rating`).
    ratings = ladder_ratings(table.ladder)
    assert await ratings(ALA, Options("polish", 3, "normal")) == {"polish": before[ALA.key]}
    anything = await ratings(EVE, Options())
    assert anything == {"polish": before[EVE.key], "estonian": 1500.0, "russian": 1500.0}
    # The group boards and counters know nothing of a public game.
    for p in PEOPLE:
        assert await table.store.get_rating("rating", p.key) is None
        assert await table.store.get_stats(f"user:{p.key}") == {}


async def test_stats_and_top_show_the_public_ladder_by_display_name(table: Table) -> None:
    assert not errors(await table.say(EVE, "/leave"))
    await table.play_out((ALA, BORIS))
    [stats] = await table.say(ALA, "/stats")
    assert "Public ladder" in stats.text and "polish: " in stats.text
    assert "?" in stats.text and "provisional" in stats.text  # one game: provisional
    assert "Last changes: " in stats.text
    assert "90000" not in stats.text
    [eve] = await table.say(EVE, "/stats")
    assert "Last changes: −" in eve.text
    # Established players only on the public top: play more games between Ala and Boris directly.
    names = {ALA.key: "Ala", BORIS.key: "Boris", "tg:7": "Cyd"}
    for n in range(15):
        scores = {ALA.key: 1000, BORIS.key: 400 if n % 3 else 1200, "tg:7": 700}
        await table.ladder.apply_game("polish", f"g{n}", scores, names)
    [top] = await table.say(ALA, "/top public polish")
    assert top.kind == "top"
    lines = top.text.splitlines()
    assert lines[0] == "**Public ladder: polish**"
    assert [line.split(" · ")[0] for line in lines[1:]] == ["1. Ala", "2. Cyd", "3. Boris"]
    assert "Eve" not in top.text and "90000" not in top.text
    [plain] = await table.say(ALA, "/top")
    assert "/top public" in plain.text
    [bad] = await table.say(ALA, "/top public chess")
    assert bad.kind == "error"
    group = ChatRef("tg", "-1001", "Friday cards")
    [in_group] = await table.say(ALA, "/top public", chat=group)
    assert in_group.text.startswith("**Public ladder: polish**")
