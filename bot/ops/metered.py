"""A store wrapper that tells the metrics what the service does not report itself.

The service retries a command after a compare-and-set conflict and answers "temporarily unavailable"
when the store cannot be reached; both happen inside `Service.handle`. Watching them at the store keeps
the service free of metrics code: every conflict, outage and claimed deadline passes through here.

`probe()` gives the block (one command, one tick) a record of what happened inside it, so the runtime
can label a command's outcome ``unavailable`` rather than just ``refused``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from bot.ops.metrics import Metrics
from bot.storage.base import (
    HANDOVER_TTL,
    Deadline,
    HandedOver,
    SendBucket,
    StorageUnavailable,
    Store,
    StoredTable,
    VersionConflict,
)

__all__ = ["MeteredStore", "Probe", "probe"]


@dataclass(slots=True)
class Probe:
    conflicts: int = 0
    unavailable: bool = False
    claimed: int = 0


_probe: contextvars.ContextVar[Probe | None] = contextvars.ContextVar("thousand_store_probe", default=None)


@contextmanager
def probe() -> Iterator[Probe]:
    """Record the store events of the block (in this task and the tasks it starts)."""
    current = Probe()
    token = _probe.set(current)
    try:
        yield current
    finally:
        _probe.reset(token)


class MeteredStore(Store):
    """Delegates every call to `inner`; counts conflicts, outages and claimed deadlines."""

    def __init__(self, inner: Store, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics

    def _unavailable(self) -> None:
        self.metrics.unavailable()
        current = _probe.get()
        if current is not None:
            current.unavailable = True

    async def load(self, table_id: str) -> StoredTable | None:
        try:
            return await self.inner.load(table_id)
        except StorageUnavailable:
            self._unavailable()
            raise

    async def version(self, table_id: str) -> int | None:
        try:
            return await self.inner.version(table_id)
        except StorageUnavailable:
            self._unavailable()
            raise

    async def save(
        self,
        table_id: str,
        expected_version: int,
        document: str,
        *,
        ttl_seconds: float,
        event: str | None = None,
        chat_key: str | None = None,
        users_added: Collection[str] = (),
        users_removed: Collection[str] = (),
        deadline: Deadline | None = None,
        drop_deadline: bool = False,
    ) -> int:
        try:
            return await self.inner.save(
                table_id,
                expected_version,
                document,
                ttl_seconds=ttl_seconds,
                event=event,
                chat_key=chat_key,
                users_added=users_added,
                users_removed=users_removed,
                deadline=deadline,
                drop_deadline=drop_deadline,
            )
        except VersionConflict:
            self.metrics.cas_conflict()
            current = _probe.get()
            if current is not None:
                current.conflicts += 1
            raise
        except StorageUnavailable:
            self._unavailable()
            raise

    async def delete(
        self,
        table_id: str,
        *,
        expected_version: int | None = None,
        chat_key: str | None = None,
        user_keys: Collection[str] = (),
    ) -> bool:
        try:
            return await self.inner.delete(
                table_id, expected_version=expected_version, chat_key=chat_key, user_keys=user_keys
            )
        except VersionConflict:
            self.metrics.cas_conflict()
            raise

    async def move_table(
        self,
        old_id: str,
        new_id: str,
        expected_version: int,
        document: str,
        *,
        ttl_seconds: float,
        chat_keys: tuple[str, str] | None = None,
        user_keys: Collection[str] = (),
    ) -> None:
        try:
            await self.inner.move_table(
                old_id,
                new_id,
                expected_version,
                document,
                ttl_seconds=ttl_seconds,
                chat_keys=chat_keys,
                user_keys=user_keys,
            )
        except VersionConflict:
            self.metrics.cas_conflict()
            raise
        except StorageUnavailable:
            self._unavailable()
            raise

    async def moved_to(self, table_id: str) -> str | None:
        return await self.inner.moved_to(table_id)

    async def read_events(self, table_id: str, count: int | None = None) -> list[str]:
        return await self.inner.read_events(table_id, count)

    async def table_for_chat(self, chat_key: str) -> str | None:
        return await self.inner.table_for_chat(chat_key)

    async def tables_for_user(self, user_key: str) -> set[str]:
        return await self.inner.tables_for_user(user_key)

    async def set_deadline(self, table_id: str, when: float, token: str) -> None:
        await self.inner.set_deadline(table_id, when, token)

    async def clear_deadline(self, table_id: str, token: str | None = None) -> bool:
        return await self.inner.clear_deadline(table_id, token)

    async def claim_due(
        self, limit: int, now: float | None = None, *, lease_seconds: float | None = None
    ) -> list[tuple[str, str]]:
        try:
            claimed = await self.inner.claim_due(limit, now, lease_seconds=lease_seconds)
        except StorageUnavailable:
            self._unavailable()
            raise
        current = _probe.get()
        if current is not None:
            current.claimed += len(claimed)
        return claimed

    async def next_deadline(self) -> float | None:
        return await self.inner.next_deadline()

    async def tables_with_deadlines(self, limit: int) -> list[str]:
        return await self.inner.tables_with_deadlines(limit)

    async def repair_deadlines(self, batch: int = 500) -> int:
        try:
            return await self.inner.repair_deadlines(batch)
        except StorageUnavailable:
            self._unavailable()
            raise

    async def add_stats(self, scope_key: str, fields: Mapping[str, float]) -> None:
        await self.inner.add_stats(scope_key, fields)

    async def get_stats(self, scope_key: str) -> dict[str, float]:
        return await self.inner.get_stats(scope_key)

    async def set_rating(self, board_key: str, member: str, rating: float) -> None:
        await self.inner.set_rating(board_key, member, rating)

    async def get_rating(self, board_key: str, member: str) -> float | None:
        return await self.inner.get_rating(board_key, member)

    async def top(self, board_key: str, n: int) -> list[tuple[str, float]]:
        return await self.inner.top(board_key, n)

    async def get_refs(self, scope_key: str) -> dict[str, str]:
        return await self.inner.get_refs(scope_key)

    async def set_ref(self, scope_key: str, name: str, value: str, *, ttl_seconds: float) -> str | None:
        return await self.inner.set_ref(scope_key, name, value, ttl_seconds=ttl_seconds)

    async def delete_ref(self, scope_key: str, name: str) -> None:
        await self.inner.delete_ref(scope_key, name)

    async def acquire_sends(self, buckets: Sequence[SendBucket], now: float | None = None) -> float:
        return await self.inner.acquire_sends(buckets, now)

    async def hold_sends(self, bucket_key: str, seconds: float, now: float | None = None) -> None:
        await self.inner.hold_sends(bucket_key, seconds, now)

    async def count_hit(self, key: str, window: float) -> tuple[int, float]:
        # Not counted as an outage: the command throttle lets the command through when this fails.
        return await self.inner.count_hit(key, window)

    @property
    def keeps_after_exit(self) -> bool:
        return self.inner.keeps_after_exit

    async def hand_over(self, messages: Sequence[HandedOver], *, ttl_seconds: float = HANDOVER_TTL) -> int:
        try:
            return await self.inner.hand_over(messages, ttl_seconds=ttl_seconds)
        except StorageUnavailable:
            self._unavailable()
            raise

    async def take_handed_over(self, platform: str, limit: int = 100) -> list[HandedOver]:
        try:
            return await self.inner.take_handed_over(platform, limit)
        except StorageUnavailable:
            self._unavailable()
            raise

    async def ping(self) -> None:
        await self.inner.ping()

    async def close(self) -> None:
        await self.inner.close()

    @property
    def round_trips(self) -> int:
        return self.inner.round_trips
