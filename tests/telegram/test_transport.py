"""The transport under the game: the shared rate limiter, the delivery queues, the conversion of texts."""

from __future__ import annotations

import asyncio
import re
import time

import pytest
from telegram.ext import ExtBot
from tgkit import Rig, VirtualClock

from adapters.telegram.clock import SystemClock
from adapters.telegram.content import MAX_CAPTION, MAX_TEXT, render, utf16_len
from adapters.telegram.limits import URGENT, SendArgs, SendLimits, Skipped
from adapters.telegram.outbox import Outbox
from adapters.telegram.queue import Op
from adapters.telegram.ratelimit import SharedRateLimiter
from adapters.telegram.reach import LINK_SECONDS, BadLink, StartIntent, link_key, parse_start, start_payload
from adapters.telegram.refs import Ref, chat_scope
from bot.model import Button, ChatRef, Group, Message, Private, UserRef
from bot.storage import MemoryStore, Store
from fakes.telegram import FakeTelegram, InProcessRequest

SENDS = ("sendmessage", "editmessagetext", "sendphoto", "senddocument")


def _group_message(chat_id: int, text: str, key: str | None = "table:x:0", **kw: object) -> Message:
    return Message(Group(ChatRef("tg", str(chat_id), "Cards")), text, key, **kw)  # type: ignore[arg-type]


def _windows_ok(times: list[float], limit: int, window: float) -> bool:
    """No `limit + 1` sends within any `window` seconds."""
    times = sorted(times)
    return all(times[i + limit] - times[i] >= window - 1e-6 for i in range(len(times) - limit))


# --------------------------------------------------------------------------- the rate limiter


async def test_a_429_holds_the_chat_for_the_full_retry_after(rig: Rig) -> None:
    fake = rig.fake
    alice = fake.add_user("Alice")
    chat = rig.group("Cards", [alice])
    fake.user_starts_bot(alice)
    await rig.settle()
    fake.faults.flood_next(1, retry_after=7, methods="sendMessage")
    await rig.say(chat, alice, "/new")
    sends = [(t, status) for t, method, chat_id, status in rig.watch.timeline if chat_id == str(chat.id)]
    assert [s for _, s in sends][:2] == [429, 200]
    assert sends[1][0] - sends[0][0] >= 7.0
    assert rig.bot.limiter.floods == 1
    assert "A table of 1000" in fake.last_bot_message(chat).content


async def test_network_errors_are_retried_with_backoff(rig: Rig) -> None:
    fake = rig.fake
    alice = fake.add_user("Alice")
    chat = rig.group("Cards", [alice])
    fake.user_starts_bot(alice)
    await rig.settle()
    fake.faults.fail_next(2, status=502, methods="sendMessage")
    await rig.say(chat, alice, "/new")
    statuses = [s for _, m, c, s in rig.watch.timeline if m == "sendmessage" and c == str(chat.id)]
    assert statuses == [502, 502, 200]
    assert "A table of 1000" in fake.last_bot_message(chat).content


async def test_two_processes_share_one_budget() -> None:
    """Two bots (as two processes would) pour 50 messages into one group at once: the store's shared
    buckets keep both within Telegram's 20 a minute, and the fake, counting on the same clock, agrees."""
    clock = VirtualClock()
    fake = FakeTelegram(clock=clock)
    store = MemoryStore(clock=clock)
    rig = Rig(store=store, clock=clock, fake=fake)
    alice = fake.add_user("Alice")
    chat = rig.group("Cards", [alice])
    bots = []
    for _ in range(2):
        limiter = SharedRateLimiter(store, fake.token.split(":")[0], clock=clock)
        bot = ExtBot(fake.token, request=InProcessRequest(fake), rate_limiter=limiter)
        await bot.initialize()
        bots.append(bot)

    async def pour(bot: ExtBot[None], n: int) -> None:
        for i in range(n):
            await bot.send_message(chat.id, f"message {i}")

    await asyncio.gather(pour(bots[0], 25), pour(bots[1], 25))
    times = [t for t, m, c, s in rig.watch.timeline if m == "sendmessage" and s == 200]
    assert len(times) == 50 and fake.stats.too_many_requests == 0
    assert _windows_ok(times, 20, 60.0) and _windows_ok(times, 1, 1.0)
    assert max(times) - min(times) >= 120.0  # 50 messages at 20 a minute
    for bot in bots:
        await bot.shutdown()
    await fake.close()


