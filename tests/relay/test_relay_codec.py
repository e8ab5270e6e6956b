"""A message handed over between processes arrives field for field as it left."""

from __future__ import annotations

import pytest

from bot.model import Button, ChatRef, Group, Message, Private, Sender, UserRef
from bot.relay import decode_message, encode_message, platform_of

ALA = UserRef("tg", "101", "Ala «x»", "pl", True)
CHAT = ChatRef("dc", "55", "Friday cards", False)


@pytest.mark.parametrize(
    "audience", [Private(ALA), Sender(ALA, ChatRef("tg", "101", "Ala", True)), Group(CHAT)]
)
def test_every_field_survives(audience: Private | Sender | Group) -> None:
    message = Message(
        audience,
        "🃏 **Table**\nline",
        "table:abc:2",
        (
            (Button("Bid 110", "bxyz:110:7:pub:1f"), Button("Pass", "x:7:pub:1f")),
            (Button("ż", "h::7:pub:1f"),),
        ),
        b"\x89PNG\x00\xff",
        ("game.json", b'{"a": 1}\n'),
        True,
        "pl",
        "table",
        "🃏 Gra",
        7,
        "ser:1",
        True,
        "hurry",
        True,
        "abcdef",
        "pub:0123456789ab",
    )
    assert decode_message(encode_message(message)) == message


def test_platform_of_is_the_readers() -> None:
    assert platform_of(Message(Private(ALA), "x")) == "tg"
    assert platform_of(Message(Group(CHAT), "x")) == "dc"


@pytest.mark.parametrize("raw", ["", "{}", "[1]", '{"a": {}, "t": "x", "b": []}', "not json"])
def test_garbage_is_refused(raw: str) -> None:
    with pytest.raises((ValueError, KeyError, TypeError, AttributeError)):
        decode_message(raw)
