"""Play again through Telegram: the real bot against the fake Bot API. The final score sheet (the chart's
photo) carries the button; a group member who did not play is refused, a player's press opens the next
table with the same seats, and the sheet's button pressed again is refused (docs/SERVICE.md)."""

from __future__ import annotations

from tgkit import Rig, seat_everyone

from bot.commands import decode_payload
from fakes.telegram import FakeMessage


def _again_message(rig: Rig, chat: object) -> tuple[FakeMessage, str]:
    for message in reversed(rig.fake.bot_messages(chat)):  # type: ignore[arg-type]
        for data in message.callback_data:
            if decode_payload(data)[0] == "again":
                return message, data
    raise AssertionError("no Play again button in the group")


async def test_play_again_through_telegram(rig: Rig) -> None:
    fake = rig.fake
    alice, bob, eve = fake.add_user("Alice"), fake.add_user("Bob"), fake.add_user("Eve")
    chat = rig.group("Cards again", [alice, bob, eve])
    table = await seat_everyone(rig, chat, [alice, bob], 1, preset="polish")
    await table.play_out()
    finished = await table.doc()
    assert finished.status == "finished" and finished.ended == "won"
    sheet, data = _again_message(rig, chat)
    assert sheet.photo is not None or sheet.text  # the chart with its caption (or the text alone)
    # Eve sits in the group but did not play: refused in the button's answer, nothing changes.
    query = await rig.press(chat, eve, sheet, data)
    answer = fake.callback_query(query)
    assert answer.answered and answer.text and "not sitting" in answer.text
    assert (await table.doc()).serial == finished.serial
    # Bob presses it: a lobby with Alice, Bob and the computer, the same settings; Alice may start it.
    query = await rig.press(chat, bob, sheet, data)
    assert not fake.callback_query(query).text
    doc = await table.doc()
    assert doc.status == "lobby" and doc.serial != finished.serial
    assert [(s.kind, s.name) for s in doc.seats] == [(s.kind, s.name) for s in finished.seats]
    assert doc.settings == finished.settings
    lobby = fake.bot_messages(chat)[-1]
    assert "Alice" in (lobby.text or "") and "Bob" in (lobby.text or "")
    # The same sheet's button again: the new table is already open.
    query = await rig.press(chat, alice, sheet, data)
    assert "already open" in (fake.callback_query(query).text or "")
    start = next(d for d in lobby.callback_data if decode_payload(d)[0] == "start")
    await rig.press(chat, alice, lobby, start)
    assert (await table.doc()).status == "game"
    assert rig.watch.leaks == [] and fake.stats.too_many_requests == 0
