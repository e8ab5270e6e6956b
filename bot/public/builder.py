"""From the matchmaker's matches to public tables: what every process runs beside its queue.

`build_matches` takes the matches this process formed (`MatchQueue.match`) and those another process
formed but did not confirm in time (`MatchQueue.unbuilt`: it died after forming them), opens each
one's table (`open_public_table`, idempotent per match id) and confirms it (`MatchQueue.built`, which
seats the players at the table id). The messages returned are the tables' first messages, for the
process's relay to deliver (`bot.relay`), each led by every seated person's queue status saying that a
table was found: the status says so before the table appears (the desk's refresh, every 2 s, came
seconds after the table and the hand).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from bot.i18n import translator
from bot.matchmaking.base import MatchQueue
from bot.matchmaking.model import Match, pool_size
from bot.model import Message, Private, UserRef
from bot.public.tables import PublicMatch, open_public_table
from bot.render_queue import QUEUE_KEY, render_found
from bot.service import Service
from bot.table import TableDoc

__all__ = ["build_match", "build_matches", "free_seats", "public_match"]

log = logging.getLogger("thousand.public")


def public_match(match: Match) -> PublicMatch:
    """The table a match asks for: its players (their platform, id, display name and language) in seat
    order, its preset and pace, and as many seats as its pool (computers in the empty ones)."""
    players = tuple(
        UserRef(e.player.platform, e.player.user_id, e.player.name, e.player.language) for e in match.players
    )
    seats = max(pool_size(match.pool), len(players) + match.computers)
    return PublicMatch(players, match.preset, seats, match.pace, match_id=match.match_id)


async def build_match(service: Service, queue: MatchQueue, match: Match) -> tuple[str, list[Message]]:
    table_id, messages = await open_public_table(service, public_match(match))
    if not await queue.built(match.match_id, table_id):
        log.warning("match %s expired before its table %s was confirmed", match.match_id, table_id)
    return table_id, messages


async def build_matches(service: Service, queue: MatchQueue, now: float | None = None) -> list[Message]:
    """Build every match there is to build now; one failing match does not stop the others (it is handed
    out again by `unbuilt` after the grace)."""
    out: list[Message] = []
    for match in [*await queue.match(now), *await queue.unbuilt(now)]:
        try:
            _, messages = await build_match(service, queue, match)
            if messages:  # none: another process built it, and said so
                out.extend(await _found(service, public_match(match).players))
            out.extend(messages)
        except Exception:
            log.exception("building the table of match %s failed", match.match_id)
    return out


FOUND_AHEAD_MS = 60_000
"""How far the found status's version runs ahead of this process's clock. The waiting states it
replaces were versioned by the clock of whichever process showed them (the person's platform's), and
an edit older than the one shown is dropped as stale: a process whose clock ran behind would leave the
person reading "Searching…" above their game. No waiting state of this wait follows the found one (the
desk stops when the person is seated), and a new wait begins with a fresh message, posted anew."""


async def _found(service: Service, players: tuple[UserRef, ...]) -> list[Message]:
    """Each person's queue status, in their language: a table was found (no buttons left)."""
    version = int(service.clock() * 1000) + FOUND_AHEAD_MS
    out = []
    for user in players:
        t = translator(await service.language_of(user))
        out.append(
            Message(Private(user), render_found(t), QUEUE_KEY, language=t.lang, kind="queue", version=version)
        )
    return out


def free_seats(queue: MatchQueue) -> Callable[[TableDoc, list[str]], Awaitable[None]]:
    """`Service.public_seats` for `queue`: people who no longer sit at a public table may queue again;
    one who left a game still being played has it counted (`record_leave`: they wait longer next time)."""

    async def free(doc: TableDoc, user_keys: list[str]) -> None:
        for key in user_keys:
            if doc.status == "game":
                await queue.record_leave(key)
            await queue.unseat(key)

    return free
