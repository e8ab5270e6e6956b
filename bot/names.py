"""People's names and chat titles as the bot stores and shows them: visible, one line, bounded.

Names come from the platforms as their users typed them, and the bot puts them in everyone's table
line. An invisible direction control (U+202E RIGHT-TO-LEFT OVERRIDE, U+2066..2069 isolates) would
reverse or reorder the rest of that line for every reader; zero-width and other format characters
(Unicode category Cf) make names that look alike or look empty; newlines and tabs break the layout; a
name of a thousand characters or of one letter with a thousand combining marks crowds out the table.
`UserRef` and `ChatRef` (bot.model) clean what they are given, so every adapter gets this and nothing
unclean reaches a table document, the statistics or a message.

Decisions:
- every Cf character is removed, except a zero-width joiner between two pictographs (the joiner of
  emoji sequences such as a family or a rainbow flag) and the tag characters of a subdivision flag
  (England, Scotland, Wales) right after U+1F3F4; line and paragraph separators, control characters and
  the blank "filler" letters used for invisible names become spaces; runs of spaces become one; lone
  surrogates (which cannot even be encoded) are dropped;
- at most 32 visible characters for a name and 64 for a title, counted in grapheme clusters (a letter
  with its accents, an emoji with its modifiers and joined parts), so a cut never splits an emoji or
  strips an accent; a longer text keeps its first 31 (63) clusters and ends with "…";
- at most 4 combining marks on one character and 16 code points in one cluster (the longest emoji
  sequences have 10), so a cluster cannot be a wall of marks;
- NFC normalisation first, so the same name typed two ways is stored one way;
- a name that is empty after cleaning becomes the user's platform id (never secret), a title stays empty.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["NAME_MAX", "TITLE_MAX", "clean_name", "clean_title", "clusters"]

NAME_MAX: Final = 32
"""Grapheme clusters kept of a person's name."""
TITLE_MAX: Final = 64
"""Grapheme clusters kept of a chat's title."""
ELLIPSIS: Final = "…"
MAX_MARKS: Final = 4
"""Combining marks kept on one base character."""
MAX_CLUSTER: Final = 16
"""Code points kept in one grapheme cluster."""

_ZWJ: Final = "\u200d"
_BLACK_FLAG: Final = "\U0001f3f4"
_BLANK_LETTERS: Final = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Hangul fillers and the blank braille pattern: letters that show nothing, used for invisible names."""
_PICTOGRAPHS: Final = (
    (0x00A9, 0x00A9),
    (0x00AE, 0x00AE),
    (0x203C, 0x203C),
    (0x2049, 0x2049),
    (0x2122, 0x2122),
    (0x2139, 0x2139),
    (0x2194, 0x21FF),
    (0x2300, 0x23FF),
    (0x24C2, 0x24C2),
    (0x25A0, 0x25FF),
    (0x2600, 0x27BF),
    (0x2900, 0x297F),
    (0x2B00, 0x2BFF),
    (0x3030, 0x3030),
    (0x303D, 0x303D),
    (0x3297, 0x3299),
    (0x1F000, 0x1FAFF),
)
"""Roughly Unicode's Extended_Pictographic: where emoji and the symbols joined into emoji live."""


def _pictograph(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _PICTOGRAPHS)


def _extends(ch: str) -> bool:
    """Belongs to the cluster before it: combining marks, variation selectors, skin tones, tags."""
    code = ord(ch)
    return (
        unicodedata.category(ch) in ("Mn", "Me", "Mc")
        or 0xFE00 <= code <= 0xFE0F
        or 0xE0100 <= code <= 0xE01EF
        or 0x1F3FB <= code <= 0x1F3FF
        or 0xE0020 <= code <= 0xE007F
    )


def _regional(ch: str) -> bool:
    return 0x1F1E6 <= ord(ch) <= 0x1F1FF


def _visible(text: str) -> str:
    """Format characters out (but emoji joiners and flag tags), blanks in, spaces collapsed."""
    out: list[str] = []
    for i, ch in enumerate(text):
        category = unicodedata.category(ch)
        if category == "Cf":
            code = ord(ch)
            if ch == _ZWJ:
                if _base_pictograph(out) and i + 1 < len(text) and _pictograph(text[i + 1]):
                    out.append(ch)
                continue
            if 0xE0020 <= code <= 0xE007F and _in_flag(out):
                out.append(ch)
            continue
        if category == "Cs":
            continue
        if category in ("Cc", "Zl", "Zp", "Zs") or ch in _BLANK_LETTERS:
            if out and out[-1] != " ":
                out.append(" ")
            continue
        out.append(ch)
    return "".join(out).strip(" ")


def _base_pictograph(out: list[str]) -> bool:
    """The last non-extending character written is a pictograph (an emoji with a skin tone, say)."""
    for ch in reversed(out):
        if not _extends(ch):
            return _pictograph(ch)
    return False


def _in_flag(out: list[str]) -> bool:
    """A tag character continues a subdivision flag: black flag, then tags only."""
    for ch in reversed(out):
        if 0xE0020 <= ord(ch) <= 0xE007F:
            continue
        return ch == _BLACK_FLAG
    return False


def clusters(text: str) -> list[str]:
    """Grapheme clusters, near enough for names: a base with what extends it, emoji joined by ZWJ, and
    regional indicators in pairs (a country flag)."""
    out: list[str] = []
    i = 0
    while i < len(text):
        start = i
        i += 1
        if _regional(text[start]) and i < len(text) and _regional(text[i]):
            i += 1
        while i < len(text):
            ch = text[i]
            if _extends(ch):
                i += 1
            elif ch == _ZWJ and i + 1 < len(text):
                i += 2
            else:
                break
        out.append(_bounded(text[start:i]))
    return out


def _bounded(cluster: str) -> str:
    """At most `MAX_MARKS` combining marks and `MAX_CLUSTER` code points (whole emoji parts kept)."""
    kept: list[str] = []
    marks = 0
    for ch in cluster:
        if unicodedata.category(ch) in ("Mn", "Me", "Mc"):
            marks += 1
            if marks > MAX_MARKS:
                continue
        kept.append(ch)
    if len(kept) > MAX_CLUSTER:
        kept = kept[:MAX_CLUSTER]
        while kept and kept[-1] == _ZWJ:
            kept.pop()
    return "".join(kept)


def _clean(text: str, limit: int) -> str:
    simple = text.isascii() and text.isprintable() and len(text) <= limit
    if simple and text == text.strip() and "  " not in text:
        return text  # the common case, unchanged and cheap
    parts = clusters(_visible(unicodedata.normalize("NFC", text)))
    if len(parts) > limit:
        parts = [*parts[: limit - 1], ELLIPSIS]
        while len(parts) > 1 and parts[-2] == " ":
            del parts[-2]
    return "".join(parts)


def clean_name(name: str, fallback: str = "") -> str:
    """The name to store and show: visible characters only, one line, at most `NAME_MAX` clusters;
    `fallback` (the user id) when nothing visible is left."""
    return _clean(name, NAME_MAX) or _clean(fallback, NAME_MAX)


def clean_title(title: str) -> str:
    """The chat title to store and show, like a name but up to `TITLE_MAX` clusters (may be empty)."""
    return _clean(title, TITLE_MAX)
