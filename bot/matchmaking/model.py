"""What the matchmaker talks about: players, their options, queue entries, matches and the rules of
matching (how wide the rating window is after a wait, how long a leaver waits).

Pure and synchronous, shared by the memory and Redis queues so both decide the same way: the Redis
scripts implement exactly `window`, `eligible_after` and the pool names defined here (the contract test
runs one set of expectations against both).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Final, Literal, TypeAlias

from core.rules import PRESETS

if TYPE_CHECKING:
    from bot.settings import Settings

__all__ = [
    "ANY_PRESET",
    "PACES",
    "CancelOutcome",
    "CancelResult",
    "Entry",
    "JoinOutcome",
    "JoinResult",
    "Match",
    "MatchConfig",
    "Options",
    "Pace",
    "Player",
    "QueueStatus",
    "Ratings",
    "all_pools",
    "pool_ratings",
    "pools_for",
]

ANY_PRESET: Final = "any"
Pace = Literal["fast", "normal", "slow"]
PACES: Final[tuple[str, ...]] = ("fast", "normal", "slow")
PLATFORMS: Final[tuple[str, ...]] = ("tg", "dc", "web", "console")


@dataclass(frozen=True, slots=True)
class Player:
    """A person in the queue. `platform` is where they play ("tg", "dc", "web"); `user_id` is that
    platform's id, never shown to the others; only `name` (the display name) is."""

    platform: str
    user_id: str
    name: str
    language: str = "en"

    @property
    def key(self) -> str:
        """`platform:user_id`: the player's identity in the queue, the block lists and the ladder."""
        return f"{self.platform}:{self.user_id}"

    def __post_init__(self) -> None:
        if self.platform not in PLATFORMS:
            raise ValueError(f"unknown platform {self.platform!r}")
        if not self.user_id or any(c in self.user_id for c in ":{} ,"):
            raise ValueError("a user id must be non-empty and hold no ':', braces, spaces or commas")


@dataclass(frozen=True, slots=True)
class Options:
    """What the player asked for. `preset` may be `ANY_PRESET`; `players` is checked against the
    preset(s); `pace` picks the turn timer of the table to be built."""

    preset: str = ANY_PRESET
    players: int = 3
    pace: str = "normal"

    def __post_init__(self) -> None:
        if self.preset != ANY_PRESET and self.preset not in PRESETS:
            raise ValueError(f"unknown preset {self.preset!r}")
        if self.pace not in PACES:
            raise ValueError(f"unknown pace {self.pace!r}")
        if not pools_for(self):
            raise ValueError(f"no preset allows {self.players} players here")


def pools_for(options: Options) -> tuple[str, ...]:
    """The pools a player with these options waits in: `preset:players:pace`, one per preset allowing
    the number of players (so "any" waits in every preset's pool and is matched by the first that fills),
    in the order of `core.rules.PRESETS` (Polish first: a take-with-computers game of "any" is Polish).
    """
    presets = list(PRESETS) if options.preset == ANY_PRESET else [options.preset]
    return tuple(
        f"{name}:{options.players}:{options.pace}"
        for name in presets
        if options.players in PRESETS[name].player_counts
    )


Ratings: TypeAlias = float | Mapping[str, float]
"""A player's rating: one number, or one per preset (the ladder is per preset; "any" needs each)."""


def pool_ratings(rating: Ratings, options: Options) -> dict[str, float]:
    """The rating the player is matched with in each of their pools (a mapping must name every preset
    the options allow)."""
    out = {}
    for pool in pools_for(options):
        if isinstance(rating, Mapping):
            if pool_preset(pool) not in rating:
                raise ValueError(f"no rating given for preset {pool_preset(pool)!r}")
            out[pool] = float(rating[pool_preset(pool)])
        else:
            out[pool] = float(rating)
    return out


def all_pools() -> tuple[str, ...]:
    """Every pool there can be (preset × allowed players × pace), in the order the matcher scans them:
    presets as `core.rules.PRESETS` lists them, so an "any" player fitting two is seated Polish first."""
    return tuple(
        f"{name}:{players}:{pace}"
        for name in PRESETS
        for players in PRESETS[name].player_counts
        for pace in PACES
    )


def pool_size(pool: str) -> int:
    """Seats of a pool's table (the middle part of its name)."""
    return int(pool.split(":")[1])


def pool_preset(pool: str) -> str:
    return pool.split(":")[0]


