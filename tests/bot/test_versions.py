"""Every message of a table carries the table version it was drawn from (`Message.version`), so that an
adapter can drop an edit that another process overtook with a newer one."""

from __future__ import annotations

import random

from botkit import Harness, errors, make_user

from bot.model import ChatRef, Command, Message

ALA, BARTEK, CELINA = (make_user(i) for i in range(3))
USERS = {0: ALA, 1: BARTEK, 2: CELINA}


async def test_messages_carry_the_version_they_were_drawn_from(harness: Harness) -> None:
    h = harness
    assert not errors(await h.text(ALA, "/new"))
    version, _ = await h.doc()
    assert [m.version for m in h.sent] == [version] == [1]
    for user in (BARTEK, CELINA):
        out = await h.text(user, "/join")
        version, _ = await h.doc()
        assert out and all(m.version == version for m in out)
    out = await h.text(ALA, "/start")
    version, _ = await h.doc()
    assert {m.kind for m in out} >= {"lobby", "table", "hand"} and all(m.version == version for m in out)
    # Each command's messages carry the version the table has once the command is done (a button that
    # only picks the first card of a give stores nothing: its hand shows the version as it was).
    handle = h.service.handle
    by_key: dict[tuple[str, str], list[int]] = {}

    async def checked(command: Command) -> list[Message]:
        out = await handle(command)
        after, _ = await h.doc()
        for m in out:
            assert m.version == after, (command.name, m.kind, m.version, after)
            if m.key is not None:
                by_key.setdefault((repr(m.audience), m.key), []).append(after)
        return out

    h.service.handle = checked  # type: ignore[method-assign]
    rng = random.Random(2)
    for _ in range(60):
        if not await h.play_turn(rng, USERS, buttons=0.7, sensible=True):
            break
    h.service.handle = handle  # type: ignore[method-assign]
    # Under one key, no message is older than the one before.
    assert len(by_key) > 3 and all(v == sorted(v) for v in by_key.values())
    # Nothing stored: a refusal, and what an information command shows, carry the version as loaded.
    version, _ = await h.doc()
    state = await h.state()
    idle = USERS[((state.to_act or 0) + 1) % 3]
    for out in (await h.text(idle, "/pass"), await h.text(idle, "/hand"), await h.text(idle, "/score")):
        assert out and all(m.version == version for m in out)
    assert (await h.doc())[0] == version


async def test_a_warning_carries_the_version_and_messages_without_a_table_none(timed: Harness) -> None:
    h = timed
    await h.open_table([ALA, BARTEK, CELINA], preset="russian")
    version, _ = await h.doc()
    h.clock.advance(61)
    out = await h.tick()
    assert [bool(m.alert) for m in out] == [True] and out[0].version == version
    elsewhere = ChatRef("t", "-999", "Elsewhere")
    for text in ("/help", "/hand", "/frobnicate", "/rules"):
        out = await h.text(ALA, text, chat=elsewhere)
        assert out and all(m.version is None for m in out), text
