"""The fake's deleteMessages behaves as the Bot API server's: up to 100 ids of one chat, ids it cannot find
skipped, malformed lists refused whole with Telegram's texts, nothing deleted when one message may not be."""

from __future__ import annotations

import pytest

from fakes.telegram import FakeTelegram
from fakes.telegram.errors import ApiError
from fakes.telegram.flood import FloodLimits

TWO_DAYS = 48 * 3600


class WallClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def test_delete_messages_deletes_found_ones_and_skips_the_rest() -> None:
    fake = FakeTelegram(limits=FloodLimits.disabled())
    user = fake.add_user("Alice")
    fake.user_starts_bot(user)
    ids = [(await fake.call("sendMessage", chat_id=user.id, text=f"m{i}"))["message_id"] for i in range(4)]
    assert await fake.call("deleteMessage", chat_id=user.id, message_id=ids[0]) is True
    # Already deleted, never existed: skipped, the call succeeds.
    assert (
        await fake.call("deleteMessages", chat_id=user.id, message_ids=[ids[0], ids[1], ids[2], 99999])
        is True
    )
    assert [m.text for m in fake.messages(user)] == ["/start", "m3"]
    # Nothing of those left: still true (ids it cannot find are skipped).
    assert await fake.call("deleteMessages", chat_id=user.id, message_ids=[ids[1]]) is True
    await fake.close()


@pytest.mark.parametrize(
    ("ids", "description"),
    [
        (None, "Bad Request: message identifiers are not specified"),
        (5, "Bad Request: expected an Array of message identifiers"),
        (list(range(1, 102)), "Bad Request: too many message identifiers specified"),
        ([0], "Bad Request: invalid message identifier specified"),
        (["x"], "Bad Request: can't parse message identifier as a Number"),
    ],
)
async def test_delete_messages_refuses_malformed_lists_whole(ids: object, description: str) -> None:
    fake = FakeTelegram()
    user = fake.add_user("Alice")
    fake.user_starts_bot(user)
    sent = await fake.call("sendMessage", chat_id=user.id, text="keep")
    params = {"chat_id": user.id} if ids is None else {"chat_id": user.id, "message_ids": ids}
    with pytest.raises(ApiError) as refused:
        await fake.call("deleteMessages", **params)
    assert (refused.value.code, refused.value.description) == (400, description)
    assert sent["message_id"] in [m.message_id for m in fake.messages(user)]
    await fake.close()


async def test_one_message_too_old_refuses_the_whole_call() -> None:
    wall = WallClock()
    fake = FakeTelegram(wall_clock=wall)
    user = fake.add_user("Alice")
    fake.user_starts_bot(user)
    old = (await fake.call("sendMessage", chat_id=user.id, text="old"))["message_id"]
    wall.now += TWO_DAYS
    young = (await fake.call("sendMessage", chat_id=user.id, text="young"))["message_id"]
    with pytest.raises(ApiError) as refused:
        await fake.call("deleteMessages", chat_id=user.id, message_ids=[old, young])
    assert refused.value.description == "Bad Request: message can't be deleted"
    assert [m.text for m in fake.messages(user)] == ["/start", "old", "young"]
    assert await fake.call("deleteMessages", chat_id=user.id, message_ids=[young]) is True
    await fake.close()
