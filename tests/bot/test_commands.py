"""Typed commands, button payloads and the message markup."""

from __future__ import annotations

import pytest

from bot.commands import (
    INVALID_BUTTON,
    MAX_CHAT_ID,
    MAX_PAYLOAD_BYTES,
    MAX_PLATFORM,
    Payload,
    PayloadError,
    decode_payload,
    encode_payload,
    from_payload,
    parse_text,
    read_payload,
    table_tag,
)
from bot.i18n import parse_card_in
from bot.markup import escape, parse, to_discord, to_html, to_plain
from bot.model import ChatRef, UserRef
from core.cards import CardParseError, parse_card

CHAT = ChatRef("tg", "-1001234567890", "Group")
USER = UserRef("tg", "42", "Ala")


@pytest.mark.parametrize(
    ("text", "name", "args"),
    [
        ("/bid 120", "bid", ("120",)),
        ("bid 120", "bid", ("120",)),
        ("/bid@ThousandBot 120", "bid", ("120",)),
        ("!BID 120", "bid", ("120",)),
        ("/play QS", "play", ("QS",)),
        ("/play q♠", "play", ("q♠",)),
        ("play 10h", "play", ("10h",)),
        ("/pas", "pass", ()),
        ("пас", "pass", ()),
        ("/add-ai hard", "add_ai", ("hard",)),
        ("  /give 9C   JD ", "give", ("9C", "JD")),
    ],
)
def test_typed_commands(text: str, name: str, args: tuple[str, ...]) -> None:
    command = parse_text(text, CHAT, USER)
    assert command is not None
    assert (command.name, command.args, command.source, command.version) == (name, args, "text", None)


def test_chat_is_not_a_command_but_a_slash_always_is() -> None:
    assert parse_text("hello there", CHAT, USER) is None
    assert parse_text("", CHAT, USER) is None
    unknown = parse_text("/dance now", CHAT, USER)
    assert unknown is not None and unknown.name == "unknown"


def test_payload_round_trip_and_limit() -> None:
    payload = encode_payload("give", ("QS", "10H", "9C"), 123456, "tg:-1001234567890")
    assert len(payload.encode()) <= MAX_PAYLOAD_BYTES
    assert decode_payload(payload) == ("give", ("QS", "10H", "9C"), 123456, "tg:-1001234567890")
    command = from_payload(payload, CHAT, USER)
    assert (command.name, command.version, command.table_id, command.source) == (
        "give",
        123456,
        "tg:-1001234567890",
        "button",
    )
    with pytest.raises(PayloadError):
        encode_payload("play", ("QS",), 1, "tg:" + "9" * 60)


def test_payloads_carry_the_table_tag() -> None:
    tag = table_tag("a1b2c3d4e5")
    assert len(tag) == 3 and tag.isalnum() and tag == tag.lower() and tag == table_tag("a1b2c3d4e5")
    assert len({table_tag(f"{n:010x}") for n in range(2000)}) > 1900  # tables of one chat rarely share one
    payload = encode_payload("play", ("QS", "!"), 42, "tg:-100123", tag)
    assert payload == f"p{tag}:QS.!:42:tg:-100123"
    assert read_payload(payload) == Payload("play", ("QS", "!"), 42, "tg:-100123", tag)
    assert decode_payload(payload) == ("play", ("QS", "!"), 42, "tg:-100123")  # as before tags
    command = from_payload(payload, CHAT, USER)
    assert (command.version, command.table_id, command.table_tag) == (42, "tg:-100123", tag)
    # A payload of before tags (still on people's screens) reads, with no tag.
    old = from_payload("p:QS:42:tg:-100123", CHAT, USER)
    assert (old.name, old.version, old.table_tag) == ("play", 42, None)
    for bad in ("pABC:QS:42:tg:1", "pabcd:QS:42:tg:1", "pab:QS:42:tg:1", "?abc:QS:42:tg:1", "abc:QS:42:tg:1"):
        assert from_payload(bad, CHAT, USER).name == INVALID_BUTTON, bad


