"""A basic group upgraded to a supergroup in the middle of a deal: the game goes on to the end in the new
chat (a new chat id: the table, its settings, indexes and deadline move), no message is lost, hands stay
one message per private chat, and buttons drawn before the upgrade still work.

Telegram tells the bot twice (a `migrate_to_chat_id` service message in the old chat, `migrate_from_chat_id`
in the new one) and answers every later send to the old id with 400 "group chat was upgraded to a
supergroup chat" and `migrate_to_chat_id`; both paths are played: with the service messages, and with
them lost (the refused send alone moves the table and the message is sent again to the new chat).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tgkit import Rig, Table, VirtualClock, decide, presses, seat_everyone

from bot.commands import decode_payload
from bot.storage import RedisStore
from bot.table import ChatSettings
from fakes.telegram import FakeChat, FakeTelegram, FakeUser

NAMES = ("Alice", "Bob", "Carol")


@pytest.fixture(params=["memory", "redis"])
async def any_rig(request: pytest.FixtureRequest, redis_prefix: str) -> AsyncIterator[Rig]:
    """The bot on the memory store, or on a real redis-server (the move is then one Lua script)."""
    if request.param == "memory":
        rig = Rig()
    else:
        url: str = request.getfixturevalue("redis_url")
        clock = VirtualClock()
        rig = Rig(
            store=RedisStore.from_url(url, prefix=redis_prefix), clock=clock, fake=FakeTelegram(clock=clock)
        )
    await rig.start()
    try:
        yield rig
    finally:
        await rig.close()
        if request.param == "redis":
            await rig.store.close()


UPGRADED = "Bad Request: group chat was upgraded to a supergroup chat"


def _basic_group(rig: Rig, people: list[FakeUser]) -> FakeChat:
    chat = rig.fake.add_group("Friday cards", members=people[1:], admins=people[:1], supergroup=False)
    rig.watch.groups.add(chat.id)
    return chat


async def _mid_deal(rig: Rig) -> tuple[Table, FakeChat, list[FakeUser]]:
    fake = rig.fake
    people = [fake.add_user(name) for name in NAMES]
    chat = _basic_group(rig, people)
    table = await seat_everyone(rig, chat, people, preset="polish")
    await rig.say(chat, people[0], "/settings turn 90")  # chat settings to carry over (table runs on)
    for _ in range(9):  # bidding and into the play of the first deal
        assert await table.move()
    doc, state = await table.state()
    assert doc.status == "game" and state is not None and not state.finished
    return table, chat, people


def _hand_messages(fake: FakeTelegram, user: FakeUser) -> list[int]:
    """The user's visible private messages carrying table buttons (hands)."""
    out = []
    for message in fake.bot_messages(user):
        if any(d[:1] not in ("", "h") and _table_of(d) for d in message.callback_data):
            out.append(message.message_id)
    return out


def _table_of(data: str) -> str | None:
    try:
        return decode_payload(data)[3]
    except ValueError:
        return None


def _no_lost_sends(fake: FakeTelegram, old: FakeChat, new: FakeChat, since: int) -> None:
    """Every send the old chat refused after the upgrade was made again, with the same text, in the new
    chat; no other call failed."""
    refused = []
    for call in fake.calls[since:]:
        if call.ok or call.method == "answerCallbackQuery":
            continue
        chat_id = str(call.params.get("chat_id"))
        if call.description == UPGRADED and chat_id == str(old.id):
            if call.method in ("sendMessage", "sendPhoto", "sendDocument"):
                refused.append(call.params.get("text") or call.params.get("caption"))
            continue
        if call.method == "editMessageText" and chat_id == str(old.id):
            continue  # the old chat's messages cannot be edited: posted anew, then refused above
        raise AssertionError(f"{call.method} failed: {call.description}")
    later = [c for c in fake.calls[since:] if c.ok and str(c.params.get("chat_id")) == str(new.id)]
    for text in refused:
        assert any((c.params.get("text") or c.params.get("caption")) == text for c in later), text


async def _finish_in(table: Table, new: FakeChat, people: list[FakeUser]) -> None:
    rig = table.rig
    table.chat = new
    await table.play_out()
    doc, state = await table.state()
    assert doc.status == "finished" and state is not None and state.finished
    assert doc.id == f"tg:{new.id}" and doc.chat_id == str(new.id)
    assert rig.watch.leaks == []
    assert rig.fake.stats.too_many_requests == 0
    for user in people:
        assert len(_hand_messages(rig.fake, user)) <= 1, user.first_name


