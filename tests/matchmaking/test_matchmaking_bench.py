"""bench/matchmaking.py, short: a few hundred players arriving across two OS processes on the test
session's redis-server, every process matching at once, some cancelling and some blocking. Nobody is
seated twice, nobody who did not cancel is lost, no cancelled player and no blocked pair is seated."""

from __future__ import annotations

from bench.matchmaking import run


def test_two_processes_seat_each_player_once_and_lose_nobody(redis_url: str, redis_prefix: str) -> None:
    figures = run(
        url=redis_url,
        players=300,
        rate=100,
        processes=2,
        drain=3.0,
        cancel_share=0.2,
        block_share=0.1,
        prefix=redis_prefix,
    )
    assert figures["queued"] == 300
    assert figures["seated_twice"] == 0
    assert figures["lost"] == 0
    assert figures["cancelled_seated"] == 0
    assert figures["blocked_pairs_seated"] == 0
    assert figures["cancelled"] > 0  # the run did exercise cancelling
    assert figures["seated"] + figures["cancelled"] + figures["still_waiting"] == 300
    assert figures["seated"] > 200
    assert figures["round_trips_per_player"] <= 5
    # What it counted (bench/tally.py): every join queued, no refusal but the cancels a match beat.
    counted = figures["counted"]
    assert counted["accepted"]["join"] == 300
    assert set(counted["refused"]) <= {"cancel:matched"}, counted
    assert counted["refused_unintended"] == 0 and figures["rate_withheld"] is None
