"""Replays of finished games on the web: `/export` offers `PUBLIC_URL/replay/<token>`; the replay page
(`static/replay.html`, written by the page's side) fetches the game's steps from `/api/replay/<token>`
(`adapters.web.replay_page.replay_data`: the record stepped with every hand open, and the labels).

The record is the same as `/export` sends: every deal with its hands, so only finished deals of a game
in progress (the deal being played would show everyone's cards). The token is signed and names the table
and its serial: a chat's next table, which reuses the table id, is not readable with an old link.
"""

from __future__ import annotations

import json

from aiohttp import web

from adapters.web.http import error, lang_of, refuse, table_of
from adapters.web.replay_page import replay_data
from bot.snapshot import GameCache
from bot.table import TableDoc
from bot.weblinks import TokenError
from core.record import build_record

__all__ = ["add_replay_routes", "record_of"]


def record_of(doc: TableDoc, state_of: object) -> dict[str, object] | None:
    """The record `/export` would send for `doc` (None when no deal was finished)."""
    assert isinstance(state_of, GameCache)
    if doc.game is None:
        return None
    state = state_of.state(doc.serial, doc.game.spec, doc.game.actions)
    record = build_record(state, [s.name for s in doc.seats])
    if not state.finished:
        record["deals"] = record["deals"][: len(state.history)]
    return record if record["deals"] else None


async def _replay_record(request: web.Request) -> web.Response:
    web_table = table_of(request)
    try:
        table_id, serial = web_table.signer.read_replay(request.match_info["token"], web_table.clock())
    except TokenError:
        raise refuse(request, 401, "web_auth") from None
    assert web_table.limiter is not None
    if not web_table.limiter.allow(f"replay:{table_id}:{serial}"):
        raise error(429, "web_rate", lang_of(request))
    stored = await web_table.service.store.load(table_id)
    doc = None if stored is None else TableDoc.model_validate_json(stored.document)
    record = None if doc is None or doc.serial != serial else record_of(doc, web_table.service.cache)
    if record is None:
        raise error(404, "web_no_replay", lang_of(request))

    data = replay_data(json.dumps(record), lang_of(request))
    return web.Response(
        text=json.dumps(data, ensure_ascii=False),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def add_replay_routes(app: web.Application) -> None:
    app.router.add_get("/api/replay/{token}", _replay_record)
