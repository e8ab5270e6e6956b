"""Interactions the fake users create, and everything the application did in answer to them.

A test holds the ``FakeInteraction`` returned by ``slash``/``autocomplete``/``press`` and awaits its outcome:
the first callback (type and data), the original response message, followups, and any errors the fake
answered the application with (for example 10062 after the 3 s deadline).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .models import FakeChannel, FakeGuild, FakeMessage, FakeUser

if TYPE_CHECKING:
    from .errors import APIError

JSON = dict[str, Any]

# Interaction types.
PING, APPLICATION_COMMAND, MESSAGE_COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 1, 2, 3, 4, 5

# Callback types.
PONG = 1
CHANNEL_MESSAGE_WITH_SOURCE = 4
DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE = 5
DEFERRED_UPDATE_MESSAGE = 6
UPDATE_MESSAGE = 7
APPLICATION_COMMAND_AUTOCOMPLETE_RESULT = 8
MODAL = 9

ALLOWED_CALLBACKS: dict[int, set[int]] = {
    PING: {PONG},
    APPLICATION_COMMAND: {CHANNEL_MESSAGE_WITH_SOURCE, DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE, MODAL},
    MESSAGE_COMPONENT: {
        CHANNEL_MESSAGE_WITH_SOURCE,
        DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE,
        DEFERRED_UPDATE_MESSAGE,
        UPDATE_MESSAGE,
        MODAL,
    },
    AUTOCOMPLETE: {APPLICATION_COMMAND_AUTOCOMPLETE_RESULT},
    MODAL_SUBMIT: {
        CHANNEL_MESSAGE_WITH_SOURCE,
        DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE,
        DEFERRED_UPDATE_MESSAGE,
        UPDATE_MESSAGE,
    },
}


def make_token(interaction_id: int) -> str:
    raw = f"interaction:{interaction_id}:{secrets.token_urlsafe(48)}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


@dataclass
class Callback:
    """The application's acknowledgement of an interaction."""

    type: int
    data: JSON
    at: float

    @property
    def ephemeral(self) -> bool:
        return bool(int(self.data.get("flags") or 0) & 64)


@dataclass(eq=False)
class FakeInteraction:
    id: int
    token: str
    type: int
    user: FakeUser
    channel: FakeChannel
    guild: FakeGuild | None
    data: JSON
    payload: JSON
    notify: Callable[[], asyncio.Event] = field(repr=False)
    created_at: float = field(default_factory=time.monotonic)
    #: The message a component was on (component interactions).
    message: FakeMessage | None = None
    callback: Callback | None = None
    #: The message the callback created (type 4/5) or the component message (type 6/7).
    original: FakeMessage | None = None
    followups: list[FakeMessage] = field(default_factory=list)
    #: Errors the fake answered the application with for this interaction (10062, 40060, 50035...).
    errors: list[APIError] = field(default_factory=list)
    #: Whether the original response (type 4/5) was created by this interaction (vs a component's message).
    owns_original: bool = False
    followup_replaced_loading: bool = False

    # Convenience views ----------------------------------------------------------------------------------
    @property
    def acknowledged(self) -> bool:
        return self.callback is not None

    @property
    def ephemeral(self) -> bool:
        if self.original is not None and self.owns_original:
            return self.original.ephemeral
        return self.callback.ephemeral if self.callback else False

    @property
    def choices(self) -> list[JSON]:
        """Autocomplete choices the application answered with."""
        if self.callback is None or self.callback.type != APPLICATION_COMMAND_AUTOCOMPLETE_RESULT:
            return []
        return list(self.callback.data.get("choices") or [])

    @property
    def error_codes(self) -> list[int | None]:
        return [e.code for e in self.errors]

    # Waiting ----------------------------------------------------------------------------------------------
    async def _wait(self, predicate: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"interaction {self.id}: timed out waiting for {what}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.notify().wait(), min(remaining, 0.02))

    async def response(self, timeout: float = 5.0) -> Callback:
        """Wait for the first callback (the acknowledgement)."""
        await self._wait(lambda: self.callback is not None, timeout, "a callback")
        assert self.callback is not None
        return self.callback

    async def original_message(self, timeout: float = 5.0) -> FakeMessage:
        """Wait until the original response exists and is no longer "thinking"."""
        await self._wait(
            lambda: self.original is not None and not self.original.loading, timeout, "the original response"
        )
        assert self.original is not None
        return self.original

    async def wait_followups(self, count: int = 1, timeout: float = 5.0) -> list[FakeMessage]:
        await self._wait(lambda: len(self.followups) >= count, timeout, f"{count} followup(s)")
        return list(self.followups)

    async def wait_error(self, timeout: float = 5.0) -> APIError:
        """Wait for the fake to have answered the application with an error about this interaction."""
        await self._wait(lambda: bool(self.errors), timeout, "an error response")
        return self.errors[0]

    async def wait_for(self, predicate: Callable[[FakeInteraction], bool], timeout: float = 5.0) -> None:
        await self._wait(lambda: predicate(self), timeout, "a condition")
