"""Somebody outside a group, who knows its chat id (ids are not secret), tries to act on its table from
the private chat with the bot: through the real python-telegram-bot Application against the fake Bot API.

Each attempt must be refused with a clear private answer that names nothing of the group, the group must
see nothing, and the table must stay as it was (byte for byte).
"""

from __future__ import annotations

from tgkit import Rig, Table, button, lobby_message

from adapters.telegram.i18n import BAD_LINK
from adapters.telegram.reach import LINK_SECONDS
from bot.i18n import translator
from bot.render import ERRORS
from fakes.telegram import FakeChat, FakeMessage, FakeUser
from fakes.telegram.models import CallbackQueryRecord

SECRET = "Secret club"


async def _club(rig: Rig) -> tuple[FakeChat, FakeUser, FakeUser, FakeUser]:
    """Alice (admin) opened a table in «Secret club», Bob joined it through his deep link; Mallory is in
    no group with them but has started the bot."""
    fake = rig.fake
    alice, bob, mallory = fake.add_user("Alice"), fake.add_user("Bob"), fake.add_user("Mallory")
    club = rig.group(SECRET, [alice, bob], admins=[alice])
    for person in (alice, mallory):
        fake.user_starts_bot(person)
    await rig.settle()
    await rig.say(club, alice, "/new")
    lobby = lobby_message(fake, club)
    query = fake.callback_query(await rig.press(club, bob, lobby, button(lobby, "j")))
    assert query.url is not None
    fake.user_starts_bot(bob, query.url.split("start=", 1)[1])
    await rig.settle()
    doc = await Table(rig, club, {}).doc()
    assert [s.name for s in doc.seats] == ["Alice", "Bob"]
    return club, alice, bob, mallory


async def _stored(rig: Rig, chat: FakeChat) -> tuple[int, str] | None:
    stored = await rig.store.load(f"tg:{chat.id}")
    return None if stored is None else (stored.version, stored.document)


def _texts(rig: Rig, who: FakeUser | FakeChat, since: int) -> list[str]:
    return [m.content for m in rig.fake.bot_messages(who)[since:]]


async def test_an_outsider_cannot_open_a_table_with_a_made_up_deep_link(rig: Rig) -> None:
    """Mallory types `/start n<id>_polish` (the payload a link to open a table would have had): no table
    appears, the group hears nothing, and her answer does not even name the group."""
    fake = rig.fake
    alice, mallory = fake.add_user("Alice"), fake.add_user("Mallory")
    club = rig.group(SECRET, [alice], admins=[alice])
    fake.user_starts_bot(mallory)
    await rig.settle()
    seen = len(fake.bot_messages(mallory))
    for payload in (f"n{club.id}_polish", f"n{club.id}", f"j{club.id}", f"n{club.id}_0_AAAAAAAAAAAAAAAA"):
        rig.acted()
        fake.user_starts_bot(mallory, payload)
        await rig.settle()
    assert await _stored(rig, club) is None
    assert fake.bot_messages(club) == []
    answers = _texts(rig, mallory, seen)
    assert answers == [translator("en")._(BAD_LINK)] * 4
    assert not any(SECRET in text for text in answers)


