"""Turn deadlines, warnings, computers sitting in for absent players, kicks, ends and idle lobbies."""

from __future__ import annotations

from botkit import Harness, action_text, errors, make_user

from bot.model import Group, Private

ALA, BARTEK, CELINA = (make_user(i) for i in range(3))
USERS = {0: ALA, 1: BARTEK, 2: CELINA}


async def current(h: Harness) -> int:
    state = await h.state()
    assert state.to_act is not None
    return state.to_act


async def test_warning_then_the_computer_plays_then_the_seat_goes_away(timed: Harness) -> None:
    h = timed
    await h.open_table([ALA, BARTEK, CELINA], preset="russian")
    seat = await current(h)
    absent = USERS[seat]
    _, doc = await h.doc()
    assert doc is not None and doc.turn is not None and doc.turn.seat == seat

    h.clock.advance(59)
    assert await h.tick() == []
    h.clock.advance(2)  # 61 s: the warning (30 s before the deadline)
    out = await h.tick()
    # The warning comes with the hand: new, notifying, its buttons ready, the warning on top.
    assert len(out) == 1 and out[0].kind == "hand" and out[0].notify and out[0].buttons
    assert out[0].alert.startswith("Your turn: 29 seconds left") and out[0].body.startswith(out[0].alert)
    assert isinstance(out[0].audience, Private) and out[0].audience.user.key == absent.key
    assert await h.tick() == []  # fires once

    h.clock.advance(30)  # 91 s: the computer plays the turn
    before = len((await h.doc())[1].game.actions)  # type: ignore[union-attr]
    out = await h.tick()
    _, doc = await h.doc()
    assert doc is not None and doc.game is not None
    assert len(doc.game.actions) == before + 1
    assert doc.seats[seat].missed == 1 and not doc.seats[seat].away
    # "Time is up" is on top of their redrawn hand (the card is gone from it), not a message of its own.
    [told] = [m for m in out if isinstance(m.audience, Private) and m.audience.user.key == absent.key]
    assert told.kind == "hand" and told.body.startswith("Time is up: a computer played your turn.")
    assert await h.tick() == []

    # Play on until the absent player's turn comes again, then let it run out a second time.
    for _ in range(20):
        if await current(h) == seat:
            break
        other = await current(h)
        state = await h.state()
        move = action_text(state.legal_actions(other)[0], state, other)
        assert not errors(await h.text(USERS[other], move))
    assert await current(h) == seat
    h.clock.advance(91)
    out = await h.tick()  # the warning is overdue: it fires first
    out += await h.tick()
    _, doc = await h.doc()
    assert doc is not None and doc.seats[seat].away
    assert any(isinstance(m.audience, Group) and m.kind == "notice" for m in out)
    # An away player's moves are refused until they come back; the computer plays for them at once.
    assert await current(h) != seat
    out = await h.text(absent, "/back")
    assert not errors(out)
    _, doc = await h.doc()
    assert doc is not None and not doc.seats[seat].away and doc.seats[seat].missed == 0


async def test_a_deadline_is_replaced_when_the_player_acts_in_time(timed: Harness) -> None:
    h = timed
    await h.open_table([ALA, BARTEK, CELINA], preset="russian")
    seat = await current(h)
    h.clock.advance(80)
    await h.tick()  # warning
    assert not errors(await h.text(USERS[seat], "/bid 100"))
    h.clock.advance(15)  # the old deadline passes: nothing happens for the old turn
    out = await h.tick()
    assert all(not m.alert or m.audience.user.key != USERS[seat].key for m in out)  # type: ignore[union-attr]
    _, doc = await h.doc()
    assert doc is not None and doc.game is not None and len(doc.game.actions) == 1


async def test_an_idle_lobby_closes(timed: Harness) -> None:
    h = timed
    await h.text(ALA, "/new")
    h.clock.advance(14 * 60)
    assert await h.tick() == []
    await h.text(BARTEK, "/join")  # activity restarts the clock
    h.clock.advance(14 * 60)
    assert await h.tick() == []
    h.clock.advance(2 * 60)
    out = await h.tick()
    _, doc = await h.doc()
    assert doc is not None and doc.status == "finished" and doc.ended == "idle"
    assert [m.kind for m in out] == ["lobby"]


async def test_kick_by_majority_and_by_admin(harness: Harness) -> None:
    h = harness
    dorota = make_user(3)
    await h.open_table([ALA, BARTEK, CELINA, dorota], preset="russian")
    # Three others: two votes are a majority.
    assert not errors(await h.text(ALA, "/kick 3"))
    _, doc = await h.doc()
    assert doc is not None and not doc.seats[2].kicked and doc.kick_votes == {"2": [ALA.key]}
    assert errors(await h.text(ALA, "/kick Celina"))  # already voted
    assert errors(await h.text(CELINA, "/kick 3"))  # not oneself
    assert not errors(await h.text(BARTEK, "/kick celina"))
    _, doc = await h.doc()
    assert doc is not None and doc.seats[2].kicked and doc.seat_of(CELINA.key) is None
    # An admin kicks at once.
    admin = make_user(5, admin=True)
    assert not errors(await h.text(admin, "/kick 4"))
    _, doc = await h.doc()
    assert doc is not None and doc.seats[3].kicked
    assert errors(await h.text(admin, "/kick 4"))  # a computer plays it already


async def test_end_by_creator_or_admin_only(harness: Harness) -> None:
    h = harness
    await h.open_table([ALA, BARTEK, CELINA])
    assert errors(await h.text(BARTEK, "/end"))
    out = await h.text(ALA, "/end")
    assert not errors(out)
    assert any(m.kind == "final" for m in out)
    _, doc = await h.doc()
    assert doc is not None and doc.status == "finished" and doc.ended == "ended"
    assert await h.store.get_stats(f"user:{ALA.key}") == {}


async def test_everyone_leaving_ends_the_game(harness: Harness) -> None:
    h = harness
    await h.open_table([ALA, BARTEK], computers=1)
    assert not errors(await h.text(ALA, "/leave"))
    _, doc = await h.doc()
    assert doc is not None and doc.status == "game" and doc.seats[0].kicked
    assert not errors(await h.text(BARTEK, "/leave"))
    _, doc = await h.doc()
    assert doc is not None and doc.status == "finished" and doc.ended == "abandoned"
