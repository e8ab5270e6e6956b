"""Errors of the fake Bot API.

`ApiError` carries exactly what Telegram puts into an error answer, so every layer (core, in-process
transport, HTTP server) produces the same `{"ok": false, ...}` payload. `FakeUsageError` is raised
when a test asks for something a real user could not do (pressing a button that does not exist):
the scenario is wrong, not the bot, and the test should fail loudly.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error answer of the Bot API: HTTP status, description and optional parameters."""

    def __init__(self, code: int, description: str, parameters: dict[str, Any] | None = None) -> None:
        super().__init__(f"{code}: {description}")
        self.code = code
        self.description = description
        self.parameters = parameters

    @classmethod
    def bad_request(cls, detail: str) -> ApiError:
        return cls(400, f"Bad Request: {detail}")

    @classmethod
    def forbidden(cls, detail: str) -> ApiError:
        return cls(403, f"Forbidden: {detail}")

    @classmethod
    def too_many_requests(cls, retry_after: int) -> ApiError:
        return cls(429, f"Too Many Requests: retry after {retry_after}", {"retry_after": retry_after})

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": False, "error_code": self.code, "description": self.description}
        if self.parameters:
            body["parameters"] = dict(self.parameters)
        return body


class FakeUsageError(AssertionError):
    """The test drove the fake into a situation that cannot happen on real Telegram."""
