"""Opening a public table from a match: the table of no chat (`pub:<random>`), its seats, its start.

The matchmaker (`bot.matchmaking`) decides who plays together; this module turns its decision into a
table of the service. The table is opened and started in one compare-and-set (as `/new`, `/join`,
`/add_ai` and `/start` would in a group, through the same handlers), so every other part of the service
(timers, computer takeover, `/back`, results, the chart, `/export`) works on it unchanged.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Final

from bot.context import Context, Refusal
from bot.handlers.lobby import AI_NAMES
from bot.i18n import LANGUAGES, negotiate
from bot.model import ChatRef, Command, Message, UserRef
from bot.public.fanout import PUBLIC_PLATFORM
from bot.service import Service
from bot.table import SeatDoc, TableDoc
from core.rules import preset

__all__ = ["PACE_SECONDS", "PublicMatch", "open_public_table", "public_table_id"]

PACE_SECONDS: Final[dict[str, int]] = {"fast": 30, "normal": 90, "slow": 240}
"""The turn timer of each pace the queue offers (after it a computer plays the turn, as in a group)."""


@dataclass(frozen=True, slots=True)
class PublicMatch:
    """What a match seats: `players` in seat order (their own platforms and languages), the preset, the
    number of seats (the empty ones get computers) and the pace."""

    players: tuple[UserRef, ...]
    preset: str
    seats: int
    pace: str = "normal"
    ai_level: str = "easy"
    match_id: str | None = None
    """The matchmaker's id of the match: the table id is derived from it, so that two processes building
    one match (the first slow rather than dead, `MatchQueue.unbuilt`) open one table, not two."""


def public_table_id(match_id: str) -> str:
    """The table id of a match: `pub:` and 12 hex digits of a hash of the match id."""
    return f"{PUBLIC_PLATFORM}:{hashlib.sha256(match_id.encode()).hexdigest()[:12]}"


def _language(user: UserRef, fallback: str) -> str:
    lang = negotiate(user.language)
    return lang if lang in LANGUAGES and lang else fallback


async def open_public_table(svc: Service, match: PublicMatch) -> tuple[str, list[Message]]:
    """Create and start the public table of `match`: its id and the messages to deliver (each seated
    person's copy of the table and their hand). Raises `ValueError` for a match no table can hold."""
    rules = preset(match.preset)
    if match.seats not in rules.player_counts or not 0 < len(match.players) <= match.seats:
        raise ValueError(f"{match.preset} cannot seat {len(match.players)} of {match.seats}")
    if match.pace not in PACE_SECONDS:
        raise ValueError(f"unknown pace {match.pace!r}")
    if len({p.key for p in match.players}) != len(match.players):
        raise ValueError("a player is seated twice")
    token = (
        public_table_id(match.match_id).split(":", 1)[1]
        if match.match_id is not None
        else secrets.token_hex(6)
    )
    first = match.players[0]
    default = svc.settings.default_language
    names = ", ".join(p.name for p in match.players)
    chat = ChatRef(PUBLIC_PLATFORM, token, names)
    table_id = chat.key
    command = Command("start", (), chat, first)
    start = svc.handlers.for_command("start")

    async def seat_and_start(ctx: Context) -> None:
        if ctx.doc is not None:
            if match.match_id is not None:
                return  # built already by another process: nothing to change, nothing to say
            raise Refusal("table_exists")  # 48 random bits: never in practice, but never over a table
        seats = [
            SeatDoc(
                kind="human",
                name=p.name,
                user=p.key,
                platform=p.platform,
                user_id=p.user_id,
                lang=_language(p, default),
            )
            for p in match.players
        ]
        taken = {p.name for p in match.players}
        for name in [n for n in AI_NAMES if n not in taken][: match.seats - len(seats)]:
            seats.append(SeatDoc(kind="ai", name=name, level=match.ai_level))
        settings = svc.settings
        ctx.doc = TableDoc(
            id=table_id,
            serial=secrets.token_hex(5),
            platform=PUBLIC_PLATFORM,
            chat_id=token,
            title=names,
            status="lobby",
            creator=first.key,
            creator_name=first.name,
            opened=1,
            settings=svc.defaults.model_copy(
                update={
                    "preset": match.preset,
                    "options": {},
                    "language": seats[0].lang or default,
                    "turn_seconds": PACE_SECONDS[match.pace],
                    "ai_level": match.ai_level or settings.default_ai_level,
                }
            ),
            seats=seats,
            created=ctx.now,
            updated=ctx.now,
        )
        ctx.users_added.update(p.key for p in match.players)
        await start(ctx)

    messages = await svc.run(table_id, command, seat_and_start)
    return table_id, messages
