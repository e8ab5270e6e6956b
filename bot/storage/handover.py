"""Messages a stopping process hands over, for another process to send."""

from __future__ import annotations

import abc
import json
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["HANDOVER_TTL", "HandOverStore", "HandedOver"]

HANDOVER_TTL = 15 * 60.0
"""How long a handed-over message waits for a process to take it (`Store.hand_over`). Longer and it is
no news: the table it shows has been redrawn or has expired, and a live process would never send it."""


@dataclass(frozen=True, slots=True)
class HandedOver:
    """A message a stopping process had queued and not sent (waiting for a chat's or the bot's send
    budget), kept in the store so that another process sends it (`Store.hand_over`,
    `Store.take_handed_over`). Neutral: the adapter that made it says what `audience` and `payload` mean.

    - `platform`: the adapter ("tg", "dc"): a process takes only its own platform's messages.
    - `table_id`: the table the message is about; it tags the store's keys (the message lives in the
      table's hash slot) and groups the messages. A message about no table uses its audience's scope.
    - `audience`: who it is for, in the adapter's terms (a chat id, a channel id, a user id).
    - `key`: the message's key (None: an unkeyed message). For one (table, audience, key) the store
      keeps one message: the one with the newest `version`; an older one handed over later is dropped.
    - `version`: the version of the table the message was drawn from (None: unknown). The taker compares
      it with what the chat shows now, so an older state never replaces a newer one on screen.
    - `order`: the order the process had queued the messages in; the taker sends each audience's
      messages in this order.
    - `payload`: the adapter's own serialisation of the message (text, buttons, priority...).
    """

    platform: str
    table_id: str
    audience: str
    key: str | None
    version: int | None
    order: int
    payload: str

    @property
    def slot_name(self) -> str:
        """The entry's name within its table: one per (audience, key); unkeyed ones by their order."""
        tail = f"k:{self.key}" if self.key is not None else f"o:{self.order}"
        return f"{self.audience}\n{tail}"

    def encode(self) -> str:
        """The message as the store keeps it (JSON)."""
        return json.dumps(
            {
                "p": self.platform,
                "t": self.table_id,
                "a": self.audience,
                "k": self.key,
                "v": self.version,
                "o": self.order,
                "m": self.payload,
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )

    @classmethod
    def decode(cls, value: str) -> HandedOver | None:
        """The message `encode` wrote; None for anything else (a value of a later format is skipped,
        not fatal)."""
        try:
            data = json.loads(value)
            key, version = data["k"], data["v"]
            return cls(
                str(data["p"]),
                str(data["t"]),
                str(data["a"]),
                None if key is None else str(key),
                None if version is None else int(version),
                int(data["o"]),
                str(data["m"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


class HandOverStore(abc.ABC):
    """Keeping and taking handed-over messages."""

    @property
    @abc.abstractmethod
    def keeps_after_exit(self) -> bool:
        """Whether what this store keeps outlives the process (Redis: yes; memory: no). A process that
        stops with messages still queued hands them over only when it does; otherwise they are lost,
        and the process says how many (`bot.ops.shutdown`)."""

    @abc.abstractmethod
    async def hand_over(self, messages: Sequence[HandedOver], *, ttl_seconds: float = HANDOVER_TTL) -> int:
        """Keep `messages` for another process; how many were kept.

        Per (platform, table, audience, key) one message is kept, the one with the newest version: a
        keyed message whose slot already holds a newer version is dropped (not counted); an equal or
        newer one replaces it. Unkeyed messages are kept side by side. Each table's messages expire
        `ttl_seconds` after the last hand-over to that table. The table's messages are one step (Redis:
        one script in the table's slot); the index that lets `take_handed_over` find the table follows
        (Redis Cluster: another slot), so a taker never finds an index entry before its messages.
        """

    @abc.abstractmethod
    async def take_handed_over(self, platform: str, limit: int = 100) -> list[HandedOver]:
        """Take the messages handed over for `platform`, from up to `limit` tables (those handed over
        first), sorted by (`order`, audience). Taking removes them: with any number of processes
        taking at once, each message goes to exactly one (sending it twice would show it twice).

        A process that dies between taking and sending loses what it took (as a killed process loses its
        queues); the table is redrawn at its next change, and a lost turn hand is found by the Telegram
        adapter's recovery."""
