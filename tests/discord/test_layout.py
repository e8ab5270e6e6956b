"""Buttons within Discord's limits (5 rows of 5, custom ids of at most 100 characters, unique per
message, each matched by exactly one dynamic item) and message bodies within its text limits."""

from __future__ import annotations

import re

import pytest

from adapters.discord.content import MAX_CONTENT, render, split_text
from adapters.discord.items import DYNAMIC_ITEMS
from adapters.discord.layout import Key, hand_id, mode_id, pack, payload_id
from bot.commands import encode_payload
from bot.model import Button, ChatRef, Group, Message, Private, UserRef

TABLE = "dc:1576758693519818762"


def keys(n: int, name: str = "play") -> list[Key]:
    return [Key(f"c{i}", payload_id(encode_payload(name, (f"C{i}",), 123456, TABLE))) for i in range(n)]


def templates(custom_id: str) -> list[str]:
    return [
        cls.__name__ for cls in DYNAMIC_ITEMS if re.fullmatch(cls.__discord_ui_compiled_template__, custom_id)
    ]


def check(rows: list[list[Key]]) -> None:
    assert 0 < len(rows) <= 5 and all(0 < len(r) <= 5 for r in rows)
    ids = [k.custom_id for r in rows for k in r]
    assert len(set(ids)) == len(ids)
    for cid in ids:
        assert len(cid) <= 100 and len(templates(cid)) == 1, cid


@pytest.mark.parametrize("cards", [1, 4, 8, 10, 12, 20, 24])
def test_a_hand_of_any_size_fits_with_the_extra_buttons(cards: int) -> None:
    rows = [tuple(keys(cards)[i : i + 4]) for i in range(0, cards, 4)]
    extra = [Key("Hand by DM", mode_id(True))]
    packed = pack(rows, extra)
    check(packed)
    flat = [k.custom_id for r in packed for k in r]
    assert flat[-1] == mode_id(True)  # the adapter's buttons are kept, and last
    assert len(flat) == min(cards, 24) + 1
    if cards <= 16:  # the service's rows of 4 stay as they are
        assert [len(r) for r in packed[:-1]] == [len(r) for r in rows]


def test_wide_rows_are_split_and_too_many_buttons_are_cut_from_the_service_side() -> None:
    packed = pack([tuple(keys(30))], [Key("My hand", hand_id(TABLE))])
    check(packed)
    flat = [k.custom_id for r in packed for k in r]
    assert len(flat) == 25 and flat[-1] == hand_id(TABLE)


def test_equal_payloads_get_distinct_ids_that_still_carry_the_payload() -> None:
    same = Key("Pass", payload_id(encode_payload("pass", (), 7, TABLE)))
    packed = pack([(same, same)])
    check(packed)
    a, b = packed[0]
    assert a.custom_id != b.custom_id and b.custom_id.startswith(a.custom_id)


def test_the_longest_payloads_fit_in_a_custom_id() -> None:
    long_table = "dc:" + "9" * 20
    payload = encode_payload("give", ("10H", "10D", "10S"), 10**11, long_table)
    assert templates(payload_id(payload, 3)) == ["PayloadButton"]
    assert templates(hand_id(long_table)) == ["HandButton"]
    assert templates(mode_id(False)) == ["ModeButton"]


def test_bodies_keep_to_discords_text_limits() -> None:
    group = Group(ChatRef("dc", "1"))
    long_notice = Message(group, "word " * 1000, kind="notice")
    body = render(long_notice)
    assert sum(len(e.description or "") for e in body.embeds) <= 6000 and len(body.embeds) <= 10
    short = render(Message(group, "**bold** and _it_ and a\\*star", kind="notice"))
    assert short.content == "**bold** and *it* and a\\*star" and len(short.content) <= MAX_CONTENT
    table = render(Message(group, "Deal 1", key="table:x:0", kind="table"))
    assert table.embeds and table.content is None
    user = UserRef("dc", "5", "Ala")
    hand = render(
        Message(
            Private(user),
            "hand",
            buttons=((Button("Q♠", encode_payload("play", ("QS",), 3, TABLE)),),),
            kind="hand",
        )
    )
    assert [k.custom_id for r in hand.rows for k in r] == [f"t|p:QS:3:{TABLE}"]
    final = render(Message(group, "Score sheet", key="final:x", image=b"\x89PNG", kind="final"))
    assert (
        final.files == [("chart.png", b"\x89PNG")] and final.embeds[-1].image.url == "attachment://chart.png"
    )
    assert split_text("a\nb\nc", 3) == ["a\nb", "c"]
