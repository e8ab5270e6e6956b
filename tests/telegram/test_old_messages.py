"""Telegram deletes only messages younger than 48 hours (older: 400 "Bad Request: message can't be
deleted", the Bot API server's text for MESSAGE_DELETE_FORBIDDEN). The fake refuses them on its wall
clock, which the test moves; the adapter, which deletes a player's previous hand when it posts a new one,
keeps playing with the new hand and leaves the old one on screen."""

from __future__ import annotations

import pytest
from tgkit import Rig, VirtualClock, seat_everyone

from fakes.telegram import ApiError, FakeTelegram

TWO_DAYS = 48 * 3600
REFUSED = "Bad Request: message can't be deleted"


class WallClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_the_fake_refuses_to_delete_messages_older_than_48_hours() -> None:
    wall = WallClock()
    fake = FakeTelegram(wall_clock=wall)
    user = fake.add_user("Alice")
    fake.user_starts_bot(user)
    young = await fake.call("sendMessage", chat_id=user.id, text="young")
    old = await fake.call("sendMessage", chat_id=user.id, text="old")
    wall.now += TWO_DAYS - 1
    assert await fake.call("deleteMessage", chat_id=user.id, message_id=young["message_id"]) is True
    wall.now += 1
    with pytest.raises(ApiError) as refused:
        await fake.call("deleteMessage", chat_id=user.id, message_id=old["message_id"])
    assert (refused.value.code, refused.value.description) == (400, REFUSED)
    assert [m.text for m in fake.messages(user)] == ["/start", "old"]
    await fake.close()


async def test_a_game_goes_on_when_old_hands_cannot_be_deleted() -> None:
    clock, wall = VirtualClock(), WallClock()
    rig = Rig(clock=clock, fake=FakeTelegram(clock=clock, wall_clock=wall))
    await rig.start()
    try:
        people = [rig.fake.add_user(name) for name in ("Alice", "Bob", "Carol")]
        chat = rig.group("Cards", people)
        table = await seat_everyone(rig, chat, people)
        table.button_share = 1.0
        for _ in range(3):
            assert await table.move()
        wall.now += TWO_DAYS  # every message on screen is two days old now
        before = len(rig.fake.calls)
        _, state = await table.state()
        assert state is not None
        deal = state.deal_number
        moves = 0
        while (state is not None and state.deal_number == deal) or moves < 12:
            # The hands a deal replaced are deleted with the next deal's first hand: play into it.
            assert await table.move()
            moves += 1
            _, state = await table.state()
        later = rig.fake.calls[before:]
        deletions = ("deleteMessage", "deleteMessages")
        refused = [c for c in later if c.method in deletions and not c.ok]
        assert refused and all(c.description == REFUSED for c in refused)
        others = [c for c in later if not c.ok and c.method not in (*deletions, "answerCallbackQuery")]
        assert others == []
        assert table.pressed >= moves  # every move after that was played with the newest hand's buttons
        assert rig.watch.leaks == []
    finally:
        await rig.close()
