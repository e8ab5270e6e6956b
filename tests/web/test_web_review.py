"""The review button of a finished deal on the web page's score sheet: the seat's own review, answered to
the page that asked (not sent to a chat), naming only cards that seat held."""

from __future__ import annotations

import json
import random

from webkit import HUMANS, Rig

from core.actions import Give
from core.game import unroll
from fakes.cardspy import readings


async def test_a_seat_reviews_a_finished_deal_from_the_page(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    rng = random.Random(3)
    users = dict(enumerate(HUMANS))
    while True:
        _, doc = await rig.harness.doc()
        assert doc is not None and doc.game is not None
        state = rig.harness.cache.state(doc.serial, doc.game.spec, doc.game.actions)
        if state.history:
            break
        assert await rig.harness.play_turn(rng, users, sensible=True)
    session = (await rig.session_by_link(HUMANS[1]))["session"]
    r = await rig.view(session)
    view = json.loads(await r.text())
    (deal,) = view["history"]
    assert deal["review"], "a button for the seat's own review"
    delivered = len(rig.delivered)
    r = await rig.client.post(
        "/api/act", json={"session": session, "payload": deal["review"]}, headers=rig.headers()
    )
    answer = await r.json()
    assert r.status == 200 and answer["ok"] is True, answer
    text = answer["review"]
    assert text.startswith("Your review of deal 1")
    assert not [m for m in rig.delivered[delivered:] if m.kind == "review"], (
        "shown on the page, not sent elsewhere"
    )
    # Only cards seat 1 held in that deal: as dealt, the talon if it declared, cards given to it.
    layout, log = state.history[0]
    mine = layout.hands[1]
    actions = unroll(log)
    for s, a in actions:
        if type(a) is Give:
            if s == 1:
                mine |= sum(1 << c for c in layout.talon)
            mine |= sum(1 << c for target, c in a.cards if target == 1)
    named = [r.token for r in readings(text, ["en"]) if all(not mine >> c & 1 for c in r.cards)]
    assert named == []
