"""What reaches the bot in a group depends on BotFather's privacy mode, and the fake Bot API delivers as
Telegram does in both: with privacy on (the default of a real bot, and of the fake) a plain `!bid 120` in
the group never reaches the bot, a `/bid 120` and a reply to the bot's message do; with privacy off
everything does. `/help` says which works for this bot (it reads the mode from getMe).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from tgkit import Rig, Table, VirtualClock, decide, seat_everyone, typed

from bot.i18n import translator
from fakes.telegram import FakeMessage, FakeTelegram, FakeUser

ON_NOTE = "I see !bid 120 there only as a reply to one of my messages"
OFF_NOTE = "In a group, /bid 120 and !bid 120 both work"


@pytest.fixture
async def open_rig() -> AsyncIterator[Rig]:
    clock = VirtualClock()
    rig = Rig(clock=clock, fake=FakeTelegram(clock=clock, privacy_mode=False))
    await rig.start()
    try:
        yield rig
    finally:
        await rig.close()


async def _two_players(rig: Rig) -> tuple[Table, list[FakeUser]]:
    people = [rig.fake.add_user(name) for name in ("Alice", "Bob")]
    chat = rig.group("Cards", people)
    return await seat_everyone(rig, chat, people), people


async def _next_move_text(table: Table) -> tuple[FakeUser, str, int]:
    """Who acts now, the command of a legal move (`/bid 110`, `/pass`...), and the actions so far."""
    doc, state = await table.state()
    assert state is not None and state.to_act is not None and doc.game is not None
    user = table.rig.fake._world.users[int(doc.seats[state.to_act].user_id or 0)]
    return user, typed(decide(state, state.to_act, 3), state, state.to_act), len(doc.game.actions)


async def _actions(table: Table) -> int:
    doc = await table.doc()
    assert doc.game is not None
    return len(doc.game.actions)


async def _reply(rig: Rig, table: Table, user: FakeUser, text: str, to: FakeMessage) -> None:
    rig.acted()
    rig.fake.user_sends(table.chat, user, text, reply_to=to)
    await rig.settle()


async def test_privacy_on_bang_commands_only_as_replies(rig: Rig) -> None:
    assert rig.fake.privacy_mode
    table, people = await _two_players(rig)
    user, text, before = await _next_move_text(table)
    updates = rig.last_update_id()
    await rig.say(table.chat, user, "!" + text[1:])
    assert rig.last_update_id() == updates  # Telegram never delivered it
    assert await _actions(table) == before
    # As a reply to the bot's table message it is delivered, and plays.
    await _reply(rig, table, user, "!" + text[1:], rig.fake.last_bot_message(table.chat))
    assert await _actions(table) == before + 1
    # A slash command always reaches the bot.
    user, text, before = await _next_move_text(table)
    await rig.say(table.chat, user, text)
    assert await _actions(table) == before + 1
    # The help says what works with privacy on, in the reader's language.
    await rig.say(people[0], people[0], "/help")
    help_text = rig.fake.last_bot_message(people[0]).content
    assert ON_NOTE in help_text and OFF_NOTE not in help_text
    people[1].language_code = "pl"
    await rig.say(people[1], people[1], "/help")
    polish = rig.fake.last_bot_message(people[1]).content
    assert ON_NOTE not in polish
    assert (
        translator("pl")._(
            "In a group, type commands with a slash (/bid 120) or use the buttons: I see !bid 120 there only "
            "as a reply to one of my messages. In our private chat, bid 120 and !bid 120 work too."
        )
        in polish
    )


async def test_privacy_off_bang_commands_work_in_the_group(open_rig: Rig) -> None:
    rig = open_rig
    table, people = await _two_players(rig)
    for _ in range(3):
        user, text, before = await _next_move_text(table)
        await rig.say(table.chat, user, "!" + text[1:])
        assert await _actions(table) == before + 1
    # Plain talk in the group reaches the bot now, and is left alone.
    sent = len(rig.fake.calls_to("sendMessage"))
    await rig.say(table.chat, people[0], "good luck everyone")
    assert len(rig.fake.calls_to("sendMessage")) == sent
    await rig.say(people[0], people[0], "/help")
    help_text = rig.fake.last_bot_message(people[0]).content
    assert OFF_NOTE in help_text and ON_NOTE not in help_text
