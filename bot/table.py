"""A table as stored: one JSON document per chat, written only by the service's compare-and-set.

A table goes lobby → game → finished. Seats are humans (platform user, display name, language) or
computer players (level); a human seat can be `away` (a computer plays for them until they come back)
after missed turns. The table keeps a copy of the chat's settings taken when it opened (the rules are
fixed when the game starts), the game itself (see `bot.snapshot`), the current turn's deadline and the
votes to kick a player.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ChatSettings", "GameDoc", "RematchDoc", "SeatDoc", "TableDoc", "TurnDoc", "UserPrefs"]

Status = Literal["lobby", "game", "finished"]


class ChatSettings(BaseModel):
    """What a chat chose (or the process defaults): used by every new table in the chat."""

    model_config = ConfigDict(extra="ignore")

    preset: str
    options: dict[str, Any] = Field(default_factory=dict)
    language: str
    turn_seconds: int
    ai_level: str
    autoplay: bool = False
    """A human's only legal card plays itself (`/set autoplay on`)."""


class UserPrefs(BaseModel):
    """A user's own choices (stored apart from tables, so that they outlive them)."""

    model_config = ConfigDict(extra="ignore")

    language: str | None = None
    name: str | None = None
    """The display name last seen (for the `top` list)."""


class SeatDoc(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: Literal["human", "ai"]
    name: str
    user: str | None = None
    """The user key (`platform:user_id`) of a human seat."""
    platform: str | None = None
    user_id: str | None = None
    lang: str | None = None
    level: str | None = None
    """Computer seats: the level that plays."""
    missed: int = 0
    """Turns in a row the computer had to play for this human."""
    away: bool = False
    """A computer plays for this human until they send `back`."""
    kicked: bool = False
    """The seat was handed to a computer for good (`kick`, `leave`)."""

    @property
    def human(self) -> bool:
        return self.kind == "human" and not self.kicked

    @property
    def present(self) -> bool:
        """A human who plays their own turns now."""
        return self.human and not self.away


class GameDoc(BaseModel):
    model_config = ConfigDict(extra="ignore")

    spec: dict[str, Any]
    """`bot.snapshot.GameSpec.to_json()`: rules, players, seed, first dealer."""
    actions: list[str] = Field(default_factory=list)
    """Every action of the game in order, in the compact form of `bot.snapshot`."""


class TurnDoc(BaseModel):
    """The running turn deadline (a human must act) or the lobby's idle deadline."""

    model_config = ConfigDict(extra="ignore")

    kind: Literal["turn", "lobby", "rematch"]
    token: str
    deadline: float
    warn_at: float | None = None
    seat: int = -1


class RematchDoc(BaseModel):
    """A finished public game's offer to play again with the same people (`bot.public.rematch`)."""

    model_config = ConfigDict(extra="ignore")

    deadline: float
    """Until when the people may agree (the game's end and `REMATCH_SECONDS`)."""
    accepted: list[str] = Field(default_factory=list)
    """User keys of those who agreed, in the order they did."""
    declined: list[str] = Field(default_factory=list)
    next: str | None = None
    """The new table's id, once it started."""
    closed: bool = False
    """Decided: the new game started, or nobody agreed in time."""


class TableDoc(BaseModel):
    model_config = ConfigDict(extra="ignore")

    format: int = 1
    id: str
    serial: str
    """Unique per table: a chat's next table reuses the id but never the serial."""
    platform: str
    chat_id: str
    title: str = ""
    """The chat's title as the platform last gave it: private messages name the game by it."""
    private: bool = False
    """The table lives in a user's private chat (a game against computers): its messages need no heading."""
    status: Status = "lobby"
    creator: str
    creator_name: str = ""
    opened: int = 1
    """The store version at which this table was opened: older buttons belong to an earlier table."""
    settings: ChatSettings
    seats: list[SeatDoc] = Field(default_factory=list)
    game: GameDoc | None = None
    turn: TurnDoc | None = None
    kick_votes: dict[str, list[str]] = Field(default_factory=dict)
    created: float
    updated: float
    table_at: float = 0.0
    """When the group's table message was last drawn (the compact policy draws a trick in progress only
    when that is `Settings.table_trick_seconds` ago)."""
    ended: str | None = None
    """Why a finished table finished: `won`, `ended`, `idle`, `abandoned`."""
    ended_by: str | None = None
    rematch: RematchDoc | None = None
    """A finished public game's offer to play again (none at a group's table: it has `again`)."""

    def seat_of(self, user_key: str) -> int | None:
        """The seat of a human (also an away one; not one handed to a computer for good)."""
        for i, seat in enumerate(self.seats):
            if seat.user == user_key and not seat.kicked:
                return i
        return None

    @property
    def human_keys(self) -> list[str]:
        return [s.user for s in self.seats if s.user is not None and not s.kicked]
