"""What anyone may ask for: the table, the score, the rules, the record, statistics and ratings; and
the statistics a won game adds.
"""

from __future__ import annotations

import json

from bot.context import Context, Refusal
from bot.handlers.base import HandlerBase
from bot.i18n import Translator, translator
from bot.markup import escape
from bot.public.fanout import is_public
from bot.render import (
    render_stats,
    render_top,
)
from bot.render_ladder import render_ladder_stats, render_public_top
from bot.render_result import render_score_sheet
from bot.render_rules import render_rules
from bot.review import review_job
from bot.stats import DEFAULT_RATING, board_keys, elo, outcomes, stats_scopes
from bot.table import ChatSettings, TableDoc
from bot.views import seat_labels
from bot.weblinks import signer_for
from core.game import GameState
from core.record import build_record
from core.rules import PRESETS, RuleSet, preset

PUBLIC_WORDS = frozenset({"public", "ladder"})
"""`/top public`: the public ladder instead of the chat's board (`ladder` too)."""


class InformationHandlers(HandlerBase):
    """Answers that change no table; and `record_stats`, which the game flow calls once a game is won."""

    async def show_table(self, ctx: Context) -> None:
        self._check_button(ctx, exact=False)
        doc = ctx.doc
        if doc is not None and doc.status == "lobby":
            self._lobby_message(ctx, notify=True)
            return
        doc = self._game(ctx)
        assert ctx.state is not None
        table = self.flow.table(ctx)
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
        text = t._("The game record ({deals} finished deals).").format(deals=len(state.history))
        url = self._replay_url(ctx, doc, finished=state.finished)
        if url is not None:
            # Literal in the markup: a token's `_` (or a `*` of the public URL) would style the text,
            # cutting the link short (it then answered 401).
            text += "\n" + t._("Replay the game: {url}").format(url=escape(url))
        ctx.reply(
            text,
            document=(f"thousand-{doc.serial}.json", data),
            kind="export",
        )

    async def review(self, ctx: Context) -> None:
        """`/review`: only the refusals here; the service's `bot.review.ReviewDesk` does the work after
        the table's lock."""
        self._check_button(ctx, exact=False)
        review_job(ctx)

    def _replay_url(self, ctx: Context, doc: TableDoc, *, finished: bool) -> str | None:
        """The web replay of this game (docs/WEB.md), readable as long as the table is kept."""
        settings = self.svc.settings
        signer = signer_for(settings)
        if settings.public_url is None or signer is None:
            return None
        lifetime = settings.finished_ttl if finished else settings.game_ttl
        token = signer.replay_token(doc.id, doc.serial, ctx.now + lifetime)
        return f"{settings.public_url.rstrip('/')}/replay/{token}"

    async def stats(self, ctx: Context) -> None:
        store = self.svc.store
        overall, in_chat = stats_scopes(ctx.chat.key, ctx.user.key)
        board_all, board_chat = board_keys(ctx.chat.key)
        scope, board = (overall, board_all) if ctx.chat.private else (in_chat, board_chat)
        values = await store.get_stats(scope)
        rating = await store.get_rating(board, ctx.user.key)
        t = ctx.t_user() if ctx.chat.private else ctx.t_group()
        text = render_stats(t, ctx.user.name, values, rating).text
        ladder = await self._ladder_lines(t, ctx.user.key)
        if ladder:
            text += "\n\n" + ladder
        ctx.answer(text, kind="stats", language=t.lang)

    async def _ladder_lines(self, t: Translator, user_key: str) -> str:
        """The player's public rating per preset they played, with its last changes (none: nothing)."""
        ladder = self.svc.ladder
        if ladder is None:
            return ""
        rows = []
        for name in PRESETS:
            points = await ladder.history(name, user_key)
            if points:
                rows.append((name, await ladder.get(name, user_key), points))
        return render_ladder_stats(t, rows)

    async def top(self, ctx: Context) -> None:
        """The chat's board (overall in a private chat), and a line pointing to the public ladder; `/top
        public [preset]` shows the public ladder of the preset (the chat's preset by default)."""
        t = ctx.t_user() if ctx.chat.private else ctx.t_group()
        args = [a.lower() for a in ctx.command.args]
        ladder = self.svc.ladder
        if args and args[0] in PUBLIC_WORDS:
            wanted = args[1] if len(args) > 1 else (await self.svc.chat_settings(ctx.chat.key))[1].preset
            if ladder is None:
                raise Refusal("no_public_games")
            if wanted not in PRESETS:
                raise Refusal("unknown_preset")
            standings = await ladder.top(wanted, 10)
            ctx.answer(render_public_top(t, wanted, standings).text, kind="top", language=t.lang)
            return
        store = self.svc.store
        board_all, board_chat = board_keys(ctx.chat.key)
        rows = await store.top(board_all if ctx.chat.private else board_chat, 10)
        named = []
        for member, rating in rows:
            _, prefs = await self._prefs(member)
            named.append((prefs.name or member.split(":", 1)[-1], rating))
        text = render_top(t, named).text
        if ladder is not None:
            text += "\n" + t._("The public ladder: /top public")
        ctx.answer(text, kind="top", language=t.lang)

    # --- statistics (after the save that ended a game) --------------------------------------------

    async def record_stats(self, doc: TableDoc, state: GameState) -> None:
        """Counters and ratings for a won game; called once, by the process whose save ended it."""
        if not state.finished or is_public(doc.id):
            # A public game is rated on the public ladder (`bot.handlers.public_safety.record_ladder`),
            # never in a group's statistics nor the overall board of group games.
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
