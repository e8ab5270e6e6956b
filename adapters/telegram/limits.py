"""Telegram's flood limits as shared send buckets.

Telegram documents about one message per second in a chat, twenty per minute in a group and about thirty
per second overall; edits count like sends. Each limit becomes a `SendBucket` (a sliding window in the
store), so every process of one bot draws on the same budget. A sliding window of N per W never admits
more than a token bucket of the same rate and burst would, so a bot that keeps to these buckets is within
Telegram's limits whichever of the two models Telegram applies.

`TELEGRAM_LIMITS` overrides the numbers (`chat=1/1,group=20/60,global=30/1`): for bots Telegram granted
higher limits, and for test rigs whose fake server is configured the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from bot.storage import SendBucket

__all__ = ["BUDGETED_METHODS", "SendLimits", "is_budgeted"]

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


def is_budgeted(endpoint: str) -> bool:
    return endpoint.lower() in BUDGETED_METHODS


@dataclass(frozen=True, slots=True)
class SendLimits:
    """Sends per window: in one chat, in one group (in addition to the chat's), and for the whole bot."""

    chat: tuple[int, float] = (1, 1.0)
    group: tuple[int, float] = (20, 60.0)
    overall: tuple[int, float] = (30, 1.0)

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
        return cls(**values)

    def buckets(self, bot_id: str, chat_id: int | str | None) -> list[SendBucket]:
        """The buckets one send to `chat_id` spends from (negative ids are groups and channels)."""
        out = [SendBucket(f"tg:{bot_id}:all", self.overall[0], self.overall[1])]
        if chat_id is None:
            return out
        chat = str(chat_id)
        out.append(SendBucket(f"tg:{bot_id}:chat:{chat}", self.chat[0], self.chat[1]))
        if chat.startswith(("-", "@")):
            out.append(SendBucket(f"tg:{bot_id}:group:{chat}", self.group[0], self.group[1]))
        return out

    def hold_keys(self, bot_id: str, chat_id: int | str | None) -> list[str]:
        """The buckets a 429 for `chat_id` holds: the chat's own (and its group's); the bot's whole budget
        when the answer named no chat."""
        if chat_id is None:
            return [f"tg:{bot_id}:all"]
        return [b.key for b in self.buckets(bot_id, chat_id)[1:]]
