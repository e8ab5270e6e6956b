"""What people in a group and in their private chats see, one behaviour at a time."""

from __future__ import annotations

from tgkit import Rig, Table, button, lobby_message, seat_everyone

from bot.commands import decode_payload
from bot.i18n import LANGUAGES
from bot.snapshot import decode_action
from fakes.telegram import FakeChat, FakeMessage, FakeUser


def _notes(rig: Rig, chat: FakeChat) -> list[str]:
    return [m.content for m in rig.fake.bot_messages(chat)]


async def _three(rig: Rig, **kwargs: object) -> tuple[FakeChat, list[FakeUser], Table]:
    people = [rig.fake.add_user(n) for n in ("Alice", "Bob", "Carol")]
    chat = rig.group("Cards", people)
    table = await seat_everyone(rig, chat, people, **kwargs)  # type: ignore[arg-type]
    return chat, people, table


# --------------------------------------------------------------------------- seating


async def test_join_button_opens_the_private_chat_and_start_seats(rig: Rig) -> None:
    fake = rig.fake
    alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
    chat = rig.group("Friday cards", [alice, bob])
    fake.user_starts_bot(alice)
    await rig.settle()
    await rig.say(chat, alice, "/new")
    lobby = lobby_message(fake, chat)
    query = fake.callback_query(await rig.press(chat, bob, lobby, button(lobby, "j")))
    # Bob never started the bot: the answer opens the private chat with a deep link, nobody is seated.
    assert query.url is not None and query.url.startswith("https://t.me/thousand_test_bot?start=j")
    table = Table(rig, chat, {})
    assert len((await table.doc()).seats) == 1
    fake.user_starts_bot(bob, query.url.split("start=", 1)[1])
    await rig.settle()
    doc = await table.doc()
    assert [s.name for s in doc.seats] == ["Alice", "Bob"]
    greeting = fake.bot_messages(bob)[-1].content
    assert "Friday cards" in greeting
    assert "2. Bob" in lobby_message(fake, chat).content


async def test_new_by_someone_the_bot_cannot_write_to(rig: Rig) -> None:
    fake = rig.fake
    alice = fake.add_user("Alice")
    chat = rig.group("Cards", [alice])
    await rig.say(chat, alice, "/new russian")
    note = fake.last_bot_message(chat)
    link = note.buttons[0][0].url
    assert link is not None and "start=n" in link and "_russian_" in link
    assert await rig.store.load(f"tg:{chat.id}") is None  # not seated without a private chat
    fake.user_starts_bot(alice, link.split("start=", 1)[1])
    await rig.settle()
    doc = await Table(rig, chat, {}).doc()
    assert doc.title == "Cards" and doc.settings.preset == "russian" and doc.seats[0].name == "Alice"
    assert "Cards" in fake.bot_messages(alice)[-1].content


async def test_new_with_an_unknown_preset_is_refused_not_linked(rig: Rig) -> None:
    """What was typed after /new is not shown back in the group inside a link: only a preset's name rides
    in it; anything else goes to the service, which refuses it and opens nothing (the refusal is private,
    so the group is told only to open the chat)."""
    fake = rig.fake
    alice = fake.add_user("Alice")
    chat = rig.group("Cards", [alice])
    await rig.say(chat, alice, "/new kc")
    note = fake.last_bot_message(chat)
    urls = [b.url or "" for row in note.buttons for b in row]
    assert urls and not any("start=" in u or "kc" in u.lower() for u in urls), urls  # a plain Open the chat
    assert "kc" not in note.content.lower()
    assert await rig.store.load(f"tg:{chat.id}") is None


async def test_join_typed_in_the_group_answers_with_a_link(rig: Rig) -> None:
    fake = rig.fake
    alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
    chat = rig.group("Cards", [alice, bob])
    fake.user_starts_bot(alice)
    await rig.settle()
    await rig.say(chat, alice, "/new")
    await rig.say(chat, bob, "/join")
    note = fake.last_bot_message(chat)
    assert note.reply_to is not None and note.reply_to.sender is bob
    assert note.buttons[0][0].url is not None and "start=j" in note.buttons[0][0].url
    assert len((await Table(rig, chat, {}).doc()).seats) == 1


