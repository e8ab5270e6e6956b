"""Nothing is shown older than what was shown (issue 18, part 1), one case at a time: a send drawn before
a wait (the channel's budget) is checked against what the channel or the DM holds after the wait.

Two processes on one Redis: `one` keeps Discord's real budget (5 per 5 s), and `two` is given a larger
one, so that its send gets through while `one`'s waits, the order a slower budget produced in the
reported runs.
"""

from __future__ import annotations

import asyncio

import pytest
from dckit import World, assert_no_unknown_message, live_pings_of, running_bot

from adapters.discord.client import BotConfig
from bot.commands import encode_payload
from bot.model import Button, ChatRef, Group, Message, Private, UserRef
from bot.storage import RedisStore
from fakes.discord import FakeDiscord, FakeUser

REAL = BotConfig(ack_after=1.0)
WIDE = BotConfig(ack_after=1.0, channel_limit=50)
"""A process whose own view of the budget lets its send through at once (as if it came first)."""


def chat(world: World) -> ChatRef:
    return ChatRef("dc", str(world.channel.id), "Card room · #thousand")


def notice(world: World, text: str) -> Message:
    return Message(Group(chat(world)), text, kind="notice")


def table(world: World, deal: int, text: str, version: int, *, notify: bool = False) -> Message:
    return Message(
        Group(chat(world)), text, key=f"table:s:{deal}", kind="table", notify=notify, version=version
    )


def hand(world: World, user: FakeUser, text: str, version: int, *, turn: bool = True) -> Message:
    """A player's hand; with `turn`, a move button (so the adapter pings them in the channel)."""
    buttons = ((Button("pass", encode_payload("pass", (), version, chat(world).key)),),) if turn else ()
    return Message(
        Private(UserRef("dc", str(user.id), user.global_name or user.username)),
        text,
        key="hand:t1",
        kind="hand",
        notify=True,
        buttons=buttons,
        version=version,
    )


def tables(fake: FakeDiscord, world: World) -> list[str]:
    return [m.embeds[0]["description"] for m in fake.messages(world.channel) if m.embeds]


async def fill_budget(bot: object, world: World) -> None:
    deliver = bot.deliver  # type: ignore[attr-defined]
    for i in range(5):
        await deliver([notice(world, f"notice {i}")])


async def test_a_first_post_that_waited_is_dropped_when_a_newer_table_is_out(
    fake: FakeDiscord, world: World, redis_url: str
) -> None:
    """Deal 2's table is posted while its first post (older) waits for the budget in another process:
    the first post, once its turn comes, sees the newer table and is not posted."""
    async with (
        running_bot(fake, RedisStore.from_url(redis_url), config=REAL) as one,
        running_bot(fake, RedisStore.from_url(redis_url), config=WIDE, sync=False) as two,
    ):
        await fill_budget(one, world)
        waiting = asyncio.create_task(one.deliver([table(world, 2, "Deal 2: bidding", 12, notify=True)]))
        await asyncio.sleep(0.3)
        await two.deliver([table(world, 2, "Deal 2: declarer Ala, talon", 15)])
        await waiting
    assert tables(fake, world) == ["Deal 2: declarer Ala, talon"]
    posted = [m.embeds[0]["description"] for m in world.channel.messages if m.embeds]
    assert posted == ["Deal 2: declarer Ala, talon"], "the older table was posted, even for a moment"
    assert_no_unknown_message(fake)


async def test_a_forgotten_table_is_not_posted_again(fake: FakeDiscord, world: World, redis_url: str) -> None:
    """A late edit of deal 1's table after deal 2's was posted (deal 1's reference is forgotten by then)
    is dropped, not posted as a new deal-1 table under deal 2's."""
    async with running_bot(fake, RedisStore.from_url(redis_url), config=REAL) as bot:
        await bot.deliver([table(world, 1, "Deal 1", 1, notify=True)])
        await bot.deliver([table(world, 2, "Deal 2", 10, notify=True)])
        await bot.deliver([table(world, 1, "Deal 1, late", 8)])
    assert tables(fake, world) == ["Deal 1", "Deal 2"]


async def test_an_older_dm_hand_is_not_sent_after_a_newer_one(
    fake: FakeDiscord, world: World, redis_url: str
) -> None:
    alice = world.users[0]
    async with running_bot(fake, RedisStore.from_url(redis_url), config=REAL) as bot:
        await bot.outbox.refs.set_wants_dm(alice.id, True)
        await bot.deliver([hand(world, alice, "Deal 2 hand", 20, turn=False)])
        await bot.deliver([hand(world, alice, "Deal 1 hand, late", 14, turn=False)])
    assert [m.embeds[0]["description"] for m in fake.dms(alice)] == ["Deal 2 hand"]
    ever = [m.embeds[0]["description"] for m in fake.dm_channel(alice).messages]
    assert ever == ["Deal 2 hand"], "the older hand was sent, even for a moment"


