"""The chat's message references in the store: which Telegram message stands behind each key, what it shows
and of which table version, so that whichever process handles the next update edits what another sent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["PILE_SUFFIX", "Ref", "chat_scope", "decode_pile", "encode_pile"]

PILE_SUFFIX: Final = "~old"
"""Reference name (after the key) of the replaced messages of a series still on screen."""


def chat_scope(chat_id: int | str) -> str:
    """The store scope of a chat's message references (`tg:<chat id>`, the chat's table id too)."""
    return f"tg:{chat_id}"


@dataclass(frozen=True, slots=True)
class Ref:
    """The message behind a key: its id, what it is, what it shows, when it was written, and the version of
    the table it shows.

    Stored as `message_id:kind:fingerprint:written[/version]`. References written before versions existed
    (no `/version`) still read, with no version; and a process of that time reads a new one as well (its
    `written` does not parse, which only makes the reference look old)."""

    message_id: int
    kind: str
    fingerprint: str
    written: float = 0.0
    version: int | None = None

    def encode(self) -> str:
        tail = "" if self.version is None else f"/{self.version}"
        return f"{self.message_id}:{self.kind}:{self.fingerprint}:{self.written:.0f}{tail}"

    @classmethod
    def decode(cls, value: str | None) -> Ref | None:
        if not value:
            return None
        parts = value.split(":")
        if len(parts) != 4 or not parts[0].isdigit():
            return None
        written_text, _, version_text = parts[3].partition("/")
        try:
            written = float(written_text)
        except ValueError:
            written = 0.0
        version = int(version_text) if version_text.isdigit() else None
        return cls(int(parts[0]), parts[1], parts[2], written, version)

    def older_than(self, version: int | None) -> bool:
        """Whether this reference shows an older table than `version` (unknown versions are not older)."""
        return self.version is not None and version is not None and self.version < version


def decode_pile(value: str | None) -> tuple[str | None, list[int]]:
    """`series|id,id,...`: the series of the key's current message and the replaced ones still shown."""
    if not value:
        return None, []
    series, _, ids = value.rpartition("|")
    return series or None, [int(i) for i in ids.split(",") if i.isdigit()]


def encode_pile(series: str, ids: list[int]) -> str:
    return f"{series}|{','.join(map(str, ids))}"
