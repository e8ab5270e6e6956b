"""Discord's JSON error bodies and the codes the fake can answer with.

Bodies follow the documented shape ``{"code": int, "message": str, "errors"?: {...}}`` where ``errors`` is
nested by field path with ``_errors`` leaves, as discord.py flattens them into ``HTTPException.text``.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]

# JSON error codes (https://discord.com/developers/docs/topics/opcodes-and-status-codes#json).
GENERAL = 0
UNKNOWN_CHANNEL = 10003
UNKNOWN_GUILD = 10004
UNKNOWN_MEMBER = 10007
UNKNOWN_MESSAGE = 10008
UNKNOWN_USER = 10013
UNKNOWN_WEBHOOK = 10015
UNKNOWN_INTERACTION = 10062
UNKNOWN_APPLICATION_COMMAND = 10063
INTERACTION_ALREADY_ACKNOWLEDGED = 40060
REQUEST_ENTITY_TOO_LARGE = 40005
MISSING_ACCESS = 50001
CANNOT_EDIT_OTHERS_MESSAGE = 50005
CANNOT_SEND_EMPTY_MESSAGE = 50006
CANNOT_SEND_TO_USER = 50007
MISSING_PERMISSIONS = 50013
INVALID_WEBHOOK_TOKEN = 50027
INVALID_FORM_BODY = 50035
INVALID_JSON = 50109


class APIError(Exception):
    """An error response; raised inside handlers and rendered by the REST middleware."""

    def __init__(
        self,
        status: int,
        code: int | None,
        message: str,
        errors: JSON | None = None,
        headers: dict[str, str] | None = None,
        extra: JSON | None = None,
    ) -> None:
        super().__init__(f"{status} {code} {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = errors
        self.headers = headers or {}
        self.extra = extra or {}

    def body(self) -> JSON:
        data: JSON = {"message": self.message}
        if self.code is not None:
            data["code"] = self.code
        if self.errors:
            data["errors"] = self.errors
        data.update(self.extra)
        return data


def unauthorized() -> APIError:
    return APIError(401, GENERAL, "401: Unauthorized")


def not_found() -> APIError:
    return APIError(404, GENERAL, "404: Not Found")


def method_not_allowed() -> APIError:
    return APIError(405, GENERAL, "405: Method Not Allowed")


def unknown_channel() -> APIError:
    return APIError(404, UNKNOWN_CHANNEL, "Unknown Channel")


def unknown_guild() -> APIError:
    return APIError(404, UNKNOWN_GUILD, "Unknown Guild")


def unknown_member() -> APIError:
    return APIError(404, UNKNOWN_MEMBER, "Unknown Member")


def unknown_message() -> APIError:
    return APIError(404, UNKNOWN_MESSAGE, "Unknown Message")


def unknown_user() -> APIError:
    return APIError(404, UNKNOWN_USER, "Unknown User")


def unknown_webhook() -> APIError:
    return APIError(404, UNKNOWN_WEBHOOK, "Unknown Webhook")


def unknown_interaction() -> APIError:
    return APIError(404, UNKNOWN_INTERACTION, "Unknown interaction")


def unknown_command() -> APIError:
    return APIError(404, UNKNOWN_APPLICATION_COMMAND, "Unknown application command")


def already_acknowledged() -> APIError:
    return APIError(400, INTERACTION_ALREADY_ACKNOWLEDGED, "Interaction has already been acknowledged.")


def missing_access() -> APIError:
    return APIError(403, MISSING_ACCESS, "Missing Access")


def missing_permissions() -> APIError:
    return APIError(403, MISSING_PERMISSIONS, "Missing Permissions")


def cannot_edit_others() -> APIError:
    return APIError(403, CANNOT_EDIT_OTHERS_MESSAGE, "Cannot edit a message authored by another user")


def empty_message() -> APIError:
    return APIError(400, CANNOT_SEND_EMPTY_MESSAGE, "Cannot send an empty message")


def cannot_send_to_user() -> APIError:
    return APIError(403, CANNOT_SEND_TO_USER, "Cannot send messages to this user")


def invalid_webhook_token() -> APIError:
    return APIError(401, INVALID_WEBHOOK_TOKEN, "Invalid Webhook Token")


def invalid_json() -> APIError:
    return APIError(400, INVALID_JSON, "The request body contains invalid JSON.")


def entity_too_large() -> APIError:
    return APIError(413, REQUEST_ENTITY_TOO_LARGE, "Request entity too large")


class FormErrors:
    """Collects field errors and raises one 50035 "Invalid Form Body" like Discord does."""

    def __init__(self, prefix: tuple[str | int, ...] = ()) -> None:
        self._tree: JSON = {}
        self._prefix = prefix

    def add(self, path: tuple[str | int, ...], code: str, message: str) -> None:
        node = self._tree
        for part in (*self._prefix, *path):
            node = node.setdefault(str(part), {})
        node.setdefault("_errors", []).append({"code": code, "message": message})

    def max_length(self, path: tuple[str | int, ...], limit: int) -> None:
        self.add(path, "BASE_TYPE_MAX_LENGTH", f"Must be {limit} or fewer in length.")

    def required(self, path: tuple[str | int, ...]) -> None:
        self.add(path, "BASE_TYPE_REQUIRED", "This field is required")

    def __bool__(self) -> bool:
        return bool(self._tree)

    def to_dict(self) -> JSON:
        return self._tree

    def raise_if_any(self) -> None:
        if self._tree:
            raise APIError(400, INVALID_FORM_BODY, "Invalid Form Body", errors=self._tree)


def form_error(path: tuple[str | int, ...], code: str, message: str) -> APIError:
    """A 50035 with a single field error."""
    fe = FormErrors()
    fe.add(path, code, message)
    return APIError(400, INVALID_FORM_BODY, "Invalid Form Body", errors=fe.to_dict())


class FakeUsageError(Exception):
    """A test asked a fake user to do something the real Discord client would not let them do."""
