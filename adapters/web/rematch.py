"""Play again at a finished public table, from the web page (`bot.public.rematch`, docs/WEB.md).

`POST /api/rematch` `{"session", "answer"?: "yes" | "no"}` with the session of the finished public table:
with an answer, the same `again` command the chats' Play again / No thanks buttons send (its payload
drawn here for the table as stored, through `Service.handle` like any press, its messages delivered to
the people on other platforms); then the offer as the page shows it (`rematch`: state open / started /
lapsed, the text, the seconds left, each person's mark, the page's own answer, the two labels), and once
the new game started with this person in it, a `session` (and `seat`) for the new table, which the page
opens as Play now's seated answer does. A refusal (too late, not seated, ...) comes as `error`, in the
session's language, and changes nothing. The view JSON (`/api/view`) of a finished public table carries
the same `rematch` object.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from adapters.web.http import SMALL_BODY, check_origin, error, json_body, run_move, session, table_of, user_of
from adapters.web.table import WebTable
from bot.commands import encode_payload, from_payload, table_tag
from bot.i18n import LANGUAGES, translator
from bot.markup import to_plain
from bot.model import ChatRef
from bot.public.rematch import DECLINE, rematch_state
from bot.table import TableDoc
from bot.weblinks import Claims

__all__ = ["add_rematch_routes", "rematch_of"]


async def rematch_of(
    web_table: WebTable, claims: Claims
) -> tuple[TableDoc | None, int, dict[str, Any] | None]:
    """The finished table, its version, and its offer as `claims`' person sees it (None: none)."""
    stored = await web_table.service.store.load(claims.table)
    if stored is None:
        return None, 0, None
    doc = TableDoc.model_validate_json(stored.document)
    lang = claims.lang if claims.lang in LANGUAGES else "en"
    key = f"{claims.platform}:{claims.user}"
    state = rematch_state(doc, key, translator(lang), web_table.service.clock())
    if state is not None:
        state["text"] = to_plain(str(state["text"]))
    return doc, stored.version, state


async def _rematch(request: web.Request) -> web.Response:
    check_origin(request)
    body = await json_body(request, SMALL_BODY)
    claims = session(request, body.get("session"))
    web_table = table_of(request)
    answer = body.get("answer")
    if answer not in (None, "yes", "no"):
        raise error(400, "web_bad_request", claims.lang)
    out: dict[str, Any] = {}
    doc, version, _ = await rematch_of(web_table, claims)
    if answer is not None and doc is not None:
        user = user_of(claims)
        args = () if answer == "yes" else (DECLINE,)
        payload = encode_payload("again", args, version, claims.table, table_tag(doc.serial))
        command = from_payload(
            payload, ChatRef(claims.platform, claims.user, claims.name, private=True), user
        )
        done = json.loads((await run_move(web_table, command, user)).text or "{}")
        if not done.get("ok", False):
            out["error"] = done.get("error", "")
    doc, _, state = await rematch_of(web_table, claims)
    out["rematch"] = state
    key = f"{claims.platform}:{claims.user}"
    if state is not None and state["state"] == "started" and isinstance(state["next"], str):
        stored = await web_table.service.store.load(state["next"])
        new = None if stored is None else TableDoc.model_validate_json(stored.document)
        seat = None if new is None else new.seat_of(key)
        if seat is not None:
            seated = Claims(
                "session", state["next"], claims.user, claims.name, claims.lang, claims.platform, 0
            )
            out["session"] = web_table.session_for(seated)
            out["seat"] = seat
    return web.json_response(out, headers={"Cache-Control": "no-store"})


def add_rematch_routes(app: web.Application) -> None:
    app.router.add_post("/api/rematch", _rematch)
