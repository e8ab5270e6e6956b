"""A player watching the web table gets no hand messages in the chat, except the turn's warning."""

from __future__ import annotations

from bot.model import Message, Private, UserRef
from bot.presence import Presence, drop_seen_hands
from bot.storage import MemoryStore

TABLE = "tg:-100"
ALA = UserRef("tg", "1", "Ala")


def _hand(alert: str = "") -> Message:
    return Message(Private(ALA), "Your hand", key=f"hand:{TABLE}", notify=True, kind="hand", alert=alert)


async def test_the_warning_reaches_a_player_whose_page_is_open() -> None:
    presence = Presence(MemoryStore(), clock=lambda: 1000.0)
    await presence.touch(TABLE, ALA.key, "page-1")
    hand, warning = _hand(), _hand("Your turn: 30 seconds left, then a computer plays for you.")
    assert await drop_seen_hands([hand, warning], presence, asker=None) == [warning]
    await presence.leave(TABLE, ALA.key, "page-1")
    assert await drop_seen_hands([hand, warning], presence, asker=None) == [hand, warning]