# --------------------------------------------------------------------------- commands


async def test_commands_for_this_bot_and_not_for_others(rig: Rig) -> None:
    fake = rig.fake
    alice = fake.add_user("Alice")
    chat = rig.group("Cards", [alice])
    fake.user_starts_bot(alice)
    await rig.settle()
    await rig.say(chat, alice, "/new@other_bot")
    await rig.say(chat, alice, "/frobnicate")
    assert fake.bot_messages(chat) == []
    assert await rig.store.load(f"tg:{chat.id}") is None
    await rig.say(chat, alice, "/new@thousand_test_bot")
    assert "A table of 1000" in fake.last_bot_message(chat).content
    before = len(fake.bot_messages(alice))
    await rig.say(chat, alice, "/frobnicate@thousand_test_bot")
    # Unknown, addressed to us: the answer goes to the sender only (privately), not to the group.
    assert "Unknown command" in fake.bot_messages(alice)[-1].content
    assert len(fake.bot_messages(alice)) == before + 1
    assert not any("Unknown command" in m for m in _notes(rig, chat))


async def test_command_menu_in_every_language(rig: Rig) -> None:
    fake = rig.fake
    for lang in ("", *LANGUAGES):
        for scope in ({"type": "all_group_chats"}, {"type": "all_private_chats"}):
            menu = dict(fake.commands(scope=scope, language_code=lang))
            assert {"new", "bid", "pass", "play", "hand", "settings", "export", "help"} <= set(menu)


async def test_settings_need_an_admin(rig: Rig) -> None:
    fake = rig.fake
    alice, bob, admin = fake.add_user("Alice"), fake.add_user("Bob"), fake.add_user("Ada")
    chat = rig.group("Cards", [alice, bob, admin], admins=[admin])
    for person in (alice, bob, admin):
        fake.user_starts_bot(person)
    await rig.settle()
    await rig.say(chat, alice, "/new")
    await rig.say(chat, bob, "/join")
    await rig.say(chat, bob, "/settings must_beat on")
    assert "Only the table's creator or a chat admin" in fake.bot_messages(bob)[-1].content
    assert (await Table(rig, chat, {}).doc()).settings.options.get("must_beat") is None
    await rig.say(chat, admin, "/settings must_beat on")
    assert "Settings changed" in fake.last_bot_message(chat).content
    assert (await Table(rig, chat, {}).doc()).settings.options["must_beat"] is True
    assert fake.calls_to("getChatMember")


# --------------------------------------------------------------------------- buttons and answers


async def test_stale_button_gets_an_alert_and_changes_nothing(rig: Rig) -> None:
    _, people, table = await _three(rig)
    fake = rig.fake
    doc, state = await table.state()
    assert state is not None and doc.game is not None
    before = len(doc.game.actions)
    seat = state.to_act
    user = people[seat]
    message = table.hand_message(user)
    assert message is not None
    data = message.callback_data[0]
    # A double tap: both presses leave the phone before the bot answers the first.
    first = fake.user_presses(user, user, message.message_id, data)
    second = fake.user_presses(user, user, message.message_id, data)
    await rig.settle()
    assert fake.callback_query(first).answered and not fake.callback_query(first).show_alert
    query = fake.callback_query(second)
    assert query.show_alert and query.text is not None and "out of date" in query.text
    after = await table.doc()
    assert after.game is not None
    assert [decode_action(a)[0] for a in after.game.actions[before:]] == [seat]


async def test_a_press_answered_too_late_still_counts_and_is_no_error(rig: Rig) -> None:
    """Telegram refuses an answer after its window ("query is too old"); the move stands, nothing fails."""
    _, people, table = await _three(rig)
    fake = rig.fake
    doc, state = await table.state()
    assert state is not None and doc.game is not None
    before = len(doc.game.actions)
    user = people[state.to_act]
    message = table.hand_message(user)
    assert message is not None
    fake._api.callback_answer_timeout = -1.0  # every answer comes too late
    query_id = fake.user_presses(user, user, message.message_id, message.callback_data[0])
    await rig.settle()
    assert not fake.callback_query(query_id).answered
    assert any(c.method == "answerCallbackQuery" and c.status == 400 for c in fake.calls)
    after = await table.doc()
    assert after.game is not None and len(after.game.actions) > before
    assert rig.bot.adapter.errors == 0


