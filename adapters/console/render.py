"""Neutral messages as rich text: the markup's styles, red hearts and diamonds, numbered buttons."""

from __future__ import annotations

from rich.console import Group as RichGroup
from rich.console import RenderableType
from rich.panel import Panel
from rich.text import Text

from bot.markup import parse
from bot.model import Button, Message

__all__ = ["message_renderable", "to_text"]

_STYLES = {"table": "green", "hand": "cyan", "result": "yellow", "final": "magenta", "lobby": "blue"}


def to_text(markup: str) -> Text:
    text = Text()
    for span in parse(markup):
        style = " ".join(
            s for s, on in (("bold", span.bold), ("italic", span.italic), ("cyan", span.code)) if on
        )
        text.append(span.text, style=style or None)
    text.highlight_regex(r"\S{1,2}[♥♦]", "bold red")
    text.highlight_regex(r"\S{1,2}[♣♠]", "bold")
    return text


def buttons_text(rows: tuple[tuple[Button, ...], ...]) -> Text:
    text = Text()
    n = 0
    for row in rows:
        for button in row:
            n += 1
            text.append(f"[{n}] ", style="dim")
            text.append_text(
                to_text(button.label.replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_"))
            )
            text.append("  ")
        text.append("\n")
    text.rstrip()
    return text


def message_renderable(message: Message, *, title: str | None = None) -> RenderableType:
    body: list[RenderableType] = [to_text(message.text)]
    if message.buttons and message.kind == "hand":
        # Only the hand's buttons are chosen by number; the table's and the lobby's are for chats.
        body.append(buttons_text(message.buttons))
    if message.kind == "error":
        return Text("✗ ", style="bold red") + to_text(message.text)
    if message.kind in ("notice", "warning", "info", "export", "settings"):
        return RichGroup(*body)
    return Panel(RichGroup(*body), title=title, border_style=_STYLES.get(message.kind, "white"), expand=False)
