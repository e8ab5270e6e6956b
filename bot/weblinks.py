"""Signed tokens of the web table (docs/WEB.md): start payloads, links, sessions and replay links.

In `bot` because the service offers links too (`/export`'s replay link); the web adapter checks them.

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
from dataclasses import dataclass
from typing import Final

from pydantic import SecretStr

from bot.model import UserRef
from bot.settings import Settings

__all__ = ["Claims", "Signer", "TokenError", "derive_secret", "link_url", "signer_for"]

_START_RE: Final = re.compile(r"^([A-Za-z0-9_-]{2,440})_([A-Za-z0-9-]{1,40})_([0-9a-f]{20})$")
_SERIAL_RE: Final = re.compile(r"^[A-Za-z0-9-]{1,40}$")
_B64_RE: Final = re.compile(r"^[A-Za-z0-9_-]*$")


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
    nonce: str = ""
    """A stream ticket's own random id (its single use is counted by it); empty for other tokens."""
    until: float = 0.0
    """A stream ticket's session expiry (the stream ends then); 0 for other tokens."""


def derive_secret(*, explicit: str | None, bot_tokens: tuple[str | None, ...]) -> bytes | None:
    """The signing key: WEB_SECRET, else one derived from the bot token (so every process of one bot
    agrees without another setting); None when there is neither (no links can be made)."""
    if explicit:
        return hashlib.sha256(b"thousand-web-secret\x00" + explicit.encode()).digest()
    for token in bot_tokens:
        if token:
            return hmac.new(b"thousand-web", token.encode(), hashlib.sha256).digest()
    return None


def signer_for(settings: Settings) -> Signer | None:
    """The signer of this deployment's web links, None when nothing to sign with is configured."""

    def plain(value: SecretStr | None) -> str | None:
        return None if value is None else value.get_secret_value()

    key = derive_secret(
        explicit=plain(settings.web_secret),
        bot_tokens=(plain(settings.telegram_token), plain(settings.discord_token)),
    )
    return None if key is None else Signer(key)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    """Strict unpadded base64url: only `A-Za-z0-9_-`, no `=`, and only the one spelling `_b64` writes
    (unused bits zero), so a token has exactly one accepted form."""
    if not isinstance(text, str) or not _B64_RE.fullmatch(text) or len(text) % 4 == 1:
        raise TokenError("malformed token")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise TokenError("malformed token") from None
    if _b64(data) != text:
        raise TokenError("malformed token")
    return data


class Signer:
    """Signs and checks tokens with one key."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def _mac(self, purpose: str, body: bytes) -> bytes:
        return hmac.new(self._key, purpose.encode() + b"\x00" + body, hashlib.sha256).digest()

    # --- start payloads (Telegram's startapp: at most 512 characters of A-Za-z0-9_-) --------------

    def start_payload(self, table_id: str, serial: str) -> str:
        """A game's signed name for a group's direct link: the table and its serial (one game: a chat's
        next game reuses the table id but not the serial, so it needs a new link), never a user."""
        if not isinstance(serial, str) or not _SERIAL_RE.fullmatch(serial):
            raise TokenError("serial not fit for a start payload")
        body = _b64(table_id.encode())
        mac = self._mac("start", f"{body}_{serial}".encode()).hex()[:20]
        token = f"{body}_{serial}_{mac}"
        if len(token) > 512:
            raise TokenError("table id too long for a start payload")
        return token

    def read_start(self, token: str) -> tuple[str, str]:
        """(table id, serial) of a start payload; raises TokenError when it was not signed here."""
        m = _START_RE.fullmatch(token) if isinstance(token, str) and token.isascii() else None
        if m is None:
            raise TokenError("malformed start payload")
        body, serial, mac = m.groups()
        if not hmac.compare_digest(self._mac("start", f"{body}_{serial}".encode()).hex()[:20], mac):
            raise TokenError("forged start payload")
        try:
            return _unb64(body).decode(), serial
        except UnicodeDecodeError:
            raise TokenError("malformed start payload") from None

    # --- replay links ------------------------------------------------------------------------------

    def replay_token(self, table_id: str, serial: str, expires: float) -> str:
        """A finished game's record, readable until `expires` (the table's own lifetime)."""
        return self.sign(Claims("replay", table_id, serial, "", "", "", expires))

    def read_replay(self, token: str, now: float) -> tuple[str, str]:
        """(table id, serial) of a replay token; raises TokenError."""
        claims = self.read(token, "replay", now)
        return claims.table, claims.user

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
        if claims.nonce:
            data["x"] = claims.nonce
        if claims.until:
            data["s"] = int(claims.until)
        body = _b64(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())
        return f"{body}.{_b64(self._mac(claims.kind, body.encode()))}"

    def read(self, token: str, kind: str, now: float) -> Claims:
        """The claims of a token of purpose `kind`; raises TokenError for anything else or expired."""
        if not isinstance(token, str) or len(token) > 2048 or not token.isascii() or token.count(".") != 1:
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
                nonce=str(data.get("x", "")),
                until=float(data.get("s", 0)),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            raise TokenError("malformed token") from None
        if claims.kind != kind:
            raise TokenError("token of another purpose")
        if claims.expires < now:
            raise TokenError("expired token")
        return claims


def link_url(signer: Signer, base: str, table_id: str, user: UserRef, lang: str, expires: float) -> str:
    """The page address that opens `table_id` as `user` until `expires` (Discord's Open table button,
    the terminal's address): `<base>/?t=<link token>`."""
    token = signer.sign(Claims("link", table_id, user.user_id, user.name[:32], lang, user.platform, expires))
    return f"{base.rstrip('/')}/?t={token}"