async def test_refusal_for_a_button_is_an_alert(rig: Rig) -> None:
    fake = rig.fake
    alice = fake.add_user("Alice")
    chat = rig.group("Cards", [alice])
    fake.user_starts_bot(alice)
    await rig.settle()
    await rig.say(chat, alice, "/new")
    lobby = lobby_message(fake, chat)
    query = fake.callback_query(await rig.press(chat, alice, lobby, button(lobby, "s")))
    assert query.show_alert and query.text == "Not enough players to start."


async def test_private_answers_never_reach_the_group(rig: Rig) -> None:
    chat, people, table = await _three(rig)
    fake = rig.fake
    stranger = fake.add_user("Eve")
    fake.set_member_status(chat, stranger, "member")
    _, state = await table.state()
    assert state is not None
    player = people[(state.to_act + 1) % 3]
    # Not their turn: the refusal lists nothing, but goes privately all the same, naming the group.
    await rig.say(chat, player, "/play QS")
    assert fake.bot_messages(player)[-1].content == "🃏 Game in «Cards»\nIt is not your turn."
    # /hand typed in the group: the hand is in the private chat, nothing in the group.
    group_before = len(fake.bot_messages(chat))
    await rig.say(chat, player, "/hand")
    assert fake.bot_messages(player)[-1].content.startswith("🃏 Game in «Cards»\nYour hand")
    assert len(fake.bot_messages(chat)) == group_before
    # Someone the bot cannot write to: a note in the group that says nothing of the answer.
    group_before = len(fake.bot_messages(chat))
    await rig.say(chat, stranger, "/hand")
    note = fake.last_bot_message(chat)
    assert len(fake.bot_messages(chat)) == group_before + 1
    assert "cannot write to you privately" in note.content and note.buttons[0][0].url is not None
    await rig.say(chat, stranger, "/hand")
    assert len(fake.bot_messages(chat)) == group_before + 1  # one note a minute, not one per command
    assert rig.watch.leaks == []


async def test_export_goes_to_the_sender_as_a_document(rig: Rig) -> None:
    chat, people, table = await _three(rig)
    fake = rig.fake
    while len((await table.state())[1].results) < 1:  # type: ignore[union-attr]
        await table.move()
    await rig.say(chat, people[1], "/export")
    document = fake.bot_messages(people[1])[-1]
    assert document.document is not None and document.document.file_name.endswith(".json")
    assert not any(m.document for m in fake.bot_messages(chat))


async def test_private_messages_follow_the_group_title(rig: Rig) -> None:
    chat, people, table = await _three(rig)
    fake = rig.fake

    def hand(person: FakeUser) -> FakeMessage:
        return next(m for m in reversed(fake.messages(person)) if "\nYour hand" in m.content)

    hands = {p.id: hand(p) for p in people}
    assert all(h.content.startswith("🃏 Game in «Cards»\nYour hand") for h in hands.values())
    group_calls = len(rig.watch.calls)
    # Someone renames the group (Telegram's service message `new_chat_title`).
    chat.title = "Friday cards"
    renamed = fake._world.add_message(chat, people[0], service={"new_chat_title": "Friday cards"})
    rig.acted()
    fake._deliver_message(chat, renamed)
    await rig.settle()
    assert (await table.doc()).title == "Friday cards"
    for person in people:
        assert hand(person).message_id == hands[person.id].message_id  # edited in place
        assert hand(person).content.startswith("🃏 Game in «Friday cards»\nYour hand")
    assert len(rig.watch.calls) == group_calls  # nothing in the group
    # The game goes on with the new title.
    await table.move()
    _, state = await table.state()
    assert state is not None and state.to_act is not None
    idle = people[(state.to_act + 1) % 3]
    await rig.say(chat, idle, "/pass")
    assert fake.bot_messages(idle)[-1].content == "🃏 Game in «Friday cards»\nIt is not your turn."