async def test_a_ping_for_a_turn_that_passed_is_not_posted(
    fake: FakeDiscord, world: World, redis_url: str
) -> None:
    """Bob's turn (version 5) is announced by a process whose channel budget is full; while it waits,
    Carol's turn (version 6) is pinged by another process. Bob's ping is then not posted, and Carol's is
    the one ping in the channel (deleted once, at the end)."""
    bob, carol = world.users[1], world.users[2]
    async with (
        running_bot(fake, RedisStore.from_url(redis_url), config=REAL) as one,
        running_bot(fake, RedisStore.from_url(redis_url), config=WIDE, sync=False) as two,
    ):
        await fill_budget(one, world)
        waiting = asyncio.create_task(
            one.deliver([notice(world, "Bob's turn"), hand(world, bob, "Bob's hand", 5)])
        )
        await asyncio.sleep(0.3)
        await two.deliver([notice(world, "Carol's turn"), hand(world, carol, "Carol's hand", 6)])
        await waiting
        [ping] = live_pings_of(fake, world.channel)
        assert ping.content.startswith(f"<@{carol.id}>")
        final = Message(Group(chat(world)), "Sheet", key="final:s", kind="final", notify=True, version=7)
        await one.deliver([final])
    assert live_pings_of(fake, world.channel) == []
    assert not any(m.content.startswith(f"<@{bob.id}>") for m in world.channel.messages)
    assert_no_unknown_message(fake)


async def test_a_ping_for_a_turn_that_passed_to_a_dm_player_is_not_posted(
    fake: FakeDiscord, world: World, redis_url: str
) -> None:
    """As above, but Carol has her hand by DM: her turn has no ping of its own, and Bob's, once its wait
    is over, must still not be posted (the channel shows no ping then)."""
    bob, carol = world.users[1], world.users[2]
    async with (
        running_bot(fake, RedisStore.from_url(redis_url), config=REAL) as one,
        running_bot(fake, RedisStore.from_url(redis_url), config=WIDE, sync=False) as two,
    ):
        await two.outbox.refs.set_wants_dm(carol.id, True)
        await fill_budget(one, world)
        waiting = asyncio.create_task(
            one.deliver([notice(world, "Bob's turn"), hand(world, bob, "Bob's hand", 5)])
        )
        await asyncio.sleep(0.3)
        await two.deliver([notice(world, "Carol's turn"), hand(world, carol, "Carol's hand", 6)])
        await waiting
        assert [m.embeds[0]["description"] for m in fake.dms(carol)] == ["Carol's hand"]
    assert not any(m.content.startswith("<@") for m in world.channel.messages), "a ping was posted"


async def test_no_ping_after_the_game_ended(fake: FakeDiscord, world: World, redis_url: str) -> None:
    """Bob's ping waits for the budget in one process while the game ends in the other: it is not posted
    under the final score sheet."""
    bob = world.users[1]
    async with (
        running_bot(fake, RedisStore.from_url(redis_url), config=REAL) as one,
        running_bot(fake, RedisStore.from_url(redis_url), config=WIDE, sync=False) as two,
    ):
        await fill_budget(one, world)
        waiting = asyncio.create_task(
            one.deliver([notice(world, "Bob's turn"), hand(world, bob, "Bob's hand", 5)])
        )
        await asyncio.sleep(0.3)
        final = Message(Group(chat(world)), "Sheet", key="final:s", kind="final", notify=True, version=6)
        await two.deliver([final])
        await waiting
    assert not any(m.content.startswith("<@") for m in world.channel.messages), "a ping was posted"


@pytest.mark.parametrize("kind", ["table", "result"])
async def test_a_forgotten_dm_of_a_public_table_is_not_posted_again(
    fake: FakeDiscord, world: World, redis_url: str, kind: str
) -> None:
    """The DM path of the case above (`DirectRoute.send`, a public table's per-deal DMs): a late edit of
    deal 1's table (or result) after deal 2's was posted in the DM (deal 1's reference is forgotten by
    then, `@dm:<kind>` keeps the latest only) is dropped, not posted as a new deal-1 message under deal
    2's (breakage held: the forgotten-message check in `DirectRoute.send` skipped)."""
    alice = world.users[0]
    reader = Private(UserRef("dc", str(alice.id), alice.global_name or alice.username))

    def dm(deal: int, text: str, version: int, *, notify: bool = False) -> Message:
        return Message(
            reader,
            text,
            key=f"{kind}:s:{deal}",
            kind=kind,
            notify=notify,
            version=version,
            table="pub:t1",
        )

    async with running_bot(fake, RedisStore.from_url(redis_url), config=REAL) as bot:
        await bot.deliver([dm(1, "Deal 1", 1, notify=True)])
        await bot.deliver([dm(2, "Deal 2", 10, notify=True)])
        await bot.deliver([dm(1, "Deal 1, late", 8)])
    ever = [m.embeds[0]["description"] for m in fake.dm_channel(alice).messages if m.embeds]
    assert ever == ["Deal 1", "Deal 2"], "the late edit of a forgotten DM was posted again"
    assert [m.embeds[0]["description"] for m in fake.dms(alice) if m.embeds] == ["Deal 1", "Deal 2"]
    assert world.channel.messages == []
