"""Statistics (counters per scope) and rating boards; how long they live is `Retention`'s."""

from __future__ import annotations

import abc
from collections.abc import Mapping

__all__ = ["StatsStore"]


class StatsStore(abc.ABC):
    """Counters and rating boards, shared by every process."""

    @abc.abstractmethod
    async def add_stats(self, scope_key: str, fields: Mapping[str, float]) -> None:
        """Add each value to its counter in the scope (a user, a chat, a user within a chat...). The scope
        lives `Retention.stats_seconds` after its last addition."""

    @abc.abstractmethod
    async def get_stats(self, scope_key: str) -> dict[str, float]:
        """All counters of a scope; empty if none."""

    @abc.abstractmethod
    async def set_rating(self, board_key: str, member: str, rating: float) -> None:
        """Put the member on the board with this rating. The board keeps members rated within
        `Retention.stats_seconds`, at most `Retention.board_max` of them (the least recently rated go)."""

    @abc.abstractmethod
    async def get_rating(self, board_key: str, member: str) -> float | None:
        """The member's rating on the board, if rated."""

    @abc.abstractmethod
    async def top(self, board_key: str, n: int) -> list[tuple[str, float]]:
        """The `n` best (member, rating) pairs, highest first; equal ratings in descending member order."""
