"""Platform message references: which message an adapter edits in place, shared by every process."""

from __future__ import annotations

import abc

__all__ = ["RefStore"]


class RefStore(abc.ABC):
    """Named references per scope (a chat), each set atomically."""

    @abc.abstractmethod
    async def get_refs(self, scope_key: str) -> dict[str, str]:
        """The references kept for `scope_key` (e.g. a chat): name -> value, such as the platform id of the
        message an adapter edits in place for a message key. Shared by every process, so the process that
        handles the next update edits the message another one sent."""

    @abc.abstractmethod
    async def set_ref(self, scope_key: str, name: str, value: str, *, ttl_seconds: float) -> str | None:
        """Set one reference and return the value it replaced, in one atomic step (so of two processes
        that each posted a message for one name, the one writing second learns of the other's message);
        the whole scope expires `ttl_seconds` after its last change."""

    @abc.abstractmethod
    async def delete_ref(self, scope_key: str, name: str) -> None:
        """Forget one reference (e.g. the message was deleted)."""
