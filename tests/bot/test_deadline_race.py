"""A deadline claimed just before the player moved must not play the next player's turn.

Two actors on one real Redis: a poller (`Service.tick` on one instance) and the player (a command on a
second instance with its own connection pool). The poller claims the overdue turn; the player's move
lands after the claim, either before the poller reads the table or between that read and the poller's
own save. Either way the claimed deadline names a turn that is over (the table's turn token moved on),
so firing it must change nothing: the player's move stays the only action, the next player keeps their
full turn, and their own deadline still fires later (once). Without the token checks of `Service._fire`
the poller plays the next player's turn for them at once.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from botkit import Clock, action_text, errors, make_user, quiet_settings

from bot.commands import parse_text
from bot.handlers import Handlers
from bot.model import ChatRef
from bot.service import Service
from bot.snapshot import GameCache
from bot.storage import RedisStore
from bot.table import TableDoc

HUMANS = [make_user(i) for i in range(3)]
CHAT = ChatRef("t", "-4242", "Race")
TURN = 90


@pytest.fixture
async def actors(redis_url: str) -> AsyncIterator[tuple[Service, Service, Clock]]:
    """The poller's service and the player's, each with its own Redis connection pool, on one clock."""
    clock = Clock()
    settings = quiet_settings(turn_seconds=TURN, warn_seconds=0)
    poller = Service(
        RedisStore.from_url(redis_url), settings, handlers=Handlers, clock=clock, rng=random.Random(1)
    )
    player = Service(
        RedisStore.from_url(redis_url), settings, handlers=Handlers, clock=clock, rng=random.Random(2)
    )
    yield poller, player, clock
    for s in (poller, player):
        await s.close()
        await s.store.close()


async def table(service: Service) -> TableDoc:
    _, doc = await service.load(CHAT.key)
    assert doc is not None and doc.game is not None and doc.turn is not None
    return doc


async def say(service: Service, who: int, text: str) -> None:
    command = parse_text(text, CHAT, HUMANS[who])
    assert command is not None
    assert not errors(await service.handle(command)), text


async def move(service: Service) -> None:
    """The player to act makes a legal move (through `service`)."""
    doc = await table(service)
    assert doc.game is not None
    state = GameCache().state(doc.serial, doc.game.spec, doc.game.actions)
    seat = state.to_act
    assert seat is not None
    user = next(i for i, h in enumerate(HUMANS) if doc.seats[seat].user == h.key)
    await say(service, user, action_text(state.legal_actions(seat)[0], state, seat))


def after_first(hook: Callable[[], Awaitable[None]], call: Callable[..., Awaitable[Any]]) -> Any:
    """`call`, which runs `hook` (once) right after its first return, before the caller sees the result."""
    done = False

    async def wrapped(*args: Any, **kwargs: Any) -> Any:
        nonlocal done
        result = await call(*args, **kwargs)
        if not done:
            done = True
            await hook()
        return result

    return wrapped


@pytest.mark.parametrize("lands", ["after the claim", "after the poller read the table"])
async def test_a_claimed_deadline_does_not_play_the_next_turn(
    actors: tuple[Service, Service, Clock], lands: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    poller, player, clock = actors
    for who, text in [(0, "/new"), (1, "/join"), (2, "/join"), (0, "/start")]:
        await say(player, who, text)
    doc = await table(player)
    assert doc.game is not None and doc.turn is not None
    mover, actions = doc.turn.seat, len(doc.game.actions)

    clock.advance(TURN + 1)  # the turn is overdue: the poller will claim it
    moved: list[bool] = []

    async def the_player_moves() -> None:
        await move(player)
        moved.append(True)

    if lands == "after the claim":
        monkeypatch.setattr(poller.store, "claim_due", after_first(the_player_moves, poller.store.claim_due))
    else:
        monkeypatch.setattr(poller, "load", after_first(the_player_moves, poller.load))
    out = await poller.tick()
    assert moved == [True]

    doc = await table(player)
    assert doc.game is not None and doc.turn is not None
    assert len(doc.game.actions) == actions + 1, "the deadline played a turn after the player's own move"
    assert doc.turn.seat != mover, "the next player is to act"
    assert all(seat.missed == 0 for seat in doc.seats)
    assert not [m for m in out if "Time is up" in m.text]
    assert doc.turn.deadline == pytest.approx(clock() + TURN), "the next player keeps their full turn"

    # The next player's own deadline is still there and fires once, when it is due.
    monkeypatch.undo()
    nxt = doc.turn.seat
    assert await poller.tick() == []
    clock.advance(TURN + 1)
    await poller.tick()
    await poller.tick()
    doc = await table(player)
    assert doc.game is not None
    assert len(doc.game.actions) == actions + 2 and doc.seats[nxt].missed == 1
