"""Hypothesis fuzz through the Telegram adapter: random messages and button presses from random people,
against the real bot (PTB, adapter, runtime, service) and the fake Bot API (`tests/telegram/tgkit`).

People type random text and commands in groups and in their private chats, press real buttons of any
message they can see (other people's, stale, other tables'), and press made-up `callback_data` (a
modified client; Telegram itself would refuse data that is on no button, the bot must not rely on it),
while the players to act keep the games going. After every step, once the bot settled:

- every command the adapter made passed the oracle of `relkit` (judged around `Service.handle`, with the
  `is_admin` the adapter asked Telegram for), and so did every turn timer;
- no update failed in the adapter, no error was logged, every button press was answered;
- no group message showed a private card (the rig's watch, at every group send and edit), and no group
  message repeats a text that was meant for one person (a Sender message);
- the fake answered no 429.

`THOUSAND_FUZZ_TG_CASES` sets the least number of updates (CI: 300; the full run: 3,000).
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import types
from typing import Any, ClassVar

from fuzz_machine import (
    FUZZ_SEED,
    arg_strategy,
    fuzz_rounds,
    fuzz_seed,
    payload_text_strategy,
    restore_secrets,
    run_seeded,
    seed_secrets,
    word_strategy,
)
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule
from relkit import ErrorLog, Oracle, Snapshot, snapshot
from tgkit import Rig, Table, seat_everyone

from bot.markup import to_plain
from bot.model import ChatRef, Command, Message, Sender, UserRef
from bot.snapshot import GameCache
from fakes.telegram import FakeChat, FakeMessage, FakeUser
from fakes.telegram.models import CallbackQueryRecord

STEPS = 40

text_strategy = st.one_of(
    st.builds(
        lambda prefix, word, args: prefix + word + ("" if not args else " " + " ".join(args)),
        st.sampled_from(["/", "!", "", "/"]),
        word_strategy,
        st.lists(arg_strategy, max_size=4),
    ),
    st.builds(
        lambda word, args: f"/{word}@thousand_test_bot " + " ".join(args),
        word_strategy,
        st.lists(arg_strategy),
    ),
    st.text(min_size=1, max_size=200),
    st.builds(lambda c, n: c * n, st.characters(), st.integers(1000, 4096)),
)


class TelegramFuzz(RuleBasedStateMachine):
    cases: ClassVar[int] = 0
    presses: ClassVar[int] = 0
    forged: ClassVar[int] = 0
    moves: ClassVar[int] = 0

    def __init__(self) -> None:
        super().__init__()
        self._secrets = seed_secrets(3)
        # Replayed games, one cache per example: every example seeds `secrets` alike, so its n-th table has
        # the serial the n-th table of every other example had, maybe with other rules (a shared cache then
        # replayed one game's actions on another's state).
        self._cache = GameCache(64)
        self.errors = ErrorLog()
        self.errors.__enter__()
        self.loop = asyncio.new_event_loop()
        self.problems: list[str] = []
        self.sender_texts: set[str] = set()
        self.rig = Rig()
        self.run(self.setup())

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    async def setup(self) -> None:
        rig = self.rig
        await rig.start()
        self.judge_service(rig)
        fake = rig.fake
        names = ("Alice", "Bob", "Carol", "Dan", "Eve", "Fay", "Gus")
        self.people: list[FakeUser] = [fake.add_user(n, language_code="en") for n in names]
        alice, bob, carol, dan, eve, fay, gus = self.people
        g1 = rig.group("Cards", [alice, bob, carol, fay, gus])
        g2 = rig.group("Other", [dan, eve, fay, gus], admins=[eve])
        g3 = rig.group("Empty", [alice, dan, gus])
        self.groups: list[FakeChat] = [g1, g2, g3]
        self.tables: list[Table] = [
            await seat_everyone(rig, g1, [alice, bob, carol]),
            await seat_everyone(rig, g2, [dan, eve], computers=1, preset="estonian"),
        ]
        for table in self.tables:
            table.rng = random.Random(5)
        fake.user_starts_bot(fay)
        await rig.settle()

    def judge_service(self, rig: Rig) -> None:
        """Judge every command the adapter hands to the service, and every timer firing, one at a time."""
        service = rig.bot.runtime.service
        handle, tick = service.handle, service.tick
        oracle = Oracle(types.SimpleNamespace(state=self._state))  # type: ignore[arg-type]
        lock = asyncio.Lock()

        async def judged(command: Command) -> list[Message]:
            async with lock:
                before: Snapshot = await snapshot(rig.store)
                messages = await handle(command)
                after: Snapshot = await snapshot(rig.store)
            for m in messages:
                if isinstance(m.audience, Sender):
                    self.sender_texts.add(to_plain(m.text).strip())
            verdict = oracle.judge(command, messages, before, after)
            self.problems += [f"{command}: {p}" for p in verdict.problems]
            return messages

        async def timed(now: float | None = None) -> list[Message]:
            async with lock:
                before: Snapshot = await snapshot(rig.store)
                messages = await tick(now)
                after: Snapshot = await snapshot(rig.store)
            timer = Command("timer", (), ChatRef("tg", "0"), UserRef("timer", "timer", "timer"))
            verdict = oracle.judge(timer, messages, before, after, timer=True)
            self.problems += [f"timer: {p}" for p in verdict.problems]
            return messages

        service.handle = judged  # type: ignore[method-assign]
        service.tick = timed  # type: ignore[method-assign]

    def _state(self, doc: Any) -> Any:
        if doc is None or doc.game is None:
            return None
        return self._cache.state(doc.serial, doc.game.spec, doc.game.actions)

    def teardown(self) -> None:
        try:
            self.run(self.rig.close())
        finally:
            restore_secrets(self._secrets)
            self.errors.__exit__()
            self.loop.close()

    # --- after every step ------------------------------------------------------------------------

    def check(self, queries: list[str]) -> None:
        rig = self.rig
        self.run(rig.settle(timeout=60))
        problems = list(self.problems)
        self.problems.clear()
        problems += rig.watch.leaks
        escaped = self.errors.take()
        if escaped:
            problems.append(f"errors were logged: {escaped}")
        if rig.bot.adapter.errors:
            problems.append(f"{rig.bot.adapter.errors} updates failed in the adapter")
        for query in queries:
            if not rig.fake.callback_query(query).answered:
                problems.append(f"button press {query} was not answered")
        if rig.fake.stats.too_many_requests:
            problems.append(f"{rig.fake.stats.too_many_requests} answers 429")
        for group in self.groups:
            for m in rig.fake.bot_messages(group):
                if m.content.strip() in self.sender_texts:
                    problems.append(f"a message meant for one person went to {group.title}: {m.content!r}")
        assert problems == [], "\n".join(problems)

    # --- people ---------------------------------------------------------------------------------

    def where(self, data: st.DataObject) -> tuple[FakeUser, FakeChat | FakeUser]:
        person = data.draw(st.sampled_from(self.people), label="person")
        chats: list[FakeChat | FakeUser] = [g for g in self.groups if g.is_member(person)]
        if person.started_bot and not person.blocked_bot:
            chats.append(person)
        return person, data.draw(st.sampled_from(chats), label="chat")

    @rule(data=st.data())
    def types_text(self, data: st.DataObject) -> None:
        person, where = self.where(data)
        text = data.draw(text_strategy, label="text")
        if not text.strip():
            return
        type(self).cases += 1
        self.rig.acted()
        self.rig.fake.user_sends(where, person, text)
        self.check([])

    def visible(self, person: FakeUser) -> list[FakeMessage]:
        fake = self.rig.fake
        chats: list[FakeChat | FakeUser] = [g for g in self.groups if g.is_member(person)]
        if person.started_bot:
            chats.append(person)
        return [m for c in chats for m in fake.bot_messages(c) if m.callback_data]

    @rule(data=st.data())
    def presses_a_button(self, data: st.DataObject) -> None:
        person = data.draw(st.sampled_from(self.people), label="person")
        messages = self.visible(person)
        if not messages:
            return
        message = data.draw(st.sampled_from(messages[-30:]), label="message")
        callback = data.draw(st.sampled_from(message.callback_data), label="button")
        type(self).cases += 1
        type(self).presses += 1
        self.rig.acted()
        where = person if message.chat.user is not None else message.chat
        query = self.rig.fake.user_presses(where, person, message.message_id, callback)
        self.check([query])

    @rule(data=st.data())
    def presses_made_up_data(self, data: st.DataObject) -> None:
        person = data.draw(st.sampled_from(self.people), label="person")
        messages = self.visible(person)
        if not messages:
            return
        message = data.draw(st.sampled_from(messages[-30:]), label="message")
        real = data.draw(st.sampled_from(message.callback_data))
        made_up = data.draw(
            st.one_of(
                payload_text_strategy,
                st.builds(
                    lambda head, tail: head + tail, st.sampled_from([real[:2], real[:-3], real]), st.text()
                ),
                st.sampled_from(
                    [d for m in self.rig.fake.bot_messages(self.groups[0]) for d in m.callback_data] or [real]
                ),
            ),
            label="data",
        )
        made_up = made_up.encode()[:64].decode("utf-8", "ignore") or "x"
        type(self).cases += 1
        type(self).forged += 1
        self.rig.acted()
        self.check([forge_press(self.rig, person, message, made_up)])

    @rule(data=st.data())
    def plays_on(self, data: st.DataObject) -> None:
        table = data.draw(st.sampled_from(self.tables), label="table")
        for _ in range(data.draw(st.integers(1, 4), label="moves")):
            before = self.rig.last_update_id()
            if not self.run(table.move()):
                return
            type(self).cases += self.rig.last_update_id() - before
            type(self).moves += 1
            self.check([])


def forge_press(rig: Rig, person: FakeUser, message: FakeMessage, data: str) -> str:
    """A callback query with any data on a message the person sees (as a modified client would send)."""
    world = rig.fake._world
    chat = message.chat
    query = CallbackQueryRecord(
        id=world.new_query_id(), user=person, chat=chat, message=message, data=data, created_at=world.clock()
    )
    world.callback_queries[query.id] = query
    update = {
        "id": query.id,
        "from": person.to_api(),
        "message": message.to_api(),
        "chat_instance": world.chat_instance(chat),
        "data": data,
    }
    world.enqueue("callback_query", update)
    return query.id


def test_fuzz_through_telegram() -> None:
    wanted = int(os.environ.get("THOUSAND_FUZZ_TG_CASES", 300))
    machine = TelegramFuzz
    machine.cases = machine.presses = machine.forged = machine.moves = 0
    seed = fuzz_seed()

    def done() -> bool:
        m = machine
        reached_kinds = m.presses > wanted // 30 and m.forged > wanted // 30 and m.moves > wanted // 10
        return m.cases >= wanted and reached_kinds

    def reached() -> str:
        m = machine
        return (
            f"{m.cases} updates, {m.presses} real buttons pressed by anyone, "
            f"{m.forged} made-up callback data, {m.moves} legal moves"
        )

    for rnd in fuzz_rounds(seed, done, reached):
        run_seeded(
            machine,
            settings(
                max_examples=max(4, math.ceil((wanted - machine.cases) / STEPS)),
                stateful_step_count=STEPS,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
            ),
            seed,
            rnd,
        )
    print(f"\nTelegramFuzz ({FUZZ_SEED}={seed}): {reached()}")
