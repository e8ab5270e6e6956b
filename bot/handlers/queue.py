"""Play now: the public games' queue as a player uses it (`queue`, typed `/play` in a private chat, and
`cancel`), the same on every platform.

A player asks for a game (`/play`, `/play polish 4 fast`, `/play any`); the desk puts them in the queue
(`bot.matchmaking.MatchQueue`) and answers with their status message (key `queue`), which `refresh`
edits in place while they wait: how many wait for the same game and for how long, a Cancel button, and
after `PUBLIC_COMPUTERS_AFTER` seconds the offer to start at once with computers, or to keep waiting. The
queue decides everything atomically (a cancel that comes after a match says so; a player is never seated
twice); this desk only draws it. The waiting players it refreshes are the ones this process answered
(an instance's own state, no global): if the process stops, their entries expire after
`PUBLIC_ENTRY_SECONDS` unless they press a button (any process answers it).

It knows the service only through the few calls it is given (the store, a language, a table builder),
so that `bot.handlers` and `bot.service` keep not importing each other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from bot.commands import encode_payload
from bot.i18n import Translator, translator
from bot.markup import escape
from bot.matchmaking.base import MatchQueue
from bot.matchmaking.model import (
    ANY_PRESET,
    PACES,
    CancelOutcome,
    JoinOutcome,
    Match,
    Options,
    Player,
    Ratings,
)
from bot.model import Button, Command, Message, Private, Sender, UserRef
from bot.render_queue import QUEUE_KEY, offer_buttons, render_waiting, waiting_buttons
from bot.storage import Store
from bot.table import TableDoc
from core.rules import PRESETS

__all__ = ["OptionError", "QueueDesk", "parse_options", "seated_where"]

log = logging.getLogger("thousand.queue")

LanguageOf = Callable[[UserRef, str | None], Awaitable[str]]
RatingOf = Callable[[Player, Options], Awaitable[Ratings]]
Build = Callable[[Match], Awaitable[list[Message]]]
Deliver = Callable[[Sequence[Message]], Awaitable[None]]


class OptionError(ValueError):
    """A `/play` option the queue does not know; `text` is the translated answer."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


def parse_options(t: Translator, args: Sequence[str]) -> Options:
    """`any`, a preset's name, a number of players, a pace, in any order; defaults: any preset, 3 players
    (or the preset's only count), normal pace. `OptionError` with a translated answer for anything else."""
    preset, players, pace = ANY_PRESET, None, "normal"
    for raw in args:
        word = raw.lower()
        if word == ANY_PRESET or word in PRESETS:
            preset = word
        elif word in PACES:
            pace = word
        elif word.isascii() and word.isdigit() and len(word) == 1:
            players = int(word)
        else:
            raise OptionError(_usage(t))
    counts = sorted(
        {n for name, p in PRESETS.items() if preset in (ANY_PRESET, name) for n in p.player_counts}
    )
    if players is None:
        players = 3 if 3 in counts else counts[0]
    if players not in counts:
        raise OptionError(
            t._("This game is played by {counts} players.").format(counts=", ".join(map(str, counts)))
        )
    return Options(preset, players, pace)


def _usage(t: Translator) -> str:
    presets = ", ".join(PRESETS)
    return t._(
        "I do not know that option. /play takes, in any order: a preset ({presets}) or any, the number "
        "of players (2–4, as the preset allows) and a pace (fast, normal, slow). Example: /play polish 3 fast"
    ).format(presets=presets)


async def seated_where(store: Store, key: str) -> str | None:
    """The title of a live table the player sits at (a group's or a public one), if any: a person at a
    table may not queue (the web page's Play now asks the same)."""
    for table_id in sorted(await store.tables_for_user(key)):
        stored = await store.load(table_id)
        if stored is None:
            continue
        doc = TableDoc.model_validate_json(stored.document)
        if doc.status != "finished" and doc.seat_of(key) is not None:
            return doc.title or table_id
    return None


@dataclass(slots=True)
class _Waiter:
    """A player this process answered and keeps informed."""

    user: UserRef
    chat_key: str
    options: Options
    language: str
    shown: tuple[str, int] = ("", 0)
    """What their status message shows (text, number of button rows): edited only when it changes."""
    offer_hidden_until: float = 0.0
    """They pressed Keep waiting: no offer before this time."""
    since: float = field(default=0.0)


