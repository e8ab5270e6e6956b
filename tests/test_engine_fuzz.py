"""A short version of bench/fuzz.py for CI: every preset, player count and option set, invariants on."""

from __future__ import annotations

import zlib

import pytest

from bench.fuzz import VARIANTS, run_variant


@pytest.mark.parametrize(("variant", "players"), VARIANTS, ids=[f"{v}-{n}" for v, n in VARIANTS])
def test_random_games_keep_every_invariant(variant: str, players: int) -> None:
    tally = run_variant(variant, players, deals=60, seed=zlib.crc32(f"{variant}-{players}".encode()))
    assert tally.errors == 0, tally.first_error
    assert tally.deals >= 60
    assert tally.games_replayed >= 1
