"""The command budget (`bot.throttle`): one person's flood of commands in a chat gets one "slow down", then
silence, while the game goes on: moves are never turned away, other people are not affected, and the
budget is one for every process (the store counts, Redis included)."""

from __future__ import annotations

import asyncio
import random

import pytest
from botkit import Clock, Harness, errors, make_user, quiet_settings

from bot.handlers import Handlers
from bot.model import ChatRef, Command, Group, Message, Private, Sender
from bot.service import Service
from bot.storage import MemoryStore, RedisStore, StorageUnavailable, Store
from bot.throttle import THROTTLED_KIND

LIMIT = 5


def _harness(clock: Clock, store: Store | None = None, **settings: object) -> Harness:
    store = store or MemoryStore(clock=clock)
    values: dict[str, object] = {"command_limit": LIMIT, "command_window": 60.0}
    values.update(settings)
    return Harness(Service(store, quiet_settings(**values), handlers=Handlers, clock=clock), store, clock)


def _throttled(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.kind == THROTTLED_KIND]


# --------------------------------------------------------------------------- the store's counter


async def _count_hits(store: Store) -> None:
    assert [(await store.count_hit("k", 10.0))[0] for _ in range(3)] == [1, 2, 3]
    count, left = await store.count_hit("other", 10.0)
    assert count == 1 and 9.0 < left <= 10.0


async def test_the_memory_store_counts_hits_per_window() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock)
    await _count_hits(store)
    clock.advance(4.0)
    count, left = await store.count_hit("k", 10.0)
    assert count == 4 and left == pytest.approx(6.0)
    clock.advance(6.0)
    assert await store.count_hit("k", 10.0) == (1, 10.0)  # the window closed: a new one opens


async def test_redis_counts_hits_once_across_processes(redis_url: str, redis_prefix: str) -> None:
    stores = [RedisStore.from_url(redis_url, prefix=redis_prefix) for _ in range(2)]
    try:
        await _count_hits(stores[0])
        counts = await asyncio.gather(*(stores[i % 2].count_hit("many", 5.0) for i in range(40)))
        assert sorted(c for c, _ in counts) == list(range(1, 41))  # atomic: each caller its own count
        count, left = await stores[1].count_hit("short", 0.2)
        assert count == 1 and 0 < left <= 0.2
        await asyncio.sleep(0.3)
        assert (await stores[0].count_hit("short", 0.2))[0] == 1  # expired with its window
    finally:
        for store in stores:
            await store.close()


# --------------------------------------------------------------------------- the service


async def test_a_flood_of_rules_gets_one_slow_down_then_nothing() -> None:
    clock = Clock()
    h = _harness(clock)
    ala, bartek = make_user(0, "pl"), make_user(1)
    answers = [await h.text(ala, "/rules") for _ in range(30)]
    answered = [a for a in answers if any(isinstance(m.audience, Group) for m in a)]
    assert len(answered) == LIMIT
    slow = [m for a in answers for m in _throttled(a)]
    assert len(slow) == 1 and answers[LIMIT] == slow
    assert isinstance(slow[0].audience, Sender) and slow[0].audience.user == ala
    assert slow[0].text.startswith("Zwolnij, proszę") and "60 s" in slow[0].text  # her language
    assert all(a == [] for a in answers[LIMIT + 1 :])
    # Somebody else in the chat, and the same person elsewhere, have budgets of their own.
    assert any(isinstance(m.audience, Group) for m in await h.text(bartek, "/rules"))
    private = ChatRef("t", ala.user_id, "", True)
    assert await h.text(ala, "/help", chat=private)
    # After the window, the flooder is answered again.
    clock.advance(61.0)
    assert any(isinstance(m.audience, Group) for m in await h.text(ala, "/rules"))
    assert h.service.throttle.warned == 1 and h.service.throttle.silenced == 30 - LIMIT - 1


async def test_moves_are_never_limited_and_refused_ones_go_quiet() -> None:
    clock = Clock()
    h = _harness(clock)
    users = [make_user(i) for i in range(3)]
    await h.open_table(users)
    flooder = users[0]
    for _ in range(LIMIT + 3):
        await h.text(flooder, "/score")
    state = await h.state()
    seats = {i: u for i, u in enumerate(users)}
    # The flooder must still be able to act when it is her turn; everyone plays on.
    rng = random.Random(3)
    moved_by_flooder = 0
    for _ in range(40):
        state = await h.state()
        if state.to_act == 0:
            moved_by_flooder += 1
        version_before = (await h.doc())[0]
        assert await h.play_turn(rng, seats, sensible=True)
        assert (await h.doc())[0] > version_before  # the move was applied
    assert moved_by_flooder > 0
    # Wrong moves (not her turn) are charged: over the budget their refusals are not sent.
    clock.advance(61.0)
    state = await h.state()
    idle = next(u for i, u in seats.items() if i != state.to_act)
    refusals = [await h.text(idle, "/pass") for _ in range(LIMIT + 4)]
    assert all(errors(r) for r in refusals[:LIMIT])
    assert _throttled(refusals[LIMIT]) and not errors(refusals[LIMIT])
    assert all(not errors(r) and not _throttled(r) for r in refusals[LIMIT + 1 :])


