"""Neutral commands from what people type and from button payloads.

Typed commands: an optional `/` or `!`, a name (a Telegram `@botname` suffix is dropped), then
arguments separated by spaces: `/bid 120`, `bid 120`, `/play QS`, `/play q♠ !` (the `!` declares a
marriage), `/give 9C JD`. Names are case-insensitive and a few aliases are understood (`pas`, `пас`,
`add-ai`...). Text without a slash that does not start with a command name is not a command (chat).

Button payloads are compact strings of at most 64 bytes (Telegram's limit for callback data):

    <code><table tag>:<arg>.<arg>...:<table version>:<table id>        e.g.  pk3x:QS:42:tg:-100123

The code is one character; the table tag (three lower-case letters or digits) tells apart the tables one
chat has had: a table that expired is followed by one whose versions start at 1 again, and a button of
the old one must not pass for the new one's. (Payloads of before tags, `p:QS:42:tg:-100123`, still read,
with no tag.)

The service refuses a payload that is malformed, names another table, or was drawn from an older
version of the table (stale). `from_payload` never raises: anything unreadable becomes the command
`invalid_button`, which the service answers with a clear message.
"""

from __future__ import annotations

import logging
import re
import zlib
from typing import Final, NamedTuple

from bot.model import ChatRef, Command, UserRef
from core.rules import PRESETS

log = logging.getLogger("thousand.commands")

__all__ = [
    "COMMANDS",
    "INVALID_BUTTON",
    "MAX_CHAT_ID",
    "MAX_PAYLOAD_BYTES",
    "MAX_PLATFORM",
    "MOVE_COMMANDS",
    "QUEUE_COMMANDS",
    "SAFETY_COMMANDS",
    "SECRET_MOVES",
    "SYSTEM_COMMANDS",
    "Payload",
    "PayloadError",
    "decode_payload",
    "encode_payload",
    "from_payload",
    "parse_text",
    "read_payload",
    "table_tag",
]

MOVE_COMMANDS: Final = frozenset(
    {
        *("bid", "pass", "play", "give", "take", "discard", "sell", "blind"),
        *("contract", "bomb", "concede", "crawl"),
    }
)
"""The commands that are a move in the game (they go to the engine as an action of the sender's seat)."""

SECRET_MOVES: Final = frozenset({"give", "discard"})
"""Moves that name cards which stay hidden (given to another player, laid down): never typed in a group.
A card played is shown to everyone anyway, so `play` may be typed anywhere."""

COMMANDS: Final = (
    "new", "join", "leave", "add_ai", "remove_ai", "start",
    "bid", "pass", "play", "give", "take", "discard", "sell", "blind", "contract",
    "bomb", "concede", "crawl",
    "hand", "table", "score", "rules", "set", "lang", "kick", "back", "end", "export",
    "review", "stats", "top", "help", "again", "say", "queue", "cancel",
    "block", "unblock", "report",
)  # fmt: skip
"""Every command the service knows, by its neutral name."""

REVIEW_COMMAND: Final = "review"
"""A person's review of a finished deal (`bot.review.ReviewDesk`): checked under the table's lock, worked
out after it."""

QUEUE_COMMANDS: Final = frozenset({"queue", "cancel"})
"""The public games' queue (`bot.handlers.queue`): about the sender, not a table. `/play` with no card
(only queue options, or nothing in a private chat) is `queue`: see `parse_text`."""

SAFETY_COMMANDS: Final = frozenset({"block", "unblock", "report"})
"""Among strangers at a public table (`bot.handlers.public_safety`): about the sender and a public table
they sat at (also after it), not a change of a table."""

SYSTEM_COMMANDS: Final = ("title", "unreachable")
"""Commands an adapter sends on its own about a chat or a user; never typed, never on a button: `title`
(the chat's title changed: `ChatRef.title` holds the new one) and `unreachable` (the user cannot be
reached privately any more: they blocked the bot, or left the group)."""

INVALID_BUTTON: Final = "invalid_button"
UNKNOWN: Final = "unknown"

