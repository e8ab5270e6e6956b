"""What each command does to a table. Each handler checks who may do it, then changes the table.

Handlers run inside `Service.run` (load → handler → compare-and-set); they raise `Refusal` for
anything not allowed or malformed, and only change `ctx.doc` / `ctx.state` when the command is valid,
so a refused command never stores anything.
"""

from __future__ import annotations

import enum
import json
import random
import secrets
import typing
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from bot.commands import COMMANDS, MOVE_COMMANDS, table_tag
from bot.context import Context, Refusal
from bot.gameflow import seat_user
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, Translator, negotiate, parse_card_in, translator
from bot.model import UserRef
from bot.render import (
    give_order,
    language_list,
    render_lobby,
    render_rules,
    render_score_sheet,
    render_stats,
    render_table,
    render_top,
    seat_name,
)
from bot.settings import AI_LEVELS
from bot.snapshot import GameSpec
from bot.stats import DEFAULT_RATING, board_keys, elo, outcomes, stats_scopes
from bot.table import ChatSettings, GameDoc, SeatDoc, TableDoc, UserPrefs
from bot.views import public_view, seat_labels
from core.actions import (
    BLIND_NO,
    BLIND_YES,
    BOMB,
    CONCEDE,
    CRAWL,
    PASS,
    SELL,
    Action,
    Bid,
    Contract,
    Discard,
    Give,
    Play,
    TakeTalon,
    bid_action,
    contract_action,
)
from core.cards import CardParseError, mask_of
from core.deal import Phase
from core.game import GameState, new_game
from core.record import build_record
from core.rules import Declaration, RuleError, RuleSet, preset

if TYPE_CHECKING:
    from bot.service import Service

__all__ = ["Handlers"]

Handler = Callable[[Context], Awaitable[None]]

AI_NAMES = ("Ada", "Boris", "Celina", "Dawid", "Eeva", "Fatma", "Gosia", "Hugo")
MAX_SEATS = 4
_YES = frozenset({"yes", "y", "1", "true", "on", "tak", "да", "так", "jah", "evet"})
_NO = frozenset({"no", "n", "0", "false", "off", "nie", "нет", "ні", "ei", "hayır", "hayir"})
_DECLARE = frozenset({"!", "+", "★", "declare", "marriage"})