async def test_the_whole_attack_from_the_private_chat_is_refused(rig: Rig) -> None:
    """With a lobby open in «Secret club»: Mallory's forged or borrowed deep links, then `/join`, `/go`,
    `/add_ai`, `/end` and `/kick Alice` typed privately. Every one is refused privately, without the
    group's title; the group sees nothing; the table is unchanged."""
    fake = rig.fake
    club, alice, bob, mallory = await _club(rig)
    before = await _stored(rig, club)
    in_group = len(fake.bot_messages(club))
    seen = len(fake.bot_messages(mallory))
    # Bob's own link (the last deep link he was given) and copies altered to pass for Mallory's group.
    own = rig.fake.add_user("Own")
    hers = rig.group("Mallory's", [mallory, own], admins=[mallory])
    await rig.say(hers, own, "/join")  # Own never started the bot: the group gets a link for Own
    own_link = fake.last_bot_message(hers).buttons[0][0].url
    assert own_link is not None
    own_payload = own_link.split("start=", 1)[1]
    other_group = own_payload.replace(str(hers.id), str(club.id), 1)
    bob_link = next(q.url for q in reversed(fake.callback_queries) if q.user is bob and q.url)
    assert bob_link is not None
    forged = (bob_link.split("start=", 1)[1], other_group, f"j{club.id}", f"n{club.id}_russian")
    for payload in forged:
        rig.acted()
        fake.user_starts_bot(mallory, payload)
        await rig.settle()
    for line in ("/join", "/go", "/add_ai", "/end", "/kick Alice", "/kick 1", "/leave"):
        await rig.say(mallory, mallory, line)
    answers = _texts(rig, mallory, seen)
    assert answers[: len(forged)] == [translator("en")._(BAD_LINK)] * len(forged)
    assert len(answers) >= len(forged) + 7  # every command was answered
    assert not any(SECRET in text or "Alice" in text or "Bob" in text for text in answers)
    assert len(fake.bot_messages(club)) == in_group
    assert await _stored(rig, club) == before
    # Bob's link still is Bob's: he is seated (once), and Alice's lobby goes on as before.
    doc = await Table(rig, club, {}).doc()
    assert [s.name for s in doc.seats] == ["Alice", "Bob"] and doc.creator.endswith(str(alice.id))


async def test_an_expired_link_is_refused_even_for_its_owner(rig: Rig) -> None:
    """Carol pressed Join but opened the link too late: she is told the link is too old, nothing else,
    and she is not seated."""
    fake = rig.fake
    club, _alice, _bob, _mallory = await _club(rig)
    carol = fake.add_user("Carol")
    club.set_member(carol, "member")
    lobby = lobby_message(fake, club)
    query = fake.callback_query(await rig.press(club, carol, lobby, button(lobby, "j")))
    assert query.url is not None
    rig.clock.advance(LINK_SECONDS + 1)
    before = await _stored(rig, club)
    rig.acted()
    fake.user_starts_bot(carol, query.url.split("start=", 1)[1])
    await rig.settle()
    after = await _stored(rig, club)
    assert after is not None and before is not None
    doc = await Table(rig, club, {}).doc()
    assert all(s.name != "Carol" for s in doc.seats)
    assert _texts(rig, carol, 0) == [translator("en")._(BAD_LINK)]


async def test_a_link_made_for_the_presser_seats_them(rig: Rig) -> None:
    """The signed link works for whom it was made, within its time: the feature is intact."""
    fake = rig.fake
    club, _alice, _bob, _mallory = await _club(rig)
    carol = fake.add_user("Carol")
    club.set_member(carol, "member")
    await rig.say(club, carol, "/join")
    link = fake.last_bot_message(club).buttons[0][0].url
    assert link is not None
    payload = link.split("start=", 1)[1]
    assert len(payload) <= 64 and payload.startswith(f"j{club.id}_")
    rig.clock.advance(LINK_SECONDS - 60)
    rig.acted()
    fake.user_starts_bot(carol, payload)
    await rig.settle()
    doc = await Table(rig, club, {}).doc()
    assert [s.name for s in doc.seats] == ["Alice", "Bob", "Carol"]


async def test_a_secret_move_typed_in_the_group_is_refused_and_deleted(rig: Rig) -> None:
    """`/give` names cards that stay hidden: typed in the group it is refused with a pointer to the
    private chat, and the bot deletes the message when it may (an administrator with
    can_delete_messages); without that right Telegram refuses the deletion, the move is refused all the
    same."""
    fake = rig.fake
    alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
    for can_delete in (True, False):
        club = fake.add_group(
            f"Club {can_delete}",
            members=[bob],
            admins=[alice],
            bot_status="administrator",
            bot_can_delete=can_delete,
        )
        rig.watch.groups.add(club.id)
        fake.user_starts_bot(alice)
        await rig.settle()
        await rig.say(club, alice, "/new")
        before = await _stored(rig, club)
        rig.acted()
        typed = fake.user_sends(club, alice, "/give 9C JD")
        await rig.settle()
        assert await _stored(rig, club) == before
        assert fake.message(club, typed.message_id).deleted is can_delete
        pointer = translator("en")._(ERRORS["secret_in_group"])
        replies = [m.content for m in fake.bot_messages(club)] + [m.content for m in fake.bot_messages(alice)]
        assert any(pointer in text for text in replies)


