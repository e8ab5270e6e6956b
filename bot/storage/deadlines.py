"""Turn deadlines: one per table, set by its saves, claimed by exactly one poller when due."""

from __future__ import annotations

import abc
from dataclasses import dataclass

__all__ = ["Deadline", "DeadlineStore"]


@dataclass(frozen=True, slots=True)
class Deadline:
    """A turn deadline. `token` names the turn it was set for, so a late firing can be recognised."""

    when: float
    token: str


class DeadlineStore(abc.ABC):
    """A table's turn deadline, apart from its saves (`TableStore.save` sets or drops it in the same step as
    the document): set, clear, claim when due, and find again after a restart."""

    @abc.abstractmethod
    async def set_deadline(self, table_id: str, when: float, token: str) -> None:
        """Set (replace) the table's single turn deadline. A deadline belongs to a live table: none is
        set for a table that does not exist, and it goes with the table (deleted or expired)."""

    @abc.abstractmethod
    async def clear_deadline(self, table_id: str, token: str | None = None) -> bool:
        """Remove the table's deadline (only if its token is `token`, when given). Returns whether removed."""

    @abc.abstractmethod
    async def claim_due(
        self, limit: int, now: float | None = None, *, lease_seconds: float | None = None
    ) -> list[tuple[str, str]]:
        """Claim up to `limit` deadlines due at `now`, earliest first, as (table_id, token) pairs. The
        deadline of a table that no longer exists is dropped, not returned.

        Atomic: with any number of processes polling, each due deadline goes to exactly one caller.
        Without a lease the deadline is removed. With `lease_seconds`, it is postponed to now + lease
        instead, so it fires again if the claimer dies before saving the table with a new deadline (or
        dropping it); the token check and the table's compare-and-set keep a second firing harmless.
        """

    @abc.abstractmethod
    async def next_deadline(self) -> float | None:
        """When the earliest deadline falls due (lets a poller sleep until then). It may be earlier than
        any deadline (Redis indexes lower bounds: a deadline dropped by a save leaves its entry until a
        claim drops it), never later."""

    async def repair_deadlines(self, batch: int = 500) -> int:
        """Make sure every live table's deadline can be claimed: index again any that its index lost (a
        lost node, an interrupted write, an older version's index). Returns how many were repaired.
        Cheap to call when nothing is wrong, but it reads every table: every few minutes, not per tick.
        A store whose deadlines cannot go missing (memory) has nothing to do."""
        return 0

    @abc.abstractmethod
    async def tables_with_deadlines(self, limit: int) -> list[str]:
        """Up to `limit` tables that have a deadline, earliest first: every table waiting for a player's
        turn has one, so this is how a process that just started finds the games in play (to send again
        what a crashed process had not sent yet)."""
