"""A short soak with every kind of fault (bench/soak.py): 10 tables of 3 people for 45 s through two real
`thousand telegram` processes in webhook mode on one Redis (append-only, fsync every second), with
Telegram's flood limits on; two bot processes killed with SIGKILL and started again, Redis killed and
started again, Redis stopped for 5 s, and bursts of 5xx, timeouts and 429 from the Bot API.

The full run (100 tables, 5 minutes, 10 kills) and its figures are in RELIABILITY.md.
"""

from __future__ import annotations

import json

from bench.soak import parse, soak


async def test_a_short_soak_with_faults() -> None:
    args = parse(
        [
            "--tables=10",
            "--minutes=0.75",
            "--kills=2",
            "--outage=5",
            "--telegram-bursts=3",
            "--turn-seconds=15",
            "--idle=0.08",
            "--seed=3",
        ]
    )
    result = await soak(args)
    v = result["verification"]
    summary = json.dumps(result)
    # The games went on: every table moved, moves were made and acknowledged, nothing hit the limits.
    assert result["tables_advanced"] == 10, summary
    assert result["moves_acknowledged"] > 50, summary
    assert result["too_many_requests_from_limits"] == 0, summary
    assert result["faults"]["bot_kills"] == 2, summary
    assert {e["kind"] for e in result["faults"]["events"]} >= {"kill", "redis_crash", "redis_outage"}, summary
    # No acknowledged move lost (but what Redis had not written in its last second before the crash).
    assert v["acknowledged_moves_lost"] == 0, summary
    assert v["lost_in_crash_max_age_s"] <= 2.0, summary
    # No table stuck, every deadline fired and about on time, version and state agree everywhere.
    assert v["tables_stuck_after_faults"] == 0, summary
    assert v["idle_turns_not_fired"] == 0, summary
    # Turns the crash took back are set aside: only turns of versions it took back (the soak checks each
    # by its version; any other idle turn must have fired), at most one per save it took back.
    crashes = [e for e in result["faults"]["events"] if e["kind"] == "redis_crash"]
    saves_lost = sum(e.get("saves_lost") or 0 for e in crashes)
    assert v["idle_turns_lost_in_redis_crash"] <= saves_lost, summary
    assert v["idle_turns_played_by_timer"] > 0, summary
    assert v["deadline_late_s"]["max"] < 35, summary  # a deadline claimed by a killed process: its lease
    assert v["deadlines_overdue_at_end"] == 0, summary
    assert v["inconsistent_tables"] == [], summary
    assert all(not e.get("inconsistent_after_restart") for e in result["faults"]["events"]), summary
    # While Redis was away, presses were answered (with "temporarily unavailable" when the process could).
    answered = v["unavailable_answers_during_outage"] + v["blank_answers_without_effect_during_outage"]
    assert answered > 0, summary
    # Privacy, secrets, flood control and duplicates.
    assert v["private_cards_in_group_messages"] == 0 and v["privacy_checks"] > 20, summary
    assert v["token_in_logs"]["token"] == v["token_in_logs"]["token_secret_part"] == 0, summary
    assert v["token_in_logs"]["webhook_secret"] == 0, summary
    assert v["sends_before_retry_after"] == 0, summary
    assert v["duplicate_messages"] <= v["duplicates_forced_by_lost_answers"], summary
    assert v["clean_exits"] == [0, 0], summary
