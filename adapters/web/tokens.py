"""Signed tokens of the web table: start payloads, links, sessions and replay links.

Anything a URL carries can be forged, so every token is signed with HMAC-SHA256 under the web secret,
carries its purpose (a link cannot be replayed as a session, nor a start payload as either) and, except
the start payload, an expiry. Tokens are not encrypted: they hold only ids, names and a language.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import secrets
from dataclasses import dataclass
from typing import Final

__all__ = ["Claims", "Signer", "TokenError", "derive_secret"]

_START_RE: Final = re.compile(r"^([A-Za-z0-9_-]{2,42})_([0-9a-f]{20})$")


class TokenError(ValueError):
    """A token that is malformed, forged, of another purpose, or expired (the reason in the text)."""


@dataclass(frozen=True, slots=True)
class Claims:
    """What a link or session says: whose, for which table, until when."""

    kind: str
    table: str
    user: str
    name: str
    lang: str
    platform: str
    expires: float


def derive_secret(*, explicit: str | None, bot_tokens: tuple[str | None, ...]) -> bytes:
    """The signing key: WEB_SECRET, else one derived from the bot token (all processes of one bot agree),
    else a random one for this process only (the terminal)."""
    if explicit:
        return hashlib.sha256(b"thousand-web-secret\x00" + explicit.encode()).digest()
    for token in bot_tokens:
        if token:
            return hmac.new(b"thousand-web", token.encode(), hashlib.sha256).digest()
    return secrets.token_bytes(32)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise TokenError("malformed token") from None


class Signer:
    """Signs and checks tokens with one key."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, purpose: str, body: bytes) -> bytes:
        return hmac.new(self._key, purpose.encode() + b"\x00" + body, hashlib.sha256).digest()

    # --- start payloads (Telegram's startapp: at most 64 characters of A-Za-z0-9_-) ---------------

    def start_payload(self, table_id: str) -> str:
        """A table's signed name for a group's direct link: names the table only, never a user."""
        body = _b64(table_id.encode())
        mac = self._mac("start", body.encode()).hex()[:20]
        token = f"{body}_{mac}"
        if len(token) > 64:
            raise TokenError("table id too long for a start payload")
        return token

    def read_start(self, token: str) -> str:
        """The table a start payload names; raises TokenError when it was not signed here."""
        m = _START_RE.match(token or "")
        if m is None:
            raise TokenError("malformed start payload")
        body, mac = m.groups()
        if not hmac.compare_digest(self._mac("start", body.encode()).hex()[:20], mac):
            raise TokenError("forged start payload")
        try:
            return _unb64(body).decode()
        except UnicodeDecodeError:
            raise TokenError("malformed start payload") from None

    # --- links and sessions -----------------------------------------------------------------------

    def sign(self, claims: Claims) -> str:
        data = {
            "k": claims.kind,
            "t": claims.table,
            "u": claims.user,
            "n": claims.name,
            "l": claims.lang,
            "p": claims.platform,
            "e": int(claims.expires),
        }
        body = _b64(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())
        return f"{body}.{_b64(self._mac(claims.kind, body.encode()))}"

    def read(self, token: str, kind: str, now: float) -> Claims:
        """The claims of a token of purpose `kind`; raises TokenError for anything else or expired."""
        if not isinstance(token, str) or len(token) > 2048 or token.count(".") != 1:
            raise TokenError("malformed token")
        body, mac = token.split(".")
        if not hmac.compare_digest(_unb64(mac), self._mac(kind, body.encode())):
            raise TokenError("forged token")
        try:
            data = json.loads(_unb64(body))
            claims = Claims(
                kind=str(data["k"]),
                table=str(data["t"]),
                user=str(data["u"]),
                name=str(data["n"]),
                lang=str(data["l"]),
                platform=str(data["p"]),
                expires=float(data["e"]),
            )
        except (ValueError, KeyError, TypeError):
            raise TokenError("malformed token") from None
        if claims.kind != kind:
            raise TokenError("token of another purpose")
        if claims.expires < now:
            raise TokenError("expired token")
        return claims