async def test_real_time_pacing_in_one_chat() -> None:
    """Without the virtual clock: three sends to one chat take about two seconds and meet no 429."""
    fake = FakeTelegram()
    alice = fake.add_user("Alice")
    fake.user_starts_bot(alice)
    limiter = SharedRateLimiter(MemoryStore(), fake.token.split(":")[0], clock=SystemClock())
    bot = ExtBot(fake.token, request=InProcessRequest(fake), rate_limiter=limiter)
    await bot.initialize()
    start = time.monotonic()
    for i in range(3):
        await bot.send_message(alice.id, f"message {i}")
    elapsed = time.monotonic() - start
    assert 1.9 <= elapsed < 4.0
    assert fake.stats.too_many_requests == 0 and limiter.waits == 2
    await bot.shutdown()
    await fake.close()


async def test_an_optional_send_is_dropped_when_the_budget_is_short() -> None:
    """`Message.optional` (the trick as it forms): sent when the budget is there, else dropped at once
    with nothing spent; a required send to the same chat waits for its turn."""
    fake = FakeTelegram()
    alice = fake.add_user("Alice")
    fake.user_starts_bot(alice)
    clock = VirtualClock()
    limiter = SharedRateLimiter(MemoryStore(clock=clock), fake.token.split(":")[0], clock=clock)
    bot = ExtBot(fake.token, request=InProcessRequest(fake), rate_limiter=limiter)
    await bot.initialize()
    optional = SendArgs(URGENT, optional=True)
    await bot.send_message(alice.id, "first", rate_limit_args=optional)  # the budget is there: sent
    with pytest.raises(Skipped):
        await bot.send_message(alice.id, "second", rate_limit_args=optional)  # 1 a second in a chat
    await bot.send_message(alice.id, "third")  # required: waits a second, then goes
    assert [m.text for m in fake.bot_messages(alice)] == ["first", "third"]
    assert limiter.skipped == 1 and limiter.waits == 1 and fake.stats.too_many_requests == 0
    await bot.shutdown()
    await fake.close()


def test_send_limits_from_the_environment() -> None:
    limits = SendLimits.parse("chat=2/1, group=30/60,global=100/1")
    assert limits == SendLimits((2, 1.0), (30, 60.0), (100, 1.0))
    assert SendLimits.parse(None) == SendLimits()
    with pytest.raises(ValueError):
        SendLimits.parse("group=20")
    keys = [b.key for b in SendLimits().buckets("42", -100123)]
    assert keys == ["tg:42:all", "tg:42:chat:-100123", "tg:42:group:-100123"]
    assert [b.key for b in SendLimits().buckets("42", 555)] == ["tg:42:all", "tg:42:chat:555"]


# --------------------------------------------------------------------------- the delivery queues


async def test_an_unchanged_edit_is_not_sent(rig: Rig) -> None:
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    adapter = rig.bot.adapter
    await adapter.deliver([_group_message(chat.id, "**Deal 1**\nBids: —")])
    await adapter.outbox.drain()
    await adapter.deliver([_group_message(chat.id, "**Deal 1**\nBids: —")])
    await adapter.deliver([_group_message(chat.id, "**Deal 1**\nBids: Bob 100")])
    await adapter.outbox.drain()
    methods = [m for _, m, c, _ in rig.watch.timeline if c == str(chat.id)]
    assert methods == ["sendmessage", "editmessagetext"]
    assert rig.fake.last_bot_message(chat).content == "Deal 1\nBids: Bob 100"


async def test_waiting_messages_for_one_key_are_merged(rig: Rig) -> None:
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    adapter = rig.bot.adapter
    await adapter.deliver([_group_message(chat.id, f"state {i}", notify=i == 0) for i in range(5)])
    await adapter.outbox.drain()
    await adapter.deliver([_group_message(chat.id, f"later {i}") for i in range(5)])
    await adapter.outbox.drain()
    methods = [m for _, m, c, _ in rig.watch.timeline if c == str(chat.id)]
    assert methods == ["sendmessage", "editmessagetext"]
    assert rig.fake.last_bot_message(chat).content == "later 4"
    assert adapter.outbox.stats.merged == 8


