"""The lobby: opening a table, taking and leaving seats, computer players, starting the game, and the
lobby's end when nobody starts it.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Awaitable, Callable
from typing import Final, Protocol

from bot.context import Context, Refusal
from bot.handlers import rights
from bot.handlers.base import HandlerBase, parse_seat_number
from bot.i18n import Translator
from bot.render import (
    seat_name,
)
from bot.settings import AI_LEVELS
from bot.snapshot import GameSpec
from bot.storage import VersionConflict
from bot.table import ChatSettings, GameDoc, SeatDoc, TableDoc
from bot.views import seat_labels
from core.game import new_game
from core.rules import RuleError, preset

AI_NAMES = ("Ada", "Boris", "Celina", "Dawid", "Eeva", "Fatma", "Gosia", "Hugo")
"""Computer players' names at a table in English or Polish, and at a public table (any reader's)."""
COMPUTER_NAMES: Final[dict[str, tuple[str, ...]]] = {
    "ru": ("Аня", "Борис", "Вера", "Глеб", "Даша", "Егор", "Женя", "Зоя"),
    "uk": ("Андрій", "Богдана", "Віктор", "Галина", "Данило", "Євгенія", "Захар", "Ірина"),
    "et": ("Aino", "Jaan", "Kadri", "Mart", "Eeva", "Tõnu", "Liis", "Priit"),
    "tr": ("Ayşe", "Burak", "Ceren", "Deniz", "Elif", "Fatma", "Gökhan", "Hakan"),
}
"""Computer players' names written as the table's language writes names (a Russian game's computers are not
"Ada" and "Boris" in Latin letters). A name is stored with its seat when the computer sits down, so a game
keeps the names it started with whatever this list becomes."""


def computer_names(lang: str) -> tuple[str, ...]:
    """The names computer players take at a table in `lang`, in order."""
    return COMPUTER_NAMES.get(lang, AI_NAMES)


MAX_SEATS = 4


class _Chat(Protocol):
    """Where a table lives: the command's chat, or the finished table's own document."""

    @property
    def platform(self) -> str: ...

    @property
    def chat_id(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def private(self) -> bool: ...


def _open_lobby(
    ctx: Context, table_id: str, chat: _Chat, settings: ChatSettings, seats: list[SeatDoc]
) -> None:
    """A lobby opened by the sender at `table_id` in `chat` with `seats` (`new`, `again`): the document,
    and the context told the game starts afresh (no game state, the seated indexed, a new deadline)."""
    user = ctx.user
    ctx.doc = TableDoc(
        id=table_id,
        serial=secrets.token_hex(5),
        platform=chat.platform,
        chat_id=chat.chat_id,
        title=chat.title,
        private=chat.private,
        status="lobby",
        creator=user.key,
        creator_name=user.name,
        opened=ctx.version + 1,
        settings=settings,
        seats=seats,
        created=ctx.now,
        updated=ctx.now,
    )
    ctx.state = None
    ctx.before = None
    ctx.users_added.update(s.user for s in seats if s.user is not None)
    ctx.deadline_reset = True


class LobbyHandlers(HandlerBase):
    """From `new` to `start`, and the lobby closing when nobody starts it."""

    async def new(self, ctx: Context) -> None:
        doc = ctx.doc
        if doc is not None and doc.status != "finished":
            raise Refusal("table_exists")
        version, settings = await self._chat_settings(ctx)
        if version == 0:
            # The chat's first table: once it is stored, so are the chat's settings (in the creator's
            # language), so that the language stays the chat's. A refused `new` saves nothing.
            ctx.after_save.append(self._first_settings(ctx.chat.key, settings))
        else:
            # Used, not changed: the settings live a year from now (once a game, after the save).
            chat_key = ctx.chat.key
            ctx.after_save.append(lambda: self.svc.touch_chat_settings(chat_key))
        if ctx.command.args:
            name = ctx.command.args[0].lower()
            try:
                preset(name)
            except RuleError:
                raise Refusal("unknown_preset") from None
            if name != settings.preset:
                settings = settings.model_copy(update={"preset": name, "options": {}})
        _open_lobby(ctx, ctx.table_id, ctx.chat, settings, [await self._sender_seat(ctx, settings.language)])
        ctx.mark("new")
        self._lobby_message(ctx, notify=True)

    async def _sender_seat(self, ctx: Context, language: str) -> SeatDoc:
        """The sender's seat (`new`, `join`), in their language: their own choice, else their platform's,
        else `language` (the chat's)."""
        user = ctx.user
        lang = await self._user_lang(ctx, user, language)
        return SeatDoc(
            kind="human",
            name=user.name,
            user=user.key,
            platform=user.platform,
            user_id=user.user_id,
            lang=lang,
        )

    def _first_settings(self, chat_key: str, settings: ChatSettings) -> Callable[[], Awaitable[None]]:
        async def save() -> None:
            with contextlib.suppress(VersionConflict):  # someone configured the chat meanwhile: theirs
                await self.svc.save_chat_settings(chat_key, 0, settings)

        return save

    def _max_seats(self, doc: TableDoc) -> int:
        rules = preset(doc.settings.preset, doc.settings.options or None)
        return min(MAX_SEATS, max(rules.player_counts))

    async def join(self, ctx: Context) -> None:
        doc = ctx.doc
        if doc is not None and doc.status == "lobby":
            self._check_button(ctx, exact=False)
        doc = self._lobby(ctx)
        if doc.seat_of(ctx.user.key) is not None:
            raise Refusal("already_seated")
        if len(doc.seats) >= self._max_seats(doc):
            raise Refusal("table_full")
        user = ctx.user
        doc.seats.append(await self._sender_seat(ctx, doc.settings.language))
        ctx.users_added.add(user.key)
        ctx.deadline_reset = True
        ctx.mark("join")
        self._lobby_message(ctx)

    async def leave(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = ctx.require_doc()
        seat = self._seated(ctx)
        ctx.users_removed.add(ctx.user.key)
        if doc.status == "lobby":
            self._leave_lobby(ctx, seat, "leave")
            return
        doc.seats[seat].kicked = True
        ctx.mark("leave")
        label = seat_labels(doc)[seat]
        ctx.to_group_drawn(
            lambda t: t._("{name} left: a computer plays the seat.").format(name=seat_name(t, label))
        )
        await self._after_seat_change(ctx)

    def _leave_lobby(self, ctx: Context, seat: int, why: str) -> None:
        """The seat's human leaves the lobby (the creator's part passes on; an empty lobby closes)."""
        doc = ctx.require_doc()
        del doc.seats[seat]
        ctx.deadline_reset = True
        ctx.mark(why)
        if not any(s.human for s in doc.seats):
            self._close_lobby(ctx, "ended")
            return
        if doc.creator == ctx.user.key:
            first = next(s for s in doc.seats if s.human)
            doc.creator, doc.creator_name = first.user or "", first.name
        self._lobby_message(ctx)

    async def unreachable(self, ctx: Context) -> None:
        """The adapter cannot reach the user privately any more (they blocked the bot, or left the group):
        nobody could show them their cards. In a game a computer plays their seat until they send `back`
        (as after missed turns), and the group is told why; in a lobby they lose their place. Nothing to
        answer when they sit at no live table here (the adapter asks for each table they might sit at)."""
        doc = ctx.doc
        seat = doc.seat_of(ctx.user.key) if doc is not None else None
        if doc is None or seat is None or doc.status == "finished":
            return
        if doc.status == "lobby":
            ctx.users_removed.add(ctx.user.key)
            self._leave_lobby(ctx, seat, "unreachable")
            return
        seat_doc = doc.seats[seat]
        if seat_doc.away:
            return
        seat_doc.away = True
        seat_doc.missed = 0
        ctx.deadline_reset = True
        ctx.mark("unreachable")
        label = seat_labels(doc)[seat]
        ctx.to_group_drawn(
            lambda t: t._(
                "{name} cannot be reached: a computer plays for them until they come back with /back."
            ).format(name=seat_name(t, label))
        )
        if not any(s.present for s in doc.seats):
            ctx.to_group_drawn(lambda t: t._("Everyone is away: the game waits. Send /back to play on."))
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx)

    def _may_manage_lobby(self, ctx: Context) -> None:
        if not rights.may_start(ctx):
            raise Refusal("not_seated")

    async def add_ai(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = self._lobby(ctx)
        self._may_manage_lobby(ctx)
        level = ctx.command.args[0].lower() if ctx.command.args else doc.settings.ai_level
        if level not in AI_LEVELS:
            raise Refusal("unknown_level")
        if len(doc.seats) >= self._max_seats(doc):
            raise Refusal("table_full")
        taken = {s.name for s in doc.seats}
        name = next(n for n in computer_names(doc.settings.language) if n not in taken)
        doc.seats.append(SeatDoc(kind="ai", name=name, level=level))
        ctx.deadline_reset = True
        ctx.mark("add_ai")
        self._lobby_message(ctx)

    async def remove_ai(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = self._lobby(ctx)
        self._may_manage_lobby(ctx)
        computers = [i for i, s in enumerate(doc.seats) if s.kind == "ai"]
        if ctx.command.args:
            index = parse_seat_number(ctx.command.args[0], len(doc.seats))
            if index not in computers:
                raise Refusal("no_ai_to_remove")
        elif computers:
            index = computers[-1]
        else:
            raise Refusal("no_ai_to_remove")
        del doc.seats[index]
        ctx.deadline_reset = True
        ctx.mark("remove_ai")
        self._lobby_message(ctx)

    async def start(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        await self._start_game(ctx)

    async def _start_game(self, ctx: Context) -> None:
        doc = self._lobby(ctx)
        self._may_manage_lobby(ctx)
        rules = preset(doc.settings.preset, doc.settings.options or None)
        n = len(doc.seats)
        if n not in rules.player_counts:
            raise Refusal("too_few_players" if n < min(rules.player_counts) else "too_many_players")
        seed = self.rng.getrandbits(48)
        spec = GameSpec(rules, n, seed, seed % n)
        state, events = new_game(rules, n, seed, first_dealer=spec.first_dealer)
        doc.status = "game"
        doc.game = GameDoc(spec=spec.to_json(), actions=[])
        ctx.state = state
        ctx.before = None
        ctx.events.extend(events)
        ctx.game_changed = True
        ctx.deadline_reset = True
        ctx.mark("start")
        labels = seat_labels(doc)

        def started(t: Translator) -> str:
            names = ", ".join(seat_name(t, label) for label in labels)
            return t._("The game has started: {names}.").format(names=names)

        self._lobby_message(ctx, closed=started)
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx)

    async def again(self, ctx: Context) -> None:
        """Play again (the final score sheet's button, or `/again`): a new table in the same chat with the
        same seats in the same order and the finished table's settings. People come back to their seats
        (an away one plays their own turns again), computers keep theirs, a seat its person left is a
        computer's. With one person at the table the game starts at once (nobody else to wait for);
        with more it opens as a lobby with everyone seated, where anyone may leave and any of them
        starts it. Only someone seated at the finished table may press it; a press from the sheet of an
        older table, or once a new table is open, is refused (docs/SERVICE.md, "Play again")."""
        doc = ctx.doc
        if doc is not None and doc.status != "finished":
            raise Refusal("table_exists")
        if doc is None or doc.game is None:
            raise Refusal("no_table")
        self._check_button(ctx, exact=False)
        if doc.seat_of(ctx.user.key) is None:
            raise Refusal("not_seated")
        taken = {s.name for s in doc.seats if not s.kicked}
        seats: list[SeatDoc] = []
        for seat in doc.seats:
            if seat.human:
                seats.append(seat.model_copy(update={"away": False, "missed": 0}))
            elif seat.kind == "ai":
                seats.append(SeatDoc(kind="ai", name=seat.name, level=seat.level))
            else:  # its person left the last game: a computer takes the seat
                name = next(n for n in computer_names(doc.settings.language) if n not in taken)
                taken.add(name)
                seats.append(SeatDoc(kind="ai", name=name, level=doc.settings.ai_level))
        _open_lobby(ctx, doc.id, doc, doc.settings, seats)
        ctx.mark("again")
        if sum(1 for s in seats if s.human) == 1:
            await self._start_game(ctx)
            return
        self._lobby_message(ctx, notify=True)

    # --- timers -----------------------------------------------------------------------------------

    async def close_idle_lobby(self, ctx: Context) -> None:
        doc = ctx.doc
        if doc is None or doc.status != "lobby":
            return
        self._close_lobby(ctx, "idle")
