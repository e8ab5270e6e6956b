"""Telegram's flood limits as shared send buckets.

Telegram documents about one message per second in a chat, twenty per minute in a group and about thirty
per second overall; edits count like sends. Each limit becomes a `SendBucket` (a sliding window in the
store), so every process of one bot draws on the same budget. A sliding window of N per W never admits
more than a token bucket of the same rate and burst would, so a bot that keeps to these buckets is within
Telegram's limits whichever of the two models Telegram applies.

`TELEGRAM_LIMITS` overrides the numbers (`chat=1/1,group=20/60,global=30/1`): for bots Telegram granted
higher limits, and for test rigs whose fake server is configured the same way.

Not every send is as urgent. A table update and the hand of the player who must act are `URGENT`; the
rest (`NORMAL`: other players' hands, notices; `INFO`: answers to commands) may use only `low_share` of
the bot's overall budget and of a group's: each such send also takes from a second, smaller bucket
(`…:low`). Whatever the other sends do, a third of each budget is left for the urgent ones, in every
process (the buckets are in the store like the others).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlsplit

from bot.storage import SendBucket

__all__ = [
    "BUDGETED_METHODS",
    "INFO",
    "NORMAL",
    "URGENT",
    "Preempted",
    "SendArgs",
    "SendLimits",
    "Skipped",
    "is_budgeted",
]

URGENT: Final = 0
"""Table updates (and the group's other keyed messages: lobby, results, score sheet), the acting player's
hand: first in their chat's queue and never short of budget."""
NORMAL: Final = 1
"""Other keyed messages (hands of players not to act) and notices."""
INFO: Final = 2
"""Answers to commands (/rules, /score, refusals, notes): last, and the first dropped from a full queue."""

BUDGETED_METHODS: Final = frozenset(
    {
        "sendmessage",
        "sendphoto",
        "senddocument",
        "sendanimation",
        "sendaudio",
        "sendvideo",
        "sendvoice",
        "sendsticker",
        "sendmediagroup",
        "sendpoll",
        "senddice",
        "sendlocation",
        "sendcontact",
        "copymessage",
        "copymessages",
        "forwardmessage",
        "forwardmessages",
        "editmessagetext",
        "editmessagecaption",
        "editmessagemedia",
        "editmessagereplymarkup",
    }
)
"""Methods that put something new in front of people: they spend the chat's, group's and global budget.
Answers to button presses, deletions, chat actions and reads do not."""

_PART: Final = re.compile(r"\s*(chat|group|global)\s*=\s*(\d+)\s*/\s*(\d+(?:\.\d+)?)\s*")


PAID_BROADCAST_RATE: Final = 1000
"""Messages a second a bot may send with `allow_paid_broadcast` (0.1 Telegram Stars each)."""


def is_budgeted(endpoint: str) -> bool:
    return endpoint.lower() in BUDGETED_METHODS


class Preempted(Exception):
    """A send waiting for the budget gave way to a more urgent message of its chat; nothing was sent."""


class Skipped(Exception):
    """An optional send (`Message.optional`) found the budget short: it is dropped, nothing was sent."""


@dataclass(frozen=True, slots=True)
class SendArgs:
    """What one Bot API call tells the rate limiter (PTB's `rate_limit_args`).

    `still_wanted`: asked while the send waits for the budget; when it says no, the call raises
    `Preempted` instead of sending. `wake` is set when the answer may have changed (a more urgent message
    was queued), so the wait is cut short. `max_floods`: 429s to sit out before giving up. `optional`:
    when the budget is not there at once, raise `Skipped` instead of waiting."""

    priority: int = URGENT
    still_wanted: Callable[[], bool] | None = None
    wake: asyncio.Event | None = None
    max_floods: int | None = None
    optional: bool = False


@dataclass(frozen=True, slots=True)
class SendLimits:
    """Sends per window: in one chat, in one group (in addition to the chat's), and for the whole bot."""

    chat: tuple[int, float] = (1, 1.0)
    group: tuple[int, float] = (20, 60.0)
    overall: tuple[int, float] = (30, 1.0)
    low_share: float = 2 / 3
    """The share of the overall and of a group's budget that sends less urgent than `URGENT` may use."""

    @classmethod
    def parse(cls, text: str | None) -> SendLimits:
        """`chat=1/1,group=20/60,global=30/1` (any subset; the rest keep Telegram's numbers).

        Raises ValueError with a short reason."""
        if text is None or not text.strip():
            return cls()
        values: dict[str, tuple[int, float]] = {}
        for part in text.split(","):
            match = _PART.fullmatch(part)
            if match is None:
                raise ValueError(f"{part.strip()!r} is not like chat=1/1, group=20/60 or global=30/1")
            name, count, window = match.group(1), int(match.group(2)), float(match.group(3))
            if count < 1 or window <= 0:
                raise ValueError(f"{part.strip()!r}: need at least 1 send in a window longer than 0 s")
            values["overall" if name == "global" else name] = (count, window)
        default = cls()
        return cls(
            values.get("chat", default.chat),
            values.get("group", default.group),
            values.get("overall", default.overall),
        )

    def _low(self, limit: tuple[int, float]) -> tuple[int, float]:
        return max(1, int(limit[0] * self.low_share)), limit[1]

    def buckets(self, bot_id: str, chat_id: int | str | None, priority: int = URGENT) -> list[SendBucket]:
        """The buckets one send to `chat_id` spends from (negative ids are groups and channels); a send
        less urgent than `URGENT` also from the smaller `low` buckets of the bot and the group."""
        low = priority > URGENT
        out = [SendBucket(f"tg:{bot_id}:all", *self.overall)]
        if low:
            out.append(SendBucket(f"tg:{bot_id}:all:low", *self._low(self.overall)))
        if chat_id is None:
            return out
        chat = str(chat_id)
        out.append(SendBucket(f"tg:{bot_id}:chat:{chat}", *self.chat))
        if chat.startswith(("-", "@")):
            out.append(SendBucket(f"tg:{bot_id}:group:{chat}", *self.group))
            if low:
                out.append(SendBucket(f"tg:{bot_id}:group:{chat}:low", *self._low(self.group)))
        return out

    def hold_keys(self, bot_id: str, chat_id: int | str | None) -> list[str]:
        """The buckets a 429 for `chat_id` holds: the chat's own (and its group's); the bot's whole budget
        when the answer named no chat."""
        if chat_id is None:
            return [f"tg:{bot_id}:all"]
        return [b.key for b in self.buckets(bot_id, chat_id)[1:]]


def env_problems(environ: Mapping[str, str]) -> list[str]:
    """The Telegram process's own variables that are no settings (`TELEGRAM_LIMITS`, `TELEGRAM_API_URL`),
    checked the way `thousand telegram` reads them at start, one line each for `check-config`."""
    problems: list[str] = []
    try:
        SendLimits.parse(environ.get("TELEGRAM_LIMITS"))
    except ValueError as exc:
        problems.append(f"TELEGRAM_LIMITS: {exc}")
    api_url = environ.get("TELEGRAM_API_URL") or ""
    if api_url:
        parts = urlsplit(api_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            problems.append(
                "TELEGRAM_API_URL: not an http(s) address of a Bot API server (like http://127.0.0.1:8081/bot)"
            )
    return problems
