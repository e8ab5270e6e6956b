"""Telegram Mini App initData, validated exactly as Telegram's docs say ("Validating data received via
the Mini App"): the data-check string is every received field except `hash`, sorted by key, as
`key=value` joined by line feeds; the secret key is HMAC-SHA256 of the bot token keyed with the constant
`WebAppData`; the hex HMAC-SHA256 of the data-check string under that key must equal `hash`. `auth_date`
bounds the age. Nothing the page sends besides initData is trusted about who the user is.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from urllib.parse import parse_qsl

__all__ = ["InitDataError", "WebAppUser", "sign_init_data", "validate_init_data"]


class InitDataError(ValueError):
    """initData that is malformed, not signed with this bot's token, too old, or without a user."""


@dataclass(frozen=True, slots=True)
class WebAppUser:
    """The validated user and what else initData said."""

    user_id: str
    name: str
    language: str | None
    start_param: str | None
    auth_date: int


def _secret(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def _check_string(fields: dict[str, str]) -> str:
    return "\n".join(f"{k}={fields[k]}" for k in sorted(fields) if k != "hash")


def sign_init_data(fields: dict[str, str], bot_token: str) -> str:
    """initData as Telegram would send it for `fields` (tests and the terminal stand-in only)."""
    from urllib.parse import urlencode

    digest = hmac.new(_secret(bot_token), _check_string(fields).encode(), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest})


def _text(value: object) -> str:
    """A name part as text that can be stored and sent: a lone surrogate (JSON's `\\ud800`) becomes `?`."""
    return str(value or "").encode("utf-8", "replace").decode("utf-8")


def validate_init_data(init_data: str, bot_token: str, *, now: float, max_age: float) -> WebAppUser:
    """The user of genuine, fresh initData; raises InitDataError otherwise.

    Every field but `hash` is signed, `start_param` included (the direct link's table); initData without
    a `hash` is refused like a wrong one, and so is an `auth_date` more than a minute in the future."""
    if not isinstance(init_data, str) or not init_data or len(init_data) > 4096:
        raise InitDataError("no initData")
    if not init_data.isascii():
        # Telegram sends initData URL-encoded: ASCII only. (A lone surrogate could not even be hashed.)
        raise InitDataError("malformed initData")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True, errors="strict")
    except (ValueError, UnicodeDecodeError):
        raise InitDataError("malformed initData") from None
    fields: dict[str, str] = {}
    for key, value in pairs:
        if key in fields:
            raise InitDataError("a field appears twice")
        fields[key] = value
    received = fields.get("hash", "")
    if not received or not received.isascii():
        raise InitDataError("initData without a hash")
    expected = hmac.new(_secret(bot_token), _check_string(fields).encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected.encode(), received.lower().encode()):
        raise InitDataError("initData not signed with this bot's token")
    try:
        auth_date = int(fields["auth_date"])
    except (KeyError, ValueError):
        raise InitDataError("no auth_date") from None
    if auth_date > now + 60:
        raise InitDataError("initData from the future")
    if now - auth_date > max_age:
        raise InitDataError("initData too old")
    try:
        user = json.loads(fields["user"])
        user_id = int(user["id"])
    except (KeyError, ValueError, TypeError, RecursionError):
        raise InitDataError("no user in initData") from None
    if not isinstance(user, dict):
        raise InitDataError("no user in initData")
    name = " ".join(_text(user.get(k)) for k in ("first_name", "last_name")).strip()
    name = name or _text(user.get("username")) or str(user_id)
    lang = user.get("language_code")
    return WebAppUser(
        user_id=str(user_id),
        name=name,
        language=str(lang) if isinstance(lang, str) and lang.isascii() else None,
        start_param=fields.get("start_param") or None,
        auth_date=auth_date,
    )