async def test_a_fresh_hand_replaces_the_old_one(rig: Rig) -> None:
    alice = rig.fake.add_user("Alice")
    rig.fake.user_starts_bot(alice)
    await rig.settle()
    user = UserRef("tg", str(alice.id), "Alice")
    adapter = rig.bot.adapter

    def hand(text: str, notify: bool) -> Message:
        buttons = ((Button("Q♠", "p:QS:3:tg:-1"),),)
        return Message(Private(user), text, "hand:tg:-1", buttons, notify=notify, kind="hand")

    await adapter.deliver([hand("hand 1", True)])
    await adapter.outbox.drain()
    first = rig.fake.last_bot_message(alice)
    await adapter.deliver([hand("hand 2", False)])  # an edit
    await adapter.outbox.drain()
    assert rig.fake.last_bot_message(alice).message_id == first.message_id
    await adapter.deliver([hand("hand 3", True)])  # their turn: a new message, the old one deleted
    await adapter.outbox.drain()
    latest = rig.fake.last_bot_message(alice)
    assert latest.message_id != first.message_id and latest.content == "hand 3"
    assert rig.fake.message(alice, first.message_id).deleted


class _ReadTogether:
    """A process's view of the shared store whose `get_refs` waits until both processes have read: the
    race of two processes posting one chat's hand at the same moment, made certain. `late` holds its
    reference write back so that the other one writes first."""

    def __init__(self, inner: Store, barrier: asyncio.Barrier, late: bool) -> None:
        self.inner = inner
        self.barrier = barrier
        self.late = late

    async def get_refs(self, scope: str) -> dict[str, str]:
        refs = await self.inner.get_refs(scope)
        await asyncio.wait_for(self.barrier.wait(), 5)
        return refs

    async def set_ref(self, scope: str, name: str, value: str, *, ttl_seconds: float) -> str | None:
        if self.late:
            await asyncio.sleep(0.2)
        return await self.inner.set_ref(scope, name, value, ttl_seconds=ttl_seconds)

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)


@pytest.mark.parametrize("newer_writes_last", [True, False])
async def test_two_processes_posting_one_hand_at_once_leave_one(rig: Rig, newer_writes_last: bool) -> None:
    """Both read the same old hand, both post a new one: whichever writes its reference second sees the
    other's message, and the newer of the two is the one left on screen."""
    alice = rig.fake.add_user("Alice")
    rig.fake.user_starts_bot(alice)
    await rig.settle()
    user = UserRef("tg", str(alice.id), "Alice")

    def hand(version: int) -> Op:
        buttons = ((Button("Q♠", f"p:QS:{version}:tg:-1"),),)
        text = f"hand v{version}"
        message = Message(Private(user), text, "hand:tg:-1", buttons, notify=True, kind="hand")
        return Op(alice.id, render(message), key="hand:tg:-1", fresh=True, replace_old=True, version=version)

    adapter = rig.bot.adapter
    adapter.outbox.put(hand(4))
    await adapter.outbox.drain()
    barrier = asyncio.Barrier(2)
    bots = [ExtBot(rig.fake.token, request=InProcessRequest(rig.fake)) for _ in range(2)]
    outboxes = []
    for version, b in zip((5, 6), bots, strict=True):
        await b.initialize()
        late = (version == 6) == newer_writes_last
        store = _ReadTogether(rig.store, barrier, late)
        outboxes.append(Outbox(b, store, clock=rig.clock.now))  # type: ignore[arg-type]
        outboxes[-1].put(hand(version))
    await asyncio.gather(*(o.drain() for o in outboxes))
    visible = [m for m in rig.fake.bot_messages(alice) if not m.deleted and m.content.startswith("hand")]
    assert [m.content for m in visible] == ["hand v6"]
    stored = Ref.decode((await rig.store.get_refs(chat_scope(alice.id)))["hand:tg:-1"])
    assert stored is not None and stored.version == 6 and stored.message_id == visible[0].message_id
    assert [o.stats.raced for o in outboxes] == ([0, 1] if newer_writes_last else [1, 0])
    for o, b in zip(outboxes, bots, strict=True):
        await o.close()
        await b.shutdown()


async def test_a_message_the_user_deleted_is_posted_again(rig: Rig) -> None:
    alice = rig.fake.add_user("Alice")
    rig.fake.user_starts_bot(alice)
    await rig.settle()
    user = UserRef("tg", str(alice.id), "Alice")
    adapter = rig.bot.adapter
    await adapter.deliver([Message(Private(user), "one", "k")])
    await adapter.outbox.drain()
    rig.fake.last_bot_message(alice).deleted = True
    await adapter.deliver([Message(Private(user), "two", "k")])
    await adapter.outbox.drain()
    assert rig.fake.last_bot_message(alice).content == "two"


