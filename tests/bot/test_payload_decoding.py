"""Button payloads come back from people's clients, and a modified client sends anything: decoding one
either reads a payload this service could have written or raises `PayloadError`, never another exception
(superscript digits pass `str.isdigit` and then fail `int`; other scripts' digits pass `\\d` and `int`;
`$` lets a trailing newline through). A refused press is answered with a clear translated message,
changes nothing and is logged. Typed numbers get the same strictness where they reach `int`."""

from __future__ import annotations

import logging

import pytest
from botkit import Harness, errors, make_user
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.commands import (
    INVALID_BUTTON,
    MAX_PAYLOAD_BYTES,
    Payload,
    PayloadError,
    encode_payload,
    from_payload,
    read_payload,
)
from bot.i18n import translator
from bot.model import ChatRef, UserRef
from bot.render import ERRORS

CHAT = ChatRef("t", "-100", "Group")
USER = UserRef("t", "7", "Ala")
VALID = "pk3x:QS:42:tg:-100123"

# Characters a modified client can put in callback data that a careless check lets through: digits of
# other scripts and superscripts (`isdigit()` is true for all of them), full-width ASCII, combining and
# invisible marks, direction overrides, lone surrogates, controls, and the payload's own separators.
ODD = (
    "²³¹⁰⁹₂①"  # superscripts, subscripts, circled: isdigit() but not int()
    "٠١٢٤٩۴߁०५๓১"  # Arabic-Indic, Extended Arabic-Indic, NKo, Devanagari, Thai, Bengali: \d and int()
    "０９ＡＱｓ："  # full-width
    "\u0301\u200b\u200d\u2066\u202e\ufeff"  # combining acute, zero widths, isolate, RTL override, BOM
    "\ud800\udfff"  # lone surrogates (JSON's \\ud800 decodes to one)
    "\x00\n\r\t \x7f"
    ":.-_!+=@[]{}\"'\\"
    "QSJKAHDC9tgp0123456789"
    "🂡♠ß"
)
odd_text = st.text(alphabet=st.sampled_from(ODD), max_size=80)


digit_like = st.text(alphabet=st.sampled_from("0123456789²³¹⁰₂٤٢۴०４\n"), min_size=1, max_size=14)


def _spliced(valid: str) -> st.SearchStrategy[str]:
    """A valid payload with one of its four fields changed: odd characters put in (or in place of some of
    its characters), or the field replaced by digit-like text (each one is read by a different check)."""
    fields = valid.split(":", 3)

    @st.composite
    def build(draw: st.DrawFn) -> str:
        i = draw(st.integers(0, len(fields) - 1))
        field = fields[i]
        if draw(st.booleans()):
            at = draw(st.integers(0, len(field)))
            new = field[:at] + draw(odd_text) + field[at + draw(st.integers(0, 2)) :]
        else:
            new = draw(digit_like)
        return ":".join([*fields[:i], new, *fields[i + 1 :]])

    return build()


nested = st.builds(
    lambda opener, n, tail: opener * n + tail,
    st.sampled_from(["[", "{", ":", ".", "p:", "p:Q.", "\\", "²"]),
    st.integers(1, 3000),
    odd_text,
)
payloads = st.one_of(
    odd_text,
    _spliced(VALID),
    _spliced("Ta1z::7:t:-100"),
    _spliced("p:QS:42:tg:-100123"),
    nested,
    st.text(max_size=200),
)


def _strictly_ascii(p: Payload) -> bool:
    fields = (p.name, *p.args, p.table_id, p.tag or "")
    return all(f.isascii() and f.isprintable() and "\n" not in f for f in fields)


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(payloads)
def test_decoding_any_payload_reads_one_of_ours_or_raises_the_payload_error(payload: str) -> None:
    try:
        read = read_payload(payload)
    except PayloadError:
        command = from_payload(payload, CHAT, USER)
        assert command.name == INVALID_BUTTON and command.args == () and command.table_id is None
        return
    # What reads is what this module writes: ASCII fields that encode into a payload reading the same.
    assert _strictly_ascii(read), read
    again = encode_payload(read.name, read.args, read.version, read.table_id, read.tag)
    assert read_payload(again) == read
    command = from_payload(payload, CHAT, USER)
    assert (command.name, command.args, command.version, command.table_id) == (
        read.name,
        read.args,
        read.version,
        read.table_id,
    )


