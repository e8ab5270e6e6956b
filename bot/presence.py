"""Who has the web table open: a short-lived mark per open page, shared by every process.

The web table's live connection marks its seat present (`touch`, refreshed while it is open, gone a
short TTL after the page closes or the process dies). A player whose page is open sees every move there,
so the service does not spend Bot API calls redrawing their private hand on each move
(`drop_seen_hands`); a player whose page is closed keeps every hand message, the turn notification
included. Marks live in the store's references (`Store.set_ref`), one scope per table and user with one
entry per open page, so closing one of two tabs keeps the player present.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Final

from bot.model import Message, Private
from bot.storage import Store

__all__ = ["PRESENCE_TTL", "Presence", "drop_seen_hands"]

PRESENCE_TTL: Final = 40.0
"""Seconds a mark lives without a refresh (the page's connection refreshes it every 15 s)."""


def _scope(table_id: str, user_key: str) -> str:
    return f"web-here:{table_id}:{user_key}"


class Presence:
    """Marks of open pages in `store` (Redis: seen by every process)."""

    def __init__(self, store: Store, *, ttl: float = PRESENCE_TTL, clock: Callable[[], float] = time.time):
        self.store = store
        self.ttl = ttl
        self.clock = clock

    async def touch(self, table_id: str, user_key: str, page: str) -> None:
        """Page `page` of `user_key` shows `table_id` now (call again within the TTL to stay present)."""
        until = self.clock() + self.ttl
        await self.store.set_ref(_scope(table_id, user_key), page, f"{until:.3f}", ttl_seconds=self.ttl)

    async def leave(self, table_id: str, user_key: str, page: str) -> None:
        await self.store.delete_ref(_scope(table_id, user_key), page)

    async def present(self, table_id: str, user_key: str) -> bool:
        """Whether any page of `user_key` shows `table_id` now."""
        now = self.clock()
        for value in (await self.store.get_refs(_scope(table_id, user_key))).values():
            try:
                if float(value) > now:
                    return True
            except ValueError:
                continue
        return False


async def drop_seen_hands(
    messages: Sequence[Message], presence: Presence, asker: str | None
) -> list[Message]:
    """`messages` without the private hand messages of players whose web table is open.

    The hand of `asker` (the user whose command this answers) is kept: it answers what they just did in
    their chat (a card picked for a give, `/hand`). So is the turn's warning (a hand with `alert`): the
    page may be open in a tab nobody looks at. Anything else, and every hand of a player whose page is
    closed, goes out as before."""
    out: list[Message] = []
    for m in messages:
        if (
            m.kind == "hand"
            and not m.alert
            and isinstance(m.audience, Private)
            and m.key is not None
            and m.key.startswith("hand:")
            and m.audience.user.key != asker
            and await presence.present(m.key.removeprefix("hand:"), m.audience.user.key)
        ):
            continue
        out.append(m)
    return out
