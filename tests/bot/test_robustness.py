"""A bug or a failing side step never leaves a user without an answer, nor half a change stored."""

from __future__ import annotations

import random

import pytest
from botkit import Harness, action_text, errors, make_user

from bot.model import Sender
from bot.storage import StorageUncertain

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


async def test_a_move_saved_but_unconfirmed_is_told_as_maybe_taken_and_the_table_shows_it(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`StorageUncertain` (the replicas did not acknowledge the save in time): the player must not read
    "failed" or "try again" for a move that stands, and the next view shows that it stands."""
    h = harness
    await h.open_table([ALA, BARTEK], computers=1)
    real_save = h.store.save

    async def unconfirmed(table_id: str, expected_version: int, document: str, **kwargs: object) -> int:
        version = await real_save(table_id, expected_version, document, **kwargs)  # type: ignore[arg-type]
        raise StorageUncertain(table_id, version, 0, 1)

    state = await h.state()
    seat = state.to_act
    assert seat is not None
    before = (await h.doc())[0]
    move = action_text(state.legal_actions(seat)[0], state, seat)
    monkeypatch.setattr(h.store, "save", unconfirmed)
    out = await h.text({0: ALA, 1: BARTEK}[seat], move)
    monkeypatch.setattr(h.store, "save", real_save)
    assert len(out) == 1 and out[0].kind == "error" and isinstance(out[0].audience, Sender)
    assert "may or may not have been taken" in out[0].text
    assert "unavailable" not in out[0].text
    assert (await h.doc())[0] > before