@dataclass(frozen=True, slots=True)
class MatchConfig:
    """Tunables of matching (defaults chosen for a 1500±350 Glicko-2 ladder and a few hundred waiting).

    - `spread_base` + `spread_per_second` * wait, capped at `spread_max`: the rating window around the
      longest-waiting player of a pool; two minutes of waiting open it to the cap.
    - `entry_seconds`: an entry not renewed for this long expires (the player closed the chat).
    - `page_entry_seconds`: the same for a web page's player (platform `web`): the page renews its entry
      every 2 s while open and says when it closes, so without that its entry goes soon (issue 25: a
      closed tab stayed queued 120 s, and the next visitor read "Waiting for this game: 2").
    - `computers_after`: after this wait the player may start at once with computers in empty seats.
    - Leavers: `leave_free` leaves (within `leave_memory_seconds`) cost nothing, each further leave
      makes the player eligible `leave_penalty_seconds` later, capped at `leave_penalty_max`.
    - `scan_anchors` / `scan_candidates`: how much one match call examines, so a script stays short.
    - `build_grace_seconds`: a match not confirmed `built` this long after forming is handed to any
      process asking for `unbuilt` matches (its forming process may have died), then again each grace.
    """

    spread_base: float = 100.0
    spread_per_second: float = 5.0
    spread_max: float = 700.0
    entry_seconds: float = 120.0
    page_entry_seconds: float = 20.0
    computers_after: float = 60.0
    leave_free: int = 1
    leave_penalty_seconds: float = 30.0
    leave_penalty_max: float = 600.0
    leave_memory_seconds: float = 7 * 24 * 3600.0
    seat_seconds: float = 6 * 3600.0
    block_seconds: float = 365 * 24 * 3600.0
    heartbeat_seconds: float = 30.0
    match_record_seconds: float = 3600.0
    build_grace_seconds: float = 30.0
    scan_anchors: int = 64
    scan_candidates: int = 64

    def lifetime(self, player_key: str) -> float:
        """How long the entry of `player_key` (`platform:user_id`) lives without a renewal."""
        if player_key.startswith("web:"):
            return min(self.page_entry_seconds, self.entry_seconds)
        return self.entry_seconds

    @classmethod
    def from_settings(cls, settings: Settings) -> MatchConfig:
        """The deployment's tunables (`PUBLIC_*` settings); the rest keep their defaults."""
        return cls(
            computers_after=settings.public_computers_after,
            entry_seconds=settings.public_entry_seconds,
            spread_max=settings.public_spread_max,
        )

    def window(self, waited: float) -> float:
        """Allowed rating distance from the anchor after `waited` seconds."""
        return min(self.spread_max, self.spread_base + self.spread_per_second * max(0.0, waited))

    def penalty(self, leaves: int) -> float:
        """Seconds a player with `leaves` recent leaves waits before being eligible."""
        extra = max(0, leaves - self.leave_free)
        return min(self.leave_penalty_max, extra * self.leave_penalty_seconds)


class JoinOutcome(Enum):
    QUEUED = "queued"
    ALREADY_QUEUED = "already_queued"
    SEATED = "seated"  # already at a public table


@dataclass(frozen=True, slots=True)
class JoinResult:
    outcome: JoinOutcome
    eligible_at: float = 0.0
    """When the player can first be matched (later than joining for a frequent leaver)."""
    table_id: str | None = None
    """For SEATED: the public table the player already sits at."""


class CancelOutcome(Enum):
    CANCELLED = "cancelled"
    MATCHED = "matched"  # a match was formed first: the player is seated, the answer says where
    NOT_QUEUED = "not_queued"


@dataclass(frozen=True, slots=True)
class CancelResult:
    outcome: CancelOutcome
    match_id: str | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """One waiting (or just matched) player as the queue keeps them. In a `Match`, `rating` is the
    player's rating in the match's pool (preset); `ratings` holds the one of each pool while waiting."""

    player: Player
    rating: float
    options: Options
    joined: float
    expires: float
    eligible_at: float
    ratings: tuple[tuple[str, float], ...] = ()

    def rating_in(self, pool: str) -> float:
        return dict(self.ratings).get(pool, self.rating)

    def encode(self) -> str:
        return json.dumps(
            {
                "p": [self.player.platform, self.player.user_id, self.player.name, self.player.language],
                "o": [self.options.preset, self.options.players, self.options.pace],
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @staticmethod
    def decode_parts(raw: str) -> tuple[Player, Options]:
        data = json.loads(raw)
        platform, user_id, name, language = data["p"]
        preset, players, pace = data["o"]
        return Player(platform, user_id, name, language), Options(preset, int(players), pace)


@dataclass(frozen=True, slots=True)
class QueueStatus:
    """What `/play` shows while waiting: `waiting` players in the player's pools (the largest pool),
    how long this player has waited, whether computers may be offered; or the match formed."""

    queued: bool
    waited: float = 0.0
    waiting: int = 0
    computers_offered: bool = False
    match_id: str | None = None
    eligible_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Match:
    """A table to build. `players` in seat order; `computers` empty seats to fill with computers (a
    take-with-computers match has players=1). `pool` names preset, seats and pace."""

    match_id: str
    pool: str
    players: tuple[Entry, ...]
    computers: int
    formed: float
    ratings: tuple[float, ...] = field(default=())

    @property
    def preset(self) -> str:
        return pool_preset(self.pool)

    @property
    def pace(self) -> str:
        return self.pool.split(":")[2]

    @property
    def spread(self) -> float:
        values = [e.rating for e in self.players]
        return max(values) - min(values) if values else 0.0
