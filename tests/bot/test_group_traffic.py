"""The group chat is not flooded: one table message per deal, edited at tricks and phases, and a result.

Telegram allows about 20 messages a minute in a group (edits count), so the service keeps a 3-player
deal to about a dozen group sends and edits however many people play (DESIGN.md: median ≤ 12, max ≤ 18).
"""

from __future__ import annotations

import random
import statistics

from botkit import Harness, make_user

from bot.model import Group

PEOPLE = [make_user(i) for i in range(3)]


async def test_group_messages_per_deal(harness: Harness) -> None:
    h = harness
    await h.open_table(PEOPLE, preset="russian")
    rng = random.Random(8)
    per_deal: dict[int, int] = {}
    users = dict(enumerate(PEOPLE))
    for _ in range(1500):
        state = await h.state()
        deal = state.deal_number
        if state.finished or deal >= 12:
            break
        before = len(h.sent)
        assert await h.play_turn(rng, users, sensible=True)
        new = [m for m in h.sent[before:] if isinstance(m.audience, Group)]
        per_deal[deal] = per_deal.get(deal, 0) + len(new)
    finished = [n for d, n in per_deal.items() if d + 1 in per_deal]
    assert len(finished) >= 8
    assert statistics.median(finished) <= 12, per_deal
    assert max(finished) <= 18, per_deal
