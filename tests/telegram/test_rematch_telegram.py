"""Play again at a public table, from Telegram private chats (issue 25 §3, `bot.public.rematch`).

Three people matched by Play now (English, Polish, Russian) play a short public game (target 200, the
rules' `preset` patched for the test) through the real PTB `Application` against the fake Bot API. Its
final sheet offers each of them **Play again** and **No thanks**, in their language. A stranger's press
(someone who never sat there), a forged version and a stale press are refused in the presser's language
and change nothing. All three agree: a new public table seats the same three. That game is played to its
end too; then one agrees, one declines and one says nothing: a minute later (the deadline, fired once by
the service's timer) the new table seats the one who agreed, computers in the two other seats.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from test_play_now import PublicRig, PublicTable, person, seated, until
from tgkit import settings

import bot.handlers.lobby as lobby
from bot.commands import decode_payload, encode_payload, from_payload, table_tag
from bot.i18n import translator
from bot.model import ChatRef, UserRef
from bot.public.rematch import REMATCH_SECONDS
from bot.render import ERRORS
from bot.table import TableDoc
from core.rules import preset as real_preset
from fakes.telegram import FakeMessage, FakeUser

LANGS = {"Ann": "en", "Bolek": "pl", "Vera": "ru"}


def short_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Public games to 200 (barrel at 100), as a group's /settings would make them: a game in seconds."""

    def short(name: str, options: Any = None) -> Any:
        return real_preset(name, {"target": 200, "barrel_at": 100, **(options or {})})

    monkeypatch.setattr(lobby, "preset", short)