async def test_a_hand_asked_for_comes_to_the_bottom_of_the_private_chat(rig: Rig) -> None:
    """Not the player's turn, nothing in the hand changed: /hand and My hand still bring it down (the
    service posts it anew), and the private chat keeps one hand message."""
    chat, people, table = await _three(rig)
    fake = rig.fake
    _, state = await table.state()
    assert state is not None and state.to_act is not None
    idle = people[(state.to_act + 1) % 3]

    def hands() -> list[FakeMessage]:
        return [m for m in fake.messages(idle) if "\nYour hand" in m.content]

    first = hands()[0]
    await rig.say(idle, idle, "/score")  # something below the hand
    await rig.say(chat, idle, "/hand")
    assert [m.message_id for m in hands()] == [fake.messages(idle)[-1].message_id] != [first.message_id]
    second = hands()[0]
    await rig.say(idle, idle, "/rules")
    table_message = next(m for m in reversed(fake.bot_messages(chat)) if m.callback_data)
    my_hand = next(d for d in table_message.callback_data if decode_payload(d)[0] == "hand")
    query = await rig.press(chat, idle, table_message, my_hand)
    assert [m.message_id for m in hands()] == [fake.messages(idle)[-1].message_id] != [second.message_id]
    assert hands()[0].content == second.content
    # The press is answered with a toast (not an alert) saying where the cards went.
    answer = fake.callback_query(query)
    assert answer.text == "Your cards are in our private chat." and not answer.show_alert
    assert answer.url is None


async def test_my_hand_in_the_group_opens_the_private_chat_when_it_does_not_work(rig: Rig) -> None:
    """The bot's record says it cannot write to the player (a 403 it saw, a block it was told of): My
    hand answers with the link that opens the private chat, and a toast for clients that show it."""
    chat, people, _ = await _three(rig)
    fake = rig.fake
    await rig.bot.adapter.reach.mark(people[1].id, False)
    table_message = next(m for m in reversed(fake.bot_messages(chat)) if m.callback_data)
    my_hand = next(d for d in table_message.callback_data if decode_payload(d)[0] == "hand")
    answer = fake.callback_query(await rig.press(chat, people[1], table_message, my_hand))
    assert answer.url is not None and answer.url.startswith("https://t.me/")
    assert answer.text is not None and "open our chat" in answer.text
    # Someone who does not sit at the table gets the refusal as an alert, in the group.
    stranger = fake.add_user("Dave")
    fake.user_joins(chat, stranger)
    await rig.settle()
    answer = fake.callback_query(await rig.press(chat, stranger, table_message, my_hand))
    assert answer.show_alert and answer.text == "You are not sitting at this table."
    assert not [m for m in fake.bot_messages(chat) if "not sitting" in m.content]


# --------------------------------------------------------------------------- leaving


UNREACHABLE = "cannot be reached: a computer plays for them until they come back with /back."


async def test_a_user_who_blocks_the_bot_gets_a_computer(rig: Rig) -> None:
    chat, people, table = await _three(rig)
    fake = rig.fake
    fake.user_blocks_bot(people[2])
    await rig.settle()
    doc = await table.doc()
    assert doc.seats[2].away and not doc.seats[2].kicked
    assert f"Carol 💤 {UNREACHABLE}" in _notes(rig, chat)
    assert not any("left: a computer" in m for m in _notes(rig, chat))
    sends_to_carol = len(fake.calls_to("sendMessage"))
    for _ in range(6):
        await table.move()
    assert not [
        c
        for c in fake.calls_to("sendMessage")[sends_to_carol:]
        if str(c.params["chat_id"]) == str(people[2].id)
    ]
    # Carol unblocks the bot and comes back: her seat is hers again.
    fake.user_starts_bot(people[2])
    await rig.settle()
    await rig.say(people[2], people[2], "/back")
    assert (await table.doc()).seats[2].present
    assert any("\nYour hand" in m.content for m in fake.bot_messages(people[2])[-3:])
    fake.user_blocks_bot(people[2])
    await rig.settle()
    table.people = {p.first_name: p for p in people[:2]}
    await table.play_out()
    assert (await table.doc()).status == "finished"
    assert fake.stats.too_many_requests == 0


async def test_a_block_found_out_by_a_refused_send(rig: Rig) -> None:
    """The update about the block was missed (the bot was down a day): the 403 tells the same."""
    chat, people, table = await _three(rig)
    people[1].blocked_bot = True  # silently
    for _ in range(12):
        if (await table.doc()).seats[1].away:
            break
        await table.move()
    assert (await table.doc()).seats[1].away
    assert f"Bob 💤 {UNREACHABLE}" in _notes(rig, chat)


