"""What the adapter remembers about Discord messages and users, kept in the store so that every process
(shard) shares it: `Store.get_refs/set_ref/delete_ref`.

Scopes (all under the `discord:` platform prefix):

- `discord:chan:<channel id>`: message key -> `<message id>:<table version>` of the channel message sent for
  it (edited in place; an edit drawn from an older version than the one shown is dropped);
  `@<kind>` -> the key of the latest message of that kind (so the one before it can be forgotten);
  `@ping` -> the current turn ping (`PingRef`: `<message id>:<user id>:<turn>:<version>:<serial>`),
  swapped atomically, so that whoever takes a ping out of it deletes that ping (each exactly once);
  `@turn` -> `<table version>:<user id>:<serial>`, the latest turn announced in the channel (a ping drawn
  for an older one is dropped after its wait).
- `discord:dm:<user id>`: message key -> `<channel id>:<message id>:<table version>` of the DM sent for it.
- `discord:tok:<user id>`: per channel, the user's latest ephemeral hand there and the interaction token
  that can edit it (`hand:<channel id>` -> JSON). Interaction tokens live 15 minutes.
- `discord:pref:<user id>`: `dm` = `1` when the user wants their hand by direct message.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from bot.storage import Store

__all__ = ["TOKEN_LIFETIME", "HandRef", "MessageRef", "PingRef", "Refs"]

TOKEN_LIFETIME: Final = 15 * 60.0
"""How long Discord accepts an interaction token for followups and edits."""
TOKEN_MARGIN: Final = 60.0
"""A token this close to expiry is not used any more (an edit could arrive after it expired)."""


@dataclass(frozen=True, slots=True)
class MessageRef:
    """A message sent for a key, and the table version it shows (`Message.version`; None if unknown)."""

    message_id: int
    version: int | None = None

    @classmethod
    def parse(cls, value: str | None) -> MessageRef | None:
        if value is None:
            return None
        head, _, tail = value.partition(":")
        try:
            return cls(int(head), int(tail) if tail else None)
        except ValueError:
            return None

    def dump(self) -> str:
        return str(self.message_id) if self.version is None else f"{self.message_id}:{self.version}"

    def newer_than(self, version: int | None) -> bool:
        """This reference shows a later version of the table than `version` (so an edit to it is old)."""
        return version is not None and self.version is not None and self.version > version


@dataclass(frozen=True, slots=True)
class PingRef:
    """The channel's turn ping: its message, whom it mentions, the turn it announces (a digest of the
    hand's buttons, `-` for a warning or a note) and the table version it was drawn from."""

    message_id: int
    user_id: int
    turn: str = "-"
    version: int | None = None
    serial: str = ""
    """The game (`Message.serial`) the version counts in: a chat's next game counts from 1 again."""

    @classmethod
    def parse(cls, value: str | None) -> PingRef | None:
        """None for a missing or claimed (`-`) reference. A reference of an older release has no version."""
        if not value:
            return None
        parts = value.split(":")
        try:
            version = int(parts[3]) if len(parts) > 3 and parts[3] else None
            serial = parts[4] if len(parts) > 4 else ""
            return cls(int(parts[0]), int(parts[1]), parts[2] if len(parts) > 2 else "-", version, serial)
        except (ValueError, IndexError):
            return None

    def dump(self) -> str:
        version = "" if self.version is None else str(self.version)
        return f"{self.message_id}:{self.user_id}:{self.turn}:{version}:{self.serial}"

    def newer_than(self, version: int | None, serial: str | None = None) -> bool:
        """Drawn from a later state of the same game than `version` (another game's ping is never newer)."""
        if serial and self.serial and serial != self.serial:
            return False
        return version is not None and self.version is not None and self.version > version


@dataclass(frozen=True, slots=True)
class HandRef:
    """An ephemeral hand message that the interaction token `token` can still edit."""

    token: str
    message_id: int
    at: float
    version: int | None = None
    """The table version the hand on screen was drawn from."""

    def fresh(self, now: float, lifetime: float) -> bool:
        return now - self.at < lifetime - min(TOKEN_MARGIN, lifetime / 10)


