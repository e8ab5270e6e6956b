"""Among strangers: `/block`, `/unblock` and `/report` at (or after) a public table, and what a public
game's end or a leave records (the player's recent public table, the ladder).

These commands are about the sender and a table they sat at, not a change of any table, so they run
beside the table handlers (`Service.safety_commands`), after the command budget like every command.
A player names another by seat number or display name as their table showed it; the platform key of the
person blocked or reported is taken from the table, never typed, and never shown back: the answers
carry display names only, the keys go to the queue's block list and to the report for operators.

Only someone who sat at that public table (a leaver too) may block or report its players; at a group's
table these commands are refused (a group has its admins and `/kick`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final

from bot.commands import SAFETY_COMMANDS
from bot.i18n import Translator, translator
from bot.markup import escape
from bot.matchmaking.base import MatchQueue
from bot.matchmaking.ladder_store import LadderStore, MemoryLadder, RedisLadder
from bot.matchmaking.model import ANY_PRESET, Options, Player, Ratings
from bot.model import Command, Message, Sender, UserRef
from bot.ports import TableService
from bot.public.fanout import is_public
from bot.reports import REASONS, Report, ReportStore, new_report_id, reports_for
from bot.snapshot import GameCache
from bot.storage import RedisStore, StorageError, Store
from bot.table import TableDoc
from core.game import GameState
from core.record import build_record
from core.rules import PRESETS

__all__ = [
    "REPORTS_PER_DAY",
    "SAFETY_COMMANDS",
    "PublicSafety",
    "ladder_ratings",
    "public_safety_for",
    "reason_text",
    "record_ladder",
]

log = logging.getLogger("thousand.public")

REPORTS_PER_DAY: Final = 3
"""At most this many reports per person a day (besides the command budget): a report is an operator's
time, and a grudge should not fill their list."""
RECENT_SCOPE: Final = "pubrecent:"
"""References scope (`Store.set_ref`) of a person's recent public tables: `pubrecent:<user key>`."""

_REASON_WORDS: Final = tuple(REASONS)


def reason_text(t: Translator, word: str) -> str:
    texts = {
        "abuse": t._("abuse of phrases"),
        "leaving": t._("leaving or stalling"),
        "cheating": t._("cheating or collusion"),
        "other": t._("other"),
    }
    return texts[word]


async def record_ladder(ladder: LadderStore, doc: TableDoc, state: GameState) -> bool:
    """Rate a public game that ended (once per game: its serial is the ladder's game id). Humans seated at
    the start are rated from the final totals; one who left (a computer took the seat) lost to everyone.
    False when there is nothing to rate (fewer than two humans) or it was rated already."""
    scores: dict[str, int] = {}
    names: dict[str, str] = {}
    leavers: list[str] = []
    for i, seat in enumerate(doc.seats):
        if seat.kind != "human" or seat.user is None:
            continue
        scores[seat.user] = state.totals[i]
        names[seat.user] = seat.name
        if seat.kicked:
            leavers.append(seat.user)
    if len(scores) < 2:
        return False
    done = await ladder.apply_game(doc.settings.preset, doc.serial, scores, names, leavers)
    return done is not None


