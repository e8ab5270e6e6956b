"""Where the public ladder lives: each player's Glicko-2 rating per preset, its history (for /stats and
the web page's chart) and the top of each preset's ladder. Separate from a group's statistics
(bot/stats.py): a public rating is earned only at public tables.

Applying a game is idempotent (keyed by the game id: a retry after a timeout never rates twice) and
optimistic: ratings are read, the new ones computed in Python (bot/ladder.py), then written by one script
that refuses if any player's game count changed meanwhile, and the caller reads again. Idle time is
counted in rating periods of `LadderConfig.period_seconds` and grows the RD before a game and on read.

Redis keys, all of a preset under one tag `{ladder:<preset>}` (one slot per preset, so a game's write
is one script; a preset's traffic is public games finishing, a few per second at most):
    <prefix>:{ladder:<preset>}:r:<player>   hash r, rd, vol, n (games), t (last game), name
    <prefix>:{ladder:<preset>}:h:<player>   list of JSON points {t, r, rd, g}, the last `history` kept
    <prefix>:{ladder:<preset>}:top          zset player -> rating of established players, `top_size` kept
    <prefix>:{ladder:<preset>}:game:<id>    marker of an applied game
Each lives `rating_seconds` after the player's (or preset's) last game; the marker `marker_seconds`.
"""

from __future__ import annotations

import abc
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from bot.ladder import PROVISIONAL_RD, Rating, age, update_game
from bot.storage import RedisStore
from bot.storage.redis_scripts import Script

__all__ = [
    "HistoryPoint",
    "LadderConfig",
    "LadderConflict",
    "LadderStore",
    "MemoryLadder",
    "RedisLadder",
    "Standing",
]

_APPLY = Script.named("mm_ladder")


@dataclass(frozen=True, slots=True)
class LadderConfig:
    rating_seconds: float = 400 * 24 * 3600.0
    marker_seconds: float = 7 * 24 * 3600.0
    period_seconds: float = 7 * 24 * 3600.0
    history: int = 200
    top_size: int = 1000
    retries: int = 8


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    when: float
    rating: float
    rd: float
    game_id: str


@dataclass(frozen=True, slots=True)
class Standing:
    player_key: str
    name: str
    rating: Rating


class LadderConflict(Exception):
    """Ratings kept changing under `apply_game` for `LadderConfig.retries` attempts."""


class LadderStore(abc.ABC):
    config: LadderConfig

    @abc.abstractmethod
    async def _read(self, preset: str, players: Sequence[str]) -> dict[str, tuple[Rating, float]]:
        """Each player's stored rating and when it last changed (0: never)."""

    @abc.abstractmethod
    async def _write(
        self,
        preset: str,
        game_id: str,
        now: float,
        expected: Mapping[str, int],
        new: Mapping[str, Rating],
        names: Mapping[str, str],
    ) -> str:
        """'applied', 'already' or 'stale' (see mm_ladder.lua)."""

    @abc.abstractmethod
    async def history(self, preset: str, player_key: str) -> list[HistoryPoint]: ...

    @abc.abstractmethod
    async def top(self, preset: str, n: int = 10) -> list[Standing]:
        """The best established (non-provisional) players of the preset, best first."""

    def _now(self) -> float:
        """The store's clock (the memory store takes one, so tests age ratings on a clock of theirs)."""
        return time.time()

    def _aged(self, stored: tuple[Rating, float], now: float) -> Rating:
        rating, when = stored
        if not when:
            return rating
        return age(rating, (now - when) / self.config.period_seconds)

    async def get(self, preset: str, player_key: str, now: float | None = None) -> Rating:
        """The player's rating now (a newcomer's if none), RD grown for idle time."""
        at = self._now() if now is None else now
        return self._aged((await self._read(preset, [player_key]))[player_key], at)

    async def apply_game(
        self,
        preset: str,
        game_id: str,
        scores: Mapping[str, int],
        names: Mapping[str, str],
        leavers: Sequence[str] = (),
        now: float | None = None,
    ) -> dict[str, tuple[Rating, Rating]] | None:
        """Rate a public game (its human players' final scores; `leavers` left it started). Returns each
        player's (before, after), or None if this game was applied already."""
        at = self._now() if now is None else now
        players = sorted(scores)
        for ident in (game_id, *players):
            if not ident or any(c in ident for c in "{} "):
                raise ValueError(f"bad game or player id {ident!r}")
        if len(players) < 2 or not set(leavers) <= set(players):
            raise ValueError("a rated game needs two human players, and leavers among them")
        for _ in range(self.config.retries):
            stored = await self._read(preset, players)
            before = {p: self._aged(stored[p], at) for p in players}
            after = update_game(before, scores, leavers)
            expected = {p: stored[p][0].games for p in players}
            outcome = await self._write(preset, game_id, at, expected, after, names)
            if outcome == "applied":
                return {p: (before[p], after[p]) for p in players}
            if outcome == "already":
                return None
        raise LadderConflict(f"ratings of game {game_id} kept changing")

    async def close(self) -> None:
        return None