async def test_commands_the_adapters_send_themselves_are_not_counted() -> None:
    clock = Clock()
    h = _harness(clock)
    ala = make_user(0)
    for _ in range(3 * LIMIT):
        await h.command(Command("title", (), h.chat, ala))
    assert h.service.throttle.warned == h.service.throttle.silenced == 0
    assert any(isinstance(m.audience, Group) for m in await h.text(ala, "/rules"))


async def test_asking_for_ones_hand_is_part_of_playing() -> None:
    """On Discord a player opens their hand with "My hand" every turn: never counted."""
    clock = Clock()
    h = _harness(clock)
    users = [make_user(i) for i in range(3)]
    await h.open_table(users)
    for _ in range(3 * LIMIT):
        hand = await h.text(users[1], "/hand")
        assert [m.kind for m in hand] == ["hand"]
    assert h.service.throttle.warned == 0


async def test_the_budget_can_be_switched_off() -> None:
    h = _harness(Clock(), command_limit=0)
    ala = make_user(0)
    answers = [await h.text(ala, "/rules") for _ in range(3 * LIMIT)]
    assert all(any(isinstance(m.audience, Group) for m in a) for a in answers)


class _Down(MemoryStore):
    async def count_hit(self, key: str, window: float) -> tuple[int, float]:
        raise StorageUnavailable("redis unavailable: test")


async def test_commands_go_through_when_the_store_cannot_count() -> None:
    clock = Clock()
    h = _harness(clock, _Down(clock=clock))
    ala = make_user(0)
    answers = [await h.text(ala, "/rules") for _ in range(2 * LIMIT)]
    assert all(any(isinstance(m.audience, Group) for m in a) for a in answers)


async def test_the_slow_down_reaches_only_its_sender() -> None:
    clock = Clock()
    h = _harness(clock)
    ala = make_user(0)
    for _ in range(LIMIT):
        await h.text(ala, "/rules")
    (slow,) = await h.text(ala, "/rules")
    assert slow.kind == THROTTLED_KIND
    assert isinstance(slow.audience, Sender) and not isinstance(slow.audience, Group | Private)


async def test_two_processes_share_one_budget(redis_url: str, redis_prefix: str) -> None:
    """Two bot processes on one Redis (a webhook behind a load balancer): the person's commands count
    once, whichever process gets them."""
    clock = Clock()
    stores = [RedisStore.from_url(redis_url, prefix=redis_prefix) for _ in range(2)]
    harnesses = [_harness(clock, store) for store in stores]
    ala = make_user(0)
    try:
        answers = [await harnesses[i % 2].text(ala, "/rules") for i in range(4 * LIMIT)]
        assert sum(any(isinstance(m.audience, Group) for m in a) for a in answers) == LIMIT
        assert sum(len(_throttled(a)) for a in answers) == 1
    finally:
        for h in harnesses:
            await h.service.close()
        for store in stores:
            await store.close()


async def test_the_slow_down_is_in_the_language_the_person_chose() -> None:
    clock = Clock()
    h = _harness(clock)
    ala = make_user(0, "en")
    await h.text(ala, "/lang uk")
    for _ in range(LIMIT - 1):
        await h.text(ala, "/rules")
    (slow,) = await h.text(ala, "/rules")
    assert slow.kind == THROTTLED_KIND and slow.text.startswith("Повільніше")


async def test_a_pressed_button_is_always_told_why_it_was_refused() -> None:
    """Over the budget a refused press still says why: the press is answered anyway (the refusal rides in
    that answer), and a blank answer would say that a move which was not made was done."""
    clock = Clock()
    h = _harness(clock)
    users = [make_user(i) for i in range(3)]
    await h.open_table(users)
    seats = dict(enumerate(users))
    state = await h.state()
    mover = seats[state.to_act]
    old = h.button_for(mover, "pass")
    assert old is not None
    assert await h.play_turn(random.Random(5), seats, buttons=0.0)  # the table moves on: `old` is stale
    private = ChatRef(mover.platform, mover.user_id, mover.name, True)
    version = (await h.doc())[0]
    for _ in range(LIMIT + 3):
        answer = await h.press(mover, old, chat=private)
        assert errors(answer), [m.text for m in answer]
        assert all(not isinstance(m.audience, Group) for m in errors(answer))
    assert (await h.doc())[0] == version  # nothing was stored
    assert h.service.throttle.warned == 1  # charged all the same: typed commands stay limited
    refused = await h.text(mover, "/pass", chat=private)
    assert not errors(refused) and not _throttled(refused)
