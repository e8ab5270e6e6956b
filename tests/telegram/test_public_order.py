"""Order of messages at a public table (issue 25 §3): each person reads, from top to bottom of their private
chat, that a table was found (the queue's status edited) before the table appears, and a deal's result
above the next deal's table and hand.

Three people are matched by Play now and play through the end of the first deal by pressing and typing,
through the real PTB `Application` against the fake Bot API; the fake's record of every send and edit in
each private chat is the evidence (the chat's order is the order of its messages' sends). Before the fix
the outbox posted the next deal's table (urgent: it has buttons) before the result queued ahead of it,
and the status edit came from the queue's refresh, seconds after the table and the hand.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from test_play_now import PublicRig, PublicTable, person, seated, until
from tgkit import settings

from fakes.telegram.fake import ApiResponse
from fakes.telegram.models import UploadedFile


@dataclass
class Call:
    method: str
    chat: str
    message_id: int
    text: str


async def test_found_before_the_table_and_a_result_before_the_next_deal() -> None:
    rig = PublicRig(settings_=settings(public_computers_after=600.0))
    await rig.start()
    await rig.start_public()
    calls: list[Call] = []
    original = rig.fake.handle

    async def handle(
        token: str, method: str, params: Any, files: dict[str, UploadedFile] | None = None
    ) -> ApiResponse:
        response = await original(token, method, params, files)
        if response.status == 200 and method.lower() in ("sendmessage", "editmessagetext"):
            result = response.json().get("result")
            message_id = int(result["message_id"]) if isinstance(result, dict) else 0
            calls.append(
                Call(method.lower(), str(params.get("chat_id")), message_id, str(params.get("text")))
            )
        return response

    rig.fake.handle = handle  # type: ignore[method-assign]
    try:
        people = [person(rig, n, "en") for n in ("Ann", "Bob", "Cid")]
        await rig.settle()
        for user in people:
            await rig.say(user, user, "/play polish 3 slow")
        for user in people:
            await until(lambda user=user: seated(rig, user))
        table_id = await seated(rig, people[0])
        assert table_id is not None
        await rig.settle()
        table = PublicTable(rig, None, {u.first_name: u for u in people})  # type: ignore[arg-type]
        table.public_id = table_id
        for _ in range(400):
            _, state = await table.state()
            assert state is not None
            if state.deal_number >= 2:
                break
            assert await table.move()
        else:
            raise AssertionError("the first deal did not end")
        await rig.settle()

        for user in people:
            mine = [c for c in calls if c.chat == str(user.id)]

            def first(check: Any, mine: list[Call] = mine, name: str = user.first_name) -> int:
                index = next((i for i, c in enumerate(mine) if check(c)), None)
                assert index is not None, f"{name} never got it"
                return index

            found = first(lambda c: c.method == "editmessagetext" and "A table was found" in c.text)
            table_1 = first(lambda c: c.method == "sendmessage" and "<b>Deal 1</b>" in c.text)
            hand_1 = first(lambda c: c.method == "sendmessage" and "· deal 1 ·" in c.text)
            assert found < table_1 < hand_1, (user.first_name, found, table_1, hand_1)
            posts = [c for c in mine if c.method == "sendmessage"]
            result = next(c.message_id for c in posts if "Deal 1: result" in c.text)
            table_2 = next(c.message_id for c in posts if "<b>Deal 2</b>" in c.text)
            hand_2 = next(c.message_id for c in posts if "· deal 2 ·" in c.text)
            assert result < table_2 < hand_2, (user.first_name, result, table_2, hand_2)
            # Nothing of deal 2 was posted above the result.
            assert not [c for c in posts if c.message_id < result and "deal 2" in c.text.lower()]
        assert rig.fake.stats.too_many_requests == 0
    finally:
        await rig.close()