class MemoryLadder(LadderStore):
    """The ladder in memory (local play, tests); keeps the Redis store's lifetimes on its clock."""

    def __init__(self, config: LadderConfig | None = None, clock: Callable[[], float] = time.time) -> None:
        self.config = config or LadderConfig()
        self._clock = clock
        self._ratings: dict[tuple[str, str], tuple[Rating, float, str]] = {}
        self._history: dict[tuple[str, str], list[HistoryPoint]] = {}
        self._games: dict[tuple[str, str], float] = {}

    def _now(self) -> float:
        return self._clock()

    def _live(self, key: tuple[str, str]) -> tuple[Rating, float, str] | None:
        found = self._ratings.get(key)
        if found is None or found[1] + self.config.rating_seconds <= self._now():
            self._ratings.pop(key, None)
            self._history.pop(key, None)
            return None
        return found

    async def _read(self, preset: str, players: Sequence[str]) -> dict[str, tuple[Rating, float]]:
        out = {}
        for p in players:
            found = self._live((preset, p))
            out[p] = (found[0], found[1]) if found else (Rating(), 0.0)
        return out

    async def _write(
        self,
        preset: str,
        game_id: str,
        now: float,
        expected: Mapping[str, int],
        new: Mapping[str, Rating],
        names: Mapping[str, str],
    ) -> str:
        marker = self._games.get((preset, game_id))
        if marker is not None and marker > self._now():
            return "already"
        for p, games in expected.items():
            found = self._live((preset, p))
            if (found[0].games if found else 0) != games:
                return "stale"
        for p, rating in new.items():
            self._ratings[(preset, p)] = (rating, now, names.get(p, p))
            points = self._history.setdefault((preset, p), [])
            points.append(HistoryPoint(now, rating.rating, rating.rd, game_id))
            del points[: -self.config.history]
        self._games[(preset, game_id)] = self._now() + self.config.marker_seconds
        return "applied"

    async def history(self, preset: str, player_key: str) -> list[HistoryPoint]:
        if self._live((preset, player_key)) is None:
            return []
        return list(self._history.get((preset, player_key), []))

    async def top(self, preset: str, n: int = 10) -> list[Standing]:
        rows = []
        for (p_preset, player), _ in list(self._ratings.items()):
            found = self._live((p_preset, player))
            if p_preset == preset and found and found[0].rd <= PROVISIONAL_RD:
                rows.append(Standing(player, found[2], found[0]))
        rows.sort(key=lambda s: (-s.rating.rating, s.player_key))
        return rows[: min(n, self.config.top_size)]


class RedisLadder(LadderStore):
    """The ladder on Redis, through a `RedisStore`'s connections."""

    def __init__(self, store: RedisStore, config: LadderConfig | None = None) -> None:
        self._store = store
        self.config = config or LadderConfig()
        self._prefix = store.keys.prefix

    def head(self, preset: str) -> str:
        if not preset or any(c in preset for c in "{}:"):
            raise ValueError(f"bad preset name {preset!r}")
        return f"{self._prefix}:{{ladder:{preset}}}:"

    async def _read(self, preset: str, players: Sequence[str]) -> dict[str, tuple[Rating, float]]:
        head = self.head(preset)
        commands = [("HMGET", f"{head}r:{p}", "r", "rd", "vol", "n", "t") for p in players]
        replies = await self._store.pipeline(commands)
        out = {}
        for p, (r, rd, vol, n, t) in zip(players, replies, strict=True):
            if r is None:
                out[p] = (Rating(), 0.0)
            else:
                out[p] = (Rating(float(r), float(rd), float(vol), int(n)), float(t))
        return out

    async def _write(
        self,
        preset: str,
        game_id: str,
        now: float,
        expected: Mapping[str, int],
        new: Mapping[str, Rating],
        names: Mapping[str, str],
    ) -> str:
        head = self.head(preset)
        c = self.config
        args: list[object] = [
            head,
            repr(now),
            _ms(c.marker_seconds),
            _ms(c.rating_seconds),
            c.history,
            c.top_size,
            repr(PROVISIONAL_RD),
            game_id,
        ]
        for p, rating in new.items():
            args += [
                p,
                expected[p],
                repr(rating.rating),
                repr(rating.rd),
                repr(rating.volatility),
                rating.games,
                names.get(p, p),
            ]
        outcome: str = await self._store.script(_APPLY, [f"{head}game:{game_id}"], args)
        return outcome

    async def history(self, preset: str, player_key: str) -> list[HistoryPoint]:
        raw = await self._store.call("LRANGE", f"{self.head(preset)}h:{player_key}", 0, -1)
        points = [json.loads(item) for item in raw]
        return [HistoryPoint(float(p["t"]), float(p["r"]), float(p["rd"]), str(p["g"])) for p in points]

    async def top(self, preset: str, n: int = 10) -> list[Standing]:
        head = self.head(preset)
        members = await self._store.call("ZREVRANGE", f"{head}top", 0, max(0, n - 1))
        if not members:
            return []
        commands = [("HMGET", f"{head}r:{p}", "r", "rd", "vol", "n", "name") for p in members]
        rows, gone = [], []
        for p, (r, rd, vol, games, name) in zip(members, await self._store.pipeline(commands), strict=True):
            if r is None:
                gone.append(p)  # the rating expired: its row leaves the top now
            else:
                rows.append(Standing(p, name or p, Rating(float(r), float(rd), float(vol), int(games))))
        if gone:
            await self._store.call("ZREM", f"{head}top", *gone)
        rows.sort(key=lambda s: (-s.rating.rating, s.player_key))
        return rows

    async def close(self) -> None:
        await self._store.close()


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