async def test_an_edit_older_than_the_one_on_screen_is_dropped(rig: Rig) -> None:
    """Two processes edit one table message; the newer state got there first: the older one is dropped,
    also by the process that did not send the newer one (the version is in the shared reference)."""
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    adapter = rig.bot.adapter
    await adapter.deliver([_group_message(chat.id, "v5", notify=True, version=5)])
    await adapter.outbox.drain()
    await adapter.deliver([_group_message(chat.id, "v7", version=7)])
    await adapter.outbox.drain()
    first = rig.fake.last_bot_message(chat)
    assert first.content == "v7"
    other_bot = ExtBot(rig.fake.token, request=InProcessRequest(rig.fake))
    await other_bot.initialize()
    other = Outbox(other_bot, rig.store, clock=rig.clock.now)  # another process, the same store
    other.put(Op(chat.id, render(_group_message(chat.id, "v6", version=6)), key="table:x:0", version=6))
    await other.drain()
    assert other.stats.outdated == 1 and other.stats.edited == 0
    await adapter.deliver([_group_message(chat.id, "v6 again", version=6)])
    await adapter.outbox.drain()
    assert adapter.outbox.stats.outdated == 1
    assert rig.fake.last_bot_message(chat).content == "v7" and len(first.history) == 1
    # The same state again but newer (nothing to edit) moves the reference on: v8 then blocks a late v7.
    await adapter.deliver([_group_message(chat.id, "v7", version=8)])
    await adapter.outbox.drain()
    stored = Ref.decode((await rig.store.get_refs(chat_scope(chat.id)))["table:x:0"])
    assert stored is not None and stored.version == 8 and stored.message_id == first.message_id
    other.put(Op(chat.id, render(_group_message(chat.id, "late", version=7)), key="table:x:0", version=7))
    await other.drain()
    assert other.stats.outdated == 2 and rig.fake.last_bot_message(chat).content == "v7"
    await other.close()
    await other_bot.shutdown()


async def test_waiting_older_messages_give_way_and_fresh_ones_always_go(rig: Rig) -> None:
    alice = rig.fake.add_user("Alice")
    rig.fake.user_starts_bot(alice)
    await rig.settle()
    user = UserRef("tg", str(alice.id), "Alice")
    adapter = rig.bot.adapter

    def hand(text: str, version: int, notify: bool = False) -> Message:
        return Message(Private(user), text, "hand:tg:-1", notify=notify, kind="hand", version=version)

    await adapter.deliver([hand("v40", 40, True), hand("v42", 42), hand("v41", 41)])
    await adapter.outbox.drain()
    assert rig.fake.last_bot_message(alice).content == "v42" and adapter.outbox.stats.outdated == 1
    # A new table in the chat after the old one expired counts from 1 again: its first hand is fresh.
    await adapter.deliver([hand("new table v3", 3, True)])
    await adapter.outbox.drain()
    await adapter.deliver([hand("new table v4", 4)])
    await adapter.outbox.drain()
    hands = [m for m in rig.fake.messages(alice) if m.content.startswith(("v4", "new table"))]
    assert [m.content for m in hands] == ["new table v4"]


async def test_references_of_before_versions_still_read(rig: Rig) -> None:
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    adapter = rig.bot.adapter
    await adapter.deliver([_group_message(chat.id, "old", notify=True)])
    await adapter.outbox.drain()
    message = rig.fake.last_bot_message(chat)
    scope = chat_scope(chat.id)
    # As a process of the previous release wrote it: no version.
    old_value = f"{message.message_id}:text:abc:1800000000"
    await rig.store.set_ref(scope, "table:x:0", old_value, ttl_seconds=60)
    assert Ref.decode(old_value) == Ref(message.message_id, "text", "abc", 1800000000.0, None)
    await adapter.deliver([_group_message(chat.id, "edited", version=3)])
    await adapter.outbox.drain()
    assert rig.fake.last_bot_message(chat).message_id == message.message_id
    assert rig.fake.last_bot_message(chat).content == "edited"
    value = (await rig.store.get_refs(scope))["table:x:0"]
    ref = Ref.decode(value)
    assert ref is not None and ref.version == 3 and ref.message_id == message.message_id
    # ...and that release reads the new value too: four fields, the id first.
    parts = value.split(":")
    assert len(parts) == 4 and parts[0] == str(message.message_id)


