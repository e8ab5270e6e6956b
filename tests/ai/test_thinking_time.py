"""Thinking time is work, with a wall-clock guard that tests turn off (`core.ai.budget`)."""

from __future__ import annotations

import time

import pytest

from bot.settings import Settings
from core.ai.budget import HARD_FLOOR, Budget


def test_the_guard_stops_a_decision_on_the_wall_clock_and_can_be_turned_off() -> None:
    guarded, unguarded = Budget(0.01), Budget(0.01, hard_stop=False)
    time.sleep(HARD_FLOOR * 1.5)  # what a busy machine does to a search between two steps
    assert guarded.exhausted and not guarded.spend(1)
    assert not unguarded.exhausted and unguarded.spend(1)
    # Without the guard the work units alone end it, after exactly as many as the seconds are worth.
    spent = 1
    while unguarded.spend(1):
        spent += 1
    assert spent + 1 == unguarded.total and unguarded.left == 0 and unguarded.exhausted


def test_the_tests_run_without_the_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """tests/conftest.py sets `AI_HARD_STOP=false` for the whole session; a bot keeps the guard."""
    assert Settings(_env_file=None).ai_hard_stop is False
    monkeypatch.delenv("AI_HARD_STOP")
    assert Settings(_env_file=None).ai_hard_stop is True
