"""The transport-neutral service: neutral commands in, neutral messages out.

`Service.handle(command)` loads the table of the command's chat, checks who may act, applies the
command through the engine, lets computer players move until a human must act, stores the table with
a compare-and-set (retrying from a fresh load on a conflict, a bounded number of times) and returns the
messages to send. `Service.tick(now)` fires due turn deadlines (a private warning; then the computer
plays for the absent player) and closes idle lobbies; every process may call it, a deadline fires once.

A refusal of any kind (unknown command, bad card, not your turn, stale button...) is one translated
message to the user who caused it, and nothing is stored. See `docs/SERVICE.md`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import time
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from bot.ai import AiRunner
from bot.commands import (
    INVALID_BUTTON,
    QUEUE_COMMANDS,
    REVIEW_COMMAND,
    SAFETY_COMMANDS,
    SYSTEM_COMMANDS,
    UNKNOWN,
)
from bot.context import Context, Refusal, with_heading
from bot.gameflow import GameFlow
from bot.i18n import LANGUAGES, negotiate, translator
from bot.matchmaking.ladder_store import LadderStore
from bot.migrate import follow_move, move_chat
from bot.model import ChatRef, Command, Message, Sender, UserRef
from bot.ports import Handler, HandlersFactory
from bot.presence import Presence, drop_seen_hands
from bot.public.fanout import is_public
from bot.public.refusals import PUBLIC_REFUSED, refusal_text
from bot.public.rematch import Rematch, offer_turn
from bot.render import render_error, render_help
from bot.review import ReviewDesk
from bot.settings import Settings
from bot.snapshot import GameCache
from bot.storage import Deadline, StorageUnavailable, StorageUncertain, Store, VersionConflict
from bot.table import ChatSettings, TableDoc, TurnDoc, UserPrefs
from bot.throttle import CommandThrottle
from core.rules import RuleError, preset

__all__ = ["Service"]

log = logging.getLogger("thousand.service")

_OWN_CHAT_COMMANDS = frozenset({"new", "set", "stats", "top", "lang"})
"""In a private chat, commands about that chat itself, not about a table elsewhere."""
_NO_TABLE_COMMANDS = frozenset({"rules", "score", "export", "table"})
"""Private-chat commands answered for the chat itself when the sender sits at no table."""
_SYSTEM_COMMANDS = frozenset(SYSTEM_COMMANDS)
"""Commands adapters send about a chat themselves (`title`, `unreachable`): for that chat's table."""


