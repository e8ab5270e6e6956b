"""Updates of one chat in order, different chats at the same time, and no chat holding the others up.

A command waits for the store and sometimes for a computer player's thinking (in a worker process); with
PTB's default (one update at a time) one table's thinking would hold up every other group. Fully
concurrent processing would let two presses of one user overtake each other. So updates are keyed by
chat: one at a time per chat, up to `max_concurrent_updates` chats at once.

The order matters for the second part. PTB starts a task per update and bounds them with a semaphore
taken *before* `do_process_update`; had the chat's lock been taken inside it, a chat with a hundred
updates waiting (one member flooding a group with /rules) would hold every slot while its updates wait
for each other, and a quiet chat's move would wait behind them. So the semaphore PTB takes is left
unbounded and this processor bounds the work itself, in the other order: an update first waits for its
chat's turn, holding nothing, and only then for one of the `max_concurrent_updates` slots. A chat holds
at most one slot, however many of its updates wait.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable
from typing import Final

from telegram import Update
from telegram.ext import BaseUpdateProcessor

__all__ = ["ChatOrderedProcessor"]

UNBOUNDED: Final = 1 << 30
"""PTB's own bound (its semaphore around `do_process_update`): none; `slots` bounds the work instead."""


def _key(update: object) -> int | None:
    if not isinstance(update, Update):
        return None
    if update.effective_chat is not None:
        return update.effective_chat.id
    if update.effective_user is not None:
        return update.effective_user.id
    return None


class ChatOrderedProcessor(BaseUpdateProcessor):
    def __init__(self, max_concurrent_updates: int = 64) -> None:
        if max_concurrent_updates < 1:
            raise ValueError("max_concurrent_updates must be at least 1")
        super().__init__(UNBOUNDED)
        self.slots = max_concurrent_updates
        """Updates being worked on at once (each of a different chat)."""
        self._slots = asyncio.BoundedSemaphore(max_concurrent_updates)
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()
        self.working = 0
        """Updates holding a slot now."""
        self.waiting = 0
        """Updates waiting for their chat's turn (holding no slot)."""

    def _lock(self, key: int) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock

    async def _work(self, coroutine: Awaitable[object]) -> None:
        async with self._slots:
            self.working += 1
            try:
                await coroutine
            finally:
                self.working -= 1

    async def do_process_update(self, update: object, coroutine: Awaitable[object]) -> None:
        key = _key(update)
        if key is None:
            await self._work(coroutine)
            return
        lock = self._lock(key)
        self.waiting += 1
        try:
            await lock.acquire()
        except BaseException:
            if asyncio.iscoroutine(coroutine):
                coroutine.close()  # cancelled while waiting (a stop): never started, nothing to undo
            raise
        finally:
            self.waiting -= 1
        try:
            await self._work(coroutine)
        finally:
            lock.release()

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None
