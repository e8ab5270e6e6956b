"""Live updates of the web table: one watcher per table per process, fanned out to every open page.

A move may be stored by any process (a Telegram webhook replica, a Discord shard, another web server),
so a page cannot wait for this process to see it: the watcher polls the table's version in the store
(one `HGET` in Redis every `interval`, per table with at least one open page in this process), and on a
change loads the table once and hands the snapshot to every subscriber. Each page builds its own view
from the snapshot, memoised per (seat, language), so 300 pages of one table cost a few view builds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from adapters.web.viewjson import view_json
from bot.ladder import Rating
from bot.matchmaking.ladder_store import LadderStore
from bot.public.fanout import PUBLIC_PLATFORM
from bot.snapshot import GameCache
from bot.storage import StorageUnavailable, Store
from bot.table import TableDoc
from core.game import GameState

__all__ = ["Snapshot", "TableWatcher"]

log = logging.getLogger("thousand.web.live")


@dataclass
class Snapshot:
    """A table as stored at one version (None: the table is gone)."""

    version: int
    doc: TableDoc | None
    state: GameState | None
    ratings: dict[int, Rating] = field(default_factory=dict)
    """A public table's seated people's ladder ratings (of its preset), by seat: each sees only their own."""
    _views: dict[tuple[int | None, str], str] = field(default_factory=dict)

    def view(self, seat: int | None, lang: str) -> str:
        """The view JSON of `seat` (None: spectator) as text, built once per seat and language."""
        key = (seat, lang)
        text = self._views.get(key)
        if text is None:
            assert self.doc is not None
            rating = None if seat is None else self.ratings.get(seat)
            text = json.dumps(
                view_json(self.doc, self.version, self.state, seat, lang, rating=rating),
                ensure_ascii=False,
                separators=(",", ":"),
            )
            self._views[key] = text
        return text


Ladder = Callable[[], LadderStore | None]


async def load_snapshot(
    store: Store, cache: GameCache, table_id: str, ladder: Ladder | None = None
) -> Snapshot:
    stored = await store.load(table_id)
    if stored is None:
        return Snapshot(0, None, None)
    doc = TableDoc.model_validate_json(stored.document)
    state = None
    if doc.game is not None:
        state = cache.state(doc.serial, doc.game.spec, doc.game.actions)
    ratings: dict[int, Rating] = {}
    board = None if ladder is None else ladder()
    if board is not None and doc.id.startswith(f"{PUBLIC_PLATFORM}:"):
        # One read per seated person, on a change of a public table only (their rating as the game is
        # played; the Play now panel after the game shows the new one).
        for i, seat in enumerate(doc.seats):
            if seat.kind == "human" and seat.user and not seat.kicked:
                try:
                    ratings[i] = await board.get(doc.settings.preset, seat.user)
                except StorageUnavailable:
                    log.warning("web: ladder unavailable, the view goes without a rating")
                    break
    return Snapshot(stored.version, doc, state, ratings)


@dataclass
class _Watch:
    queues: set[asyncio.Queue[Snapshot]]
    task: asyncio.Task[None] | None = None
    latest: Snapshot | None = None


class TableWatcher:
    """Subscriptions to tables' changes; `subscribe` is an async context giving a queue of snapshots."""

    def __init__(
        self,
        store: Store,
        cache: GameCache,
        *,
        interval: float = 0.05,
        on_error: Callable[[BaseException], None] | None = None,
        ladder: Ladder | None = None,
    ) -> None:
        self.ladder = ladder
        self.store = store
        self.cache = cache
        self.interval = interval
        self.on_error = on_error
        self._watches: dict[str, _Watch] = {}

    @property
    def tables(self) -> int:
        return len(self._watches)

    @contextlib.asynccontextmanager
    async def subscribe(self, table_id: str) -> AsyncIterator[asyncio.Queue[Snapshot]]:
        """A queue that receives the table's snapshot now and after every change (only the newest is kept
        when a page falls behind)."""
        queue: asyncio.Queue[Snapshot] = asyncio.Queue(maxsize=1)
        watch = self._watches.get(table_id)
        if watch is None:
            watch = _Watch(set())
            self._watches[table_id] = watch
        watch.queues.add(queue)
        if watch.latest is not None:
            queue.put_nowait(watch.latest)
        if watch.task is None:
            watch.task = asyncio.create_task(self._poll(table_id, watch), name=f"web-watch-{table_id}")
        try:
            yield queue
        finally:
            watch.queues.discard(queue)
            if not watch.queues:
                self._watches.pop(table_id, None)
                if watch.task is not None:
                    watch.task.cancel()

    async def _poll(self, table_id: str, watch: _Watch) -> None:
        seen: int | None = -1
        while watch.queues:
            try:
                version = await self.store.version(table_id)
                if version != seen:
                    snapshot = await load_snapshot(self.store, self.cache, table_id, self.ladder)
                    seen = None if snapshot.doc is None else snapshot.version
                    watch.latest = snapshot
                    for queue in list(watch.queues):
                        _offer(queue, snapshot)
            except asyncio.CancelledError:
                raise
            except StorageUnavailable as exc:
                log.warning("web watcher of %s: storage unavailable", table_id)
                if self.on_error is not None:
                    self.on_error(exc)
            except Exception as exc:
                log.exception("web watcher of %s failed", table_id)
                if self.on_error is not None:
                    self.on_error(exc)
            await asyncio.sleep(self.interval)


def _offer(queue: asyncio.Queue[Snapshot], snapshot: Snapshot) -> None:
    """Put the newest snapshot, dropping an older one the page has not taken yet."""
    with contextlib.suppress(asyncio.QueueEmpty):
        if queue.full():
            queue.get_nowait()
    with contextlib.suppress(asyncio.QueueFull):
        queue.put_nowait(snapshot)


def sse(event: str, data: str | dict[str, Any]) -> bytes:
    """One Server-Sent Event (data on one line: JSON never holds a raw line break)."""
    text = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {event}\ndata: {text}\n\n".encode()
