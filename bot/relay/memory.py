"""Delivery in one process (the memory store): every platform's deliverer is here, so it is direct."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from bot.model import Message
from bot.relay.base import Deliver, Relay, order_of, platform_of, slot_of

__all__ = ["MemoryRelay"]

log = logging.getLogger("thousand.relay")


class MemoryRelay(Relay):
    """Hands each message to its platform's deliverer at once; an older version of a slot than the one
    shown is dropped here too (two commands of one table may finish in either order)."""

    def __init__(self, deliverers: Mapping[str, Deliver]) -> None:
        self.deliverers = dict(deliverers)
        self._shown: dict[str, int] = {}
        self.dropped = 0

    async def dispatch(self, messages: Sequence[Message]) -> None:
        for message in messages:
            deliver = self.deliverers.get(platform_of(message))
            if deliver is None:
                log.warning("no deliverer for %s: message dropped", platform_of(message))
                self.dropped += 1
                continue
            slot, order = slot_of(message), order_of(message)
            if message.key is not None and order < self._shown.get(slot, -1):
                self.dropped += 1
                continue
            await deliver(message)
            if message.key is not None:
                self._shown[slot] = max(order, self._shown.get(slot, -1))
