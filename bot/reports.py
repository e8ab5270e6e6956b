"""Reports players file about a stranger at a public table (`/report`), kept for the operators.

A report holds the game record (the same JSON as `/export`), the reason, and who reported whom: their
display names *and* platform keys (`tg:123`). The keys are for operators only (`thousand reports`):
nothing here is ever rendered to a player. Reports expire after `REPORT_SECONDS`, so a forgotten
queue of them does not grow without bound (docs/OPERATIONS.md's key inventory).

Redis keys (each written by a single command, so the two live in any slots of a Cluster):
    <prefix>:report:<id>   string, the report's JSON; lives REPORT_SECONDS
    <prefix>:reports       zset id -> filing time; entries older than REPORT_SECONDS trimmed on each filing;
                           the key itself lives REPORT_SECONDS after the last filing
"""

from __future__ import annotations

import abc
import json
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from bot.storage import RedisStore, Store

__all__ = [
    "REASONS",
    "REPORT_SECONDS",
    "MemoryReports",
    "RedisReports",
    "Report",
    "ReportStore",
    "reports_for",
]

REPORT_SECONDS: Final = 90 * 24 * 3600.0
"""How long a report is kept: long enough for an operator's weekly look and an appeal."""

REASONS: Final[dict[str, str]] = {
    "abuse": "abuse of phrases",
    "leaving": "leaving or stalling",
    "cheating": "cheating or collusion",
    "other": "other",
}
"""The fixed reasons (`/report <seat> <reason>`), by their word; the texts are translated where shown."""


@dataclass(frozen=True, slots=True)
class Report:
    """One report. `reporter`/`reported` are platform keys: for operators, never shown to a player."""

    id: str
    created: float
    table_id: str
    serial: str
    preset: str
    reason: str
    reporter: str
    reporter_name: str
    reported: str
    reported_name: str
    record: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> Report:
        data = json.loads(raw)
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def new_report_id(now: float) -> str:
    """Sortable by time when printed, unguessable enough not to collide: `r<seconds in hex><8 hex>`."""
    return f"r{int(now):x}{secrets.token_hex(4)}"


class ReportStore(abc.ABC):
    @abc.abstractmethod
    async def file(self, report: Report) -> None:
        """Keep the report for `REPORT_SECONDS`."""

    @abc.abstractmethod
    async def list(self, since: float = 0.0, limit: int = 500) -> list[Report]:
        """Reports filed at or after `since` (POSIX seconds), newest first."""

    @abc.abstractmethod
    async def get(self, report_id: str) -> Report | None: ...


class MemoryReports(ReportStore):
    """Reports of a process with the memory store (local play, tests): gone with the process."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._reports: dict[str, tuple[Report, float]] = {}

    def _live(self) -> list[Report]:
        now = self._clock()
        for rid, (_, until) in list(self._reports.items()):
            if until <= now:
                del self._reports[rid]
        return [r for r, _ in self._reports.values()]

    async def file(self, report: Report) -> None:
        self._reports[report.id] = (report, self._clock() + REPORT_SECONDS)

    async def list(self, since: float = 0.0, limit: int = 500) -> list[Report]:
        rows = [r for r in self._live() if r.created >= since]
        rows.sort(key=lambda r: (-r.created, r.id))
        return rows[:limit]

    async def get(self, report_id: str) -> Report | None:
        return next((r for r in self._live() if r.id == report_id), None)


class RedisReports(ReportStore):
    def __init__(self, store: RedisStore) -> None:
        self._store = store
        self._prefix = store.keys.prefix

    def _key(self, report_id: str) -> str:
        if not report_id or any(c in report_id for c in "{}: "):
            raise ValueError(f"bad report id {report_id!r}")
        return f"{self._prefix}:report:{report_id}"

    @property
    def _index(self) -> str:
        return f"{self._prefix}:reports"

    async def file(self, report: Report) -> None:
        ttl = int(REPORT_SECONDS)
        await self._store.call("SET", self._key(report.id), report.to_json(), "EX", ttl)
        await self._store.call("ZADD", self._index, repr(report.created), report.id)
        oldest = report.created - REPORT_SECONDS
        await self._store.call("ZREMRANGEBYSCORE", self._index, "-inf", f"({oldest!r}")
        await self._store.call("EXPIRE", self._index, ttl)

    async def list(self, since: float = 0.0, limit: int = 500) -> list[Report]:
        ids = await self._store.call("ZREVRANGEBYSCORE", self._index, "+inf", repr(since), "LIMIT", 0, limit)
        out = []
        for rid in ids:
            found = await self.get(rid)
            if found is not None:
                out.append(found)
        return out

    async def get(self, report_id: str) -> Report | None:
        try:
            raw = await self._store.call("GET", self._key(report_id))
        except ValueError:
            return None
        return None if raw is None else Report.from_json(raw)


def reports_for(store: Store, clock: Callable[[], float] = time.time) -> ReportStore:
    """Redis reports beside a Redis store (every process and `thousand reports` see them), else memory."""
    if isinstance(store, RedisStore):
        return RedisReports(store)
    return MemoryReports(clock)
