"""What a relay is: it takes the messages a command produced and sees each delivered on its platform."""

from __future__ import annotations

import abc
import hashlib
from collections.abc import Awaitable, Callable, Sequence

from bot.model import Group, Message

__all__ = ["Deliver", "Relay", "order_of", "platform_of", "slot_of", "tag"]

Deliver = Callable[[Message], Awaitable[None]]
"""An adapter's delivery of one message on its platform. Raising means "not delivered, try again"; a
message that can never be delivered (the person blocked the bot) is the adapter's to handle and not raise."""


def platform_of(message: Message) -> str:
    """The platform whose process can deliver `message`: its person's, or its group's."""
    audience = message.audience
    if isinstance(audience, Group):
        return audience.chat.platform
    return audience.user.platform


def audience_id(message: Message) -> str:
    audience = message.audience
    if isinstance(audience, Group):
        return "g:" + audience.chat.key
    return "u:" + audience.user.key


def slot_of(message: Message) -> str:
    """What one message on screen is: its table (by serial), its reader and its key. Messages with no key
    (always a fresh post) have no order among them: `None`."""
    return f"{message.serial}|{audience_id(message)}|{message.key}"


def order_of(message: Message) -> int:
    """The message's place among those shown in its slot: its table version. Older than what is shown is
    dropped; the same version again (a `/table` asking for the table anew) is shown (a retry of one entry
    is caught by the entry's own mark, not by its version)."""
    return message.version if message.version is not None else -1


def tag(text: str) -> str:
    """A Redis Cluster hash tag for `text`: every key of one slot's check lives in one cluster slot."""
    return hashlib.sha1(text.encode()).hexdigest()[:16]


class Relay(abc.ABC):
    """Delivers the messages of commands to every platform they are for."""

    @abc.abstractmethod
    async def dispatch(self, messages: Sequence[Message]) -> None:
        """Deliver `messages` (in order per reader): this process's platform's now, the others' through
        their platform's processes."""