class Handlers:
    def __init__(self, service: Service, rng: random.Random) -> None:
        self.svc = service
        self.flow = service.flow
        self.rng = rng
        self.flow.on_won = self.record_stats
        self._table: dict[str, Handler] = {
            "new": self.new,
            "join": self.join,
            "leave": self.leave,
            "add_ai": self.add_ai,
            "remove_ai": self.remove_ai,
            "start": self.start,
            "hand": self.hand,
            "table": self.show_table,
            "score": self.score,
            "rules": self.rules,
            "set": self.set,
            "lang": self.lang,
            "kick": self.kick,
            "back": self.back,
            "end": self.end,
            "export": self.export,
            "stats": self.stats,
            "top": self.top,
            "title": self.title,
            "unreachable": self.unreachable,
        }
        for name in MOVE_COMMANDS:
            self._table[name] = self._move_handler(name)
        missing = set(COMMANDS) - set(self._table) - {"help"}
        assert not missing, missing

    def for_command(self, name: str) -> Handler:
        return self._table[name]

    # --- checks -----------------------------------------------------------------------------------

    def _check_button(self, ctx: Context, *, exact: bool) -> None:
        """Refuse a forged button (a version the table never had) or a stale one.

        Moves need the exact version they were drawn for; lobby and information buttons only need to
        belong to the current table (drawn at or after the version it was opened at).
        """
        cmd = ctx.command
        if cmd.source != "button" or cmd.version is None:
            return
        doc = ctx.doc
        if doc is None:
            raise Refusal("stale_button")
        # A button of an earlier table in this chat (its versions may even be the same as this one's).
        other = cmd.table_tag is not None and cmd.table_tag != table_tag(doc.serial)
        if cmd.version > ctx.version and not other:
            raise Refusal("invalid_button")
        if other or cmd.version < doc.opened or (exact and cmd.version != ctx.version):
            refusal = Refusal("stale_button")
            seat = doc.seat_of(ctx.user.key)
            if exact and seat is not None and doc.status == "game" and doc.seats[seat].present:
                self.flow.hand_message(ctx, seat, force=True)
                refusal.follow_up = ctx.messages[-1:]
            raise refusal

    def _is_admin(self, ctx: Context) -> bool:
        """An admin of the table's own chat (as the adapter reports): not of the chat a command came from
        when that is another one (a private chat's command or button for a group's table)."""
        return bool(ctx.user.is_admin) and ctx.table_id == ctx.chat.key

    def _is_manager(self, ctx: Context) -> bool:
        """A chat admin (as the adapter reports), the live table's creator, or anyone in their own chat
        for its own table (a private chat's commands may reach a group's table: that is not their chat)."""
        if self._is_admin(ctx) or (ctx.chat.private and ctx.table_id == ctx.chat.key):
            return True
        doc = ctx.doc
        return doc is not None and doc.status != "finished" and doc.creator == ctx.user.key

    def _seated(self, ctx: Context) -> int:
        doc = ctx.require_doc()
        seat = doc.seat_of(ctx.user.key)
        if seat is None or doc.status == "finished":
            raise Refusal("not_seated")
        return seat

    def _lobby(self, ctx: Context) -> TableDoc:
        doc = ctx.doc
        if doc is None or doc.status == "finished":
            raise Refusal("no_table")
        if doc.status != "lobby":
            raise Refusal("lobby_only")
        return doc

    def _game(self, ctx: Context) -> TableDoc:
        doc = ctx.doc
        if doc is None or doc.status == "finished":
            raise Refusal("no_table")
        if doc.status != "game" or ctx.state is None:
            raise Refusal("game_only")
        return doc

    def _lobby_message(self, ctx: Context, *, notify: bool = False, closed: str | None = None) -> None:
        doc = ctx.require_doc()
        t = ctx.t_group()
        if closed is not None:
            ctx.to_group(closed, key=f"lobby:{doc.serial}", kind="lobby")
            return
        rules = preset(doc.settings.preset, doc.settings.options or None)
        rendered = render_lobby(t, doc.seats, doc.settings, rules, doc.creator_name, ctx.payload_maker())
        ctx.to_group(
            rendered.text, key=f"lobby:{doc.serial}", buttons=rendered.buttons, notify=notify, kind="lobby"
        )

    async def _user_lang(self, ctx: Context, user: UserRef, chat_lang: str) -> str:
        prefs = await self._prefs(user.key)
        if prefs[1].language in LANGUAGES:
            return prefs[1].language or chat_lang
        return negotiate(user.language) or chat_lang

    async def _prefs(self, user_key: str) -> tuple[int, UserPrefs]:
        stored = await self.svc.store.load(f"prefs:{user_key}")
        if stored is None:
            return 0, UserPrefs()
        return stored.version, UserPrefs.model_validate_json(stored.document)

    async def _save_prefs(self, user_key: str, change: Callable[[UserPrefs], None]) -> None:
        from bot.storage import VersionConflict

        for _ in range(self.svc.settings.cas_retries):
            version, prefs = await self._prefs(user_key)
            change(prefs)
            try:
                await self.svc.store.save(
                    f"prefs:{user_key}",
                    version,
                    prefs.model_dump_json(),
                    ttl_seconds=self.svc.settings.settings_ttl,
                )
                return
            except VersionConflict:
                continue

    # --- lobby ------------------------------------------------------------------------------------

    async def new(self, ctx: Context) -> None:
        doc = ctx.doc
        if doc is not None and doc.status != "finished":
            raise Refusal("table_exists")
        _, settings = await self.svc.chat_settings(ctx.chat.key)
        if ctx.command.args:
            name = ctx.command.args[0].lower()
            try:
                preset(name)
            except RuleError:
                raise Refusal("unknown_preset") from None
            if name != settings.preset:
                settings = settings.model_copy(update={"preset": name, "options": {}})
        lang = await self._user_lang(ctx, ctx.user, settings.language)
        user = ctx.user
        ctx.doc = TableDoc(
            id=ctx.table_id,
            serial=secrets.token_hex(5),
            platform=ctx.chat.platform,
            chat_id=ctx.chat.chat_id,
            title=ctx.chat.title,
            private=ctx.chat.private,
            status="lobby",
            creator=user.key,
            creator_name=user.name,
            opened=ctx.version + 1,
            settings=settings,
            seats=[
                SeatDoc(
                    kind="human",
                    name=user.name,
                    user=user.key,
                    platform=user.platform,
                    user_id=user.user_id,
                    lang=lang,
                )
            ],
            created=ctx.now,
            updated=ctx.now,
        )
        ctx.state = None
        ctx.before = None
        ctx.users_added.add(user.key)
        ctx.deadline_reset = True
        ctx.mark("new")
        self._lobby_message(ctx, notify=True)

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
        lang = await self._user_lang(ctx, user, doc.settings.language)
        doc.seats.append(
            SeatDoc(
                kind="human",
                name=user.name,
                user=user.key,
                platform=user.platform,
                user_id=user.user_id,
                lang=lang,
            )
        )
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
        t = ctx.t_group()
        ctx.to_group(
            t._("{name} left: a computer plays the seat.").format(name=seat_name(t, seat_labels(doc)[seat])),
            kind="notice",
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
        t = ctx.t_group()
        label = seat_name(t, seat_labels(doc)[seat])
        ctx.to_group(
            t._(
                "{name} cannot be reached: a computer plays for them until they come back with /back."
            ).format(name=label),
            kind="notice",
        )
        if not any(s.present for s in doc.seats):
            ctx.to_group(t._("Everyone is away: the game waits. Send /back to play on."), kind="notice")
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx)

    async def _after_seat_change(self, ctx: Context) -> None:
        """A seat went to a computer (leave, kick): end an empty game, else let computers move."""
        doc = ctx.require_doc()
        if not any(s.human for s in doc.seats):
            self.flow.finish(ctx, "abandoned")
            return
        ctx.deadline_reset = True
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx)

    def _close_lobby(self, ctx: Context, why: str) -> None:
        doc = ctx.require_doc()
        doc.status = "finished"
        doc.ended = why
        doc.turn = None
        ctx.deadline_reset = True
        ctx.users_removed.update(doc.human_keys)
        ctx.mark(f"closed:{why}")
        t = ctx.t_group()
        text = t._("The table was closed.") if why != "idle" else t._("The table closed: nobody started it.")
        self._lobby_message(ctx, closed=text)

    def _may_manage_lobby(self, ctx: Context, doc: TableDoc) -> None:
        if doc.seat_of(ctx.user.key) is None and not self._is_manager(ctx):
            raise Refusal("not_seated")

    async def add_ai(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = self._lobby(ctx)
        self._may_manage_lobby(ctx, doc)
        level = ctx.command.args[0].lower() if ctx.command.args else doc.settings.ai_level
        if level not in AI_LEVELS:
            raise Refusal("unknown_level")
        if len(doc.seats) >= self._max_seats(doc):
            raise Refusal("table_full")
        taken = {s.name for s in doc.seats}
        name = next(n for n in AI_NAMES if n not in taken)
        doc.seats.append(SeatDoc(kind="ai", name=name, level=level))
        ctx.deadline_reset = True
        ctx.mark("add_ai")
        self._lobby_message(ctx)

    async def remove_ai(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = self._lobby(ctx)
        self._may_manage_lobby(ctx, doc)
        computers = [i for i, s in enumerate(doc.seats) if s.kind == "ai"]
        if ctx.command.args:
            index = _seat_number(ctx.command.args[0], len(doc.seats))
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
        doc = self._lobby(ctx)
        self._may_manage_lobby(ctx, doc)
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
        t = ctx.t_group()
        names = ", ".join(seat_name(t, label) for label in seat_labels(doc))
        self._lobby_message(ctx, closed=t._("The game has started: {names}.").format(names=names))
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx)

    # --- moves ------------------------------------------------------------------------------------

    def _move_handler(self, name: str) -> Handler:
        async def handler(ctx: Context) -> None:
            await self.move(ctx, name)

        return handler

    async def move(self, ctx: Context, name: str) -> None:
        doc = self._game(ctx)
        self._check_button(ctx, exact=True)
        seat = doc.seat_of(ctx.user.key)
        if seat is None:
            raise Refusal("not_seated")
        if doc.seats[seat].away:
            raise Refusal("you_are_away")
        state = ctx.state
        assert state is not None
        if state.to_act != seat:
            raise Refusal("not_your_turn")
        action = self._parse_move(ctx, name, seat)
        if action is None:
            return
        doc.seats[seat].missed = 0
        try:
            self.flow.apply_action(ctx, seat, action)
        except Refusal as refusal:
            refusal.extra = _legal_hint(ctx.t_user(), ctx, seat)
            raise
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx)

    def _card(self, ctx: Context, token: str) -> int:
        langs = (ctx.user_lang(), ctx.group_lang())
        try:
            return parse_card_in(token.rstrip("!"), langs)
        except CardParseError:
            raise Refusal("bad_card") from None

    def _cards(self, ctx: Context, args: Sequence[str]) -> list[int]:
        tokens = [part for arg in args for part in arg.replace(",", " ").split()]
        return [self._card(ctx, tok) for tok in tokens]

    def _parse_move(self, ctx: Context, name: str, seat: int) -> Action | None:
        """The action a move command names; None when a button picked part of a multi-card move."""
        args = ctx.command.args
        state = ctx.state
        assert state is not None
        if name == "pass":
            return PASS
        if name in ("bid", "contract"):
            if not args:
                raise Refusal("missing_argument")
            value = _number(args[0])
            return bid_action(value) if name == "bid" else contract_action(value)
        if name == "play":
            if not args:
                raise Refusal("missing_argument")
            card = self._card(ctx, args[0])
            declare = args[0].endswith("!") or any(a.lower() in _DECLARE for a in args[1:])
            if state.rules.declaration != Declaration.CHOICE:
                declare = False
            return Play(card, declare)
        if name == "give":
            deal = state.deal
            others = give_order(deal.active, seat)
            cards = self._cards(ctx, args)
            if len(cards) < len(others) and ctx.command.source == "button":
                self._selection(ctx, seat, cards)
                return None
            if len(cards) != len(others):
                raise Refusal("bad_give")
            return Give(tuple(sorted(zip(others, cards, strict=True))))
        if name == "discard":
            cards = self._cards(ctx, args)
            if len(cards) < 2 and ctx.command.source == "button":
                self._selection(ctx, seat, cards)
                return None
            if len(cards) != 2:
                raise Refusal("bad_discard")
            return Discard(tuple(sorted(cards)))
        if name == "take":
            pile = _number(args[0]) - 1 if args else 0
            if pile < 0:
                raise Refusal("no_such_pile")
            return TakeTalon(pile)
        if name == "blind":
            if not args:
                return BLIND_YES
            word = args[0].lower()
            if word in _YES:
                return BLIND_YES
            if word in _NO:
                return BLIND_NO
            raise Refusal("bad_value")
        if name == "sell":
            return SELL
        if name == "bomb":
            return BOMB
        if name == "concede":
            return CONCEDE
        return CRAWL

    def _selection(self, ctx: Context, seat: int, cards: list[int]) -> None:
        """Part of a give or lay-down picked with buttons: show the hand with the choice so far."""
        state = ctx.state
        assert state is not None
        hand = state.deal.hands[seat]
        if mask_of(cards) & ~hand or len(set(cards)) != len(cards):
            raise Refusal("card_not_in_hand")
        self.flow.hand_message(ctx, seat, force=True, selection=tuple(cards), notify=False)

    # --- information ------------------------------------------------------------------------------

    async def hand(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = self._game(ctx)
        seat = self._seated(ctx)
        if not doc.seats[seat].present:
            raise Refusal("you_are_away")
        # Asked for: a new message at the bottom of the chat, even when nothing in it changed.
        self.flow.hand_message(ctx, seat, force=True, notify=True)

    async def show_table(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = ctx.doc
        if doc is not None and doc.status == "lobby":
            self._lobby_message(ctx, notify=True)
            return
        doc = self._game(ctx)
        assert ctx.state is not None
        t = ctx.t_group()
        table = render_table(t, public_view(doc, ctx.state), ctx.payload_maker())
        key = f"table:{doc.serial}:{ctx.state.deal_number}"
        ctx.to_group(table.text, key=key, buttons=table.buttons, notify=True, kind="table")

    async def score(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = ctx.doc
        if doc is None or doc.game is None or ctx.state is None:
            raise Refusal("game_only")
        t = ctx.t_user() if ctx.chat.private else ctx.t_group()
        state = ctx.state
        winner = state.winner if doc.ended == "won" else None
        text = render_score_sheet(t, state.results, seat_labels(doc), winner, ended=doc.ended).text
        ctx.answer(text, kind="score", language=t.lang)

    def _rules_of(self, ctx: Context) -> tuple[RuleSet, ChatSettings, int | None]:
        doc = ctx.doc
        if doc is not None and ctx.state is not None and doc.status != "finished":
            return ctx.state.rules, doc.settings, ctx.state.players
        settings = doc.settings if doc is not None and doc.status == "lobby" else None
        if settings is None:
            settings = ctx.defaults if doc is None else doc.settings
        return preset(settings.preset, settings.options or None), settings, None

    async def rules(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        rules, settings, players = self._rules_of(ctx)
        if ctx.doc is None or ctx.doc.status == "finished":
            _, settings = await self.svc.chat_settings(ctx.chat.key)
            rules = preset(settings.preset, settings.options or None)
        t = ctx.t_user() if ctx.chat.private else translator(settings.language)
        ctx.answer(render_rules(t, rules, settings, players).text, kind="rules", language=t.lang)

    async def export(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = ctx.doc
        state = ctx.state
        if doc is None or doc.game is None or state is None:
            raise Refusal("nothing_to_export")
        record = build_record(state, [s.name for s in doc.seats])
        if not state.finished:
            # Only finished deals: the deal in progress would show everyone's hand.
            record["deals"] = record["deals"][: len(state.history)]
        if not record["deals"]:
            raise Refusal("nothing_to_export")
        data = json.dumps(record, ensure_ascii=False, indent=1).encode()
        t = ctx.t_user()
        ctx.reply(
            t._("The game record ({deals} finished deals).").format(deals=len(state.history)),
            document=(f"thousand-{doc.serial}.json", data),
            kind="export",
        )

    async def stats(self, ctx: Context) -> None:
        store = self.svc.store
        overall, in_chat = stats_scopes(ctx.chat.key, ctx.user.key)
        board_all, board_chat = board_keys(ctx.chat.key)
        scope, board = (overall, board_all) if ctx.chat.private else (in_chat, board_chat)
        values = await store.get_stats(scope)
        rating = await store.get_rating(board, ctx.user.key)
        t = ctx.t_user() if ctx.chat.private else ctx.t_group()
        ctx.answer(render_stats(t, ctx.user.name, values, rating).text, kind="stats", language=t.lang)

    async def top(self, ctx: Context) -> None:
        store = self.svc.store
        board_all, board_chat = board_keys(ctx.chat.key)
        rows = await store.top(board_all if ctx.chat.private else board_chat, 10)
        named = []
        for member, rating in rows:
            _, prefs = await self._prefs(member)
            named.append((prefs.name or member.split(":", 1)[-1], rating))
        t = ctx.t_user() if ctx.chat.private else ctx.t_group()
        ctx.answer(render_top(t, named).text, kind="top", language=t.lang)

    # --- settings ---------------------------------------------------------------------------------

    async def set(self, ctx: Context) -> None:
        args = ctx.command.args
        if not args:
            await self.rules(ctx)
            return
        if not self._is_manager(ctx):
            raise Refusal("not_allowed")
        if len(args) < 2:
            raise Refusal("missing_argument")
        key = args[0].lower()
        raw = " ".join(args[1:])
        version, settings = await self.svc.chat_settings(ctx.chat.key)
        settings = _changed_settings(settings, key, raw)
        await self.svc.save_chat_settings(ctx.chat.key, version, settings)
        t = translator(settings.language)
        doc = ctx.doc
        note = ""
        if doc is not None and doc.status != "finished":
            live = {
                "language": settings.language,
                "turn_seconds": settings.turn_seconds,
                "ai_level": settings.ai_level,
            }
            if doc.status == "lobby":
                doc.settings = settings
                for seat in doc.seats:
                    if seat.kind == "ai":
                        seat.level = settings.ai_level
            else:
                doc.settings = doc.settings.model_copy(update=live)
                if key in ("preset",) or key not in _CHAT_KEYS:
                    note = "\n" + t._(
                        "The game in progress keeps its rules; the change applies to the next one."
                    )
            ctx.deadline_reset = doc.status == "lobby"
            ctx.mark("set")
            if doc.status == "lobby":
                self._lobby_message(ctx)
        rules = preset(settings.preset, settings.options or None)
        text = t._("Settings changed.") + note + "\n" + render_rules(t, rules, settings, None).text
        ctx.answer(text, kind="settings", language=t.lang)

    async def title(self, ctx: Context) -> None:
        """The group's title changed (an adapter's `title` command): private messages name it from now on,
        and the hands on screen are redrawn with it (edits: nobody is notified)."""
        doc = ctx.doc
        if doc is None or not ctx.retitled or doc.status == "finished":
            return
        ctx.mark("title")
        if doc.status == "game" and ctx.state is not None:
            for i, seat in enumerate(doc.seats):
                if seat.present:
                    self.flow.hand_message(ctx, i, force=True, notify=False)

    async def lang(self, ctx: Context) -> None:
        args = ctx.command.args
        t = ctx.t_user()
        if not args:
            ctx.reply(t._("Languages: {list}").format(list=language_list()))
            return
        code = negotiate(args[0]) or args[0].lower()
        if code not in LANGUAGES:
            raise Refusal("unknown_language")
        await self._save_prefs(ctx.user.key, lambda p: setattr(p, "language", code))
        doc = ctx.doc
        seat = doc.seat_of(ctx.user.key) if doc is not None else None
        if doc is not None and seat is not None and doc.status != "finished":
            doc.seats[seat].lang = code
            ctx.mark("lang")
        # Chosen in their private chat, the user's seats at other tables (groups') follow too; a command
        # given in a group changes no other chat's table.
        others = await self.svc.store.tables_for_user(ctx.user.key) if ctx.chat.private else set()
        for table_id in sorted(others - {ctx.table_id}):
            ctx.other_tables += await self.svc.run(table_id, ctx.command, _seat_language(ctx.user.key, code))
        done = translator(code)._("Your language is now {name}.").format(name=LANGUAGE_NAMES[code])
        ctx.reply(done, language=code)

    # --- seats ------------------------------------------------------------------------------------

    async def kick(self, ctx: Context) -> None:
        doc = ctx.require_doc()
        if doc.status == "finished":
            raise Refusal("no_table")
        if not ctx.command.args:
            raise Refusal("missing_argument")
        target = _find_seat(doc, ctx.command.args[0])
        seat_doc = doc.seats[target]
        if not seat_doc.human:
            raise Refusal("not_a_human")
        t = ctx.t_group()
        label = seat_name(t, seat_labels(doc)[target])
        if doc.status == "lobby":
            if not self._is_manager(ctx):
                raise Refusal("not_allowed")
            if seat_doc.user is not None:
                ctx.users_removed.add(seat_doc.user)
            del doc.seats[target]
            ctx.deadline_reset = True
            ctx.mark("kick")
            self._lobby_message(ctx)
            return
        voter = doc.seat_of(ctx.user.key)
        if not self._is_admin(ctx):
            if voter is None or not doc.seats[voter].human:
                raise Refusal("not_seated")
            if voter == target:
                raise Refusal("bad_value")
            votes = doc.kick_votes.setdefault(str(target), [])
            if ctx.user.key in votes:
                raise Refusal("already_voted")
            votes.append(ctx.user.key)
            others = [s for i, s in enumerate(doc.seats) if i != target and s.human]
            if len(votes) * 2 <= len(others):
                ctx.mark("kick_vote")
                ctx.to_group(
                    t._("Vote to kick {name}: {votes} of {needed}.").format(
                        name=label, votes=len(votes), needed=len(others) // 2 + 1
                    ),
                    kind="notice",
                )
                return
        doc.kick_votes.pop(str(target), None)
        seat_doc.kicked = True
        if seat_doc.user is not None:
            ctx.users_removed.add(seat_doc.user)
        ctx.mark("kick")
        ctx.to_group(t._("{name} was kicked: a computer plays the seat.").format(name=label), kind="notice")
        await self._after_seat_change(ctx)

    async def back(self, ctx: Context) -> None:
        doc = self._game(ctx)
        seat = self._seated(ctx)
        seat_doc = doc.seats[seat]
        if not seat_doc.away:
            raise Refusal("not_away")
        seat_doc.away = False
        seat_doc.missed = 0
        ctx.deadline_reset = True
        ctx.mark("back")
        t = ctx.t_group()
        ctx.to_group(t._("{name} is back.").format(name=seat_name(t, seat_labels(doc)[seat])), kind="notice")
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx, force_table=True)
        if not any(m.kind == "hand" and m.key for m in ctx.messages):
            self.flow.hand_message(ctx, seat, force=True)

    async def end(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = ctx.doc
        if doc is None or doc.status == "finished":
            raise Refusal("no_table")
        if not self._is_manager(ctx):
            raise Refusal("not_allowed")
        if doc.status == "lobby":
            self._close_lobby(ctx, "ended")
            return
        t = ctx.t_group()
        ctx.to_group(t._("{name} ended the game.").format(name=ctx.user.name), kind="notice")
        self.flow.finish(ctx, "ended")

    # --- timers -----------------------------------------------------------------------------------

    async def close_idle_lobby(self, ctx: Context) -> None:
        doc = ctx.doc
        if doc is None or doc.status != "lobby":
            return
        self._close_lobby(ctx, "idle")

    async def turn_missed(self, ctx: Context) -> None:
        """The turn's time ran out: the computer plays it; after enough misses it keeps the seat."""
        doc = ctx.doc
        state = ctx.state
        if doc is None or state is None or doc.status != "game" or doc.turn is None:
            return
        seat = doc.turn.seat
        if state.to_act != seat or not doc.seats[seat].present:
            return
        seat_doc = doc.seats[seat]
        await self.flow.play_for(ctx, seat)
        seat_doc.missed += 1
        t = ctx.t_group()
        label = seat_name(t, seat_labels(doc)[seat])
        user = seat_user(seat_doc)
        tu = translator(ctx.user_lang(seat_doc.user))
        if seat_doc.missed >= self.svc.settings.missed_turns_to_away:
            seat_doc.away = True
            ctx.to_group(t._("{name} is away: a computer plays for them.").format(name=label), kind="notice")
            ctx.to_user(
                user, tu._("You missed your turns: a computer plays for you. Send /back to play again.")
            )
            if not any(s.present for s in doc.seats):
                ctx.to_group(t._("Everyone is away: the game waits. Send /back to play on."), kind="notice")
        else:
            ctx.to_user(user, tu._("Time is up: a computer played your turn."))
        ctx.mark("timeout")
        await self.flow.run_computers(ctx)
        self.flow.conclude(ctx)

    # --- statistics (after the save that ended a game) --------------------------------------------

    async def record_stats(self, doc: TableDoc, state: GameState) -> None:
        """Counters and ratings for a won game; called once, by the process whose save ended it."""
        if not state.finished:
            return
        store = self.svc.store
        chat_key = doc.id
        people = outcomes(doc, state)
        for o in people:
            for scope in stats_scopes(chat_key, o.user):
                await store.add_stats(scope, o.fields())
            await self._save_prefs(o.user, lambda p, name=o.name: setattr(p, "name", name))  # type: ignore[misc]
        await store.add_stats(f"chat:{chat_key}", {"games": 1, "deals": len(state.results)})
        if len(people) >= 2:
            totals = [o.total for o in people]
            for board in board_keys(chat_key):
                current = [await store.get_rating(board, o.user) for o in people]
                ratings = [DEFAULT_RATING if r is None else r for r in current]
                for o, rating in zip(people, elo(ratings, totals), strict=True):
                    await store.set_rating(board, o.user, rating)


def _seat_language(user_key: str, code: str) -> Handler:
    """A table step that sets one user's seat language (nothing when they do not sit there)."""

    async def step(ctx: Context) -> None:
        doc = ctx.doc
        seat = doc.seat_of(user_key) if doc is not None else None
        if doc is not None and seat is not None and doc.status != "finished" and doc.seats[seat].lang != code:
            doc.seats[seat].lang = code
            ctx.mark("lang")

    return step


_CHAT_KEYS = frozenset({"language", "lang", "turn", "turn_seconds", "turn_time", "level", "ai", "ai_level"})


def _changed_settings(settings: ChatSettings, key: str, raw: str) -> ChatSettings:
    """The settings with one change; refused when the key or value is not allowed."""
    value = raw.strip()
    if key == "preset":
        name = value.lower()
        try:
            preset(name)
        except RuleError:
            raise Refusal("unknown_preset") from None
        return settings.model_copy(update={"preset": name, "options": {}})
    if key in ("language", "lang"):
        code = negotiate(value) or value.lower()
        if code not in LANGUAGES:
            raise Refusal("unknown_language")
        return settings.model_copy(update={"language": code})
    if key in ("turn", "turn_seconds", "turn_time"):
        seconds = _number(value.removesuffix("s"))
        if seconds != 0 and not 15 <= seconds <= 3600:
            raise Refusal("bad_value")
        return settings.model_copy(update={"turn_seconds": seconds})
    if key in ("level", "ai", "ai_level"):
        if value.lower() not in AI_LEVELS:
            raise Refusal("unknown_level")
        return settings.model_copy(update={"ai_level": value.lower()})
    if key not in RuleSet.model_fields or key == "preset":
        raise Refusal("unknown_option")
    options = dict(settings.options)
    if value.lower() in ("default", "reset"):
        options.pop(key, None)
    else:
        options[key] = _option_value(key, value)
    try:
        preset(settings.preset, options or None)
    except RuleError:
        raise Refusal("bad_value") from None
    return settings.model_copy(update={"options": options})


def _option_value(key: str, text: str) -> Any:
    """A typed value for a rule option, read the way its field is declared.

    bool: on/off, yes/no, true/false (and the same words in the supported languages); a choice: one of its
    values (`off` also as no/false for the barrel); int: a number (`-` allowed; the rules check ranges);
    int | None: a number or none/off/no; a tuple of ints: `2,3` or `2 3`; the marriage values: JSON
    (`{"H": 100, ...}`) or `H=100 D=80 C=60 S=40`. Anything else is refused (`bad_value`, `bad_number`).
    """
    annotation = RuleSet.model_fields[key].annotation
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    low = text.lower().strip()
    if annotation is bool:
        if low in _YES:
            return True
        if low in _NO:
            return False
        raise Refusal("bad_value")
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = {str(member.value) for member in annotation}
        if low in values:
            return low
        if low in _NO and "off" in values:
            return "off"
        raise Refusal("bad_value")
    if origin is tuple:
        parts = text.replace(",", " ").split()
        if not parts or not all(part.isdigit() for part in parts):
            raise Refusal("bad_value")
        return tuple(int(part) for part in parts)
    if origin is dict:
        return _mapping(text)
    optional = type(None) in args
    if optional and low in ("none", "null", "off", "no", "-"):
        return None
    if annotation is int or (optional and int in args):
        return -_number(low[1:]) if low.startswith("-") else _number(low)
    raise Refusal("bad_value")


_QUOTES = str.maketrans("“”„«»", '"""""')


def _mapping(text: str) -> dict[str, int]:
    """`{"H": 100, "D": 80}` (also with typographic quotes, as phones type them) or `H=100 D=80`."""
    plain = text.translate(_QUOTES)
    try:
        value = json.loads(plain)
    except json.JSONDecodeError:
        value = {}
        for part in plain.replace(",", " ").replace(";", " ").split():
            name, sep, number = part.replace(":", "=").partition("=")
            if not sep or not name:
                raise Refusal("bad_value") from None
            value[name] = number
    if not isinstance(value, dict) or not value:
        raise Refusal("bad_value")
    out: dict[str, int] = {}
    for name, number in value.items():
        if isinstance(number, bool) or not isinstance(number, int | str):
            raise Refusal("bad_value")
        out[str(name).strip().upper()] = _number(str(number)) if isinstance(number, str) else number
    return out


def _number(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise Refusal("bad_number") from None
    if not 0 <= value <= 100_000:
        raise Refusal("bad_number")
    return value


def _seat_number(text: str, seats: int) -> int:
    index = _number(text) - 1
    if not 0 <= index < seats:
        raise Refusal("no_such_seat")
    return index


def _find_seat(doc: TableDoc, text: str) -> int:
    if text.strip().isdigit():
        return _seat_number(text, len(doc.seats))
    wanted = text.lstrip("@").lower()
    for i, seat in enumerate(doc.seats):
        if seat.name.lower() == wanted or (seat.user_id or "").lower() == wanted:
            return i
    raise Refusal("no_such_seat")


def _legal_hint(t: Translator, ctx: Context, seat: int) -> str | None:
    """What the player may do instead, for a refused move."""
    state = ctx.state
    if state is None or state.to_act != seat:
        return None
    legal = state.legal_actions(seat)
    phase = state.deal.phase
    if phase in (Phase.BIDDING, Phase.SALE):
        bids = [a.value for a in legal if type(a) is Bid]
        if bids:
            return t._("You may bid {low} to {high} (steps of {step}).").format(
                low=bids[0], high=bids[-1], step=state.rules.bid_step
            )
        return t._("You can only pass.")
    if phase == Phase.CONTRACT:
        values = [a.value for a in legal if type(a) is Contract]
        return t._("Contract: {low} to {high}.").format(low=values[0], high=values[-1])
    if phase == Phase.PLAY:
        cards = sorted({a.card for a in legal if type(a) is Play})
        return t._("You may play: {cards}").format(cards=t.cards(cards))
    return None
