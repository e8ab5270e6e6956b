"""`unreachable`: the adapter can no longer write to a user privately (they blocked the bot, or left the
group). A computer plays their seat until they come back with /back, and the group is told why; not the
same as `leave`, which they did not ask for."""

from __future__ import annotations

from botkit import Harness, errors, make_user

from bot.i18n import translator
from bot.model import ChatRef, Command, Group, Private

ALA, BARTEK, CELINA = (make_user(i) for i in range(3))
USERS = {0: ALA, 1: BARTEK, 2: CELINA}


def gone(h: Harness, user: object, chat: ChatRef | None = None) -> Command:
    return Command("unreachable", (), chat or h.chat, user)  # type: ignore[arg-type]


async def test_a_computer_plays_the_seat_until_they_come_back(harness: Harness) -> None:
    h = harness
    await h.open_table([ALA, BARTEK, CELINA])
    state = await h.state()
    assert state.to_act is not None
    lost = USERS[state.to_act]  # it is their turn: the computer plays it at once
    seat = state.to_act
    out = await h.command(gone(h, lost))
    _, doc = await h.doc()
    assert doc is not None and doc.seats[seat].away and not doc.seats[seat].kicked
    notes = [m.text for m in out if isinstance(m.audience, Group) and m.kind == "notice"]
    assert notes == [
        f"{lost.name} 💤 cannot be reached: a computer plays for them until they come back with /back."
    ]
    assert (await h.state()).to_act != seat
    assert not [m for m in out if isinstance(m.audience, Private) and m.audience.user.key == lost.key]
    assert f"{h.table_id}" in await h.store.tables_for_user(lost.key)  # still theirs to come back to
    # Again: nothing more to do, nothing stored.
    version, _ = await h.doc()
    assert await h.command(gone(h, lost)) == []
    assert (await h.doc())[0] == version
    # They come back (from their private chat) and play their seat again.
    private = ChatRef(lost.platform, lost.user_id, lost.name, True)
    out = await h.text(lost, "/back", chat=private)
    assert not errors(out)
    _, doc = await h.doc()
    assert doc is not None and doc.seats[seat].present
    assert any(m.kind == "hand" and m.audience.user.key == lost.key for m in out)  # type: ignore[union-attr]


async def test_in_the_group_language_and_everyone_away_waits(harness: Harness) -> None:
    h = harness
    admin = make_user(0, admin=True)
    assert not errors(await h.text(admin, "/set lang pl"))
    await h.open_table([ALA, BARTEK])
    out = await h.command(gone(h, ALA))
    t = translator("pl")
    text = t._("{name} cannot be reached: a computer plays for them until they come back with /back.")
    assert any(m.text == text.format(name="Ala 💤") and m.language == "pl" for m in out)
    out = await h.command(gone(h, BARTEK))
    assert any(m.text == t._("Everyone is away: the game waits. Send /back to play on.") for m in out)
    _, doc = await h.doc()
    assert doc is not None and doc.status == "game" and doc.turn is None  # no deadline: nobody to wait for


async def test_in_the_lobby_they_lose_their_place(harness: Harness) -> None:
    h = harness
    assert not errors(await h.text(ALA, "/new"))
    assert not errors(await h.text(BARTEK, "/join"))
    out = await h.command(gone(h, ALA))
    _, doc = await h.doc()
    assert doc is not None and [s.name for s in doc.seats] == ["Bartek"] and doc.creator == BARTEK.key
    assert [m.kind for m in out] == ["lobby"]
    assert h.table_id not in await h.store.tables_for_user(ALA.key)


async def test_nothing_for_a_stranger_or_no_table(harness: Harness) -> None:
    h = harness
    assert await h.command(gone(h, ALA)) == []
    await h.open_table([ALA, BARTEK])
    version, _ = await h.doc()
    assert await h.command(gone(h, CELINA)) == []
    assert (await h.doc())[0] == version


async def test_a_table_in_their_own_private_chat(harness: Harness) -> None:
    h = harness
    private = ChatRef(ALA.platform, ALA.user_id, ALA.name, True)
    assert not errors(await h.text(ALA, "/new", chat=private))
    assert not errors(await h.text(ALA, "/add_ai", chat=private))
    assert not errors(await h.text(ALA, "/start", chat=private))
    await h.command(gone(h, ALA, private))
    stored = await h.store.load(private.key)
    assert stored is not None and '"away":true' in stored.document
