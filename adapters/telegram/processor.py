"""Updates of one chat in order, different chats at the same time.

A command waits for the store and sometimes for a computer player's thinking (in a worker process); with
PTB's default (one update at a time) one table's thinking would hold up every other group. Fully
concurrent processing would let two presses of one user overtake each other. So updates are keyed by
chat: one at a time per chat, up to `max_concurrent_updates` chats at once.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable

from telegram import Update
from telegram.ext import BaseUpdateProcessor

__all__ = ["ChatOrderedProcessor"]


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
        super().__init__(max_concurrent_updates)
        self._locks: weakref.WeakValueDictionary[int, asyncio.Lock] = weakref.WeakValueDictionary()

    def _lock(self, key: int) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[key] = lock
        return lock

    async def do_process_update(self, update: object, coroutine: Awaitable[object]) -> None:
        key = _key(update)
        if key is None:
            await coroutine
            return
        async with self._lock(key):
            await coroutine

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None