def _other_char(c: str) -> str:
    return "A" if c != "A" else "B"


async def test_her_own_link_retargeted_or_retouched_is_refused(rig: Rig) -> None:
    """Eve pressed Join in her own group and holds a link signed for her. Edited to name «Secret club»
    (ids are no secret), or with one character of its signature changed (the first, the middle, the
    last: the whole signature is compared, not a part of it), it is refused like any stranger's: she is
    not seated anywhere and neither group hears of it. The link as it was still seats her."""
    fake = rig.fake
    club, _alice, _bob, _mallory = await _club(rig)
    before = await _stored(rig, club)
    eve, host = fake.add_user("Eve"), fake.add_user("Host")
    hers = rig.group("Eve's", [eve, host], admins=[host])
    fake.user_starts_bot(host)
    await rig.settle()
    await rig.say(hers, host, "/new")
    lobby = lobby_message(fake, hers)
    query = fake.callback_query(await rig.press(hers, eve, lobby, button(lobby, "j")))
    assert query.url is not None
    payload = query.url.split("start=", 1)[1]
    assert payload.startswith(f"j{hers.id}_")
    mac_at = len(payload) - 16  # the signature: the last 16 characters
    retouched = [
        payload[:i] + _other_char(payload[i]) + payload[i + 1 :]
        for i in (mac_at, mac_at + 8, len(payload) - 1)
    ]
    retargeted = payload.replace(str(hers.id), str(club.id), 1)
    in_club, in_hers = len(fake.bot_messages(club)), len(fake.bot_messages(hers))
    for forged in (retargeted, *retouched):
        rig.acted()
        fake.user_starts_bot(eve, forged)
        await rig.settle()
    assert _texts(rig, eve, 0) == [translator("en")._(BAD_LINK)] * 4
    assert await _stored(rig, club) == before
    assert len(fake.bot_messages(club)) == in_club and len(fake.bot_messages(hers)) == in_hers
    assert [s.name for s in (await Table(rig, hers, {}).doc()).seats] == ["Host"]
    rig.acted()
    fake.user_starts_bot(eve, payload)
    await rig.settle()
    assert [s.name for s in (await Table(rig, hers, {}).doc()).seats] == ["Host", "Eve"]


def _forge_press(rig: Rig, person: FakeUser, message: FakeMessage, data: str) -> str:
    """A callback query with any data on a message the person sees: what a modified client can send
    (the Bot API warns that `data` need not be on any button of the message)."""
    world = rig.fake._world
    query = CallbackQueryRecord(
        id=world.new_query_id(),
        user=person,
        chat=message.chat,
        message=message,
        data=data,
        created_at=world.clock(),
    )
    world.callback_queries[query.id] = query
    update = {
        "id": query.id,
        "from": person.to_api(),
        "message": message.to_api(),
        "chat_instance": world.chat_instance(message.chat),
        "data": data,
    }
    rig.acted()
    world.enqueue("callback_query", update)
    return query.id


async def test_a_press_with_odd_digits_in_its_payload_is_refused_clearly(rig: Rig) -> None:
    """Bob's client sends the lobby's Join payload with its version in superscript digits (`isdigit()`
    is true for them, `int()` refuses them), in another script's digits, or with a newline: each press is
    answered "This button is not valid.", the table is unchanged and the group sees nothing."""
    fake = rig.fake
    club, _alice, bob, _mallory = await _club(rig)
    before = await _stored(rig, club)
    in_club = len(fake.bot_messages(club))
    lobby = lobby_message(fake, club)
    real = button(lobby, "j")
    head, args, version, table = real.split(":", 3)
    forged = [
        f"{head}:{args}:{version}²:{table}",
        f"{head}:{args}:{'³' * len(version)}:{table}",
        f"{head}:{args}:{'٤' * len(version)}:{table}",
        f"{head}:{args}:{version}:{table}\n",
    ]
    for data in forged:
        assert len(data.encode()) <= 64
        query = fake.callback_query(_forge_press(rig, bob, lobby, data))
        await rig.settle()
        assert query.answered and query.text == translator("en")._(ERRORS["invalid_button"]), data
    assert await _stored(rig, club) == before
    assert len(fake.bot_messages(club)) == in_club
