"""Thinking time as deterministic work, with a wall-clock hard stop.

A decision must be the same for the same seed on any machine, so the search does not stop "when the
time is up": a budget in seconds is turned into work units (simulated card plays) at a fixed nominal
rate, and the search stops when they are spent.  The wall clock only guards the worst case: a search
past ``HARD_FACTOR`` times its budget (at least ``HARD_FLOOR`` seconds), or past ``HARD_STOP``
seconds, stops at once with what it has (then, and only then, the result may depend on the
machine's speed or load).
"""

from __future__ import annotations

import time
from typing import Final

UNITS_PER_SECOND: Final = 250_000
"""Nominal simulated card plays per second (one simulated card costs 2 to 4 µs on the reference machine)."""
HARD_FACTOR: Final = 4.0
HARD_FLOOR: Final = 0.1
HARD_STOP: Final = 1.9
"""Seconds after which any decision returns, whatever its budget."""


class Budget:
    __slots__ = ("deadline", "left", "start", "total")

    def __init__(self, seconds: float, *, hard_stop: bool = True) -> None:
        """``hard_stop`` False: no wall-clock guard at all, so that a decision depends on nothing but its
        seed and view even on a machine busy enough to reach the guard (tests and replays that must
        repeat a run exactly; a live bot keeps the guard)."""
        self.total = max(1, int(seconds * UNITS_PER_SECOND))
        self.left = self.total
        self.start = time.perf_counter()
        guard = min(HARD_STOP, max(HARD_FLOOR, seconds * HARD_FACTOR)) if hard_stop else float("inf")
        self.deadline = self.start + guard

    def spend(self, units: int) -> bool:
        """Account for ``units`` of work; False once the budget or the hard stop is reached."""
        self.left -= units
        if self.left <= 0:
            return False
        return time.perf_counter() < self.deadline

    def share(self, fraction: float) -> Budget:
        """A sub-budget of a fraction of what is left, sharing the hard stop."""
        sub = Budget.__new__(Budget)
        sub.total = max(1, int(self.left * fraction))
        sub.left = sub.total
        sub.start = self.start
        sub.deadline = self.deadline
        return sub

    @property
    def exhausted(self) -> bool:
        return self.left <= 0 or time.perf_counter() >= self.deadline
