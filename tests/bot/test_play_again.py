"""Play again: the final score sheet's button opens the next game with the same seats and settings
(docs/SERVICE.md, "Play again"), for the people who sat at the table only, from that sheet only."""

from __future__ import annotations

import random

from botkit import Clock, Harness, errors, make_user, quiet_settings

from bot.commands import encode_payload, read_payload, table_tag
from bot.handlers import Handlers
from bot.model import ChatRef, Group, Message
from bot.service import Service
from bot.storage import MemoryStore

ALA, BARTEK, CELINA, DOROTA = make_user(0), make_user(1), make_user(2), make_user(3)
OPEN = "A table is already open in this chat."


async def _harness(clock: Clock) -> Harness:
    store = MemoryStore(clock=clock)
    service = Service(store, quiet_settings(), handlers=Handlers, clock=clock, rng=random.Random(4))
    return Harness(service, store, clock)


def _said(messages: list[Message]) -> list[str]:
    """The refusals among `messages`, without the heading of a private answer."""
    return [m.text.split("\n")[-1] for m in errors(messages)]


def _again(messages: list[Message]) -> str:
    finals = [m for m in messages if isinstance(m.audience, Group) and m.kind == "final"]
    assert finals, [m.kind for m in messages]
    payloads = [
        b.payload for row in finals[-1].buttons for b in row if read_payload(b.payload).name == "again"
    ]
    assert len(payloads) == 1 and finals[-1].buttons[0][0].label == "Play again"
    return payloads[0]


async def test_play_again_seats_everyone_again_with_the_same_settings(clock: Clock) -> None:
    h = await _harness(clock)
    try:
        admin = make_user(5, admin=True)
        assert not errors(await h.text(admin, "/set preset russian"))
        assert not errors(await h.text(admin, "/set turn 90"))
        await h.open_table([ALA, BARTEK], computers=1, preset="russian")
        _, before = await h.doc()
        assert before is not None
        # Bartek leaves (a computer plays his seat); Ala ends the game.
        assert not errors(await h.text(BARTEK, "/leave"))
        again = _again(await h.text(ALA, "/end"))
        version, finished = await h.doc()
        assert finished is not None and finished.status == "finished"

        # Someone who did not sit at the table, a forged version: refused, nothing stored.
        replies = await h.press(DOROTA, again)
        assert _said(replies) == ["You are not sitting at this table."]
        p = read_payload(again)
        forged = encode_payload("again", (), p.version + 5, p.table_id, p.tag)
        assert _said(await h.press(ALA, forged)) == ["This button is not valid."]
        assert (await h.doc())[0] == version

        # Bartek left the game: his seat is a computer's now, so he may not press it either.
        assert errors(await h.press(BARTEK, again))
        replies = await h.press(ALA, again)
        assert not errors(replies)
        _, doc = await h.doc()
        # Ala is the only person left at it: the next game starts at once.
        assert doc is not None and doc.status == "game" and doc.serial != finished.serial
        assert [s.kind for s in doc.seats] == ["human", "ai", "ai"]
        assert doc.seats[0].user == ALA.key and doc.seats[2].name == before.seats[2].name
        assert doc.settings == finished.settings and doc.settings.turn_seconds == 90
        assert doc.seats[1].name not in ("Bartek", doc.seats[2].name)
    finally:
        await h.service.close()


