"""A table whose hard computer players are thinking does not hold up another table's commands."""

from __future__ import annotations

import asyncio
import random
import time

from botkit import Clock, Harness, make_user, quiet_settings

from bot.handlers import Handlers
from bot.model import ChatRef
from bot.service import Service
from bot.storage import MemoryStore


async def test_hard_thinking_runs_off_the_event_loop() -> None:
    clock = Clock()
    store = MemoryStore(clock=clock)
    service = Service(
        store, quiet_settings(ai_workers=1, ai_budget_seconds=1.0), handlers=Handlers, clock=clock
    )
    try:
        thinking = Harness(service, store, clock, chat=ChatRef("t", "-1", "A"))
        busy = Harness(service, store, clock, chat=ChatRef("t", "-2", "B"))
        solo = make_user(0)
        people = [make_user(i) for i in range(1, 4)]
        await thinking.text(solo, "/new")
        await thinking.text(solo, "/add_ai hard")
        await thinking.text(solo, "/add_ai hard")
        await busy.open_table(people)
        await thinking.text(solo, "/start")
        rng = random.Random(1)
        overlapped = 0
        for _ in range(40):
            finished: dict[str, float] = {}

            async def slow(finished: dict[str, float] = finished) -> None:
                started = time.perf_counter()
                assert await thinking.play_turn(rng, {0: solo}, sensible=True)
                finished["a"] = time.perf_counter()
                finished["a_took"] = finished["a"] - started

            async def quick(finished: dict[str, float] = finished) -> None:
                await asyncio.sleep(0.02)
                for _ in range(3):
                    assert await busy.play_turn(rng, dict(enumerate(people)))
                finished["b"] = time.perf_counter()

            await asyncio.gather(slow(), quick())
            if finished["a_took"] > 0.15:  # the other table needs about 0.05 s for its three turns
                assert finished["b"] < finished["a"], "the other table waited for the thinking"
                overlapped += 1
                if overlapped >= 2:
                    break
        assert overlapped >= 2, "hard players never thought long enough to test this"
    finally:
        await service.close()
