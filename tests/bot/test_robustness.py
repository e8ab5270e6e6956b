"""A bug or a failing side step never leaves a user without an answer, nor half a change stored."""

from __future__ import annotations

import random

import pytest
from botkit import Harness, action_text, errors, make_user

from bot.model import Sender

ALA, BARTEK = make_user(0), make_user(1)


async def test_a_failing_handler_answers_and_stores_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    await h.open_table([ALA, BARTEK], computers=1)
    before = await h.store.load(h.table_id)

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(h.service.flow, "conclude", broken)
    state = await h.state()
    seat = state.to_act
    assert seat is not None
    move = action_text(state.legal_actions(seat)[0], state, seat)
    out = await h.text({0: ALA, 1: BARTEK}[seat], move)
    assert len(out) == 1 and out[0].kind == "error" and isinstance(out[0].audience, Sender)
    assert "went wrong" in out[0].text
    assert await h.store.load(h.table_id) == before


async def test_statistics_failing_after_the_last_move_keep_its_messages(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    h = harness
    admin = make_user(5, admin=True)
    for text in ("/set barrel off", "/set target 150"):
        assert not errors(await h.text(admin, text))
    await h.open_table([ALA, BARTEK], computers=1)

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("stats down")

    monkeypatch.setattr(h.store, "add_stats", broken)
    rng = random.Random(3)
    for _ in range(2000):
        _, doc = await h.doc()
        assert doc is not None
        if doc.status == "finished":
            break
        assert await h.play_turn(rng, {0: ALA, 1: BARTEK}, sensible=True)
    assert any(m.kind == "final" for m in h.sent)