class Refs:
    """Typed access to the adapter's references in the store."""

    def __init__(
        self,
        store: Store,
        *,
        channel_ttl: float,
        pref_ttl: float,
        token_lifetime: float = TOKEN_LIFETIME,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.channel_ttl = channel_ttl
        self.pref_ttl = pref_ttl
        self.token_lifetime = token_lifetime
        self.clock = clock

    # --- channel messages ---------------------------------------------------------------------------

    @staticmethod
    def channel_scope(channel_id: int) -> str:
        return f"discord:chan:{channel_id}"

    async def channel(self, channel_id: int) -> dict[str, str]:
        return await self.store.get_refs(self.channel_scope(channel_id))

    async def message(self, channel_id: int, key: str) -> MessageRef | None:
        return MessageRef.parse((await self.channel(channel_id)).get(key))

    async def set_channel(self, channel_id: int, name: str, value: str) -> str | None:
        """Set one reference; the value it replaced, swapped out in one atomic step (`Store.set_ref`), so of
        two processes writing one name, the second learns what the first wrote."""
        return await self.store.set_ref(
            self.channel_scope(channel_id), name, value, ttl_seconds=self.channel_ttl
        )

    async def forget_channel(self, channel_id: int, name: str) -> None:
        await self.store.delete_ref(self.channel_scope(channel_id), name)

    # --- direct messages ----------------------------------------------------------------------------

    @staticmethod
    def dm_scope(user_id: int) -> str:
        return f"discord:dm:{user_id}"

    async def dm(self, user_id: int, key: str) -> tuple[int, MessageRef] | None:
        """(DM channel id, the message sent for `key` there)."""
        value = (await self.store.get_refs(self.dm_scope(user_id))).get(key)
        if value is None:
            return None
        channel, _, rest = value.partition(":")
        ref = MessageRef.parse(rest)
        if ref is None or not channel.isdigit():
            return None
        return int(channel), ref

    async def set_dm(self, user_id: int, key: str, channel_id: int, ref: MessageRef) -> MessageRef | None:
        """Set the DM reference of `key`; the one it replaced (atomically, as `set_channel`)."""
        previous = await self.store.set_ref(
            self.dm_scope(user_id), key, f"{channel_id}:{ref.dump()}", ttl_seconds=self.channel_ttl
        )
        if previous is None:
            return None
        return MessageRef.parse(previous.partition(":")[2])

    async def forget_dm(self, user_id: int, key: str) -> None:
        await self.store.delete_ref(self.dm_scope(user_id), key)

    # --- ephemeral hands ----------------------------------------------------------------------------

    @staticmethod
    def token_scope(user_id: int) -> str:
        return f"discord:tok:{user_id}"

    async def hand(self, user_id: int, channel_id: int) -> HandRef | None:
        """The user's open ephemeral hand in the channel, if its token is still good for an edit."""
        raw = (await self.store.get_refs(self.token_scope(user_id))).get(f"hand:{channel_id}")
        if raw is None:
            return None
        try:
            data = json.loads(raw)
            version = data.get("v")
            ref = HandRef(
                str(data["t"]), int(data["m"]), float(data["at"]), None if version is None else int(version)
            )
        except (ValueError, KeyError, TypeError):
            return None
        return ref if ref.fresh(self.clock(), self.token_lifetime) else None

    async def set_hand(
        self,
        user_id: int,
        channel_id: int,
        token: str,
        message_id: int,
        at: float,
        version: int | None = None,
    ) -> None:
        value = json.dumps({"t": token, "m": message_id, "at": at, "v": version}, separators=(",", ":"))
        await self.store.set_ref(
            self.token_scope(user_id), f"hand:{channel_id}", value, ttl_seconds=self.token_lifetime
        )

    async def forget_hand(self, user_id: int, channel_id: int) -> None:
        await self.store.delete_ref(self.token_scope(user_id), f"hand:{channel_id}")

    # --- preferences --------------------------------------------------------------------------------

    @staticmethod
    def pref_scope(user_id: int) -> str:
        return f"discord:pref:{user_id}"

    async def wants_dm(self, user_id: int) -> bool:
        return (await self.store.get_refs(self.pref_scope(user_id))).get("dm") == "1"

    async def set_wants_dm(self, user_id: int, dm: bool) -> None:
        if dm:
            await self.store.set_ref(self.pref_scope(user_id), "dm", "1", ttl_seconds=self.pref_ttl)
        else:
            await self.store.delete_ref(self.pref_scope(user_id), "dm")