async def test_with_several_people_a_lobby_opens_and_the_old_button_is_refused(clock: Clock) -> None:
    h = await _harness(clock)
    try:
        await h.open_table([ALA, BARTEK, CELINA], preset="polish")
        again = _again(await h.text(ALA, "/end"))
        _, finished = await h.doc()
        assert finished is not None
        # Dorota did not play: she opens nothing (with three people a lobby would open at once).
        assert _said(await h.press(DOROTA, again)) == ["You are not sitting at this table."]
        assert (await h.doc())[1].serial == finished.serial  # type: ignore[union-attr]
        replies = await h.press(CELINA, again)
        assert not errors(replies)
        lobby = [m for m in replies if m.kind == "lobby"]
        assert lobby and lobby[-1].notify and "Ala" in lobby[-1].text and "Celina" in lobby[-1].text
        _, doc = await h.doc()
        assert doc is not None and doc.status == "lobby"
        assert [s.user for s in doc.seats] == [ALA.key, BARTEK.key, CELINA.key]
        assert doc.creator == CELINA.key and doc.settings == finished.settings
        # The same button again (Bartek a moment later): the new table is open already.
        assert _said(await h.press(BARTEK, again)) == ["A table is already open in this chat."]
        # Anyone seated starts it; the old sheet's button, pressed after this game ended too, is stale.
        assert not errors(await h.text(BARTEK, "/start"))
        assert (await h.doc())[1].status == "game"  # type: ignore[union-attr]
        newer = _again(await h.text(CELINA, "/end"))  # the creator of the new table
        assert read_payload(newer).tag == table_tag((await h.doc())[1].serial)  # type: ignore[union-attr]
        stale = await h.press(ALA, again)
        assert _said(stale) == ["This button is out of date: the table has moved on."]
        assert (await h.doc())[1].status == "finished"  # type: ignore[union-attr]
    finally:
        await h.service.close()


async def test_alone_with_computers_the_next_game_starts_at_once(clock: Clock) -> None:
    h = await _harness(clock)
    try:
        await h.open_table([ALA], computers=2, preset="polish")
        _, first = await h.doc()
        assert first is not None
        replies = await h.press(ALA, _again(await h.text(ALA, "/end")))
        assert not errors(replies)
        _, doc = await h.doc()
        assert doc is not None and doc.status == "game" and doc.game is not None
        assert [(s.kind, s.name) for s in doc.seats] == [(s.kind, s.name) for s in first.seats]
        assert any(m.kind == "table" for m in replies) and any(m.kind == "hand" for m in replies)
        # Typed, while a game runs: nothing to play again yet.
        assert _said(await h.text(ALA, "/again")) == ["A table is already open in this chat."]
    finally:
        await h.service.close()


async def test_no_button_without_a_game_and_nothing_to_repeat(clock: Clock) -> None:
    h = await _harness(clock)
    try:
        assert _said(await h.text(ALA, "/again")) == ["There is no table here. Start one with /new."]
        assert not errors(await h.text(ALA, "/new"))
        assert not errors(await h.text(ALA, "/end"))  # a lobby closed: no game to repeat
        assert errors(await h.text(ALA, "/again"))
    finally:
        await h.service.close()


async def test_the_button_pressed_in_a_private_chat_acts_on_the_table_it_names(clock: Clock) -> None:
    """A player may press the group's Play again from their private chat (the fuzz found this press
    and its oracle wrongly counted it as a change by someone who does not sit there): it opens the next
    table in the group as the group's button does, and nobody else can do the same from theirs."""
    h = await _harness(clock)
    try:
        await h.open_table([ALA, BARTEK, CELINA], preset="polish")
        again = _again(await h.text(ALA, "/end"))
        version, finished = await h.doc()
        assert finished is not None
        dorota_dm = ChatRef(DOROTA.platform, DOROTA.user_id, DOROTA.name, True)
        assert _said(await h.press(DOROTA, again, chat=dorota_dm)) == ["You are not sitting at this table."]
        assert (await h.doc())[0] == version
        bartek_dm = ChatRef(BARTEK.platform, BARTEK.user_id, BARTEK.name, True)
        replies = await h.press(BARTEK, again, chat=bartek_dm)
        assert not errors(replies)
        _, doc = await h.doc()
        assert doc is not None and doc.status == "lobby" and doc.id == finished.id
        assert [s.user for s in doc.seats] == [ALA.key, BARTEK.key, CELINA.key]
        assert doc.creator == BARTEK.key and doc.serial != finished.serial
        # The lobby is the group's: its message goes there, not to Bartek's private chat.
        assert any(isinstance(m.audience, Group) and m.kind == "lobby" for m in replies)
    finally:
        await h.service.close()
