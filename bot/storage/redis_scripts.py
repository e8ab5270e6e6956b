"""The Lua scripts of the Redis stores (`lua/*.lua`), each sent by its SHA1 (EVALSHA) and by its source
once the server has forgotten it. Public: the matchmaking stores run theirs through `RedisStore` too."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib import resources

__all__ = [
    "CHAT_UNLINK",
    "DEADLINE",
    "DELETE",
    "EXTEND",
    "HANDOVER",
    "HIT",
    "HOLD",
    "INDEX",
    "MOVE",
    "RATING",
    "SAVE",
    "SENDS",
    "SET_REF",
    "STATS",
    "TAKE",
    "Script",
]


@dataclass(frozen=True, slots=True)
class Script:
    """One Lua script: its name, source and SHA1."""

    name: str
    source: str
    sha: str

    @classmethod
    def named(cls, name: str, *, index: bool = False) -> Script:
        """The script `lua/<name>.lua`; with `index`, after the shared index functions (`lua/_index.lua`)."""
        lua = resources.files("bot.storage").joinpath("lua")
        source = lua.joinpath(f"{name}.lua").read_text("utf-8")
        if index:
            source = lua.joinpath("_index.lua").read_text("utf-8") + source
        return cls(name, source, hashlib.sha1(source.encode()).hexdigest())


SAVE = Script.named("save", index=True)
DELETE = Script.named("delete", index=True)
DEADLINE = Script.named("deadline", index=True)
INDEX = Script.named("index", index=True)
SENDS = Script.named("sends")
HOLD = Script.named("hold")
STATS = Script.named("stats")
SET_REF = Script.named("set_ref")
CHAT_UNLINK = Script.named("chat_unlink")
MOVE = Script.named("move", index=True)
EXTEND = Script.named("extend")
RATING = Script.named("rating")
HIT = Script.named("hit")
HANDOVER = Script.named("handover")
TAKE = Script.named("take")
