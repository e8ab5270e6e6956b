"""Prometheus metrics of one bot process, kept in a registry of its own.

A `Metrics` object is created by the process entry point and handed to the service, the timers and the
adapters; nothing registers into prometheus-client's global default registry, so tests (and two bots in
one process) never see each other's numbers.

Label values come from small closed sets (platforms, command names, outcomes). A value outside the
expected shape is reported as ``other``, so a bug or a hostile update can never create unbounded series.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

__all__ = ["CONTENT_TYPE_LATEST", "CommandTimer", "Metrics"]

_LABEL: Final = re.compile(r"[a-z][a-z0-9_]{0,31}")

# Command handling is one load, one save and some CPU: milliseconds normally; seconds mean trouble.
_LATENCY_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_WAIT_BUCKETS: Final = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)


def label(value: str) -> str:
    """`value` if it is a short lowercase identifier, else ``other`` (keeps label sets bounded)."""
    value = value.lower()
    return value if _LABEL.fullmatch(value) else "other"


@dataclass(slots=True)
class CommandTimer:
    """Handed out by `Metrics.time_command`: set `outcome` before the block ends (default ``ok``)."""

    command: str
    outcome: str = "ok"


class Metrics:
    """Every counter, gauge and histogram the bot exports, and the calls that move them.

    Callers use the methods (which sanitize labels), not the collectors, so that the metric names and
    label sets stay in one place. `render()` gives the text exposition for ``/metrics``.
    """

    def __init__(self, registry: CollectorRegistry | None = None, *, namespace: str = "thousand") -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        ns, r = namespace, self.registry

        # Every collector in this process's registry, under the namespace: written once here.
        def counter(name: str, doc: str, labels: Sequence[str] = ()) -> Counter:
            return Counter(name, doc, labels, namespace=ns, registry=r)

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(name, doc, namespace=ns, registry=r)

        def histogram(name: str, doc: str, labels: Sequence[str], buckets: Sequence[float]) -> Histogram:
            return Histogram(name, doc, labels, namespace=ns, registry=r, buckets=buckets)

        self.updates = counter(
            "updates",
            "Platform updates (messages, commands, button presses, interactions) handled.",
            ["platform", "kind", "outcome"],
        )
        self.commands = counter(
            "commands",
            "Neutral commands handled by the service, by command and outcome.",
            ["command", "outcome"],
        )
        self.command_seconds = histogram(
            "command_duration_seconds",
            "Time to handle one command (load, rules, computer moves, compare-and-set save).",
            ["command"],
            _LATENCY_BUCKETS,
        )
        self.active_tables = gauge(
            "active_tables",
            "Tables with a command in the last 15 minutes, all processes together (take max, not sum).",
        )
        self.active_players = gauge(
            "active_players",
            "Users who sent a command in the last 15 minutes, all processes together (take max, not sum).",
        )
        self.cas_conflicts = counter(
            "cas_conflicts",
            "Table saves refused because another process wrote first (the command is retried).",
        )
        self.timers_fired = counter(
            "timers_fired",
            "Turn deadlines claimed and acted on, by outcome (moved, warned, stale, error).",
            ["outcome"],
        )
        self.rate_limit_waits = counter(
            "rate_limit_waits", "Sends that had to wait for the shared send budget.", ["platform"]
        )
        self.rate_limit_wait_seconds = histogram(
            "rate_limit_wait_seconds",
            "How long a send waited for the shared send budget.",
            ["platform"],
            _WAIT_BUCKETS,
        )
        self.platform_429 = counter(
            "platform_429",
            "Too Many Requests answers from a platform (each one holds the bucket for retry_after).",
            ["platform"],
        )
        self.platform_errors = counter(
            "platform_errors",
            "Failed platform calls other than 429, by kind (forbidden, bad_request, network, server...).",
            ["platform", "kind"],
        )
        self.storage_unavailable = counter(
            "storage_unavailable",
            "Commands answered 'temporarily unavailable' because the store could not be reached.",
        )
        self.in_flight = gauge("updates_in_flight", "Updates being handled right now.")

    # --- the calls ------------------------------------------------------------------------------------

    def update_handled(self, platform: str, kind: str, outcome: str = "ok") -> None:
        """One platform update done. `kind`: command, button, message, interaction, autocomplete...;
        `outcome`: ok, refused (a rule said no), error, ignored, unavailable."""
        self.updates.labels(label(platform), label(kind), label(outcome)).inc()

    def command_handled(self, command: str, outcome: str, seconds: float) -> None:
        """One neutral command done, with its outcome and how long the service took."""
        name = label(command)
        self.commands.labels(name, label(outcome)).inc()
        self.command_seconds.labels(name).observe(max(0.0, seconds))

    @contextmanager
    def time_command(self, command: str) -> Iterator[CommandTimer]:
        """Count and time the block as one command. An exception escaping it counts as ``error``."""
        timer = CommandTimer(command)
        start = time.perf_counter()
        try:
            yield timer
        except BaseException:
            timer.outcome = "error"
            raise
        finally:
            self.command_handled(timer.command, timer.outcome, time.perf_counter() - start)

    def cas_conflict(self) -> None:
        self.cas_conflicts.inc()

    def timer_fired(self, outcome: str = "moved") -> None:
        self.timers_fired.labels(label(outcome)).inc()

    def rate_limited(self, platform: str, seconds: float) -> None:
        """A send waited `seconds` for the shared budget (call once per send that waited at all)."""
        p = label(platform)
        self.rate_limit_waits.labels(p).inc()
        self.rate_limit_wait_seconds.labels(p).observe(max(0.0, seconds))

    def too_many_requests(self, platform: str) -> None:
        """The platform answered 429."""
        self.platform_429.labels(label(platform)).inc()

    def platform_error(self, platform: str, kind: str) -> None:
        self.platform_errors.labels(label(platform), label(kind)).inc()

    def unavailable(self) -> None:
        self.storage_unavailable.inc()

    def set_active(self, tables: int, players: int) -> None:
        self.active_tables.set(tables)
        self.active_players.set(players)

    @contextmanager
    def update_in_flight(self) -> Iterator[None]:
        self.in_flight.inc()
        try:
            yield
        finally:
            self.in_flight.dec()

    def render(self) -> bytes:
        """The Prometheus text exposition of this registry."""
        return generate_latest(self.registry)
