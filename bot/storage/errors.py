"""The errors a store raises on purpose; what each tells the caller to do."""

from __future__ import annotations

__all__ = ["StorageError", "StorageUnavailable", "StorageUncertain", "VersionConflict"]


class StorageError(Exception):
    """Base of the errors a store raises on purpose."""


class StorageUnavailable(StorageError):
    """The backing server cannot be reached right now (connection refused, timeout, loading, failover).

    The operation may or may not have been applied: reload before deciding again. (The client's own
    retries inside one `save` call are safe: the script recognises a replay of its own write.) The service
    answers "temporarily unavailable"; the store reconnects by itself on a later call.
    """


class StorageUncertain(StorageUnavailable):
    """A save the server applied but fewer replicas acknowledged than asked (`WAIT`, see
    `RedisStore`'s `wait_replicas`): should the master fail now, a promoted replica may not have it.
    So the change may stand or not: the player is told their move may have been taken and the table
    shows which (the next load reads the truth). A `StorageUnavailable`, so callers that know no
    better treat it as one (reload before deciding again)."""

    def __init__(self, table_id: str, version: int, acknowledged: int, wanted: int) -> None:
        super().__init__(
            f"table {table_id!r} version {version}: {acknowledged} of {wanted} replica(s) acknowledged"
        )
        self.table_id = table_id
        self.version = version
        self.acknowledged = acknowledged
        self.wanted = wanted


class VersionConflict(StorageError):
    """The table's stored version is not the one the caller read: someone else wrote first."""

    def __init__(self, table_id: str, expected: int, actual: int) -> None:
        super().__init__(f"table {table_id!r}: expected version {expected}, found {actual}")
        self.table_id = table_id
        self.expected = expected
        self.actual = actual