_ALIASES: Final = {
    "addai": "add_ai",
    "add-ai": "add_ai",
    "ai": "add_ai",
    "bot": "add_ai",
    "removeai": "remove_ai",
    "remove-ai": "remove_ai",
    "rmai": "remove_ai",
    "pas": "pass",
    "пас": "pass",
    "p": "play",
    "language": "lang",
    "scores": "score",
    "rule": "rules",
    "settings": "set",
    "record": "export",
    "stat": "stats",
    "leaders": "top",
    "?": "help",
    "go": "start",
    "blind_game": "blind",
    "rematch": "again",
    "find": "queue",
    "playnow": "queue",
}

_CODES: Final = {
    "new": "N",
    "join": "j",
    "leave": "l",
    "add_ai": "a",
    "remove_ai": "r",
    "start": "s",
    "bid": "b",
    "pass": "x",
    "play": "p",
    "give": "g",
    "take": "t",
    "discard": "d",
    "sell": "S",
    "blind": "B",
    "contract": "c",
    "bomb": "o",
    "concede": "n",
    "crawl": "w",
    "hand": "h",
    "table": "T",
    "score": "Z",
    "rules": "R",
    "kick": "k",
    "back": "K",
    "end": "e",
    "export": "E",
    "review": "v",
    "help": "H",
    "again": "A",
    "queue": "q",
    "cancel": "C",
}
_NAMES: Final = {code: name for name, code in _CODES.items()}

MAX_PAYLOAD_BYTES: Final = 64
MAX_PLATFORM: Final = 10
"""The longest platform name (`ChatRef.platform`)."""
MAX_CHAT_ID: Final = 25
"""The longest chat id (`ChatRef.chat_id`) whose buttons fit in 64 bytes, with every version a table
reaches (up to 10 digits) and the longest arguments (a give of three tens)."""
TAG_LENGTH: Final = 3
_TAG_ALPHABET: Final = "0123456789abcdefghijklmnopqrstuvwxyz"
# Payloads come back from strangers' clients: every field is checked with `fullmatch` against ASCII
# classes only. (`$` would accept a trailing newline, `\d` and `str.isdigit` accept other scripts' digits,
# and `isdigit` also superscripts, which `int` then refuses with a ValueError.)
_ARG_RE: Final = re.compile(r"[A-Za-z0-9!+=_-]{1,12}")
_TABLE_RE: Final = re.compile(rf"[a-z][a-z0-9]{{0,{MAX_PLATFORM - 1}}}:[A-Za-z0-9_.:@-]{{1,{MAX_CHAT_ID}}}")
_TAG_RE: Final = re.compile(rf"[0-9a-z]{{{TAG_LENGTH}}}")
_VERSION_RE: Final = re.compile(r"[0-9]{1,12}")


class PayloadError(ValueError):
    """A payload this module did not write (or could not fit in 64 bytes)."""


class Payload(NamedTuple):
    """What a payload says: the command, its arguments, and the table (id, version, tag) it was drawn for."""

    name: str
    args: tuple[str, ...]
    version: int
    table_id: str
    tag: str | None
    """`table_tag` of the table's serial; None in payloads of before tags."""


def table_tag(serial: str) -> str:
    """A short mark of one table (of its serial): three letters or digits that a chat's next table, which
    reuses the table id and counts its versions from 1 again, almost surely does not share (1 in 46656)."""
    n = zlib.crc32(serial.encode()) % len(_TAG_ALPHABET) ** TAG_LENGTH
    out = ""
    for _ in range(TAG_LENGTH):
        n, digit = divmod(n, len(_TAG_ALPHABET))
        out += _TAG_ALPHABET[digit]
    return out


def encode_payload(
    name: str, args: tuple[str, ...], version: int, table_id: str, tag: str | None = None
) -> str:
    """The payload of a button that sends `name args` to the table `table_id` (tagged `tag`) at `version`."""
    code = _CODES.get(name)
    if code is None:
        raise PayloadError(f"no button code for {name!r}")
    for arg in args:
        if not _ARG_RE.fullmatch(arg):
            raise PayloadError(f"argument {arg!r} cannot go into a payload")
    if not _TABLE_RE.fullmatch(table_id):
        raise PayloadError(f"table id {table_id!r} cannot go into a payload")
    if tag is not None and not _TAG_RE.fullmatch(tag):
        raise PayloadError(f"table tag {tag!r} cannot go into a payload")
    if version < 0:
        raise PayloadError("a version is not negative")
    payload = f"{code}{tag or ''}:{'.'.join(args)}:{version}:{table_id}"
    if len(payload.encode()) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"payload longer than {MAX_PAYLOAD_BYTES} bytes: {payload!r}")
    return payload


