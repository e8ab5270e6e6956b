r"""The small text markup of outgoing messages, and its conversion for each front end.

The service writes every message in one markup so that it never knows a platform's format:

    **bold**      _italic_      `code`      \*  \_  \`  \\  (a backslash makes the next character literal)

Line breaks are plain newlines. Anything else is literal text. Text that comes from users (display
names, chat titles) goes through `escape` before it is put into markup. `parse` turns markup into styled
spans; `to_plain`, `to_html` (Telegram's HTML mode) and `to_discord` (Discord's markdown) render them.
Unclosed markers style the rest of the text (the service never writes them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Span", "escape", "parse", "span_html", "to_discord", "to_html", "to_plain"]

_SPECIAL = frozenset("\\*_`")


@dataclass(frozen=True, slots=True)
class Span:
    text: str
    bold: bool = False
    italic: bool = False
    code: bool = False


def escape(text: str) -> str:
    """Make user-provided text literal in markup."""
    if not any(ch in _SPECIAL for ch in text):
        return text
    return "".join("\\" + ch if ch in _SPECIAL else ch for ch in text)


def parse(markup: str) -> list[Span]:
    """Split markup into spans of uniform style (adjacent spans of the same style are merged)."""
    spans: list[Span] = []
    buf: list[str] = []
    bold = italic = code = False

    def flush() -> None:
        if buf:
            text = "".join(buf)
            buf.clear()
            if spans and (spans[-1].bold, spans[-1].italic, spans[-1].code) == (bold, italic, code):
                last = spans.pop()
                text = last.text + text
            spans.append(Span(text, bold, italic, code))

    i = 0
    n = len(markup)
    while i < n:
        ch = markup[i]
        if ch == "\\" and i + 1 < n:
            buf.append(markup[i + 1])
            i += 2
            continue
        if ch == "`":
            flush()
            code = not code
            i += 1
            continue
        if code:
            buf.append(ch)
            i += 1
            continue
        if ch == "*" and i + 1 < n and markup[i + 1] == "*":
            flush()
            bold = not bold
            i += 2
            continue
        if ch == "_":
            flush()
            italic = not italic
            i += 1
            continue
        buf.append(ch)
        i += 1
    flush()
    return spans


def to_plain(markup: str) -> str:
    """The text without any styling."""
    return "".join(span.text for span in parse(markup))


def _html_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def span_html(span: Span) -> str:
    """One span in Telegram HTML (`to_html`, and the Telegram adapter's spans)."""
    text = _html_escape(span.text)
    if span.code:
        text = f"<code>{text}</code>"
    if span.italic:
        text = f"<i>{text}</i>"
    if span.bold:
        text = f"<b>{text}</b>"
    return text


def to_html(markup: str) -> str:
    """Telegram HTML (`parse_mode=HTML`): <b>, <i>, <code>, with &, < and > escaped."""
    return "".join(span_html(span) for span in parse(markup))


_DISCORD_SPECIAL = frozenset("\\*_`~|>#-[]()")


_URL = re.compile(r"https?://[^\s<>]+")


def _discord_escape(text: str) -> str:
    """Discord's markers escaped, except in links: Discord links a URL before it reads escapes, so an
    escaped `_` or `-` would become a backslash in the link (a replay token then answers 401). A link goes
    out whole between `<` and `>`, which bounds it and leaves no room for markers inside."""
    out: list[str] = []
    start = 0
    for url in _URL.finditer(text):
        out.append(_discord_escape_plain(text[start : url.start()]))
        out.append(f"<{url.group()}>")
        start = url.end()
    out.append(_discord_escape_plain(text[start:]))
    return "".join(out)


def _discord_escape_plain(text: str) -> str:
    return "".join("\\" + ch if ch in _DISCORD_SPECIAL else ch for ch in text)


def to_discord(markup: str) -> str:
    """Discord markdown: **bold**, *italic*, `code`, with Discord's own markers escaped in the text."""
    out: list[str] = []
    for span in parse(markup):
        text = "`" + span.text.replace("`", "ˋ") + "`" if span.code else _discord_escape(span.text)
        if span.italic:
            text = f"*{text}*"
        if span.bold:
            text = f"**{text}**"
        out.append(text)
    return "".join(out)
