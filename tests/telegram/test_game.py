"""Whole games in a group: the real bot against the fake Bot API, every human move made by pressing the
buttons of the hand message or typing the command (in the group or in the private chat), as people do.

Each game checks what the issue asks of all of them: no card that is secret at that moment ever appears
in a group message (the watch checks every send and edit the fake accepts), Telegram's flood limits (the
fake's defaults) never answer 429, and a 3-player deal costs the group at most 18 sends and edits, 12 as
the median. The games are short (target 200, barrel at 100) so that each deal's machinery runs several
times without thousands of moves.
"""

from __future__ import annotations

import json

import pytest
from tgkit import Rig, seat_everyone

from bot.commands import MAX_PAYLOAD_BYTES
from bot.i18n import translator
from bot.model import Button, ChatRef, Group, Message
from core.cards import CARD_NAMES, cards_of
from fakes.telegram import FakeTelegram

NAMES = ("Alice", "Bob", "Carol", "Dan")


def _assert_clean(rig: Rig) -> None:
    assert rig.watch.leaks == []
    fake = rig.fake
    assert fake.stats.too_many_requests == 0, fake.stats.statuses
    assert all(c.status == 200 for c in fake.calls if c.method != "answerCallbackQuery"), [
        (c.method, c.description) for c in fake.calls if c.status != 200
    ]
    checked = 0
    for call in fake.calls:
        markup = call.params.get("reply_markup")
        if markup is None:
            continue
        # PTB sends the keyboard as a JSON string (form field); a dict is accepted too.
        keyboard = json.loads(markup) if isinstance(markup, str) else markup
        assert isinstance(keyboard, dict), markup
        for row in keyboard.get("inline_keyboard", []):
            for b in row:
                assert len(b.get("callback_data", "").encode()) <= MAX_PAYLOAD_BYTES
                checked += 1
    assert checked > 0, "no inline button was checked"


@pytest.mark.parametrize(
    ("preset", "humans", "computers"),
    [
        ("polish", 3, 0),
        ("polish", 2, 0),
        ("estonian", 2, 1),
        ("russian", 3, 1),
        ("estonian", 4, 0),
    ],
)
async def test_a_game_played_through_telegram(rig: Rig, preset: str, humans: int, computers: int) -> None:
    fake: FakeTelegram = rig.fake
    people = [fake.add_user(name) for name in NAMES[:humans]]
    chat = rig.group(f"Cards {preset}", people)
    table = await seat_everyone(rig, chat, people, computers, preset=preset)
    await table.play_out()
    doc, state = await table.state()
    assert doc.status == "finished" and state is not None and state.finished
    assert len(state.results) >= 2
    assert table.pressed > 10 and table.typed_moves > 10
    _assert_clean(rig)
    figures = rig.watch.figures()
    if humans + computers == 3:
        assert figures["median"] <= 12 and figures["max"] <= 18, figures
    # The game's end reached the group: the score sheet with the chart.
    assert fake.calls_to("sendPhoto") and fake.calls_to("sendPhoto")[-1].params["chat_id"] in (
        chat.id,
        str(chat.id),
    )
    # Everyone's private chat holds no hand any more: the hands replaced during a deal went with the next
    # deal's, the last one says the game is over (no buttons); every private message names the game first.
    heading = f"🃏 Game in «{chat.title}»"
    for person in people:
        hands = [m for m in fake.messages(person) if m.content.startswith(f"{heading}\nYour hand")]
        assert not hands
        over = [m for m in fake.messages(person) if m.content == f"{heading}\nThe game is over."]
        assert len(over) == 1 and not over[0].callback_data
        assert all(m.content.startswith(heading) for m in fake.messages(person) if m.callback_data)


LEAKS = {
    "label in the text": lambda label, code: (f"oops {label}", ()),
    "codes in the text": lambda label, code: (f"[9C JD {code} QH]", ()),
    "label on a button": lambda label, code: ("Table", ((Button(f"Join {label}", "x:hi"),),)),
    "code in a button's payload": lambda label, code: ("Table", ((Button("Join", f"p:{code}:1:tg:1"),),)),
}


@pytest.mark.parametrize("form", LEAKS)
async def test_the_watch_catches_a_card_in_a_group_message(rig: Rig, form: str) -> None:
    """The privacy check is not vacuous: a hand card put into a group message, in its text as a label or
    as codes, on a button's label or in its callback data, is reported."""
    fake = rig.fake
    people = [fake.add_user(name) for name in NAMES[:3]]
    chat = rig.group("Cards", people)
    table = await seat_everyone(rig, chat, people)
    doc, state = await table.state()
    assert state is not None
    card = next(iter(cards_of(state.deal.hands[0])))
    label = translator(doc.settings.language).card(card)
    text, buttons = LEAKS[form](label, CARD_NAMES[card])
    assert rig.watch.leaks == []
    await rig.bot.adapter.deliver([Message(Group(ChatRef("tg", str(chat.id))), text, buttons=buttons)])
    await rig.bot.adapter.outbox.drain()
    assert len(rig.watch.leaks) == 1 and CARD_NAMES[card] in rig.watch.leaks[0], rig.watch.leaks
