"""Injected failures: the next calls answer 5xx, hang past the client's timeout, or flood-fail.

Real Telegram sometimes answers 502 from its nginx front (an HTML page, not JSON), sometimes does
not answer in time, and sometimes answers 429 unexpectedly; adapters must survive all three.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus

# A fault that does not name its methods skips these: the polling loop would swallow it otherwise.
_UNTARGETED_SKIP = frozenset({"getupdates"})


class FaultKind(enum.Enum):
    SERVER_ERROR = "server_error"
    HANG = "hang"
    FLOOD = "flood"


@dataclass
class Fault:
    kind: FaultKind
    remaining: int
    methods: frozenset[str] | None
    status: int = 502
    retry_after: int = 5
    seconds: float | None = None
    apply: bool = False

    def matches(self, method: str) -> bool:
        if self.methods is None:
            return method not in _UNTARGETED_SKIP
        return method in self.methods


class FaultInjector:
    """Queue of faults consumed by matching calls, first in first out."""

    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self.injected = 0

    def _add(self, fault: Fault) -> None:
        if fault.remaining < 1:
            raise ValueError("a fault needs a positive count")
        self._faults.append(fault)

    @staticmethod
    def _methods(methods: Iterable[str] | str | None) -> frozenset[str] | None:
        if methods is None:
            return None
        if isinstance(methods, str):
            methods = [methods]
        return frozenset(m.lower() for m in methods)

    def fail_next(
        self, count: int = 1, *, status: int = 502, methods: Iterable[str] | str | None = None
    ) -> None:
        """The next `count` matching calls answer `status` (502/504: nginx HTML page, else JSON)."""
        self._add(Fault(FaultKind.SERVER_ERROR, count, self._methods(methods), status=status))

    def hang_next(
        self,
        count: int = 1,
        *,
        seconds: float | None = None,
        apply: bool = False,
        methods: Iterable[str] | str | None = None,
    ) -> None:
        """The next calls stall: forever (`seconds=None`) or for `seconds`, then answer normally.

        With `apply=True` the call takes effect before the stall, like a send whose answer was
        lost: the message exists although the client saw a timeout.
        """
        self._add(Fault(FaultKind.HANG, count, self._methods(methods), seconds=seconds, apply=apply))

    def flood_next(
        self, count: int = 1, *, retry_after: int = 5, methods: Iterable[str] | str | None = None
    ) -> None:
        """The next calls answer 429 with `parameters.retry_after`."""
        self._add(Fault(FaultKind.FLOOD, count, self._methods(methods), retry_after=retry_after))

    def clear(self) -> None:
        self._faults.clear()

    @property
    def pending(self) -> int:
        return sum(f.remaining for f in self._faults)

    def take(self, method: str) -> Fault | None:
        """The fault for this call (method name lower-cased), consuming one of its repetitions."""
        for fault in self._faults:
            if fault.matches(method):
                fault.remaining -= 1
                if fault.remaining == 0:
                    self._faults.remove(fault)
                self.injected += 1
                return fault
        return None


def server_error_body(status: int) -> tuple[bytes, str]:
    """What Telegram's front answers with for a 5xx: nginx HTML for 502/504, JSON otherwise."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    if status in (502, 504):
        page = (
            f"<html>\r\n<head><title>{status} {phrase}</title></head>\r\n<body>\r\n"
            f"<center><h1>{status} {phrase}</h1></center>\r\n<hr><center>nginx/1.18.0</center>\r\n"
            "</body>\r\n</html>\r\n"
        )
        return page.encode(), "text/html"
    body = {"ok": False, "error_code": status, "description": phrase}
    return json.dumps(body).encode(), "application/json"
