"""What only public tables have: the fixed phrases strangers may exchange (`/say gl`).

Everything else at a public table is the group table's handlers at work (`bot.public`); the commands
that mean nothing there are refused before any handler runs (`Service`, `bot.public.tables`).
"""

from __future__ import annotations

import contextlib
import secrets
from typing import Final

from bot.context import Context
from bot.handlers.base import HandlerBase
from bot.i18n import Translator
from bot.model import Button
from bot.public.fanout import is_public
from bot.public.phrases import PHRASES, phrase_id
from bot.render import seat_name
from bot.storage import StorageError
from bot.views import seat_labels

__all__ = ["PHRASE_KEEP", "PHRASE_LIMIT", "PHRASE_SCOPE", "PHRASE_WINDOW", "PublicHandlers"]

PHRASE_LIMIT: Final = 3
PHRASE_WINDOW: Final = 30.0
"""At most `PHRASE_LIMIT` phrases per person and table in `PHRASE_WINDOW` seconds, besides the command
budget every command counts against: a phrase reaches everyone at the table, a "Thanks!" a second is noise."""
PHRASE_SCOPE: Final = "phrases:"
"""References scope (`Store.set_ref`) of a public table's recent phrases, `phrases:<table id>`, each
`<time>:<nonce>` -> `<seat>:<phrase id>`: what the web page shows (it is sent no messages)."""
PHRASE_KEEP: Final = 60.0


class PublicHandlers(HandlerBase):
    async def say(self, ctx: Context) -> None:
        """A fixed phrase, to everyone seated, each in their own language, signed with the display name."""
        doc = ctx.doc
        t = ctx.t_user()
        if doc is None or not is_public(doc.id):
            ctx.reply(t._("Phrases are for public tables (a group has its own chat)."), kind="error")
            return
        seat = doc.seat_of(ctx.user.key)
        if seat is None or doc.status == "finished":
            ctx.reply(t._("You do not sit at this table."), kind="error")
            return
        chosen = phrase_id(ctx.command.args[0]) if ctx.command.args else None
        if chosen is None:
            listed = ", ".join(f"{key} ({t._(text)})" for key, text in PHRASES.items())
            ctx.reply(
                t._("Say one of these: {phrases}. For example: /say gl").format(phrases=listed), kind="error"
            )
            return
        try:
            count, left = await self.svc.store.count_hit(f"phrase:{doc.serial}:{ctx.user.key}", PHRASE_WINDOW)
        except StorageError:
            count, left = 0, 0.0
        if count > PHRASE_LIMIT:
            ctx.reply(
                t._("Not so many phrases: wait {seconds} s.").format(seconds=max(1, round(left))),
                kind="error",
            )
            return
        label = seat_labels(doc)[seat]
        msgid = PHRASES[chosen]
        # A web page receives no messages: it reads the table's recent phrases (adapters/web/social.py).
        with contextlib.suppress(StorageError):
            await self.svc.store.set_ref(
                f"{PHRASE_SCOPE}{doc.id}",
                f"{ctx.now:.3f}:{secrets.token_hex(2)}",
                f"{seat}:{chosen}",
                ttl_seconds=PHRASE_KEEP,
            )

        def draw(tr: Translator) -> tuple[str, tuple[tuple[Button, ...], ...]]:
            return f"💬 {seat_name(tr, label)}: {tr._(msgid)}", ()

        text, _ = draw(ctx.t_group())
        # Not a change of the table (a save would make everyone's move buttons stale): its own message.
        key = f"say:{doc.serial}:{secrets.token_hex(4)}"
        ctx.to_group(text, key=key, notify=True, kind="phrase", redraw=draw)