async def test_upgrade_mid_deal_with_the_service_messages(any_rig: Rig) -> None:
    rig = any_rig
    fake = rig.fake
    table, old, people = await _mid_deal(rig)
    old_id, version = table.table_id, (await rig.store.load(table.table_id)).version  # type: ignore[union-attr]
    before_calls = len(fake.calls)
    before_old = len(fake.all_messages(old))
    new = fake.upgrade_to_supergroup(old)
    await rig.settle()

    new_id = f"tg:{new.id}"
    moved = await rig.store.load(new_id)
    assert moved is not None and moved.version == version  # moved as it was: old buttons still match
    assert await rig.store.load(old_id) is None
    assert await rig.store.table_for_chat(new_id) == new_id
    assert await rig.store.table_for_chat(old_id) is None
    for user in people:
        assert await rig.store.tables_for_user(f"tg:{user.id}") == {new_id}
    settings = await rig.store.load(f"settings:{new_id}")
    assert settings is not None and ChatSettings.model_validate_json(settings.document).turn_seconds == 90
    # The turn deadline moved with the table: under the new id, none left under the old one (the timer
    # would fire for a table that is gone, and the game would wait for ever).
    assert await rig.store.tables_with_deadlines(10) == [new_id]
    # The group sees the table at once in the new chat; nothing more reached the old one.
    assert [_table_of(d) for m in fake.bot_messages(new) for d in m.callback_data][:1] == [new_id]
    assert all(not m.from_bot for m in fake.all_messages(old)[before_old:])

    # A hand button drawn before the upgrade (its payload names the old table) still plays.
    table.chat = new
    doc, state = await table.state()
    assert state is not None and state.to_act is not None
    seat = doc.seats[state.to_act]
    user = fake._world.users[int(seat.user_id or 0)]
    action = decide(state, state.to_act, 5)
    name, args = presses(action, state, state.to_act)[0]
    old_buttons = [
        (m, d)
        for m in fake.bot_messages(user)
        for d in m.callback_data
        if _table_of(d) == old_id and decode_payload(d)[:2] == (name, args)
    ]
    assert old_buttons, "the hand has no button of the old table for the move"
    message, data = old_buttons[-1]
    actions = len(doc.game.actions)  # type: ignore[union-attr]
    await rig.press(user, user, message, data)
    after, _ = await table.state()
    assert after.game is not None and len(after.game.actions) > actions

    # A button on the old group's table message (still shown in the supergroup's history) answers too:
    # My hand brings the presser's hand to their private chat, nothing goes to the old chat.
    old_table = next(m for m in reversed(fake.bot_messages(old)) if m.callback_data)
    my_hand = next(d for d in old_table.callback_data if decode_payload(d)[0] == "hand")
    presser = people[1]
    hands_before = len(fake.all_messages(presser))
    query = await rig.press(old, presser, old_table, my_hand)
    assert fake.callback_query(query).answered
    assert len(fake.all_messages(presser)) > hands_before
    assert all(_table_of(d) == new_id for d in fake.last_bot_message(presser).callback_data)
    assert all(not m.from_bot for m in fake.all_messages(old)[before_old:])

    await _finish_in(table, new, people)
    _no_lost_sends(fake, old, new, before_calls)


async def test_upgrade_mid_deal_when_the_service_messages_are_lost(rig: Rig) -> None:
    """The bot never sees the service messages (updates lost): the first send to the old id is refused
    with `migrate_to_chat_id`, which moves the table, and that message goes to the new chat."""
    fake = rig.fake
    table, old, people = await _mid_deal(rig)
    before_calls = len(fake.calls)
    pending = len(fake.pending_updates)
    new = fake.upgrade_to_supergroup(old)
    lost = fake._world.updates[pending:]
    assert [("migrate_to_chat_id" in u["message"], "migrate_from_chat_id" in u["message"]) for u in lost] == [
        (True, False),
        (False, True),
    ]
    del fake._world.updates[pending:]  # both service messages lost before the bot fetched them
    fake._world.next_update_id -= len(lost)
    await rig.settle()
    assert await rig.store.load(f"tg:{new.id}") is None  # nothing known yet

    # Moves from the hand buttons (nobody can write in the old group) until one changes what the group
    # sees: that send is refused and moves the table.
    table.button_share = 1.0
    for _ in range(12):
        assert await table.move()
        if await rig.store.load(f"tg:{new.id}") is not None:
            break
    else:
        raise AssertionError("the table never moved")
    assert await rig.store.tables_with_deadlines(10) == [f"tg:{new.id}"]
    table.button_share = 0.7
    await _finish_in(table, new, people)
    refused = [c for c in fake.calls[before_calls:] if c.description == UPGRADED]
    assert refused, "the bot never met the upgrade"
    assert await rig.store.load(f"tg:{old.id}") is None
    _no_lost_sends(fake, old, new, before_calls)
