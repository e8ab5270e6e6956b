"""A neutral `Message` as Telegram content: HTML text, an inline keyboard, a photo or a document.

The service writes the small markup of `bot.markup`; Telegram gets `parse_mode=HTML`. Telegram counts
text length in UTF-16 code units after entity parsing (4096 for a message, 1024 for a caption), so the
limits are checked on the plain text. A long message with no key is split at line ends into several; a
keyed message (one that is edited in place) is cut short instead, because only one message can carry its
key. A caption that does not fit is sent as its own text message before the media.

`fingerprint` identifies what the user would see, so an edit that would change nothing is not sent.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from bot.markup import Span, parse, span_html
from bot.model import Button, Message

__all__ = [
    "MAX_CAPTION",
    "MAX_TEXT",
    "Content",
    "html_of",
    "keyboard",
    "render",
    "utf16_len",
]

MAX_TEXT: Final = 4096
MAX_CAPTION: Final = 1024
_ELLIPSIS: Final = "…"

Kind = Literal["text", "photo", "document"]


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def html_of(spans: Sequence[Span]) -> str:
    return "".join(span_html(s) for s in spans)


def _pieces(spans: Sequence[Span]) -> list[Span]:
    """Spans cut after every newline, so chunks can end at line ends."""
    out: list[Span] = []
    for span in spans:
        lines = span.text.split("\n")
        for i, line in enumerate(lines):
            text = line + ("\n" if i < len(lines) - 1 else "")
            if text:
                out.append(Span(text, span.bold, span.italic, span.code))
    return out


def _cut(span: Span, limit: int) -> tuple[Span, Span]:
    """The first `limit` UTF-16 units of a span and the rest (never splitting a surrogate pair)."""
    used = 0
    for i, ch in enumerate(span.text):
        used += utf16_len(ch)
        if used > limit:
            return (
                Span(span.text[:i], span.bold, span.italic, span.code),
                Span(span.text[i:], span.bold, span.italic, span.code),
            )
    return span, Span("", span.bold, span.italic, span.code)


def _chunks(spans: Sequence[Span], limit: int) -> list[list[Span]]:
    """Groups of spans of at most `limit` plain UTF-16 units each, broken at line ends where possible."""
    chunks: list[list[Span]] = [[]]
    size = 0
    for piece in _pieces(spans):
        while piece.text:
            length = utf16_len(piece.text)
            if size + length <= limit:
                chunks[-1].append(piece)
                size += length
                break
            if size > 0:
                chunks.append([])
                size = 0
                continue
            head, piece = _cut(piece, limit)
            chunks[-1].append(head)
            chunks.append([])
    return [_trim(c) for c in chunks if any(s.text.strip() for s in c)]


def _trim(chunk: list[Span]) -> list[Span]:
    """Without the trailing newline (Telegram strips it anyway, so the fingerprint would differ)."""
    if chunk and chunk[-1].text.endswith("\n"):
        last = chunk[-1]
        chunk = [*chunk[:-1], Span(last.text.rstrip("\n"), last.bold, last.italic, last.code)]
    return chunk


def _shorten(spans: Sequence[Span], limit: int) -> list[Span]:
    """The spans cut to `limit` plain units, with an ellipsis when anything was cut."""
    total = sum(utf16_len(s.text) for s in spans)
    if total <= limit:
        return list(spans)
    out: list[Span] = []
    room = limit - 1
    for span in spans:
        if room <= 0:
            break
        head, _ = _cut(span, room)
        out.append(head)
        room -= utf16_len(head.text)
    out.append(Span(_ELLIPSIS))
    return out


def keyboard(
    rows: Sequence[Sequence[Button]], extra: Sequence[Sequence[InlineKeyboardButton]] = ()
) -> InlineKeyboardMarkup | None:
    """The inline keyboard of a message's buttons (payloads are at most 64 bytes by construction), and
    the adapter's own `extra` rows below them (the web table's Open table button)."""
    if not rows and not extra:
        return None
    buttons = [[InlineKeyboardButton(b.label, callback_data=b.payload) for b in row] for row in rows if row]
    return InlineKeyboardMarkup([*buttons, *(list(row) for row in extra if row)])


@dataclass(frozen=True, slots=True)
class Content:
    """What one keyed or unkeyed message becomes on Telegram.

    `lead`: text messages sent before the main one (the overflow of a long unkeyed text, or a caption
    too long for its media). `text` is the main message's HTML (its caption for media).
    """

    kind: Kind
    text: str
    markup: InlineKeyboardMarkup | None
    lead: tuple[str, ...] = ()
    image: bytes | None = None
    document: tuple[str, bytes] | None = None
    fingerprint: str = ""

    @property
    def editable_as_text(self) -> bool:
        return self.kind == "text"


def _fingerprint(kind: str, text: str, buttons: Sequence[Sequence[Button]], media: bytes | None) -> str:
    h = hashlib.blake2b(digest_size=8)
    h.update(kind.encode())
    h.update(b"\0")
    h.update(text.encode())
    for row in buttons:
        h.update(b"\1")
        for b in row:
            h.update(b.label.encode() + b"\2" + b.payload.encode() + b"\3")
    if media is not None:
        h.update(b"\4" + hashlib.blake2b(media, digest_size=8).digest())
    return h.hexdigest()


def render(message: Message, extra: Sequence[Sequence[InlineKeyboardButton]] = ()) -> Content:
    """The Telegram form of one message (`extra`: button rows the adapter adds below the message's)."""
    spans = parse(message.text)
    markup = keyboard(message.buttons, extra)
    keyed = message.key is not None
    if message.image is not None or message.document is not None:
        kind: Kind = "photo" if message.image is not None else "document"
        plain = sum(utf16_len(s.text) for s in spans)
        lead: tuple[str, ...] = ()
        if plain <= MAX_CAPTION:
            caption = html_of(spans)
        else:
            caption, lead = "", tuple(html_of(c) for c in _chunks(spans, MAX_TEXT))
        media = message.image if message.image is not None else (message.document or ("", b""))[1]
        return Content(
            kind,
            caption,
            markup,
            lead,
            message.image,
            message.document,
            _fingerprint(kind, message.text, message.buttons, media),
        )
    if keyed:
        text = html_of(_trim(_shorten(_pieces(spans), MAX_TEXT)))
        lead_texts: tuple[str, ...] = ()
    else:
        chunks = _chunks(spans, MAX_TEXT) or [[Span("…")]]
        text = html_of(chunks[-1])
        lead_texts = tuple(html_of(c) for c in chunks[:-1])
    return Content(
        "text",
        text,
        markup,
        lead_texts,
        fingerprint=_fingerprint("text", message.text, message.buttons, None),
    )