class PublicSafety:
    """The `block`, `unblock` and `report` commands, and `seats_freed` for `Service.public_seats`."""

    def __init__(
        self,
        store: Store,
        queue: MatchQueue,
        reports: ReportStore,
        ladder: LadderStore,
        *,
        language_of: Callable[[UserRef, str], Awaitable[str]],
        recent_seconds: float = 24 * 3600.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.queue = queue
        self.reports = reports
        self.ladder = ladder
        self._language_of = language_of
        self.recent_seconds = recent_seconds
        self._clock = clock
        self._cache = GameCache(8)

    # --- after a save at a public table ------------------------------------------------------------

    def seats_freed(
        self, free: Callable[[TableDoc, list[str]], Awaitable[None]]
    ) -> Callable[[TableDoc, list[str]], Awaitable[None]]:
        """`Service.public_seats`: remember the table for each person freed (so they can block or report
        its players after it), rate the game if it ended, then `free` (the queue's `free_seats`, which
        counts a leave: not counted here again)."""

        async def freed(doc: TableDoc, user_keys: list[str]) -> None:
            for key in user_keys:
                try:
                    await self.store.set_ref(
                        RECENT_SCOPE + key, doc.id, repr(self._clock()), ttl_seconds=self.recent_seconds
                    )
                except StorageError:
                    log.warning("could not note %s's recent public table", key)
            if doc.status == "finished" and doc.game is not None:
                try:
                    await record_ladder(self.ladder, doc, self._state(doc))
                except Exception:
                    log.exception("rating public game %s failed", doc.serial)
            await free(doc, user_keys)

        return freed

    def _state(self, doc: TableDoc) -> GameState:
        assert doc.game is not None
        return self._cache.state(doc.serial, doc.game.spec, doc.game.actions)

    # --- the commands --------------------------------------------------------------------------------

    async def handle(self, command: Command) -> list[Message]:
        t = translator(await self._language_of(command.user, command.chat.key))

        def say(text: str, kind: str = "error") -> list[Message]:
            to = Sender(command.user, command.chat)
            return [Message(to, text, None, (), None, None, True, t.lang, kind)]

        if not command.chat.private and not is_public(command.chat.key):
            return say(
                t._(
                    "Blocking and reports are for public tables, where strangers play. "
                    "At a group's table, talk to the group; its admins can /kick."
                )
            )
        doc = await self._table(command)
        if doc is None:
            return say(
                t._(
                    "You have not sat at a public table lately: /block and /report name a player "
                    "of your current or last public table."
                )
            )
        me = command.user.key
        if not is_public(doc.id):
            return say(t._("Blocking and reports are for public tables, where strangers play."))
        if not any(s.kind == "human" and s.user == me for s in doc.seats):
            return say(t._("Only the players of a public table may block or report its players."))
        usage = {
            "block": t._("Block a player of your public table: /block <seat number or name>."),
            "unblock": t._("Unblock a player of your public table: /unblock <seat number or name>."),
            "report": t._("Report a player of your public table: /report <seat number or name> <reason>.")
            + "\n"
            + self._reasons(t),
        }[command.name]
        if not command.args:
            return say(usage)
        target = self._target(t, doc, command.args[0], me)
        if isinstance(target, str):
            return say(target)
        seat_no, name, key = target
        if command.name == "block":
            await self.queue.block(me, key)
            return say(
                t._(
                    "{name} is blocked: you will not be seated together again. /unblock {seat} undoes it."
                ).format(name=escape(name), seat=seat_no),
                kind="info",
            )
        if command.name == "unblock":
            await self.queue.unblock(me, key)
            return say(t._("{name} is no longer blocked.").format(name=escape(name)), kind="info")
        return await self._report(command, t, say, doc, name, key)

    async def _report(
        self,
        command: Command,
        t: Translator,
        say: Callable[..., list[Message]],
        doc: TableDoc,
        name: str,
        key: str,
    ) -> list[Message]:
        word = command.args[1].lower() if len(command.args) > 1 else ""
        if word.isascii() and word.isdigit() and 1 <= int(word) <= len(_REASON_WORDS):
            word = _REASON_WORDS[int(word) - 1]
        if word not in REASONS:
            return say(self._reasons(t))
        try:
            count, _ = await self.store.count_hit(f"reports:{command.user.key}", 24 * 3600.0)
        except StorageError:
            count = 0
        if count > REPORTS_PER_DAY:
            text = t._("You have filed {count} reports today: that is the most for a day.")
            return say(text.format(count=REPORTS_PER_DAY))
        record: dict[str, object] = {}
        if doc.game is not None:
            state = self._state(doc)
            record = build_record(state, [s.name for s in doc.seats])
            if not state.finished:
                # As /export: only finished deals (the deal in progress would show everyone's hand).
                record["deals"] = list(record["deals"])[: len(state.history)]  # type: ignore[call-overload]
        now = self._clock()
        mine = next(s for s in doc.seats if s.user == command.user.key)
        report = Report(
            id=new_report_id(now),
            created=now,
            table_id=doc.id,
            serial=doc.serial,
            preset=doc.settings.preset,
            reason=word,
            reporter=command.user.key,
            reporter_name=mine.name,
            reported=key,
            reported_name=name,
            record=json.loads(json.dumps(record)),
        )
        await self.reports.file(report)
        return say(
            t._("Report filed: {name}, {reason}. The operators will read the game record. Thank you.").format(
                name=escape(name), reason=reason_text(t, word)
            ),
            kind="info",
        )

    def _reasons(self, t: Translator) -> str:
        listed = ", ".join(f"{i} {w} ({reason_text(t, w)})" for i, w in enumerate(_REASON_WORDS, 1))
        return t._("Reasons: {reasons}. For example: /report 2 abuse").format(reasons=listed)

    def _target(self, t: Translator, doc: TableDoc, arg: str, me: str) -> tuple[int, str, str] | str:
        """The seat named by number (1-based, as listed) or display name: (number, name, user key), or
        the text saying why not."""
        index: int | None = None
        if arg.isascii() and arg.isdigit():
            if 1 <= int(arg) <= len(doc.seats):
                index = int(arg) - 1
        else:
            wanted = arg.casefold()
            found = [i for i, s in enumerate(doc.seats) if s.name.casefold() == wanted]
            if len(found) > 1:
                text = t._("Several players are called {name} here: name the seat number (1–{n}).")
                return text.format(name=escape(doc.seats[found[0]].name), n=len(doc.seats))
            index = found[0] if found else None
        if index is None:
            text = t._("No such player at your public table: name a seat number (1–{n}) or a name as shown.")
            return text.format(n=len(doc.seats))
        seat = doc.seats[index]
        if seat.kind != "human" or seat.user is None:
            return t._("{name} is a computer player.").format(name=escape(seat.name))
        if seat.user == me:
            return t._("That is your own seat.")
        return index + 1, seat.name, seat.user

    async def _table(self, command: Command) -> TableDoc | None:
        """The public table meant: the one a button named, else the one the sender sits at now, else the
        one they sat at last (`RECENT_SCOPE`, kept `recent_seconds`)."""
        if command.table_id is not None:
            return await self._load(command.table_id)
        if not command.chat.private:
            return await self._load(command.chat.key)
        me = command.user.key
        for table_id in sorted(await self.store.tables_for_user(me)):
            if is_public(table_id):
                doc = await self._load(table_id)
                if doc is not None and doc.status != "finished" and doc.seat_of(me) is not None:
                    return doc
        recent = await self.store.get_refs(RECENT_SCOPE + me)
        for table_id, _ in sorted(recent.items(), key=lambda kv: -float(kv[1])):
            doc = await self._load(table_id)
            if doc is not None:
                return doc
        return None

    async def _load(self, table_id: str) -> TableDoc | None:
        stored = await self.store.load(table_id)
        return None if stored is None else TableDoc.model_validate_json(stored.document)


def public_safety_for(
    service: TableService,
    queue: MatchQueue,
    *,
    language_of: Callable[[UserRef, str], Awaitable[str]],
    clock: Callable[[], float],
) -> PublicSafety:
    """The desk on the service's store: the ladder and the reports in Redis beside a Redis store (every
    process and `thousand reports` see them), else in memory. A table is remembered for blocking and
    reporting as long as a finished table is kept (`finished_ttl`): after that its record is gone."""
    store = service.store
    inner: object = getattr(store, "inner", store)  # a metered store wraps the real one
    ladder: LadderStore = RedisLadder(inner) if isinstance(inner, RedisStore) else MemoryLadder(clock=clock)
    reports = reports_for(inner if isinstance(inner, RedisStore) else store, clock)
    return PublicSafety(
        store,
        queue,
        reports,
        ladder,
        language_of=language_of,
        recent_seconds=float(service.settings.finished_ttl),
        clock=clock,
    )


def ladder_ratings(ladder: LadderStore) -> Callable[[Player, Options], Awaitable[Ratings]]:
    """A `QueueDesk`'s `rating`: the player's public rating of each preset their options allow (all of
    them for "any"), so the matcher seats people of close ladder ratings; a newcomer's is 1500."""

    async def rating(player: Player, options: Options) -> Ratings:
        presets = list(PRESETS) if options.preset == ANY_PRESET else [options.preset]
        return {name: (await ladder.get(name, player.key)).rating for name in presets}

    return rating
