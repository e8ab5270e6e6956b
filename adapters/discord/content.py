"""Neutral messages as Discord message bodies: markup to Discord markdown, embeds, files, buttons.

Lobby, table, hand, results and score sheets are embeds (room for 4096 characters, and they stand out
in a busy channel); short answers are plain content. Buttons become `items.ThousandButton`s built from
`layout.pack`, so every custom id matches a dynamic item and keeps working after a restart.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

import discord

from bot.markup import to_discord
from bot.model import Message

from .layout import Key, pack, payload_id

__all__ = ["Body", "build_view", "render", "split_text"]

EMBED_KINDS: Final = frozenset(
    {"lobby", "table", "hand", "result", "final", "score", "rules", "settings", "stats", "top", "help"}
)
MAX_CONTENT: Final = 2000
MAX_DESCRIPTION: Final = 4096
MAX_EMBEDS_TOTAL: Final = 6000
CHART_NAME: Final = "chart.png"

_COLOURS: Final = {
    "lobby": 0x2E7D32,
    "table": 0x1565C0,
    "hand": 0x6A1B9A,
    "result": 0xEF6C00,
    "final": 0xC62828,
}


@dataclass(slots=True)
class Body:
    """Everything of one Discord message except where it goes."""

    content: str | None = None
    embeds: list[discord.Embed] = field(default_factory=list)
    files: list[tuple[str, bytes]] = field(default_factory=list)
    rows: list[list[Key]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """All visible text (content, embed descriptions, button labels), for logs and tests."""
        parts = [self.content or ""]
        parts += [e.description or "" for e in self.embeds]
        parts += [k.label for row in self.rows for k in row]
        return "\n".join(parts)

    def discord_files(self) -> list[discord.File]:
        return [discord.File(io.BytesIO(data), filename=name) for name, data in self.files]


def split_text(text: str, limit: int) -> list[str]:
    """Pieces of at most `limit` characters, cut at line ends where possible."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = text.rfind("\n", 0, limit + 1)
        if cut <= 0:
            cut = limit
        pieces.append(text[:cut])
        text = text[cut:].lstrip("\n")
    if text or not pieces:
        pieces.append(text)
    return pieces


def _embeds(text: str, colour: int | None) -> list[discord.Embed]:
    pieces = split_text(text, MAX_DESCRIPTION)
    out: list[discord.Embed] = []
    total = 0
    for piece in pieces[:10]:
        if total + len(piece) > MAX_EMBEDS_TOTAL:
            piece = piece[: max(0, MAX_EMBEDS_TOTAL - total - 1)] + "…"
        total += len(piece)
        out.append(discord.Embed(description=piece, colour=colour))
        if total >= MAX_EMBEDS_TOTAL:
            break
    return out


def render(
    message: Message,
    *,
    extra: Sequence[Key] = (),
    mention: str | None = None,
    in_place: bool = False,
) -> Body:
    """The Discord body of `message`; `extra` buttons go after the service's, `mention` before the text.

    `in_place`: shown in the group the message is about (an ephemeral reply in its channel), where the
    heading naming that group ("Game in ...") is left out; a DM keeps it."""
    text = to_discord(message.body if in_place else message.text)
    body = Body()
    rows = [[Key(b.label, payload_id(b.payload)) for b in row] for row in message.buttons]
    body.rows = pack(rows, extra)
    if message.kind in EMBED_KINDS or len(text) > MAX_CONTENT or message.image is not None:
        body.embeds = _embeds(text, _COLOURS.get(message.kind))
        if mention:
            body.content = mention
    else:
        content = f"{mention} {text}" if mention else text
        body.content = content if len(content) <= MAX_CONTENT else content[: MAX_CONTENT - 1] + "…"
    if message.image is not None:
        body.files.append((CHART_NAME, message.image))
        if body.embeds:
            body.embeds[-1].set_image(url=f"attachment://{CHART_NAME}")
    if message.document is not None:
        body.files.append(message.document)
    return body


def build_view(rows: Sequence[Sequence[Key]]) -> discord.ui.View | None:
    """A view of dynamic buttons (never stored per message by discord.py: all of it is dynamic)."""
    if not rows:
        return None
    from .items import button_for

    view = discord.ui.View(timeout=None)
    for r, row in enumerate(rows):
        for key in row:
            if key.url is not None:
                view.add_item(discord.ui.Button(label=key.label, url=key.url, row=r))
            else:
                view.add_item(button_for(key, row=r))
    return view