class QueueDesk:
    """The queue's commands for one process, and the refresh of its waiting players' status."""

    def __init__(
        self,
        queue: MatchQueue,
        store: Store,
        language_of: LanguageOf,
        build: Build,
        *,
        rating: RatingOf | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.queue = queue
        self.store = store
        self.language_of = language_of
        self.build = build
        self.rating = rating
        self.clock = clock
        self._waiting: dict[str, _Waiter] = {}

    @property
    def waiting(self) -> frozenset[str]:
        """The player keys this process keeps informed."""
        return frozenset(self._waiting)

    # --- commands ---------------------------------------------------------------------------------

    async def handle(self, command: Command) -> list[Message]:
        """`queue` (options, or a button's `go` / `wait`) and `cancel`; answered to the sender."""
        lang = await self.language_of(command.user, command.chat.key)
        t = translator(lang)
        if not command.chat.private:
            return [
                self._say(command, t, t._("Public games are found in our private chat: send me /play there."))
            ]
        try:
            player = Player(command.user.platform, command.user.user_id, command.user.name, lang)
        except ValueError:
            return [self._say(command, t, t._("Public games are not available on this bot."))]
        if command.name == "cancel":
            return await self._cancel(command, t, player)
        if command.source == "button" and command.args == ("go",):
            return await self._go(command, t, player)
        if command.source == "button" and command.args == ("wait",):
            return await self._keep_waiting(command, t, player)
        try:
            options = parse_options(t, command.args)
        except OptionError as exc:
            return [self._say(command, t, exc.text)]
        return await self._join(command, t, player, options)

    async def _join(self, command: Command, t: Translator, player: Player, options: Options) -> list[Message]:
        where = await self._seated_where(player.key)
        if where is not None:
            text = t._("You already sit at a table: «{title}». Finish it (or /leave it) first.")
            return [self._say(command, t, text.format(title=escape(where)))]
        rating: Ratings = 1500.0 if self.rating is None else await self.rating(player, options)
        result = await self.queue.join(player, rating, options)
        if result.outcome is JoinOutcome.SEATED:
            return [self._say(command, t, t._("You already sit at a public table: it is in this chat."))]
        waiter = self._waiting.get(player.key)
        if result.outcome is JoinOutcome.ALREADY_QUEUED and waiter is not None:
            options = waiter.options
        waiter = _Waiter(command.user, command.chat.key, options, t.lang, since=self.clock())
        self._waiting[player.key] = waiter
        status = await self.queue.status(player.key)
        messages: list[Message] = []
        if result.outcome is JoinOutcome.ALREADY_QUEUED:
            messages.append(self._say(command, t, t._("You are already in the queue: /cancel leaves it.")))
        drawn = self._draw(waiter, t, status.waiting, status.waited, offer=False, notify=True)
        return [*messages, *([drawn] if drawn is not None else [])]

    async def _cancel(self, command: Command, t: Translator, player: Player) -> list[Message]:
        result = await self.queue.cancel(player.key)
        self._waiting.pop(player.key, None)
        if result.outcome is CancelOutcome.CANCELLED:
            return [self._final(command.user, command.chat.key, t, "🚪 " + t._("You left the queue."))]
        if result.outcome is CancelOutcome.MATCHED:
            text = t._(
                "Too late to cancel: a table was found for you first. It is in this chat; "
                "/leave gives your seat to a computer."
            )
            return [self._final(command.user, command.chat.key, t, "✅ " + text)]
        return [self._say(command, t, t._("You are not in the queue. /play finds a game."))]

    async def _go(self, command: Command, t: Translator, player: Player) -> list[Message]:
        match = await self.queue.take_with_computers(player.key)
        if match is None:
            status = await self.queue.status(player.key)
            if status.queued:
                return [self._say(command, t, t._("Not yet: the offer comes after a while of waiting."))]
            self._waiting.pop(player.key, None)
            return [self._say(command, t, t._("You are not in the queue. /play finds a game."))]
        self._waiting.pop(player.key, None)
        found = self._final(
            command.user, command.chat.key, t, "✅ " + t._("Your table with computers is ready.")
        )
        return [found, *await self.build(match)]

    async def _keep_waiting(self, command: Command, t: Translator, player: Player) -> list[Message]:
        status = await self.queue.status(player.key)
        if not status.queued:
            self._waiting.pop(player.key, None)
            return [self._say(command, t, t._("You are not in the queue. /play finds a game."))]
        waiter = self._waiting.get(player.key)
        if waiter is None:  # drawn by another process, which keeps it up to date: nothing to redraw here
            return [self._say(command, t, t._("You keep your place in the queue."))]
        waiter.offer_hidden_until = self.clock() + self.queue.config.computers_after
        message = self._draw(waiter, t, status.waiting, status.waited, offer=False, notify=False)
        return [message] if message is not None else []

    async def _seated_where(self, key: str) -> str | None:
        return await seated_where(self.store, key)

    # --- the status message ------------------------------------------------------------------------

    async def refresh(self) -> list[Message]:
        """The status messages to edit now: a wait that changed (count, time, the offer), or ended (a
        table found, the entry expired). Renews this process's entries. Each player is re-read after
        the queue's answer: one who cancelled meanwhile is not drawn again."""
        if not self._waiting:
            return []
        await self.queue.renew(list(self._waiting))
        out: list[Message] = []
        for key, waiter in list(self._waiting.items()):
            status = await self.queue.status(key)
            seated = None if status.queued else await self.queue.seated_at(key)
            if self._waiting.get(key) is not waiter:
                continue  # a command answered meanwhile, and said what it did
            t = translator(waiter.language)
            if status.queued:
                offer = status.computers_offered and self.clock() >= waiter.offer_hidden_until
                message = self._draw(waiter, t, status.waiting, status.waited, offer=offer, notify=False)
                if message is not None:
                    out.append(message)
                continue
            del self._waiting[key]
            if seated is not None:
                # Seated: the process that built the table said so with its first messages, before the
                # table (`bot.public.builder.build_matches`): said here too, it would come after.
                continue
            text = t._(
                "You are no longer in the queue (nothing was heard from it for a while). /play looks again."
            )
            out.append(self._final(waiter.user, waiter.chat_key, t, text))
        return out

    async def run(self, stop: asyncio.Event, deliver: Deliver, every: float = 2.0) -> None:
        """Refresh every `every` seconds until `stop`; a failed round is logged and the next one tries."""
        while not stop.is_set():
            try:
                messages = await self.refresh()
                if messages:
                    await deliver(messages)
            except Exception:
                log.exception("refreshing the queue's status messages failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)

    def _draw(
        self, waiter: _Waiter, t: Translator, waiting: int, waited: float, *, offer: bool, notify: bool
    ) -> Message | None:
        text = render_waiting(t, waiter.options, max(1, waiting), waited, offer)
        cancel = encode_payload("cancel", (), 0, waiter.chat_key)
        if offer:
            go = encode_payload("queue", ("go",), 0, waiter.chat_key)
            wait = encode_payload("queue", ("wait",), 0, waiter.chat_key)
            buttons = offer_buttons(t, go, wait, cancel)
        else:
            buttons = waiting_buttons(t, cancel)
        shown = (text, len(buttons))
        if shown == waiter.shown and not notify:
            return None
        waiter.shown = shown
        return self._message(waiter.user, t, text, buttons, notify=notify)

    def _final(self, user: UserRef, chat_key: str, t: Translator, text: str) -> Message:
        """The status message's last state: what became of the wait, no buttons left to press."""
        del chat_key
        return self._message(user, t, text, (), notify=False)

    def _message(
        self,
        user: UserRef,
        t: Translator,
        text: str,
        buttons: tuple[tuple[Button, ...], ...],
        *,
        notify: bool,
    ) -> Message:
        return Message(
            Private(user),
            text,
            QUEUE_KEY,
            buttons,
            notify=notify,
            language=t.lang,
            kind="queue",
            version=int(self.clock() * 1000),
        )

    def _say(self, command: Command, t: Translator, text: str) -> Message:
        return Message(Sender(command.user, command.chat), text, language=t.lang, kind="info")