def read_payload(payload: str) -> Payload:
    """Everything a payload says; raises `PayloadError` for anything malformed."""
    if not isinstance(payload, str) or len(payload.encode("utf-8", "replace")) > MAX_PAYLOAD_BYTES:
        raise PayloadError("payload too long or not text")
    parts = payload.split(":", 3)
    if len(parts) != 4:
        raise PayloadError("payload has too few fields")
    head, arg_text, version_text, table_id = parts
    name = _NAMES.get(head[:1])
    if name is None:
        raise PayloadError(f"unknown payload code {head!r}")
    tag = head[1:] or None
    if tag is not None and not _TAG_RE.fullmatch(tag):
        raise PayloadError("malformed table tag")
    args = tuple(arg_text.split(".")) if arg_text else ()
    if any(not _ARG_RE.fullmatch(a) for a in args):
        raise PayloadError("malformed payload arguments")
    if not _VERSION_RE.fullmatch(version_text):
        raise PayloadError("malformed payload version")
    if not _TABLE_RE.fullmatch(table_id):
        raise PayloadError("malformed table id")
    return Payload(name, args, int(version_text), table_id, tag)


def decode_payload(payload: str) -> tuple[str, tuple[str, ...], int, str]:
    """(name, args, version, table id) of a payload; raises `PayloadError` for anything malformed."""
    name, args, version, table_id, _ = read_payload(payload)
    return name, args, version, table_id


def from_payload(payload: str, chat: ChatRef, user: UserRef) -> Command:
    """The command a pressed button sends; `invalid_button` when the payload is not one of ours."""
    try:
        p = read_payload(payload)
    except PayloadError as exc:
        # A modified client (or a bug) sent it: the service answers it as an invalid button.
        log.info(
            "button payload refused (%s): %r from %s",
            exc,
            payload[: MAX_PAYLOAD_BYTES * 2] if isinstance(payload, str) else type(payload).__name__,
            user.key,
            extra={"event": "invalid_button"},
        )
        return Command(INVALID_BUTTON, (), chat, user, source="button")
    return Command(
        p.name, p.args, chat, user, source="button", version=p.version, table_id=p.table_id, table_tag=p.tag
    )


def canonical_name(word: str) -> str | None:
    """The command a typed word names, or None."""
    word = word.lower()
    name = _ALIASES.get(word, word)
    return name if name in COMMANDS else None


def parse_text(text: str, chat: ChatRef, user: UserRef) -> Command | None:
    """The command in a typed message, or None when the message is ordinary chat.

    A message starting with `/` or `!` is always a command (an unknown name becomes `unknown`, which
    the service answers); without one, only a known command name at the start makes it a command.
    """
    stripped = text.strip()
    if not stripped:
        return None
    slashed = stripped[0] in "/!"
    if slashed:
        stripped = stripped[1:]
    words = stripped.split()
    if not words:
        return Command(UNKNOWN, (), chat, user) if slashed else None
    head = words[0].split("@", 1)[0]
    name = canonical_name(head)
    if name is None:
        return Command(UNKNOWN, (head,), chat, user) if slashed else None
    args = tuple(words[1:])
    if name == "play" and _finds_a_game(args, chat.private):
        name = "queue"
    return Command(name, args, chat, user)


_QUEUE_WORDS: Final = frozenset({"any", "fast", "normal", "slow", *PRESETS})


def _finds_a_game(args: tuple[str, ...], private: bool) -> bool:
    """`/play` asks for a public game rather than a card: alone in a private chat (no card named), or
    led by a queue option (`/play any 4 fast`, `/play 4`: no card is spelled like a preset, a pace or a
    bare digit; the queue answers a wrong option after it). Alone in a group it stays the move (asking
    which card), so a group's game reads as it always did."""
    if not args:
        return private
    first = args[0].lower()
    return first in _QUEUE_WORDS or (len(first) == 1 and first in "0123456789")
