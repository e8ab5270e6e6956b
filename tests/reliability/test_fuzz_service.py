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

from fuzz_machine import (
    FUZZ_SEED,
    FuzzMachine,
    MemoryFuzz,
    RedisFuzz,
    cases_wanted,
    fuzz_rounds,
    fuzz_seed,
    run_seeded,
)
from hypothesis import HealthCheck, settings

STEPS = 50


def _run(machine: type[FuzzMachine], wanted: int) -> None:
    machine.cases = machine.accepted_moves = machine.refusals = machine.ignored = machine.timer_firings = 0
    seed = fuzz_seed()

    def done() -> bool:
        # Enough cases, and the runs reached the interesting places: games moving, refusals.
        m = machine
        return m.cases >= wanted and m.accepted_moves > wanted // 20 and m.refusals > wanted // 10

    def reached() -> str:
        m = machine
        return (
            f"{m.cases} cases, {m.accepted_moves} legal moves, {m.refusals} refusals, "
            f"{m.ignored} ignored, {m.timer_firings} timer firings"
        )

    for rnd in fuzz_rounds(seed, done, reached):
        run_seeded(
            machine,
            settings(
                max_examples=max(4, math.ceil((wanted - machine.cases) / STEPS)),
                stateful_step_count=STEPS,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                database=None,
                derandomize=False,
            ),
            seed,
            rnd,
        )
    print(f"\n{machine.__name__} ({FUZZ_SEED}={seed}): {reached()}")


def test_fuzz_on_the_memory_store() -> None:
    _run(MemoryFuzz, cases_wanted(2000))


def test_fuzz_on_redis(redis_url: str) -> None:
    RedisFuzz.url = redis_url
    _run(RedisFuzz, max(100, cases_wanted(2000) // 4))
