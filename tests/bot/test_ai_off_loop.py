"""Computer players' thinking never holds up the rest of the bot.

Both checks wait on events, not on how long a decision happens to take: a fast machine makes hard
players decide in a few milliseconds, which once left a timing-based version of this test with
nothing to measure.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from botkit import Clock, Harness, make_user, quiet_settings

from bot.ai import AiRunner
from bot.handlers import Handlers
from bot.model import ChatRef
from bot.service import Service
from bot.storage import MemoryStore
from core.actions import Action
from core.game import GameState, new_game
from core.rules import POLISH


class HeldRunner(AiRunner):
    """The real runner, except that a hard decision starts only once the test lets it."""

    def __init__(self) -> None:
        super().__init__(workers=1, budget_s=0.2)
        self.release = asyncio.Event()
        self.holding = asyncio.Event()
        self.held = 0
        self.waited_out = False

    async def decide(self, level: str, state: GameState, seat: int, seed: int) -> Action:
        if level == "hard" and len(state.legal_actions(seat)) > 1:
            self.held += 1
            self.holding.set()
            try:
                await asyncio.wait_for(self.release.wait(), timeout=5)
            except TimeoutError:
                # Raising here would be logged and swallowed by the service: the test looks at this.
                self.waited_out = True
        return await super().decide(level, state, seat, seed)


async def test_other_tables_are_served_while_computer_players_think() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock)
    runner = HeldRunner()
    service = Service(store, quiet_settings(), handlers=Handlers, ai=runner, clock=clock)
    try:
        thinking = Harness(service, store, clock, chat=ChatRef("t", "-1", "A"))
        busy = Harness(service, store, clock, chat=ChatRef("t", "-2", "B"))
        solo = make_user(0)
        people = [make_user(i) for i in range(1, 4)]
        await thinking.text(solo, "/new")
        await thinking.text(solo, "/add_ai hard")
        await thinking.text(solo, "/add_ai hard")
        await busy.open_table(people)
        rng = random.Random(1)

        async def other_table() -> None:
            await runner.holding.wait()
            for _ in range(3):
                assert await busy.play_turn(rng, dict(enumerate(people)))
            runner.release.set()

        # Starting the game with the solo player dealing or bidding first reaches a computer's
        # turn at once or after the solo player's move; either way a hard decision is pending.
        async def thinking_table() -> None:
            await thinking.text(solo, "/start")
            while not runner.held:
                assert await thinking.play_turn(rng, {0: solo}, sensible=True)

        await asyncio.wait_for(asyncio.gather(thinking_table(), other_table()), timeout=30)
        assert runner.held >= 1
        assert not runner.waited_out, "the other table waited for the thinking"
    finally:
        await service.close()
        runner.close()


def _state_with_choices() -> tuple[GameState, int]:
    state, _ = new_game(POLISH, 3, 7)
    seat = state.to_act
    assert seat is not None and len(state.legal_actions(seat)) > 1
    return state, seat


@pytest.mark.parametrize("workers", [1, 0], ids=["processes", "threads"])
async def test_a_hard_decision_leaves_the_event_loop_free(workers: int) -> None:
    """While a decision is pending the event loop keeps turning; inline thinking would stop it."""
    state, seat = _state_with_choices()
    runner = AiRunner(workers=workers, budget_s=0.05)
    try:
        for attempt in range(2):  # the first call also starts the pool; the second is a warm one
            decided = asyncio.Event()
            turns = [0]
            task = asyncio.create_task(_count_turns(decided, turns))
            action = await runner.decide("hard", state, seat, seed=attempt)
            decided.set()
            await task
            assert action in state.legal_actions(seat)
            assert turns[0] > 0, "the event loop stood still while the computer thought"
    finally:
        runner.close()


async def _count_turns(decided: asyncio.Event, turns: list[int]) -> None:
    while not decided.is_set():
        turns[0] += 1
        await asyncio.sleep(0)
