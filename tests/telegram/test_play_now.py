"""Play now from Telegram: `/play` in the private chat, the queue's status message and its buttons, and
the public table the matcher builds, through the real PTB `Application` against the fake Bot API.

Three people press /play and are matched into one table, each reading it in their own language, and
play a whole deal by pressing their hands' buttons; a fourth, who cancelled first, is never seated; one
alone gets the offer after the (shortened) wait and starts with computers. Every private message any of
them receives is read by a spy for the cards of the others (`cardspy`): none may show one.
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from kit import until
from tgkit import Rig, Table, seat_everyone, settings

from adapters.telegram.app import TelegramBot
from bot.commands import decode_payload, from_payload
from bot.handlers import Handlers
from bot.matchmaking import Options, Player, RedisQueue
from bot.model import ChatRef, UserRef
from bot.ops.runtime import Runtime
from bot.public.process import ProcessPublic
from bot.service import Service
from bot.settings import Settings
from bot.storage import RedisStore, Store
from bot.table import TableDoc
from core.cards import cards_of
from core.game import GameState
from fakes import cardspy
from fakes.telegram import FakeMessage, FakeUser, InProcessRequest
from fakes.telegram.fake import ApiResponse
from fakes.telegram.models import UploadedFile

COMPUTERS_AFTER = 5.0


class PublicRig(Rig):
    """A rig whose bot process also runs public tables (as `thousand telegram` does)."""

    public: ProcessPublic

    async def start_public(self) -> ProcessPublic:
        bot = self.bot
        self.public = ProcessPublic(
            bot.runtime, bot.adapter.deliver, "tg", match_every=0.01, refresh_every=0.01
        )
        await self.public.start()
        return self.public

    async def close(self) -> None:
        await self.public.stop()
        await super().close()


class Spy:
    """Reads every private message the fake accepts for the cards of someone else at the public table:
    what the reader ever held in this deal is theirs, every other secret card must not appear."""

    def __init__(self, rig: PublicRig) -> None:
        self.rig = rig
        self.tables: set[str] = set()
        self.deal: dict[str, int] = {}
        self.known: dict[tuple[str, int], int] = {}
        self.leaks: list[str] = []
        self.checked = 0
        original = rig.fake.handle

        async def handle(
            token: str, method: str, params: Any, files: dict[str, UploadedFile] | None = None
        ) -> ApiResponse:
            response = await original(token, method, params, files)
            if response.status == 200 and method.lower() in ("sendmessage", "editmessagetext"):
                await self._seen(params)
            return response

        rig.fake.handle = handle  # type: ignore[method-assign]

    async def _seen(self, params: Mapping[str, Any]) -> None:
        chat = str(params.get("chat_id"))
        # Every public table the reader sits at: from its first message on (the hands sent with the
        # table as it is built), not only once the test knows the table.
        for table_id in sorted(await self.rig.store.tables_for_user(f"tg:{chat}")):
            if table_id.startswith("pub:"):
                self.tables.add(table_id)
        for table_id in sorted(self.tables):
            await self._check(table_id, chat, params)

    async def _check(self, table_id: str, chat: str, params: Mapping[str, Any]) -> None:
        stored = await self.rig.store.load(table_id)
        if stored is None:
            return
        doc = TableDoc.model_validate_json(stored.document)
        if doc.game is None:
            return
        state = Table(self.rig, None, {}).cache.state(doc.serial, doc.game.spec, doc.game.actions)  # type: ignore[arg-type]
        if state.deal_number != self.deal.get(table_id):
            self.deal[table_id] = state.deal_number
            self.known = {k: v for k, v in self.known.items() if k[0] != table_id}
        if not state.finished:
            for s, hand in enumerate(state.deal.hands):
                self.known[table_id, s] = self.known.get((table_id, s), 0) | hand
        seat = next((i for i, s in enumerate(doc.seats) if s.user_id == chat), None)
        if seat is None:
            return
        private = set(cardspy.secret_cards(state)) - set(cards_of(self.known.get((table_id, seat), 0)))
        found = cardspy.leaks(cardspy.telegram_parts(params), private, [doc.seats[seat].lang or "en"])
        self.checked += 1
        if found:
            self.leaks.append(f"{doc.seats[seat].name}: {found}")


class PublicTable(Table):
    """A public table played by its people in their private chats."""

    public_id: str = ""

    @property
    def table_id(self) -> str:
        return self.public_id

    async def _type(self, user: FakeUser, state: GameState, seat: int, action: Any) -> None:
        from tgkit import typed

        await self.rig.say(user, user, typed(action, state, seat).lstrip("/"))


@pytest.fixture
async def prig() -> AsyncIterator[PublicRig]:
    rig = PublicRig(settings_=settings(public_computers_after=COMPUTERS_AFTER))
    await rig.start()
    await rig.start_public()
    try:
        yield rig
    finally:
        await rig.close()


def person(rig: Rig, name: str, lang: str) -> FakeUser:
    user = rig.fake.add_user(name, language_code=lang)
    rig.fake.user_starts_bot(user)
    return user


def status_message(rig: Rig, user: FakeUser) -> FakeMessage:
    """The queue's status message in the user's private chat (the last with its Cancel button, or the
    one the queue's last edit left)."""
    for message in reversed(rig.fake.bot_messages(user)):
        if any(d.startswith("C") for d in message.callback_data):
            return message
    raise AssertionError("no status message with a Cancel button")


def button_of(message: FakeMessage, name: str, args: tuple[str, ...] = ()) -> str:
    for data in message.callback_data:
        if decode_payload(data)[:2] == (name, args):
            return data
    raise AssertionError(f"no {name} {args} button on {message.text!r}")


async def seated(rig: PublicRig, user: FakeUser) -> str | None:
    """The public table the user sits at; None while not seated, or seated at a match whose table is
    being built (the queue names the match until the builder confirms the table)."""
    at = await rig.public.queue.seated_at(f"tg:{user.id}")
    return at if at is not None and at.startswith("pub:") else None


def texts(rig: Rig, user: FakeUser) -> list[str]:
    return [m.text or "" for m in rig.fake.bot_messages(user)]


async def test_three_matched_play_a_deal_a_cancelled_one_never_seated(prig: PublicRig) -> None:
    rig = prig
    spy = Spy(rig)
    # People are matched by their public rating (the ladder's; 1500 for a newcomer, each preset).
    rating = rig.public.desk.rating
    assert rating is not None
    assert await rating(Player("tg", "1", "X"), Options("polish", 3, "slow")) == {"polish": 1500.0}
    dora = person(rig, "Dora", "et")
    await rig.settle()
    await rig.say(dora, dora, "/play polish 3 slow")
    status = status_message(rig, dora)
    assert "Otsin mängu" in (status.text or ""), status.text
    await rig.press(dora, dora, status, button_of(status, "cancel"))
    assert not any(d for d in status_message_or_none(rig, dora)), "the Cancel button stays after cancelling"
    assert "Lahkusid järjekorrast" in texts(rig, dora)[-1] or any(
        "Lahkusid järjekorrast" in t for t in texts(rig, dora)
    )

    ann, bolek, vera = person(rig, "Ann", "en"), person(rig, "Bolek", "pl"), person(rig, "Vera", "ru")
    await rig.settle()
    await rig.public.queue.heartbeat("tg")
    for user in (ann, bolek, vera):
        await rig.say(user, user, "/play polish slow")
    for user in (ann, bolek, vera):
        await until(lambda user=user: seated(rig, user))
    table_id = await seated(rig, ann)
    assert table_id is not None and table_id.startswith("pub:")
    assert await seated(rig, bolek) == table_id == await seated(rig, vera)
    assert await rig.public.queue.seated_at(f"tg:{dora.id}") is None
    assert spy.tables == {table_id}
    await rig.settle()

    stored = await rig.store.load(table_id)
    assert stored is not None
    doc = TableDoc.model_validate_json(stored.document)
    assert sorted(s.user_id or "" for s in doc.seats) == sorted(str(u.id) for u in (ann, bolek, vera))
    # Each reads the table in their own language: the bid prompt's heading and their status message.
    for user, found in ((ann, "A table was found"), (bolek, "Znaleziono stół"), (vera, "Стол найден")):
        await until(lambda user=user, found=found: _has(rig, user, found))
    # Nobody's private chat names another platform id or username: only display names.
    for user in (ann, bolek, vera):
        for text in texts(rig, user):
            for other in (ann, bolek, vera):
                assert str(other.id) not in text

    table = PublicTable(rig, None, {u.first_name: u for u in (ann, bolek, vera)})  # type: ignore[arg-type]
    table.public_id = table_id
    first_deal = (await table.state())[1]
    assert first_deal is not None
    for _ in range(400):
        _, state = await table.state()
        assert state is not None
        if state.deal_number != first_deal.deal_number or state.finished:
            break
        assert await table.move()
    else:
        raise AssertionError("the deal did not end")
    await rig.settle()
    assert spy.checked > 20
    assert spy.leaks == []
    # Dora, who cancelled, never got a message of the table.
    for message in rig.fake.bot_messages(dora):
        assert not any(table_id in d for d in message.callback_data)
    assert rig.fake.stats.too_many_requests == 0


def status_message_or_none(rig: Rig, user: FakeUser) -> list[str]:
    """The callback data of the newest queue status message's buttons (none once it ended)."""
    for message in reversed(rig.fake.bot_messages(user)):
        if message.text and ("🔎" in message.text or "🚪" in message.text or "✅" in message.text):
            return list(message.callback_data)
    return []


async def _has(rig: Rig, user: FakeUser, text: str) -> bool:
    return any(text in t for t in texts(rig, user))


async def test_alone_after_the_wait_starts_with_computers(prig: PublicRig) -> None:
    rig = prig
    spy = Spy(rig)
    ela = person(rig, "Ela", "pl")
    await rig.settle()
    await rig.say(ela, ela, "/play fast")
    status = status_message(rig, ela)
    assert "Start with computers" not in json.dumps(status.reply_markup, ensure_ascii=False)
    rig.clock.advance(COMPUTERS_AFTER + 1)

    async def offered() -> bool:
        await rig.settle()
        return any(
            decode_payload(d)[:2] == ("queue", ("go",)) for d in status_message(rig, ela).callback_data
        )

    await until(offered)
    status = status_message(rig, ela)
    assert "Zacznij z komputerami" in json.dumps(status.reply_markup, ensure_ascii=False)
    # Keep waiting hides the offer; it comes back after another wait.
    await rig.press(ela, ela, status, button_of(status, "queue", ("wait",)))
    assert not any(decode_payload(d)[1] == ("go",) for d in status_message(rig, ela).callback_data)
    rig.clock.advance(COMPUTERS_AFTER + 1)
    await until(offered)
    status = status_message(rig, ela)
    go = button_of(status, "queue", ("go",))
    await rig.press(ela, ela, status, go)
    table_id = await seated(rig, ela)
    assert table_id is not None and table_id.startswith("pub:")
    assert spy.tables == {table_id}
    stored = await rig.store.load(table_id)
    assert stored is not None
    doc = TableDoc.model_validate_json(stored.document)
    assert [s.kind for s in doc.seats].count("ai") == 2 and doc.status == "game"
    assert doc.settings.turn_seconds == 30  # fast
    # The button, gone from the chat, sent again by a modified client opens no second table; /play is
    # refused while seated.
    again = from_payload(go, ChatRef("tg", str(ela.id), "Ela", True), UserRef("tg", str(ela.id), "Ela", "pl"))
    answer = await rig.bot.runtime.handle(again)
    assert [m.text for m in answer] == ["Nie jesteś w kolejce. /play znajduje grę."]
    await rig.say(ela, ela, "/play")
    assert await seated(rig, ela) == table_id
    assert "Już siedzisz przy stole" in texts(rig, ela)[-1], texts(rig, ela)[-1]
    assert len([k for k in await rig.store.tables_for_user(f"tg:{ela.id}") if k.startswith("pub:")]) == 1
    assert spy.leaks == []


async def test_seated_at_a_group_table_is_refused_and_not_queued(prig: PublicRig) -> None:
    rig = prig
    ann, bob, cid = (rig.fake.add_user(n) for n in ("Ann", "Bob", "Cid"))
    for u in (ann, bob, cid):
        rig.fake.user_starts_bot(u)
    chat = rig.group("Friday", [ann, bob, cid])
    await seat_everyone(rig, chat, [ann, bob, cid])
    await rig.say(ann, ann, "/play")
    assert "You already sit at a table: «Friday»" in texts(rig, ann)[-1], texts(rig, ann)[-1]
    assert (await rig.public.queue.status(f"tg:{ann.id}")).queued is False


async def test_bad_options_group_and_cancel_answers(prig: PublicRig) -> None:
    rig = prig
    ann, bob = rig.fake.add_user("Ann"), rig.fake.add_user("Bob", language_code="uk")
    for u in (ann, bob):
        rig.fake.user_starts_bot(u)
    chat = rig.group("Friday", [ann, bob])
    await rig.settle()
    await rig.say(ann, ann, "/play polish 9")
    assert (
        "This game is played by 2, 3, 4 players." in texts(rig, ann)[-1] or "played by" in texts(rig, ann)[-1]
    )
    await rig.say(ann, ann, "/play polish sometimes")
    assert "I do not know that option" in texts(rig, ann)[-1]
    assert (await rig.public.queue.status(f"tg:{ann.id}")).queued is False
    await rig.say(chat, ann, "/play any fast")
    assert "private chat" in texts(rig, ann)[-1] or any(
        "private chat" in (m.text or "") for m in rig.fake.bot_messages(chat)
    )
    await rig.say(bob, bob, "/cancel")
    assert "Ви не в черзі" in texts(rig, bob)[-1], texts(rig, bob)[-1]
    await rig.say(bob, bob, "/play")
    await rig.say(bob, bob, "/play")
    assert "Ви вже в черзі" in "\n".join(texts(rig, bob)[-2:]), texts(rig, bob)[-2:]
    # A card typed after /play is still a move (no table: the usual answer), not the queue.
    await rig.say(ann, ann, "/play QS")
    assert (await rig.public.queue.status(f"tg:{ann.id}")).queued is False


async def test_queue_commands_count_against_the_command_budget() -> None:
    rig = PublicRig(settings_=settings(public_computers_after=COMPUTERS_AFTER, command_limit=3))
    await rig.start()
    await rig.start_public()
    try:
        ann = person(rig, "Ann", "en")
        await rig.settle()
        before = len(texts(rig, ann))  # the greeting of /start
        for _ in range(6):
            await rig.say(ann, ann, "/play polish sometimes")
        answers = texts(rig, ann)[before:]
        usage = sum("I do not know that option" in t for t in answers)
        assert 1 <= usage <= 3, answers  # /start counted too
        assert answers[usage:] == [answers[usage]] and answers[usage].startswith("Slow down"), answers
        await rig.say(ann, ann, "/play")
        assert (await rig.public.queue.status(f"tg:{ann.id}")).queued is False
    finally:
        await rig.close()


async def test_on_redis_three_are_matched_and_a_cancelled_one_is_not(redis_url: str) -> None:
    """The same flow with the queue and the tables in Redis (as several processes run it)."""
    store = RedisStore.from_url(redis_url, prefix="playnow")
    rig = PublicRig(store=store, settings_=settings(public_computers_after=COMPUTERS_AFTER))
    await rig.start()
    public = await rig.start_public()
    try:
        assert isinstance(public.queue, RedisQueue)
        spy = Spy(rig)
        dora = person(rig, "Dora", "et")
        await rig.settle()
        await rig.say(dora, dora, "/play")
        status = status_message(rig, dora)
        await rig.press(dora, dora, status, button_of(status, "cancel"))
        people = [person(rig, n, lang) for n, lang in (("Ann", "en"), ("Bolek", "pl"), ("Vera", "ru"))]
        await rig.settle()
        for user in people:
            await rig.say(user, user, "/play")
        for user in people:
            await until(lambda user=user: seated(rig, user))
        table_id = await seated(rig, people[0])
        assert table_id is not None and all([await seated(rig, u) == table_id for u in people])
        assert await rig.public.queue.seated_at(f"tg:{dora.id}") is None
        for user, found in zip(people, ("A table was found", "Znaleziono stół", "Стол найден"), strict=True):
            await until(lambda user=user, found=found: _has(rig, user, found))
        await rig.settle()
        assert spy.leaks == []
        assert spy.tables == {table_id}, (spy.tables, table_id)
        assert spy.checked >= 6, spy.checked
    finally:
        await rig.close()


class RelayRig(PublicRig):
    """As `thousand telegram` runs with Redis: `Runtime(relay="tg")`, public tables on its relay."""

    def make_bot(self, store: Store | None = None) -> TelegramBot:
        clock = self.clock
        rng = random.Random(self.rng.getrandbits(32))

        def service(store: Store, s: Settings) -> Service:
            return Service(store, s, handlers=Handlers, clock=clock.now, rng=rng)

        runtime = Runtime(
            self.settings,
            platform="telegram",
            store=store or self.store,
            service_factory=service,
            tick_interval=0.05,
            relay="tg",
        )
        return TelegramBot(
            runtime,
            self.fake.token,
            clock=clock,
            limits=self.limits,
            request=InProcessRequest(self.fake),
            updates_request=InProcessRequest(self.fake),
        )


async def test_with_the_runtime_relay_as_main_runs_it(redis_url: str) -> None:
    """The production wiring: the matcher's messages go through the runtime's Redis relay (its guard
    notes what was shown), and a player alone starts with computers there."""
    store = RedisStore.from_url(redis_url, prefix="playrelay")
    rig = RelayRig(store=store, settings_=settings(public_computers_after=0, redis_url=redis_url))
    await rig.start()
    public = await rig.start_public()
    try:
        assert rig.bot.runtime.relay is not None and public.relay is rig.bot.runtime.relay.relay
        spy = Spy(rig)
        ela = person(rig, "Ela", "pl")
        await rig.settle()
        await rig.say(ela, ela, "/play estonian 3 slow")

        async def offered() -> bool:
            await rig.settle()
            return any(decode_payload(d)[1] == ("go",) for d in status_message(rig, ela).callback_data)

        await until(offered)
        status = status_message(rig, ela)
        await rig.press(ela, ela, status, button_of(status, "queue", ("go",)))
        table_id = await seated(rig, ela)
        assert table_id is not None
        stored = await rig.store.load(table_id)
        assert stored is not None
        doc = TableDoc.model_validate_json(stored.document)
        assert doc.settings.preset == "estonian" and doc.settings.turn_seconds == 240
        await until(lambda: _has(rig, ela, "Twój stół z komputerami jest gotowy."))
        assert spy.tables == {table_id} and spy.leaks == []
    finally:
        await rig.close()