@pytest.mark.parametrize(
    "payload",
    [
        "pk3x:QS:4²:tg:-100123",  # a superscript version: isdigit() and not int()
        "pk3x:QS:²:tg:-100123",
        "pk3x:QS:٤٢:tg:-100123",  # Arabic-Indic digits: int() reads 42
        "pk3x:QS:４２:tg:-100123",  # full-width
        "pk3x:QS:42\n:tg:-100123",
        "pk3x:QS:42:tg:-100123\n",  # `$` matched before a trailing newline
        "pk3x:QS\n:42:tg:-100123",
        "pk3x:Q\u0301S:42:tg:-100123",
        "pk3x:QS:42:tg:-١٠٠١٢٣",
        "p²3x:QS:42:tg:-100123",
        "pk3x:QS:42:tg:-100123\ud800",
        "pk3x:QS:0042424242424242:tg:-100123",  # more than 12 digits
        "[" * 1500,
    ],
)
def test_odd_digits_and_trailing_newlines_are_refused(payload: str) -> None:
    with pytest.raises(PayloadError):
        read_payload(payload)
    assert from_payload(payload, CHAT, USER).name == INVALID_BUTTON


def test_a_payload_of_ours_still_reads() -> None:
    assert read_payload(VALID) == Payload("play", ("QS",), 42, "tg:-100123", "k3x")
    assert read_payload("p:QS:42:tg:-100123").tag is None  # before tags
    assert len(VALID.encode()) <= MAX_PAYLOAD_BYTES


async def test_a_press_with_superscript_digits_is_refused_clearly_changes_nothing_and_is_logged(
    harness: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    h = harness
    ala, bartek = make_user(0, "pl"), make_user(1, "uk")
    await h.open_table([ala, bartek], computers=1)
    version, doc = await h.doc()
    state = await h.state()
    owner, button = next(
        (user, b.payload)
        for user in (ala, bartek)
        if user.key in h.hands
        for row in h.hands[user.key].buttons
        for b in row
        if read_payload(b.payload).name in ("bid", "pass")
    )
    assert read_payload(button).version == version
    head, args, _, table = button.split(":", 3)
    events = await h.events()
    for forged in (f"{head}:{args}:{version}²:{table}", f"{head}:{args}:{'²' * 3}:{table}"):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="thousand.commands"):
            out = await h.press(owner, forged)
        assert [m.kind for m in out] == ["error"]
        assert translator(owner.language or "en")._(ERRORS["invalid_button"]) in out[0].text
        assert out[0].language == owner.language
        assert [r for r in caplog.records if r.name == "thousand.commands" and "refused" in r.getMessage()]
        again_version, again = await h.doc()
        assert again_version == version and again == doc
        assert await h.events() == events
        assert (await h.state()).to_act == state.to_act
    # The press that was meant still plays (nothing broke on the way).
    assert not errors(await h.press(owner, button))
    assert (await h.doc())[0] > version


async def test_a_typed_list_of_superscript_digits_is_a_bad_value_not_a_failure(harness: Harness) -> None:
    """`/set player_counts ³` reached `int('³')`: the player got "Something went wrong"."""
    admin = make_user(0, admin=True)
    for line in ("/set player_counts ³", "/set player_counts 2 ²", "/set player_counts ٣"):
        out = await harness.text(admin, line)
        assert [m.kind for m in errors(out)] == ["error"], line
        assert translator("en")._(ERRORS["bad_value"]) in out[0].text, line
    out = await harness.text(admin, "/set player_counts 2 3")
    assert not errors(out)
