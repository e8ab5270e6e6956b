"""The backstop of the admin right (`bot.handlers.rights.is_admin`): an admin is an admin of the table's
own chat. A command that reaches a table from another chat carries no admin right for it, even when its
user comes flagged as an admin (of the chat the command came from, or by an adapter that got it wrong).

No adapter sends such a command today (Telegram asks about admins only in groups, Discord reports none in
DMs), which is why this property needs tests of its own: nothing else would notice it going."""

from __future__ import annotations

import pytest
from botkit import Harness, errors, make_user

from bot.context import Context
from bot.handlers import rights
from bot.model import ChatRef, Command, UserRef
from bot.table import ChatSettings, SeatDoc, TableDoc

GROUP = ChatRef("t", "-100", "Cards")
OTHER = ChatRef("t", "-200", "Elsewhere")
SETTINGS = ChatSettings(preset="polish", language="en", turn_seconds=0, ai_level="easy")


def _context(user: UserRef, chat: ChatRef, table_id: str, doc: TableDoc | None = None) -> Context:
    return Context(Command("end", (), chat, user), table_id, 3, doc, None, 0.0, SETTINGS)


def _lobby(creator: UserRef, *seated: UserRef) -> TableDoc:
    seats = [
        SeatDoc(kind="human", name=u.name, user=u.key, platform=u.platform, user_id=u.user_id)
        for u in (creator, *seated)
    ]
    return TableDoc(
        id=GROUP.key,
        serial="s1",
        platform=GROUP.platform,
        chat_id=GROUP.chat_id,
        creator=creator.key,
        settings=SETTINGS,
        seats=seats,
        created=0.0,
        updated=0.0,
    )


@pytest.mark.parametrize("flag", [True, False, None])
def test_an_admin_is_an_admin_of_the_tables_own_chat(flag: bool | None) -> None:
    user = make_user(3, admin=flag)
    assert rights.is_admin(_context(user, GROUP, GROUP.key)) is bool(flag)
    # The same person, flagged as an admin, acting on the group's table from another group or privately.
    assert rights.is_admin(_context(user, OTHER, GROUP.key)) is False
    dm = ChatRef("t", user.user_id, "", private=True)
    assert rights.is_admin(_context(user, dm, GROUP.key)) is False


def test_an_admin_elsewhere_may_not_manage_or_start_a_table_they_do_not_sit_at() -> None:
    ala, admin = make_user(0), make_user(3, admin=True)
    doc = _lobby(ala)
    dm = ChatRef("t", admin.user_id, "", private=True)
    for chat in (OTHER, dm):
        ctx = _context(admin, chat, GROUP.key, doc)
        assert not rights.may_manage(ctx) and not rights.may_start(ctx)
    assert rights.may_manage(_context(admin, GROUP, GROUP.key, doc))


async def test_a_private_command_flagged_admin_does_not_end_or_kick_at_a_group_table(
    harness: Harness,
) -> None:
    """Bartek sits at Ala's table; his private chat's commands reach it (it is his one live table) with
    an admin flag that is not about the group: `/end`, `/kick`, `/add_ai` are refused and the table is
    as it was. In the group, the same flag is the group's admin right and `/end` ends the table."""
    h = harness
    ala, bartek = make_user(0), make_user(1)
    assert not errors(await h.text(ala, "/new"))
    assert not errors(await h.text(bartek, "/join"))
    before = await h.doc()
    flagged = UserRef(bartek.platform, bartek.user_id, bartek.name, bartek.language, True)
    dm = ChatRef("t", bartek.user_id, "", private=True)
    for line in ("/end", f"/kick {ala.name}", "/kick 1"):
        out = await h.text(flagged, line, chat=dm)
        assert errors(out), line
        assert await h.doc() == before, line
    _, doc = await h.doc()
    assert (
        doc is not None and doc.status == "lobby" and [s.name for s in doc.seats] == [ala.name, bartek.name]
    )
    assert not errors(await h.text(flagged, "/end"))
    _, doc = await h.doc()
    assert doc is None or doc.status == "finished"
