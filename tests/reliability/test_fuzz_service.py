"""Hypothesis fuzz of everything a user can send, through the service, on the memory store and on Redis.

What each case must satisfy (see `fuzz_machine` and the oracle in `relkit`):

- no exception escapes: `handle` and `tick` return, and the bot's loggers record no error (the service
  turns a crash into an "internal" answer and logs it, which fails the case);
- every command is answered (typed text that is not a command is ignored: `parse_text` gives None);
- a refusal is one error message to the sender alone (plus, after a stale button, their fresh hand), and
  every stored document (tables, chat settings, preferences, streams) is byte for byte as before;
- a change is only what the sender had the right to do: a move appends one action, by the sender's own
  seat, whose turn it was, legal in the engine, followed only by computer seats' actions; no table of
  another chat changes, nor one where the sender does not sit; a finished table changes only by `new`;
  settings change only by `set` from an admin of that chat or the live table's creator; seats, status,
  kicks, languages and "back" only by their own commands and people; each save is one version and one
  stream entry that names that version and the number of actions;
- no group message shows a card that is private at that moment, nor carries card buttons; a hand goes
  only to a player of that table, with buttons only for cards in their hand;
- at the end of each run, for every table, the stream's versions rise by one to the stored version,
  the action count agrees, and the actions replay in the engine.

`THOUSAND_FUZZ_CASES` sets the least number of cases per store (CI: 2,000 and 500 on Redis; the full run in
RELIABILITY.md: 10,000).
"""

from __future__ import annotations

import math

from fuzz_machine import FUZZ_SEED, FuzzMachine, MemoryFuzz, RedisFuzz, cases_wanted, fuzz_seed, run_seeded
from hypothesis import HealthCheck, settings

STEPS = 50


def _run(machine: type[FuzzMachine], wanted: int) -> None:
    machine.cases = machine.accepted_moves = machine.refusals = machine.ignored = machine.timer_firings = 0
    rounds = 0
    seed = fuzz_seed()

    def covered() -> bool:
        # The runs must reach the interesting places: games moving, refusals. Hypothesis leaves some rules
        # out of whole runs (swarm testing): another round brings them in.
        return machine.accepted_moves > wanted // 20 and machine.refusals > wanted // 10

    while machine.cases < wanted or not covered():
        rounds += 1
        assert rounds <= 10, f"only {machine.cases} of {wanted} cases ran (seed {seed})"
        missing = wanted - machine.cases
        run_seeded(
            machine,
            settings(
                max_examples=max(4, math.ceil(missing / STEPS)),
                stateful_step_count=STEPS,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
                derandomize=False,
            ),
            seed,
            rounds,
        )
    print(
        f"\n{machine.__name__} ({FUZZ_SEED}={seed}):"
        f" {machine.cases} cases, {machine.accepted_moves} legal moves, "
        f"{machine.refusals} refusals, {machine.ignored} ignored, {machine.timer_firings} timer firings"
    )
    assert machine.accepted_moves > wanted // 20
    assert machine.refusals > wanted // 10


def test_fuzz_on_the_memory_store() -> None:
    _run(MemoryFuzz, cases_wanted(2000))


def test_fuzz_on_redis(redis_url: str) -> None:
    RedisFuzz.url = redis_url
    _run(RedisFuzz, max(100, cases_wanted(2000) // 4))
