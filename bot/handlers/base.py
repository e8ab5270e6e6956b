"""The base every handler mixin shares: who may act (the checks), the lobby message, the users'
preferences, and the seat changes both the lobby and the table's management make.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bot.commands import table_tag
from bot.context import Context, Refusal
from bot.handlers import rights
from bot.i18n import LANGUAGES, Translator, negotiate
from bot.model import UserRef
from bot.ports import TableService
from bot.render import (
    render_lobby,
)
from bot.table import ChatSettings, TableDoc, UserPrefs
from bot.vocabulary import NO as NO  # words for yes and no (blind games, rule options)
from bot.vocabulary import YES as YES
from core.rules import preset


class HandlerBase:
    """The service (through `TableService` only), the game flow and the random source seeding new games."""

    def __init__(self, svc: TableService, rng: random.Random) -> None:
        self.svc = svc
        self.flow = svc.flow
        self.rng = rng

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
        """An admin of the table's own chat (see `bot.handlers.rights`)."""
        return rights.is_admin(ctx)

    def _is_manager(self, ctx: Context) -> bool:
        """May change settings, end the table, remove people from its lobby (see `bot.handlers.rights`)."""
        return rights.may_manage(ctx)

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

    def _lobby_message(
        self, ctx: Context, *, notify: bool = False, closed: str | Callable[[Translator], str] | None = None
    ) -> None:
        """The lobby message, or with `closed` its last text (a text, or drawn per language: a public
        table's readers each get it in theirs)."""
        doc = ctx.require_doc()
        t = ctx.t_group()
        if callable(closed):
            draw = closed
            ctx.to_group(draw(t), key=f"lobby:{doc.serial}", kind="lobby", redraw=lambda tt: (draw(tt), ()))
            return
        if closed is not None:
            ctx.to_group(closed, key=f"lobby:{doc.serial}", kind="lobby")
            return
        rules = preset(doc.settings.preset, doc.settings.options or None)
        rendered = render_lobby(t, doc.seats, doc.settings, rules, doc.creator_name, ctx.payload_maker())
        ctx.to_group(
            rendered.text, key=f"lobby:{doc.serial}", buttons=rendered.buttons, notify=notify, kind="lobby"
        )

    async def _chat_settings(self, ctx: Context) -> tuple[int, ChatSettings]:
        """The chat's settings; a chat that has none yet (version 0) gets the language of the person who
        is about to create them (`new`, `set`): a group of Polish players should not start in English.
        See "A chat's language" in docs/SERVICE.md."""
        version, settings = await self.svc.chat_settings(ctx.chat.key)
        if version == 0:
            lang = await self._user_lang(ctx, ctx.user, settings.language)
            settings = settings.model_copy(update={"language": lang})
        return version, settings

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


def parse_number(text: str) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        raise Refusal("bad_number") from None
    if not 0 <= value <= 100_000:
        raise Refusal("bad_number")
    return value


def parse_seat_number(text: str, seats: int) -> int:
    index = parse_number(text) - 1
    if not 0 <= index < seats:
        raise Refusal("no_such_seat")
    return index
