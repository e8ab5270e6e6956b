"""What strangers at a public table may say and do from the web page, as the chats may (issue 25): the
fixed phrases (`/say gl`), block, unblock and report.

`POST /api/social` runs the same typed command a chat sends (`say gl`, `block 2`, `report 2 abuse`) as
the session's person from their private chat, through `Service.handle`, so the same checks apply (a
public table, seated there, the phrase budget, reports a day) and the answer is the one the chat would
get, plain. `POST /api/phrases` gives the table's recent phrases (the page is sent no messages; the
`say` handler keeps them a minute, `bot.handlers.public.PHRASE_SCOPE`), each in the reader's language
and signed with the speaker's display name: no free text ever passes between strangers.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from aiohttp import web

from adapters.web.http import check_origin, error, json_body, session, table_of, user_of
from bot.handlers.public import PHRASE_SCOPE
from bot.handlers.public_safety import reason_text
from bot.i18n import translator
from bot.markup import to_plain
from bot.model import ChatRef, Command, Sender
from bot.public.fanout import is_public
from bot.public.phrases import PHRASES
from bot.reports import REASONS
from bot.table import TableDoc
from bot.views import seat_labels

__all__ = ["RECENT_PHRASES", "SOCIAL_COMMANDS", "add_social_routes"]

SOCIAL_COMMANDS: Final = frozenset({"say", "block", "unblock", "report"})
RECENT_PHRASES: Final = 20.0
"""Phrases younger than this are shown (the page asks every few seconds and shows each once)."""
BODY: Final = 2 * 1024


async def _social(request: web.Request) -> web.Response:
    check_origin(request)
    web_table = table_of(request)
    body = await json_body(request, BODY)
    claims = session(request, body.get("session"))
    name, args = body.get("command"), body.get("args", [])
    if (
        name not in SOCIAL_COMMANDS
        or not isinstance(args, list)
        or len(args) > 2
        or not all(isinstance(a, str) and 0 < len(a) <= 32 and a.isprintable() for a in args)
    ):
        raise error(400, "web_bad_request", claims.lang)
    if not is_public(claims.table):
        raise error(403, "other_table", claims.lang)
    user = user_of(claims)
    chat = ChatRef(claims.platform, claims.user, claims.name, private=True)
    command = Command(str(name), tuple(args), chat, user)
    handle = web_table.handle or web_table.service.handle
    # Shielded as a move: a client gone mid-way must not cut a phrase off from its delivery.
    messages = await asyncio.shield(handle(command))
    replies = [m for m in messages if isinstance(m.audience, Sender)]
    outgoing = [m for m in messages if not isinstance(m.audience, Sender)]
    if outgoing and web_table.deliver is not None:
        await web_table.deliver(outgoing)  # the phrase to the chats of the others at the table
    ok = not any(m.kind == "error" for m in replies)
    text = to_plain(replies[0].text) if replies else ""
    return web.json_response({"ok": ok, "text": text}, headers={"Cache-Control": "no-store"})


async def _phrases(request: web.Request) -> web.Response:
    check_origin(request)
    web_table = table_of(request)
    body = await json_body(request, BODY)
    claims = session(request, body.get("session"))
    out: list[dict[str, Any]] = []
    if is_public(claims.table):
        store = web_table.service.store
        refs = await store.get_refs(f"{PHRASE_SCOPE}{claims.table}")
        stored = await store.load(claims.table) if refs else None
        if stored is not None:
            doc = TableDoc.model_validate_json(stored.document)
            labels = seat_labels(doc)
            t = translator(claims.lang)
            now = web_table.clock()
            for key, value in sorted(refs.items()):
                at = float(key.partition(":")[0])
                seat_text, _, phrase = value.partition(":")
                seat = int(seat_text)
                if now - at > RECENT_PHRASES or phrase not in PHRASES or not 0 <= seat < len(labels):
                    continue
                name = labels[seat].name
                out.append({"id": key, "at": at, "seat": seat, "name": name, "text": t._(PHRASES[phrase])})
    return web.json_response({"phrases": out}, headers={"Cache-Control": "no-store"})


def _choices(lang: str) -> dict[str, Any]:
    """The phrases and report reasons the page offers, in the reader's words."""
    t = translator(lang)
    return {
        "phrases": [{"value": k, "name": t._(v)} for k, v in PHRASES.items()],
        "reasons": [{"value": w, "name": reason_text(t, w)} for w in REASONS],
    }


async def _social_choices(request: web.Request) -> web.Response:
    check_origin(request)
    body = await json_body(request, BODY)
    claims = session(request, body.get("session"))
    return web.json_response(_choices(claims.lang), headers={"Cache-Control": "no-store"})


def add_social_routes(app: web.Application) -> None:
    app.router.add_post("/api/social", _social)
    app.router.add_post("/api/social/choices", _social_choices)
    app.router.add_post("/api/phrases", _phrases)