@pytest.fixture
async def prig(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[PublicRig]:
    short_rules(monkeypatch)
    rig = PublicRig(settings_=settings(public_computers_after=600.0))
    await rig.start()
    await rig.start_public()
    try:
        yield rig
    finally:
        await rig.close()


async def load(rig: PublicRig, table_id: str) -> tuple[int, TableDoc]:
    stored = await rig.store.load(table_id)
    assert stored is not None
    return stored.version, TableDoc.model_validate_json(stored.document)


async def play_to_the_end(rig: PublicRig, table_id: str, people: list[FakeUser]) -> None:
    table = PublicTable(rig, None, {u.first_name: u for u in people})  # type: ignore[arg-type]
    table.public_id = table_id
    for _ in range(3000):
        doc, state = await table.state()
        assert state is not None
        if state.finished:
            break
        if not await table.move():
            break
    else:
        raise AssertionError("the game did not end")
    await rig.settle()
    _, doc = await load(rig, table_id)
    assert doc.status == "finished" and doc.ended == "won"


def offer(rig: PublicRig, user: FakeUser, table_id: str) -> FakeMessage:
    """The newest message in the user's private chat with this table's Play again button."""
    for message in reversed(rig.fake.bot_messages(user)):
        for data in message.callback_data:
            name, _, _, table = decode_payload(data)
            if name == "again" and table == table_id:
                return message
    raise AssertionError(f"no Play again of {table_id} for {user.first_name}")


def again_button(message: FakeMessage, yes: bool = True) -> str:
    for data in message.callback_data:
        name, args, _, _ = decode_payload(data)
        if name == "again" and args == (() if yes else ("no",)):
            return data
    raise AssertionError(f"no again button on {message.text!r}")


def last_alert(rig: PublicRig) -> str:
    answers = [q for q in rig.fake.callback_answers if q.text]
    return answers[-1].text or ""


async def test_all_agree_same_people_then_one_agrees_and_computers_fill_the_rest(prig: PublicRig) -> None:
    rig = prig
    people = [person(rig, name, lang) for name, lang in LANGS.items()]
    ann, bolek, vera = people
    dora = person(rig, "Dora", "tr")
    await rig.settle()
    for user in people:
        await rig.say(user, user, "/play polish 3 slow")
    for user in people:
        await until(lambda user=user: seated(rig, user))
    first = await seated(rig, ann)
    assert first is not None
    await rig.settle()
    await play_to_the_end(rig, first, people)

    # The final sheet offers it to each, in their language.
    for user in people:
        t = translator(LANGS[user.first_name])
        sheet = offer(rig, user, first)
        assert t._("No thanks") in str(sheet.reply_markup), sheet.reply_markup
        assert t._("Play again") in str(sheet.reply_markup)
        assert "🔁" in (sheet.text or sheet.caption or "")
    version, doc = await load(rig, first)
    assert doc.rematch is not None and not doc.rematch.closed
    assert doc.rematch.deadline == pytest.approx(doc.updated + REMATCH_SECONDS)

    # A stranger's press (the button forwarded, or a modified client): refused in her language.
    data = again_button(offer(rig, ann, first))
    forged = from_payload(
        data, ChatRef("tg", str(dora.id), "Dora", True), UserRef("tg", str(dora.id), "Dora", "tr")
    )
    answer = await rig.bot.runtime.handle(forged)
    assert [m.text for m in answer] == [translator("tr")._(ERRORS["not_seated"])], [m.text for m in answer]
    # A version the table never had, from someone seated: refused, in Polish.
    bogus = encode_payload("again", (), version + 50, first, table_tag(doc.serial))
    chat = ChatRef("tg", str(bolek.id), "Bolek", True)
    answer = await rig.bot.runtime.handle(
        from_payload(bogus, chat, UserRef("tg", str(bolek.id), "Bolek", "pl"))
    )
    assert translator("pl")._(ERRORS["invalid_button"]) in "\n".join(m.text for m in answer)
    assert (await load(rig, first))[0] == version  # nothing changed

    # Everyone agrees: the same three at a new public table.
    for user in people:
        sheet = offer(rig, user, first)
        await rig.press(user, user, sheet, again_button(sheet))
    _, doc = await load(rig, first)
    assert doc.rematch is not None and doc.rematch.closed and doc.rematch.next is not None
    second = doc.rematch.next
    for user in people:
        await until(lambda user=user: _at(rig, user, second))
    _, new = await load(rig, second)
    assert new.status == "game"
    assert sorted(s.user or "" for s in new.seats if s.human) == sorted(f"tg:{u.id}" for u in people)
    assert {s.lang for s in new.seats} == {"en", "pl", "ru"}
    for user in people:
        assert any(
            translator(LANGS[user.first_name])._("The new game has started below.") in t
            for t in _texts(rig, user)
        )
    # The old sheet's button now: too late, in Russian; nothing changes.
    before = (await load(rig, first))[0]
    sheet = offer(rig, vera, first)
    await rig.press(vera, vera, sheet, again_button(sheet))
    assert translator("ru")._("It is too late to play again at this table.") in last_alert(rig)
    assert (await load(rig, first))[0] == before
    assert not [m for m in rig.fake.bot_messages(dora) if m.callback_data]

    # The second game, then: Ann agrees, Bolek declines, Vera says nothing. A minute later the new
    # table opens with Ann and two computers; Bolek and Vera are free to queue.
    await play_to_the_end(rig, second, people)
    sheet = offer(rig, ann, second)
    await rig.press(ann, ann, sheet, again_button(sheet))
    assert translator("en")._(
        "Your answer is noted; the others have until the minute is up."
    ) not in last_alert(rig)
    sheet = offer(rig, bolek, second)
    await rig.press(bolek, bolek, sheet, again_button(sheet, yes=False))
    _, doc = await load(rig, second)
    assert doc.rematch is not None and not doc.rematch.closed
    assert doc.rematch.accepted == [f"tg:{ann.id}"] and doc.rematch.declined == [f"tg:{bolek.id}"]
    # Pressing the same answer again changes nothing and says so.
    status = _status(rig, ann, second)
    await rig.press(ann, ann, status, again_button(status))
    assert translator("en")._("Your answer is noted; the others have until the minute is up.") in last_alert(
        rig
    )
    rig.clock.advance(REMATCH_SECONDS + 1)

    async def decided() -> bool:
        _, doc = await load(rig, second)
        return doc.rematch is not None and doc.rematch.closed

    await until(decided)
    _, doc = await load(rig, second)
    third = doc.rematch.next if doc.rematch is not None else None
    assert third is not None
    await until(lambda: _at(rig, ann, third))
    _, new = await load(rig, third)
    assert [s.user for s in new.seats if s.human] == [f"tg:{ann.id}"]
    assert [s.kind for s in new.seats].count("ai") == 2
    assert await rig.public.queue.seated_at(f"tg:{bolek.id}") is None
    assert await rig.public.queue.seated_at(f"tg:{vera.id}") is None
    await rig.settle()
    assert rig.fake.stats.too_many_requests == 0


def _texts(rig: PublicRig, user: FakeUser) -> list[str]:
    return [m.text or "" for m in rig.fake.bot_messages(user)]


def _status(rig: PublicRig, user: FakeUser, table_id: str) -> FakeMessage:
    """The offer's status message (the newest Play again that is not on the final sheet)."""
    for message in reversed(rig.fake.bot_messages(user)):
        if "✅" in (message.text or "") and any(
            decode_payload(d)[0] == "again" for d in message.callback_data
        ):
            return message
    raise AssertionError("no status of the offer")


async def _at(rig: PublicRig, user: FakeUser, table_id: str) -> bool:
    """Seated at the table, whose hand (a button naming it) is in their private chat."""
    if await rig.public.queue.seated_at(f"tg:{user.id}") != table_id:
        return False
    return any(decode_payload(d)[3] == table_id for m in rig.fake.bot_messages(user) for d in m.callback_data)
