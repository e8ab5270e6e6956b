"""Counting Redis round trips at the connection, where they really happen.

A round trip is one write of a request to a socket, followed by reading its replies: a command, a
script call or a whole pipeline each count once. Counting at the connection (not at the store's call
sites) also catches what the store does not see: reconnect handshakes, health-check PINGs, retries and
the EVAL fallback after NOSCRIPT. Benchmarks read the counter before and after a batch of commands.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from redis.asyncio.connection import AbstractConnection

__all__ = ["RoundTripCounter", "counting_connection_class"]

C = TypeVar("C", bound=AbstractConnection)


@dataclass(slots=True)
class RoundTripCounter:
    """Requests written to Redis by every connection of one store."""

    count: int = 0


def counting_connection_class(base: type[C], counter: RoundTripCounter) -> type[C]:
    """A subclass of `base` (TCP, TLS or unix socket connection) that counts each request it sends."""

    async def send_packed_command(
        self: AbstractConnection, command: bytes | str | Iterable[bytes], check_health: bool = True
    ) -> None:
        await base.send_packed_command(self, command, check_health)
        counter.count += 1

    namespace: dict[str, Any] = {"send_packed_command": send_packed_command}
    counting: type[C] = type(f"Counting{base.__name__}", (base,), namespace)
    return counting
