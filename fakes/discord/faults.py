"""Fault injection: make chosen REST routes slow, fail with 5xx, or answer 429, a bounded number of times."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Fault:
    kind: str  # "fail", "delay" or "rate_limit"
    route: str | None
    times: int | None
    status: int = 500
    seconds: float = 0.0
    is_global: bool = False

    def matches(self, route: str) -> bool:
        return self.route is None or self.route in route


class Faults:
    """Route filters are substrings of the route key, e.g. ``"POST /channels/{channel_id}/messages"``."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []

    def fail(self, status: int = 500, *, times: int = 1, route: str | None = None) -> None:
        """The next ``times`` matching requests answer ``status`` (discord.py retries 500/502/504/524)."""
        self._faults.append(Fault("fail", route, times, status=status))

    def delay(self, seconds: float, *, times: int | None = None, route: str | None = None) -> None:
        """Matching requests wait ``seconds`` before being handled (``times=None``: until cleared)."""
        self._faults.append(Fault("delay", route, times, seconds=seconds))

    def rate_limit(
        self, retry_after: float, *, times: int = 1, route: str | None = None, is_global: bool = False
    ) -> None:
        """The next ``times`` matching requests answer 429 with ``retry_after``."""
        self._faults.append(Fault("rate_limit", route, times, seconds=retry_after, is_global=is_global))

    def clear(self) -> None:
        self._faults.clear()

    def take(self, route: str) -> list[Fault]:
        """Faults applying to this request, consuming one use of each."""
        hits: list[Fault] = []
        for fault in list(self._faults):
            if not fault.matches(route):
                continue
            hits.append(fault)
            if fault.times is not None:
                fault.times -= 1
                if fault.times <= 0:
                    self._faults.remove(fault)
        return hits
