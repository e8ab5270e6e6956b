"""Order of messages at a public table on Discord (issue 25 §3): in each person's DM, the status says a
table was found before the table appears, and a deal's result stands above the next deal's table and
hand (the hand a press updates in place included: a new deal's hand is posted below the result, not
drawn into the hand pressed above it).

Three people matched by `/thousand play` play the first deal by pressing their DM hands (the real
discord.py client against the fake Discord); the fake's record of every message created and edited in
each DM is the evidence.
"""

from __future__ import annotations

from test_play_now_discord import DmSpy, member, play_deal, public_bot, seated, settle, texts, until

from bot.i18n import translator
from bot.storage import MemoryStore
from fakes.discord import FakeDiscord, FakeMessage

TABLE, HAND, RESULT = 0x1565C0, 0x6A1B9A, 0xEF6C00


def _color(message: FakeMessage) -> int | None:
    return message.embeds[0].get("color") if message.embeds else None


async def test_found_before_the_table_and_a_result_before_the_next_deal_by_dm(fake: FakeDiscord) -> None:
    guild = fake.add_guild("Card room")
    channel = fake.add_text_channel(guild, "thousand")
    people = [member(fake, guild, name, "en-US") for name in ("Ann", "Bob", "Cid")]
    ids = {u.id for u in people}
    events: list[tuple[str, int, int, str, int | None]] = []

    def watch(change: str, msg: FakeMessage) -> None:
        reader = msg.channel.recipient
        if msg.channel.guild is None and reader is not None and reader.id in ids:
            events.append((change, reader.id, msg.id, texts(msg), _color(msg)))

    fake.watchers.append(watch)
    found = "✅ " + translator("en")._("A table was found: your game starts below.")
    async with public_bot(fake, MemoryStore()) as (bot, public):
        spy = DmSpy(fake, bot, people)
        for user in people:
            it = await fake.slash(
                user, fake.dm_channel(user), "thousand", "play", preset="polish", pace="slow"
            )
            await it.response()
        for user in people:
            await until(lambda user=user: seated(public, user))
        table_id = await seated(public, people[0])
        assert table_id is not None
        await settle(fake, bot)
        await play_deal(fake, bot, channel, table_id, people, spy)
        await settle(fake, bot)
        await spy.close()
        for user in people:
            mine = [e for e in events if e[1] == user.id]
            said = next((i for i, e in enumerate(mine) if e[0] == "edit" and e[3] == found), None)
            table = next((i for i, e in enumerate(mine) if e[0] == "create" and e[4] == TABLE), None)
            assert said is not None and table is not None and said < table, (user.username, said, table)
            shown = [m for m in fake.dms(user) if _color(m) in (TABLE, HAND, RESULT)]
            order = [(_color(m), "Deal 2" in texts(m) or "deal 2" in texts(m)) for m in shown]
            result = order.index((RESULT, False))
            # Below the result: the second deal's table, then its hand; nothing of deal 2 above it.
            assert order[result + 1 :] == [(TABLE, True), (HAND, True)], (user.username, order)
            assert all(not second for _, second in order[:result]), (user.username, order)


def test_coalesce_keeps_a_new_message_below_the_keyed_ones_before_it() -> None:
    """Two hands of one key in one batch with the deal's result between them: the merged hand is posted
    after the result (in its place it would stand above it); without a keyed message between, it keeps
    the first one's place."""
    from adapters.discord.routing import coalesce
    from bot.model import Message, Private, UserRef

    ann = Private(UserRef("dc", "1", "Ann"))
    bob = Private(UserRef("dc", "2", "Bob"))
    hand_1 = Message(ann, "hand deal 1", "hand:pub:x", kind="hand")
    result = Message(ann, "result", "result:s:1", notify=True, kind="result")
    hand_2 = Message(ann, "hand deal 2", "hand:pub:x", notify=True, kind="hand")
    assert [m.text for m in coalesce([hand_1, result, hand_2])] == ["result", "hand deal 2"]
    others = Message(bob, "result", "result:s:1", notify=True, kind="result")
    assert [m.text for m in coalesce([hand_1, others, hand_2])] == ["hand deal 2", "result"]
    edit = Message(ann, "hand deal 1 again", "hand:pub:x", kind="hand")
    assert [m.text for m in coalesce([hand_1, result, edit])] == ["hand deal 1 again", "result"]