async def test_someone_who_leaves_the_group_gets_a_computer(rig: Rig) -> None:
    chat, people, table = await _three(rig)
    rig.fake.user_leaves(chat, people[0])
    await rig.settle()
    assert (await table.doc()).seats[0].away
    assert f"Alice 💤 {UNREACHABLE}" in _notes(rig, chat)


async def test_the_bot_removed_from_the_group_ends_its_table(rig: Rig) -> None:
    chat, people, table = await _three(rig)
    fake = rig.fake
    fake.bot_removed_from_group(chat)
    await rig.settle()
    doc = await table.doc()
    assert doc.status == "finished" and doc.ended == "ended"
    # Nothing more is sent to the group (no 403 loops), the players can play elsewhere.
    assert not [c for c in fake.calls if c.status == 403 and str(c.params.get("chat_id")) == str(chat.id)]
    for person in people:
        assert f"tg:{chat.id}" not in await rig.store.tables_for_user(f"tg:{person.id}")


async def test_hand_buttons_carry_the_table(rig: Rig) -> None:
    _, people, table = await _three(rig)
    _, state = await table.state()
    assert state is not None
    message = table.hand_message(people[state.to_act])
    assert message is not None
    for data in message.callback_data:
        assert decode_payload(data)[3] == table.table_id


async def test_every_listed_command_is_understood(rig: Rig) -> None:
    """The issue's command list, typed in the group by a player: each gets an answer, none is unknown."""
    chat, people, table = await _three(rig)
    fake = rig.fake
    alice = people[0]
    commands = [
        "/score", "/rules", "/settings", "/lang", "/stats", "/top", "/help", "/hand", "/export",
        "/back", "/kick 2", "/bid 500", "/pass", "/play QS", "/lang pl", "/lang en", "/leave", "/end",
    ]  # fmt: skip
    for text in commands:
        seen = len(fake.all_messages(chat)) + len(fake.all_messages(alice))
        edits = sum(len(m.history) for m in fake.all_messages(alice) + fake.all_messages(chat))
        await rig.say(chat, alice, text)
        answers = [*fake.all_messages(chat), *fake.all_messages(alice)]
        new_edits = sum(len(m.history) for m in answers)
        assert len(answers) - 1 > seen or new_edits > edits, f"no answer to {text}"
        assert not any("Unknown command" in m.content for m in answers), text
    assert (await table.doc()).status == "finished"


async def test_bid_pages_turn_in_place_in_the_private_chat(rig: Rig) -> None:
    """A page button edits the hand message in place (no new message, nobody notified) and the bid found
    on the new page is a move."""
    from bot.render import page_start

    for _ in range(8):
        chat, people, table = await _three(rig, preset="russian", short=False)
        _, state = await table.state()
        assert state is not None and state.to_act is not None
        user = people[state.to_act]
        hand = table.hand_message(user)
        assert hand is not None
        pages = [d for d in hand.callback_data if decode_payload(d)[0] == "bid" and "p" in d.split(":")[1]]
        if pages:
            break
        await rig.say(chat, people[0], "/end")
    else:
        raise AssertionError("no deal with more bids than a page")
    version = (await rig.store.load(table.table_id)).version  # type: ignore[union-attr]
    last = pages[-1]
    start = page_start(decode_payload(last)[1][0])
    query = await rig.press(user, user, hand, last)
    assert rig.fake.callback_query(query).answered
    after = table.hand_message(user)
    assert after is not None and after.message_id == hand.message_id and len(after.history) >= 1
    values = [
        int(a[0])
        for d in after.callback_data
        if (p := decode_payload(d))[0] == "bid" and (a := p[1]) and page_start(a[0]) is None
    ]
    assert start is not None and values and values[0] >= start
    assert (await rig.store.load(table.table_id)).version == version  # type: ignore[union-attr]
    top = next(d for d in after.callback_data if decode_payload(d)[1] == (str(values[-1]),))
    await rig.press(user, user, after, top)
    _, state = await table.state()
    assert state is not None and state.deal.bid == values[-1]
