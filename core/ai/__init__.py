"""Computer players: ``random``, ``easy``, ``medium`` and ``hard``.

The only entry point is :func:`choose_action`, which takes a seat's :class:`~core.view.SeatView` and
the seat's legal actions, never the game state: a computer player cannot see more than its seat may.
Decisions are deterministic for a given seed and view (thinking time is counted in simulated work,
see :mod:`core.ai.budget`), and always one of the legal actions.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from ..actions import Action
from ..view import SeatView
from .budget import Budget
from .decide import LEVEL_PARAMS, decide

LEVELS: Final = ("random", "easy", "medium", "hard")


def default_budget(level: str) -> float:
    """Seconds of thinking a level uses per decision when no budget is given."""
    try:
        return LEVEL_PARAMS[level].budget
    except KeyError:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(LEVELS)})") from None


def choose_action(
    level: str,
    view: SeatView,
    legal: Sequence[Action],
    *,
    seed: int,
    budget_s: float | None = None,
    strict: bool = False,
    hard_stop: bool = True,
) -> Action:
    """The action ``level`` takes in ``view``; always a member of ``legal`` (which must not be empty).

    Should a level fail on some unforeseen position, the easy level answers instead (``strict``:
    raise, for tests), so a table never waits on a computer player. ``hard_stop`` False drops the
    wall-clock guard of :class:`~core.ai.budget.Budget`: the same decision however busy the machine.
    """
    if not isinstance(view, SeatView):
        raise TypeError("choose_action takes a SeatView (core.view.seat_view), not a game state")
    if level not in LEVEL_PARAMS:
        raise ValueError(f"unknown level {level!r} (known: {', '.join(LEVELS)})")
    if not legal:
        raise ValueError("no legal action to choose from")
    params = LEVEL_PARAMS[level]
    budget = Budget(params.budget if budget_s is None else budget_s, hard_stop=hard_stop)
    rng = random.Random(seed)
    try:
        action = decide(params, view, legal, rng, budget)
    except Exception:
        if strict:
            raise
        try:
            action = decide(LEVEL_PARAMS["easy"], view, legal, rng, budget)
        except Exception:
            action = legal[0]
    if action in legal:
        return action
    if strict:
        raise AssertionError(f"{level} chose {action!r}, which is not legal")
    return legal[0]


__all__ = ["LEVELS", "choose_action", "default_budget"]
