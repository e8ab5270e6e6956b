"""A fuzz seed replays the same run alone as in the whole suite (`fuzz_constants`).

Hypothesis mines the literals of every local module loaded at the time; the suite loads every test
module, a replay only a few. Found by issue 26: a seed that failed in `make test` passed alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from fuzz_machine import MemoryFuzz, run_seeded
from hypothesis import HealthCheck, settings

SEED = 2103146952


def _one_round() -> tuple[int, int, int, int, int]:
    m = MemoryFuzz
    m.cases = m.accepted_moves = m.refusals = m.ignored = m.timer_firings = 0
    run_seeded(
        m,
        settings(
            max_examples=4,
            stateful_step_count=50,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            database=None,
            derandomize=False,
        ),
        SEED,
        1,
    )
    return m.cases, m.accepted_moves, m.refusals, m.ignored, m.timer_firings


def test_a_seed_draws_the_same_whatever_else_is_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _one_round()
    # A test module of the suite that a lone replay would not load: two hundred literals to mine.
    words = [f"fuzz-replay-{i}" for i in range(200)] + [f"/{i}" for i in range(200)]
    (tmp_path / "fuzz_replay_literals.py").write_text(
        f"WORDS = {words!r}\nNUMBERS = {list(range(7, 4000, 13))!r}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    __import__("fuzz_replay_literals")
    try:
        assert _one_round() == first
    finally:
        sys.modules.pop("fuzz_replay_literals", None)
