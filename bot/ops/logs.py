"""Logging for bot processes: one line per record, JSON for machines or plain text for people, with the
table and chat a record is about, and with secrets and private chats' contents kept out.

Why at the formatter: a secret can reach a record through any route (an f-string, an exception message,
a library's request URL: httpx logs ``POST https://api.telegram.org/bot<token>/sendMessage`` at INFO).
Redacting the final line catches them all, whichever logger produced it.

Context (`log_context`) lives in context variables, so each asyncio task handling an update carries its
own table and chat ids without passing them to every call.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any, Final, Literal, TextIO

__all__ = [
    "ContextFilter",
    "JsonFormatter",
    "LogFormat",
    "Redactor",
    "TextFormatter",
    "configure_logging",
    "log_context",
]

LogFormat = Literal["json", "console"]

REDACTED: Final = "***"

# Shapes of secrets that might reach a log line even if nobody registered them.
_PATTERNS: Final = (
    # Telegram bot token: <bot id>:<35 chars>, also inside /bot<token>/ URLs.
    re.compile(r"(?<!\d)\d{5,}:[A-Za-z0-9_-]{30,}"),
    # Discord bot token: three base64url parts separated by dots.
    re.compile(r"[A-Za-z0-9_+/-]{20,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{20,}"),
)
# user:password@ in a URL (redis://:pw@host, rediss://user:pw@host).
_URL_PASSWORD: Final = re.compile(r"(?P<head>[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@\s]+(?P<at>@)", re.I)
# Where things are on the network, hidden from text shown outside the logs (`Redactor.public`): whole
# URLs, host:port (`redis:6379`, `10.0.0.5:6379`, `[::1]:6379`), Python's socket address tuples
# (`('10.0.0.5', 6379)`, as asyncio's "Connect call failed" prints them), bare IPv4 and bracketed IPv6.
_ADDRESSES: Final = (
    re.compile(r"\(\s*'[^'\s]*'\s*,\s*\d{1,5}\s*(?:,[^()]*)?\)"),
    re.compile(r"[a-z][a-z0-9+.-]*://[^\s'\"<>()]+", re.I),
    re.compile(r"(?:\[[0-9a-f:.]+\]|[a-z0-9][a-z0-9_.-]*):\d{1,5}(?!\d)", re.I),
    re.compile(r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?![\d.])"),
    re.compile(r"\[[0-9a-f:.]*:[0-9a-f:.]*\]", re.I),
)

_CONTEXT_FIELDS: Final = ("table_id", "chat_id", "user_id", "platform", "shard_id", "update_id")
# Extra fields a record may carry into the JSON line (anything else passed via `extra` is dropped,
# so a careless `extra={"message": update}` cannot dump a private conversation).
_EXTRA_FIELDS: Final = (
    "event",
    "command",
    "outcome",
    "duration_ms",
    "version",
    "count",
    "retry_after",
    "reason",
    "status",
    "text",
)

_NO_CONTEXT: Final[Mapping[str, Any]] = MappingProxyType({})
_context: contextvars.ContextVar[Mapping[str, Any]] = contextvars.ContextVar(
    "thousand_log_context", default=_NO_CONTEXT
)


@contextmanager
def log_context(*, private: bool | None = None, **fields: str | int | None) -> Iterator[None]:
    """Attach `fields` (table_id, chat_id, user_id, platform, shard_id, update_id) to every record logged
    inside the block by this task. `private=True` marks a private chat: a ``text`` field is then never
    written, only its length."""
    unknown = set(fields) - set(_CONTEXT_FIELDS)
    if unknown:
        raise ValueError(f"unknown log context fields: {sorted(unknown)}")
    merged = dict(_context.get())
    merged.update({k: v for k, v in fields.items() if v is not None})
    if private is not None:
        merged["private"] = private
    token = _context.set(MappingProxyType(merged))
    try:
        yield
    finally:
        _context.reset(token)


class ContextFilter(logging.Filter):
    """Copies the current `log_context` onto each record (as attributes the formatters read)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in _context.get().items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


class Redactor:
    """Replaces known secrets and secret-shaped strings with ``***``."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret containing another is replaced whole. Very short values are not
        # secrets worth hiding and would shred ordinary text.
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def add(self, secret: str) -> None:
        if len(secret) >= 6 and secret not in self._secrets:
            self._secrets.append(secret)
            self._secrets.sort(key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        for pattern in _PATTERNS:
            text = pattern.sub(REDACTED, text)
        return _URL_PASSWORD.sub(rf"\g<head>{REDACTED}\g<at>", text)

    def public(self, text: str) -> str:
        """For text shown outside the logs (`/readyz`, anything a caller over HTTP or in a chat sees):
        secrets as in the logs, and network addresses too. Logs keep addresses (an operator needs them);
        whoever reaches a probe port does not."""
        text = self(text)
        for pattern in _ADDRESSES:
            text = pattern.sub(REDACTED, text)
        return text


def _private_safe(record: logging.LogRecord, key: str, value: Any) -> Any:
    if key == "text" and getattr(record, "private", False):
        return f"<private: {len(str(value))} chars>"
    return value


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, the context fields, allowed extras, exc."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self._redact = redactor

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key in (*_CONTEXT_FIELDS, "private", *_EXTRA_FIELDS):
            value = getattr(record, key, None)
            if value is not None:
                out[key] = _private_safe(record, key, value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return self._redact(json.dumps(out, ensure_ascii=False, default=str))


class TextFormatter(logging.Formatter):
    """``time level logger: message [table_id=.. chat_id=..]`` for a terminal."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")
        self._redact = redactor

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        pairs = [
            f"{key}={_private_safe(record, key, getattr(record, key))}"
            for key in (*_CONTEXT_FIELDS, *_EXTRA_FIELDS)
            if getattr(record, key, None) is not None
        ]
        if pairs:
            first, newline, rest = line.partition("\n")
            line = f"{first} [{' '.join(pairs)}]{newline}{rest}"
        return self._redact(line)


# Libraries that log every request (with the URL, which for Telegram contains the token) at INFO.
_NOISY: Final = ("httpx", "httpcore", "aiohttp.access")


def configure_logging(
    level: str | int = "INFO",
    fmt: LogFormat = "json",
    *,
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
) -> logging.Handler:
    """Route every logger of the process to one handler on `stream` (stderr by default).

    Called once by a process entry point (logging is per process by nature). `secrets` are the values
    that must never appear (tokens, passwords); secret-shaped strings are hidden too. Returns the handler.
    """
    redactor = Redactor(secrets)
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.addFilter(ContextFilter())
    handler.setFormatter(JsonFormatter(redactor) if fmt == "json" else TextFormatter(redactor))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level if isinstance(level, int) else level.upper())
    quiet = max(root.level, logging.WARNING)
    for name in _NOISY:
        logging.getLogger(name).setLevel(quiet)
    logging.captureWarnings(True)
    return handler