async def test_long_texts_and_captions(rig: Rig) -> None:
    chat = rig.group("Cards", [rig.fake.add_user("Alice")])
    adapter = rig.bot.adapter
    long = "\n".join(f"line {i:05d} " + "x" * 80 for i in range(110))  # about 10,000 characters
    await adapter.deliver([_group_message(chat.id, long, key=None)])
    await adapter.outbox.drain()
    parts = rig.fake.bot_messages(chat)
    assert len(parts) == 3 and all(utf16_len(m.content) <= MAX_TEXT for m in parts)
    assert "\n".join(m.content for m in parts) == long
    await adapter.deliver([_group_message(chat.id, long, key="k")])
    await adapter.outbox.drain()
    keyed = rig.fake.last_bot_message(chat).content
    assert utf16_len(keyed) <= MAX_TEXT and keyed.endswith("…")
    png = _png()
    await adapter.deliver(
        [_group_message(chat.id, "**Score sheet**\n" + "row\n" * 400, key="final", image=png)]
    )
    await adapter.outbox.drain()
    last_two = rig.fake.bot_messages(chat)[-2:]
    assert last_two[0].text is not None and last_two[0].text.startswith("Score sheet")
    assert last_two[1].photo is not None and last_two[1].caption is None
    assert rig.fake.stats.too_many_requests == 0


def test_markup_becomes_telegram_html() -> None:
    content = render(Message(Group(ChatRef("tg", "-1")), "**Bid** _now_ `QS` <b> & \\*", None))
    assert content.text == "<b>Bid</b> <i>now</i> <code>QS</code> &lt;b&gt; &amp; *"
    caption = render(Message(Group(ChatRef("tg", "-1")), "x" * (MAX_CAPTION + 1), "k", image=_png()))
    assert caption.kind == "photo" and caption.text == "" and caption.lead


def test_deep_link_payloads() -> None:
    """Signed for one person, one group, one action, until an expiry; anything else is a `BadLink`."""
    key, now = link_key(None, "123456:token"), 1_800_000_000.0
    payload = start_payload(key, "join", "-1002000000001", 777, now=now)
    assert payload.startswith("j-1002000000001_") and re.fullmatch(r"[A-Za-z0-9_-]{1,64}", payload)
    assert parse_start(key, payload, 777, now=now + 60) == StartIntent("join", "-1002000000001", None)
    longest = start_payload(key, "new", -1009999999999999999, 99999999999999, now=now, arg="estonian")
    assert len(longest) <= 64 and parse_start(key, longest, 99999999999999, now=now) == StartIntent(
        "new", "-1009999999999999999", "estonian"
    )
    assert parse_start(key, None, 777, now=now) is None and parse_start(key, " ", 777, now=now) is None
    other_key = link_key("x" * 40, "123456:token")
    bad = [
        (key, payload, 778, now),  # made for someone else
        (key, payload.replace("-1002000000001", "-1002000000002"), 777, now),  # another group
        (key, "n" + payload[1:], 777, now),  # another action
        (key, payload, 777, now + LINK_SECONDS + 1),  # expired
        (other_key, payload, 777, now),  # another deployment's key
        (key, "j-1002000000001", 777, now),  # the unsigned form of before
        (key, "hello", 777, now),
        (key, payload[:-1] + ("A" if payload[-1] != "A" else "B"), 777, now),  # one character changed
    ]
    for k, p, user, at in bad:
        with pytest.raises(BadLink):
            parse_start(k, p, user, now=at)


def _png() -> bytes:
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0)
    raw = b"".join(b"\0" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


async def test_readiness_follows_the_connection_to_telegram(rig: Rig) -> None:
    health = rig.bot.runtime.health
    ready, _ = await health.readiness()
    assert ready

    async def until(want: bool, timeout: float) -> dict[str, str]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            ready, checks = await health.readiness()
            if ready == want:
                return checks
            assert loop.time() < deadline, checks
            await asyncio.sleep(0.02)

    rig.fake.faults.fail_next(1, status=502, methods="getUpdates")
    checks = await until(False, 5)
    assert "Telegram" in checks["telegram"]
    await until(True, 10)
    alice = rig.fake.add_user("Alice")
    rig.fake.user_starts_bot(alice)
    await rig.settle()
    assert rig.fake.bot_messages(alice)  # polling goes on
