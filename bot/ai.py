"""Computer players for the service: `core.ai` decisions, off the event loop when they take time.

`easy` decides in microseconds and runs inline. `medium` and `hard` run in a process pool (or threads
when `workers` is 0), so one table's thinking never delays another table's command: the service awaits
the decision while the event loop keeps serving everyone else. A decision gets only the seat's view
(`core.view.seat_view`) and its legal actions, and is checked against them.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from collections.abc import Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from bot.review_job import ReviewJob, run_review
from core.actions import Action
from core.ai import LEVELS, choose_action
from core.ai.review import DealReview
from core.game import GameState
from core.view import SeatView, seat_view

__all__ = ["INLINE_LEVELS", "AiRunner", "decide_now"]

INLINE_LEVELS = frozenset({"random", "easy"})

log = logging.getLogger("thousand.ai")


def decide_now(
    level: str,
    view: SeatView,
    legal: Sequence[Action],
    seed: int,
    budget: float | None,
    hard_stop: bool = True,
) -> Action:
    """One decision, in whatever process runs it; never an illegal action."""
    if level not in LEVELS:
        level = "medium" if "medium" in LEVELS else next(iter(LEVELS))
    action = choose_action(level, view, legal, seed=seed, budget_s=budget, hard_stop=hard_stop)
    if action not in legal:
        return legal[0]
    return action


class AiRunner:
    """Runs decisions; `close()` stops the worker processes."""

    def __init__(self, workers: int = 2, budget_s: float | None = None, *, hard_stop: bool = True) -> None:
        """`hard_stop` False: decisions never stop on the wall clock (`core.ai.budget`), so a run repeats
        exactly on a busy machine (`Settings.ai_hard_stop`)."""
        self._workers = workers
        self._budget = budget_s
        self._hard_stop = hard_stop
        self._executor: Executor | None = None

    def _pool(self) -> Executor:
        if self._executor is None:
            if self._workers > 0:
                # spawn: the service runs threads and an event loop, which a fork would copy half-way.
                context = multiprocessing.get_context("spawn")
                self._executor = ProcessPoolExecutor(self._workers, mp_context=context)
            else:
                self._executor = ThreadPoolExecutor(2, thread_name_prefix="thousand-ai")
        return self._executor

    async def decide(self, level: str, state: GameState, seat: int, seed: int) -> Action:
        legal = list(state.legal_actions(seat))
        if len(legal) == 1:
            return legal[0]
        view = seat_view(state, seat)
        if level in INLINE_LEVELS:
            return decide_now(level, view, legal, seed, self._budget, self._hard_stop)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._pool(), decide_now, level, view, legal, seed, self._budget, self._hard_stop
            )
        except BrokenProcessPool:
            # A worker died (killed, out of memory): start a fresh pool next time, think in a thread now.
            log.warning("computer player pool broke; restarting it")
            self.close()
            args = (level, view, legal, seed, self._budget, self._hard_stop)
            return await asyncio.to_thread(decide_now, *args)

    async def review(self, job: ReviewJob) -> DealReview:
        """A person's review of a finished deal (`bot.review`), in the pool: bounded work per deal
        (`core.ai.review.Limits`), never on the event loop."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool(), run_review, job)
        except BrokenProcessPool:
            log.warning("computer player pool broke; restarting it")
            self.close()
            return await asyncio.to_thread(run_review, job)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
