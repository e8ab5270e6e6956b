"""Message entities as Telegram computes them: UTF-16 offsets, auto-detection and trimming.

Telegram measures offsets and lengths in UTF-16 code units, trims whitespace around a message and
marks commands, mentions, hashtags and links on its own; clients (PTB's CommandHandler included)
rely on those entities, so the fake has to produce them the same way.
"""

from __future__ import annotations

import re
from typing import Any

Entity = dict[str, Any]

# Entities inside which Telegram does not look for commands, mentions or links.
_OPAQUE = frozenset({"code", "pre", "text_link", "text_mention", "custom_emoji"})

_DETECTORS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("url", re.compile(r"(?<![\w/@#])https?://[^\s<>\"]+[^\s<>\".,;:!?)\]]")),
    ("bot_command", re.compile(r"(?<![\w/@#])/[A-Za-z0-9_]{1,64}(?:@[A-Za-z0-9_]{3,32})?(?![\w/])")),
    ("mention", re.compile(r"(?<![\w/@#])@[A-Za-z0-9_]{4,32}(?![\w@])")),
    ("hashtag", re.compile(r"(?<![\w/@#&])#\w*[^\W\d_]\w*")),
)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, the unit of Telegram's entity offsets and of its length limits."""
    return len(text.encode("utf-16-le")) // 2


def _overlaps(start: int, end: int, entities: list[Entity]) -> bool:
    return any(
        start < e["offset"] + e["length"] and e["offset"] < end for e in entities if e["type"] in _OPAQUE
    )


def detect_entities(text: str, existing: list[Entity] | None = None) -> list[Entity]:
    """Entities Telegram adds by itself; `existing` (formatting) is returned merged and sorted."""
    present = list(existing or [])
    found: list[Entity] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _DETECTORS:
        for match in pattern.finditer(text):
            start = utf16_len(text[: match.start()])
            end = start + utf16_len(match.group())
            if _overlaps(start, end, present) or any(s < end and start < e for s, e in taken):
                continue
            taken.append((start, end))
            found.append({"type": kind, "offset": start, "length": end - start})
    return sort_entities(present + found)


def sort_entities(entities: list[Entity]) -> list[Entity]:
    return sorted(entities, key=lambda e: (e["offset"], -e["length"]))


def strip_text(text: str, entities: list[Entity]) -> tuple[str, list[Entity]]:
    """Trim surrounding whitespace the way the server does, keeping entities on the same characters."""
    stripped = text.strip()
    if stripped == text:
        return text, entities
    shift = utf16_len(text[: len(text) - len(text.lstrip())])
    size = utf16_len(stripped)
    kept: list[Entity] = []
    for entity in entities:
        start = max(entity["offset"] - shift, 0)
        end = min(entity["offset"] + entity["length"] - shift, size)
        if end > start:
            kept.append({**entity, "offset": start, "length": end - start})
    return stripped, kept


def command_of(text: str) -> tuple[str, str | None] | None:
    """The leading `/command[@bot]` of a text as (command, addressee), or None."""
    match = re.match(r"/([A-Za-z0-9_]{1,64})(?:@([A-Za-z0-9_]{3,32}))?(?![\w/])", text)
    if match is None:
        return None
    return match.group(1), match.group(2)