class Service:
    """One per process (any number of processes may share a Redis store).

    `handlers` builds what each command does (`bot.handlers.Handlers`); it is passed in where the service
    is built so that this module and the handlers never import each other (`bot.ports`).
    """

    def __init__(
        self,
        store: Store,
        settings: Settings | None = None,
        *,
        handlers: HandlersFactory,
        ai: AiRunner | None = None,
        clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
        cache_size: int = 512,
        presence: Presence | None = None,
    ) -> None:
        self.store = store
        self.settings = settings or Settings()
        self.clock = clock
        self._own_ai = ai is None
        self.ai = ai or AiRunner(
            self.settings.ai_workers, self.settings.ai_budget_seconds, hard_stop=self.settings.ai_hard_stop
        )
        self.cache = GameCache(cache_size)
        self.flow = GameFlow(self.settings, self.ai)
        self.handlers = handlers(self, rng or random.Random(secrets.randbits(64)))
        self.reviews = ReviewDesk(self.run, self.handlers.for_command(REVIEW_COMMAND), self.ai.review)
        """`/review`: checked under the table's lock, worked out after it in the computer players' pool."""
        self.throttle = CommandThrottle(
            store,
            limit=self.settings.command_limit,
            window=self.settings.command_window,
            default_language=self.settings.default_language,
            language=lambda command: self.language_of(command.user, command.chat.key),
        )
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self.presence = presence
        """Who has the web table open (`bot.presence`): their hands are not redrawn on each move."""
        self.safety_commands: Callable[[Command], Awaitable[list[Message]]] | None = None
        """`/block`, `/unblock`, `/report` (`bot.handlers.public_safety.PublicSafety.handle`) where the
        process runs public tables: about the sender and a public table they sat at, not a table's change."""
        self.ladder: LadderStore | None = None
        """The public ladder (`bot.matchmaking.ladder_store`), for `/stats` and `/top` where it is kept."""
        self.public_seats: Callable[[TableDoc, list[str]], Awaitable[None]] | None = None
        """Told, after the save, who no longer sits at a public table (all at its end, one who left):
        the matchmaker frees them to queue again (`bot.public.builder.free_seats`)."""
        self.rematch: Rematch | None = None
        """Play again at a finished public table (`bot.public.rematch.PublicRematch`), where the process
        runs public tables: `again` there and the offer's deadline. Without it `again` is refused there."""
        self.queue_commands: Callable[[Command], Awaitable[list[Message]]] | None = None
        """The public games' queue (`bot.handlers.queue.QueueDesk.handle`), where the process runs it:
        `queue` and `cancel` are about the sender, not a table, and pass the command budget first."""

    @property
    def defaults(self) -> ChatSettings:
        s = self.settings
        return ChatSettings(
            preset=s.default_preset,
            options={},
            language=s.default_language,
            turn_seconds=s.turn_seconds,
            ai_level=s.default_ai_level,
        )

    async def close(self) -> None:
        if self._own_ai:
            self.ai.close()

    # --- commands ---------------------------------------------------------------------------------

    async def handle(self, command: Command) -> list[Message]:
        """Do one command; the messages to send (a refusal is one message to the sender). A person over
        their command budget gets one short "slow down", then nothing (`bot.throttle`)."""
        instead = await self.throttle.before(command)
        if instead is not None:
            return instead
        return await self.throttle.after(command, await self._answer(command))

    async def _answer(self, command: Command) -> list[Message]:
        try:
            return await self._seen(await self._handle(command), command.user.key)
        except StorageUncertain as exc:
            # Saved, but not confirmed by the replicas in time: the move may stand or not; the table's
            # next view shows which. Never "failed" for a move that may have been taken.
            log.warning("move %s of %s unconfirmed: %s", command.name, exc.table_id, exc)
            return [self._error_message(command, "uncertain")]
        except StorageUnavailable:
            log.warning("storage unavailable for %s", command.name)
            return [self._error_message(command, "unavailable")]
        except Exception:
            # A bug must not leave the user without an answer; nothing was saved unless the save succeeded.
            log.exception("command %s failed", command.name)
            return [self._error_message(command, "internal")]

    async def _seen(self, messages: list[Message], asker: str | None) -> list[Message]:
        """Without the hand messages of players who watch the table on the web (`bot.presence`)."""
        if self.presence is None:
            return messages
        try:
            return await drop_seen_hands(messages, self.presence, asker)
        except StorageUnavailable:
            return messages

    async def _handle(self, command: Command) -> list[Message]:
        name = command.name
        if name in SAFETY_COMMANDS:
            if self.safety_commands is None:
                lang = await self.language_of(command.user)
                return [self._error_message(command, "no_table_for_you", lang)]
            return await self.safety_commands(command)
        if name in (INVALID_BUTTON, UNKNOWN, "help"):
            lang = await self.language_of(command.user, command.chat.key)
            if name != "help":
                code = "invalid_button" if name == INVALID_BUTTON else "unknown"
                return [self._error_message(command, code, lang)]
            t = translator(lang)
            msg = Message(
                Sender(command.user, command.chat),
                render_help(t, command.chat.platform).text,
                None,
                (),
                None,
                None,
                True,
                t.lang,
                "help",
            )
            return [msg]
        if name in QUEUE_COMMANDS:
            if self.queue_commands is None:
                lang = await self.language_of(command.user, command.chat.key)
                return [self._error_message(command, "no_public_games", lang)]
            return await self.queue_commands(command)
        try:
            table_id = await self._table_for(command)
        except Refusal as refusal:
            lang = await self.language_of(command.user, command.chat.key)
            return [self._error_message(command, refusal.code, lang)]
        if is_public(table_id) and name == "again" and self.rematch is not None:
            return await self.rematch.handle(command, table_id)
        if is_public(table_id) and name in PUBLIC_REFUSED:
            return [await self._public_refusal(command)]
        if name == REVIEW_COMMAND:
            return await self.reviews.handle(command, table_id)
        handler = self.handlers.for_command(name)
        return await self.run(table_id, command, handler)

    async def _table_for(self, command: Command) -> str:
        """The table a command is for: the button's, the group's, or the one table of the sender.

        In a private chat, commands that concern the chat itself (`new`, `set`, `stats`...) are for the
        private chat's own table; game commands go to the one live table the sender sits at.
        """
        if command.table_id is not None:
            # A private chat's buttons may name a group's table, except for commands about the chat itself.
            own = not command.chat.private or command.name in _OWN_CHAT_COMMANDS
            if own and command.table_id != command.chat.key:
                raise Refusal("other_table")
            return command.table_id
        if not command.chat.private or command.name in _OWN_CHAT_COMMANDS | _SYSTEM_COMMANDS:
            return command.chat.key
        hinted = await self.store.tables_for_user(command.user.key)
        live = []
        for table_id in sorted(hinted):
            stored = await self.store.load(table_id)
            if stored is None:
                continue
            doc = TableDoc.model_validate_json(stored.document)
            if doc.status != "finished" and doc.seat_of(command.user.key) is not None:
                live.append(table_id)
        if len(live) == 1:
            return live[0]
        if command.chat.key in live or (not live and command.name in _NO_TABLE_COMMANDS):
            return command.chat.key
        raise Refusal("many_tables" if live else "no_table_for_you")

    def _lock(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[table_id] = lock
        return lock

    async def load(self, table_id: str) -> tuple[int, TableDoc | None]:
        stored = await self.store.load(table_id)
        if stored is None:
            return 0, None
        return stored.version, TableDoc.model_validate_json(stored.document)

    async def run(self, table_id: str, command: Command, handler: Handler) -> list[Message]:
        """Load, handle, compare-and-set; retried from a fresh load when another writer came first."""
        ctx: Context | None = None
        redirect: Command | None = None
        async with self._lock(table_id):
            for _ in range(self.settings.cas_retries):
                now = self.clock()
                version, doc = await self.load(table_id)
                if doc is None and command.table_id == table_id:
                    moved = await follow_move(self, command)
                    if moved is not command:
                        redirect = moved
                        break
                state = None
                if doc is not None and doc.game is not None:
                    state = self.cache.state(doc.serial, doc.game.spec, doc.game.actions)
                ctx = Context(command, table_id, version, doc, state, now, self.defaults, before=state)
                if doc is not None and doc.game is not None:
                    ctx.actions_at_load = len(doc.game.actions)
                _take_title(ctx)
                try:
                    await handler(ctx)
                except Refusal as refusal:
                    if _outsider(ctx):
                        # Someone from elsewhere who does not sit here: the refusal names neither the table
                        # nor its chat (no heading, no seat language).
                        return [self._error_message(command, refusal.code)]
                    # Nothing is stored: the messages show the table as loaded.
                    lang = None
                    if doc is None or doc.seat_of(command.user.key) is None:
                        # Not seated here: their own choice (`lang`) counts before the group's language.
                        lang = await self.language_of(command.user, doc.id if doc is not None else table_id)
                    refused = [self._refusal_message(ctx, refusal, lang), *refusal.follow_up]
                    return ctx.outgoing(refused, version)
                if not ctx.changed:
                    return ctx.outgoing(ctx.messages, version) + ctx.other_tables
                self.flow.keep_turn_buttons(ctx)
                try:
                    await self._save(ctx)
                except VersionConflict:
                    continue
                for hook in ctx.after_save:
                    # The command is done and stored: trouble here (statistics, the chart) is only logged.
                    try:
                        result = hook()
                        if asyncio.iscoroutine(result):
                            await result
                    except Exception:
                        log.exception("after-save step of %s failed", command.name)
                freed = sorted(ctx.users_removed) if is_public(table_id) and ctx.doc is not None else []
                if freed and self.public_seats is not None and ctx.doc is not None:
                    try:
                        await self.public_seats(ctx.doc, freed)
                    except Exception:
                        log.exception("freeing the seats of public table %s failed", table_id)
                return ctx.outgoing(ctx.messages, version + 1) + ctx.other_tables
        if redirect is not None and redirect.table_id is not None:
            return await self.run(redirect.table_id, redirect, handler)
        busy = self._error_message(command, "busy", heading=ctx is None)
        return [busy] if ctx is None else ctx.outgoing([busy], ctx.version)

    async def _save(self, ctx: Context) -> None:
        doc = ctx.doc
        assert doc is not None
        doc.updated = ctx.now
        deadline: Deadline | None = None
        drop = False
        if ctx.deadline_reset:
            doc.turn = self._turn_for(doc, ctx)
            if doc.turn is None:
                drop = True
            else:
                deadline = _store_deadline(doc.turn, ctx.now)
        ttl = {
            "lobby": self.settings.lobby_ttl,
            "game": self.settings.game_ttl,
            "finished": self.settings.finished_ttl,
        }[doc.status]
        entry: dict[str, Any] = {"v": ctx.version + 1, "cmd": ctx.command.name, "user": ctx.user.key}
        if ctx.log:
            entry["log"] = ctx.log
        if doc.game is not None:
            entry["n"] = len(doc.game.actions)
            added = doc.game.actions[ctx.actions_at_load :] if ctx.actions_at_load <= entry["n"] else []
            if added:
                entry["a"] = added
        await self.store.save(
            ctx.table_id,
            ctx.version,
            doc.model_dump_json(),
            ttl_seconds=ttl,
            event=json.dumps(entry, separators=(",", ":")),
            chat_key=doc.id,
            users_added=sorted(ctx.users_added - ctx.users_removed),
            users_removed=sorted(ctx.users_removed),
            deadline=deadline,
            drop_deadline=drop,
        )
        if doc.game is not None and ctx.state is not None:
            self.cache.put(doc.serial, doc.game.actions, ctx.state)

    def _turn_for(self, doc: TableDoc, ctx: Context) -> TurnDoc | None:
        """The deadline the table needs now: a human's turn, an idle lobby, or none."""
        if doc.status == "lobby":
            return TurnDoc(
                kind="lobby",
                token=f"{doc.serial}.L{secrets.token_hex(3)}",
                deadline=ctx.now + self.settings.lobby_idle_seconds,
            )
        if doc.status == "finished" and self.rematch is not None:
            return offer_turn(doc, ctx.now)  # a public game's offer to play again, else none
        if doc.status != "game" or ctx.state is None or ctx.state.finished:
            return None
        seconds = doc.settings.turn_seconds
        seat = ctx.state.to_act
        if not seconds or seat is None or seat < 0 or not doc.seats[seat].present:
            return None
        assert doc.game is not None
        deadline = ctx.now + seconds
        warn = self.settings.warn_seconds
        warn_at = deadline - warn if 0 < warn < seconds else None
        return TurnDoc(
            kind="turn",
            token=f"{doc.serial}.{len(doc.game.actions)}",
            deadline=deadline,
            warn_at=warn_at,
            seat=seat,
        )

    # --- errors -----------------------------------------------------------------------------------

    def _fallback_lang(self, command: Command) -> str:
        return negotiate(command.user.language) or self.settings.default_language

    def _error_message(
        self, command: Command, code: str, lang: str | None = None, *, heading: bool = True
    ) -> Message:
        t = translator(lang or self._fallback_lang(command))
        message = Message(
            Sender(command.user, command.chat),
            render_error(t, code),
            None,
            (),
            None,
            None,
            True,
            t.lang,
            "error",
        )
        # Said in a group, read perhaps in the private chat: it names the group.
        return with_heading(None, message, command.chat) if heading else message

    async def _public_refusal(self, command: Command) -> Message:
        """A group command at a public table (`bot.public.refusals`): said in the sender's language."""
        t = translator(await self.language_of(command.user))
        text = refusal_text(t)
        return Message(Sender(command.user, command.chat), text, None, (), None, None, True, t.lang, "error")

    def _refusal_message(self, ctx: Context, refusal: Refusal, lang: str | None = None) -> Message:
        t = translator(lang) if lang is not None else ctx.t_user()
        text = render_error(t, refusal.code, **refusal.values)
        if refusal.extra:
            text += "\n" + refusal.extra
        return Message(Sender(ctx.user, ctx.chat), text, None, (), None, None, True, t.lang, "error")

    async def move_chat(self, old: ChatRef, new: ChatRef) -> tuple[str, ...] | None:
        """The chat changed its platform id (a Telegram group upgraded to a supergroup): its table and
        settings follow it (`bot.migrate.move_chat`: the seats' user keys when this call moved a table)."""
        return await move_chat(self, old, new)

    # --- timers -----------------------------------------------------------------------------------

    async def next_wakeup(self) -> float | None:
        """When the earliest deadline falls due (an adapter may sleep until then, or poll each second)."""
        return await self.store.next_deadline()

    async def tick(self, now: float | None = None) -> list[Message]:
        """Fire the deadlines due at `now`: warnings, turns played for absent players, idle lobbies."""
        at = self.clock() if now is None else now
        try:
            claimed = await self.store.claim_due(
                self.settings.tick_claim_limit, at, lease_seconds=self.settings.deadline_lease_seconds
            )
            out: list[Message] = []
            for table_id, token in claimed:
                try:
                    out.extend(await self._fire(table_id, token, at))
                except StorageUnavailable:
                    raise
                except Exception:
                    # The lease brings the deadline back later; other tables' deadlines go on.
                    log.exception("deadline %s of %s failed", token, table_id)
            return await self._seen(out, None)
        except StorageUnavailable:
            log.warning("storage unavailable during tick")
            return []

    async def _fire(self, table_id: str, token: str, now: float) -> list[Message]:
        base, _, stage = token.rpartition(":")
        _, doc = await self.load(table_id)
        if doc is None:
            await self.store.clear_deadline(table_id, token)
            return []
        turn = doc.turn
        if turn is None or turn.token != base:
            await self._heal_deadline(table_id, token, doc, now)
            return []
        if stage == "w":
            return await self._warn(table_id, doc, turn, now)
        if stage == "r":
            messages = [] if self.rematch is None else await self.rematch.due(table_id, base, now)
            await self.store.clear_deadline(table_id, token)
            return messages
        command = _timer_command(doc)

        async def fire(ctx: Context) -> None:
            ctx.now = now
            current = ctx.doc
            if current is None or current.turn is None or current.turn.token != base:
                return
            if stage == "l":
                await self.handlers.close_idle_lobby(ctx)
            else:
                await self.handlers.turn_missed(ctx)

        messages = await self.run(table_id, command, fire)
        # Unless a save replaced it, the claimed (leased) deadline is still there: it must not fire again.
        await self.store.clear_deadline(table_id, token)
        return messages

    async def sweep_deadlines(self) -> int:
        """Repair the deadline index (`Store.repair_deadlines`): a table whose index entry was lost (a
        lost node, an interrupted write) gets it back, and deadlines of an older version's global index
        move to their tables, so no live table waits without its timer. (Such a moved deadline may be
        out of date: when it fires, `_heal_deadline` sets the one the document's turn asks for.) The
        timer loop calls it at start and every `deadline_sweep_seconds`; how many were repaired."""
        try:
            return await self.store.repair_deadlines()
        except StorageUnavailable:
            log.warning("storage unavailable during the deadline sweep")
            return 0

    async def _heal_deadline(self, table_id: str, token: str, doc: TableDoc, now: float) -> None:
        """A deadline fired for a turn that is over: make sure the table's real deadline is set."""
        if doc.turn is None:
            await self.store.clear_deadline(table_id, token)
            return
        d = _store_deadline(doc.turn, now)
        await self.store.set_deadline(table_id, d.when, d.token)

    async def _warn(self, table_id: str, doc: TableDoc, turn: TurnDoc, now: float) -> list[Message]:
        """The warning comes with the player's hand (`turn_warning`); the turn's deadline is next."""
        command = _timer_command(doc)

        async def warn(ctx: Context) -> None:
            ctx.now = now
            current = ctx.doc
            if current is None or current.turn is None or current.turn.token != turn.token:
                return
            await self.handlers.turn_warning(ctx)

        out = await self.run(table_id, command, warn)
        await self.store.set_deadline(table_id, turn.deadline, f"{turn.token}:a")
        return out

    # --- helpers for handlers ---------------------------------------------------------------------

    async def language_of(self, user: UserRef, chat_key: str | None = None) -> str:
        """The language the bot writes to `user` in, privately: their `lang` choice, else their platform's
        language, else the chat's (`chat_key`), else the default. For texts an adapter writes itself to
        one person (the Telegram greeting after a seat is taken through a deep link)."""
        stored = await self.store.load(f"prefs:{user.key}")
        if stored is not None:
            chosen = UserPrefs.model_validate_json(stored.document).language
            if chosen in LANGUAGES:
                return chosen or self.settings.default_language
        platform = negotiate(user.language)
        if platform is not None:
            return platform
        if chat_key is not None:
            return (await self.chat_settings(chat_key))[1].language
        return self.settings.default_language

    async def chat_settings(self, chat_key: str) -> tuple[int, ChatSettings]:
        stored = await self.store.load(f"settings:{chat_key}")
        if stored is None:
            return 0, self.defaults
        data: dict[str, Any] = json.loads(stored.document)
        merged = {**self.defaults.model_dump(), **data}
        try:
            preset(merged["preset"], merged.get("options") or None)
        except (RuleError, KeyError):
            merged["preset"], merged["options"] = self.defaults.preset, {}
        return stored.version, ChatSettings.model_validate(merged)

    async def touch_chat_settings(self, chat_key: str) -> None:
        """A chat's settings live `settings_ttl` after their last use, not their last change: opening a
        table (once a game, never per move) stores the document again as it is, which renews its TTL.
        The document is written back unchanged so that a chat keeps following the server's defaults for
        what it never set. Someone changing the settings meanwhile wins (their save renewed it)."""
        stored = await self.store.load(f"settings:{chat_key}")
        if stored is None:
            return
        try:
            await self.store.save(
                f"settings:{chat_key}",
                stored.version,
                stored.document,
                ttl_seconds=self.settings.settings_ttl,
            )
        except VersionConflict:
            return

    async def save_chat_settings(self, chat_key: str, version: int, settings: ChatSettings) -> None:
        await self.store.save(
            f"settings:{chat_key}",
            version,
            settings.model_dump_json(),
            ttl_seconds=self.settings.settings_ttl,
        )


def _outsider(ctx: Context) -> bool:
    """The command came from another chat than the table's, from someone not seated at it."""
    doc = ctx.doc
    return ctx.chat.key != ctx.table_id and (doc is None or doc.seat_of(ctx.user.key) is None)


def _take_title(ctx: Context) -> None:
    """A command from the table's own group carries the group's current title: the table takes it (it is
    stored with the command's save, or at once by the adapters' `title` command)."""
    doc, chat = ctx.doc, ctx.chat
    if doc is None or chat.private or chat.key != doc.id or not chat.title or chat.title == doc.title:
        return
    doc.title = chat.title
    ctx.retitled = True


def _store_deadline(turn: TurnDoc, now: float) -> Deadline:
    if turn.kind == "lobby":
        return Deadline(turn.deadline, f"{turn.token}:l")
    if turn.kind == "rematch":
        return Deadline(turn.deadline, f"{turn.token}:r")
    if turn.warn_at is not None and turn.warn_at > now:
        return Deadline(turn.warn_at, f"{turn.token}:w")
    return Deadline(turn.deadline, f"{turn.token}:a")


def _timer_command(doc: TableDoc) -> Command:
    from bot.model import ChatRef, UserRef

    chat = ChatRef(doc.platform, doc.chat_id, doc.title)
    return Command("timer", (), chat, UserRef("timer", "timer", "timer"), source="text")