def test_the_longest_payload_fits_with_the_longest_chat_id() -> None:
    """The longest arguments (a give of three tens), a ten-digit version, a tag, the longest platform name
    and the longest chat id allowed: 64 bytes, Telegram's limit; one character more does not fit."""
    table_id = "p" * MAX_PLATFORM + ":" + "-" + "9" * (MAX_CHAT_ID - 1)
    payload = encode_payload("give", ("10H", "10D", "10S"), 10**10 - 1, table_id, table_tag("f" * 10))
    assert len(payload.encode()) == MAX_PAYLOAD_BYTES
    assert read_payload(payload).table_id == table_id
    with pytest.raises(PayloadError):
        encode_payload("give", ("10H", "10D", "10S"), 1, table_id + "9", "abc")
    with pytest.raises(PayloadError):
        encode_payload("give", ("10H",), 1, "p" * (MAX_PLATFORM + 1) + ":1", "abc")
    # Real chat ids are far shorter: Telegram's supergroups, Discord's snowflakes.
    for real in ("tg:-1009999999999", "dc:18446744073709551615"):
        assert len(encode_payload("give", ("10H", "10D", "10S"), 10**10 - 1, real, "abc")) < MAX_PAYLOAD_BYTES


@pytest.mark.parametrize(
    "payload",
    [
        "",
        "p",
        "p:QS:42",
        "?:QS:42:tg:1",
        "p:QS:x42:tg:1",
        "p:Q S:42:tg:1",
        "p:QS:42:TG:1",
        "p:QS:42:tg:1" + "1" * 60,
        "p:QS:-1:tg:1",
        "p:QS:42:tg:",
        "zz:QS:42:tg:1",
    ],
)
def test_malformed_payloads_are_refused(payload: str) -> None:
    with pytest.raises(PayloadError):
        decode_payload(payload)
    assert from_payload(payload, CHAT, USER).name == INVALID_BUTTON


@pytest.mark.parametrize(
    ("token", "langs", "card"),
    [
        ("QS", ("en",), "QS"),
        ("q♠", ("en",), "QS"),
        ("10h", ("en",), "10H"),
        ("D♠", ("pl",), "QS"),
        ("W♥", ("pl",), "JH"),
        ("Д♠", ("ru",), "QS"),
        ("т♦", ("uk",), "AD"),
        ("E♣", ("et",), "QC"),
        ("Ä♥", ("et",), "AH"),
        ("K♠", ("tr",), "QS"),
        ("P♠", ("tr",), "KS"),
        ("K♠", ("en",), "KS"),
        ("KS", ("ru", "en"), "KS"),
    ],
)
def test_localized_cards(token: str, langs: tuple[str, ...], card: str) -> None:
    assert parse_card_in(token, langs) == parse_card(card)


def test_not_cards() -> None:
    for token in ("", "Q", "ZS", "11H", "Д", "QX"):
        with pytest.raises(CardParseError):
            parse_card_in(token, ("ru", "en"))


def test_markup() -> None:
    text = "**Deal 1** · _dealer_: " + escape("a*b_c`d\\") + " `x*y`"
    assert to_plain(text) == "Deal 1 · dealer: a*b_c`d\\ x*y"
    spans = parse(text)
    assert spans[0].bold and spans[0].text == "Deal 1"
    assert any(s.italic and s.text == "dealer" for s in spans)
    assert any(s.code and s.text == "x*y" for s in spans)
    assert to_html("**<b>** & `1<2`") == "<b>&lt;b&gt;</b> &amp; <code>1&lt;2</code>"
    assert to_discord("**" + escape("a_b") + "** " + escape("*x*")) == "**a\\_b** \\*x\\*"
    assert to_discord("_it_") == "*it*"


def test_a_link_reaches_discord_whole() -> None:
    """A replay link's token may hold `_` and `-`: escaped, Discord would link a backslash into the URL."""
    url = "https://table.example/replay?t=a_b-c_d"
    out = to_discord("Replay the game: " + escape(url + " (a_b)"))
    assert f"<{url}>" in out
    assert out.endswith("\\(a\\_b\\)")
    assert to_discord("**" + escape(url) + "**") == f"**<{url}>**"
