"""The web table's aiohttp application: the page, its API and live updates (the contract: docs/WEB.md).

`WebTable` holds what the handlers need (the service, signing keys, the adapter's delivery, the table
watcher, presence); `make_app(web)` builds an `Application` around it, run alone (`thousand web`,
`thousand play --web`) or added as a sub-application of the Telegram webhook server.

Who someone is comes only from something signed: Telegram's initData (checked against the bot token), a
link signed here, or the session signed here from one of them. What a page receives is built from the
seat's own view or, for anyone not seated, from the public view (`adapters.web.viewjson`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from pathlib import Path
from typing import Any, Final

from aiohttp import web

from adapters.web.http import (
    SMALL_BODY,
    WEB_KEY,
    check_origin,
    error,
    guard,
    json_body,
    lang_of,
    limit_user,
    refuse,
    run_move,
    session,
    table_of,
    user_of,
)
from adapters.web.live import Snapshot, load_snapshot, sse
from adapters.web.playnow import add_queue_routes
from adapters.web.rematch import add_rematch_routes, rematch_of
from adapters.web.replay import add_replay_routes
from adapters.web.security import security_headers
from adapters.web.strings import ui_strings
from adapters.web.table import WebOptions, WebTable
from adapters.web.telegram_auth import InitDataError, validate_init_data
from bot.commands import from_payload
from bot.i18n import negotiate
from bot.model import ChatRef, UserRef
from bot.storage import StorageUnavailable
from bot.table import TableDoc
from bot.weblinks import Claims, TokenError

__all__ = ["STATIC_DIR", "WebOptions", "WebTable", "make_app", "make_runner", "make_static_app"]

log = logging.getLogger("thousand.web")

STATIC_DIR: Final = Path(__file__).parent / "static"
STATIC_KEY: Final = web.AppKey("static_dir", Path)

SESSION_BODY: Final = 8 * 1024
ACT_BODY: Final = 2 * 1024
MAX_STREAMS_PER_SESSION: Final = 8
STREAM_CHECK_SECONDS: Final = 1.0
"""How often an open stream looks whether its client is still connected when the server does not cancel
handlers of closed connections (a sub-application of another server); `make_runner` cancels them."""


def _seat(doc: TableDoc | None, claims: Claims) -> int | None:
    if doc is None:
        return None
    return doc.seat_of(f"{claims.platform}:{claims.user}")


# --- handlers --------------------------------------------------------------------------------------


async def _index(request: web.Request) -> web.StreamResponse:
    page = request.app[STATIC_KEY] / "index.html"
    if not page.is_file():
        raise web.HTTPNotFound(text="the table page is not built")
    return web.FileResponse(page, headers={"Cache-Control": "no-cache"})


async def _replay_page(request: web.Request) -> web.StreamResponse:
    page = request.app[STATIC_KEY] / "replay.html"
    if not page.is_file():
        raise web.HTTPNotFound(text="the replay page is not built")
    return web.FileResponse(page, headers={"Cache-Control": "no-cache"})


async def _new_session(request: web.Request) -> web.Response:
    """initData or a signed link in, a session out (docs/WEB.md: Authentication)."""
    check_origin(request)
    web_table = table_of(request)
    body = await json_body(request, SESSION_BODY)
    now = web_table.clock()
    init_data, link = body.get("init_data"), body.get("link")
    serial: str | None = None
    if isinstance(init_data, str) and init_data:
        token = web_table.options.telegram_token
        if not token:
            raise refuse(request, 401, "web_auth")
        try:
            tg = validate_init_data(init_data, token, now=now, max_age=web_table.options.max_age)
        except InitDataError as exc:
            log.info("web: initData refused: %s", exc)
            raise refuse(request, 401, "web_auth") from None
        user = UserRef("tg", tg.user_id, tg.name, tg.language)
        lang = lang_of(request, negotiate(tg.language))
        start = tg.start_param or body.get("start")
        table_id: str | None = None
        if isinstance(start, str) and start:
            try:
                table_id, serial = web_table.signer.read_start(start)
            except TokenError:
                raise refuse(request, 403, "web_auth", lang) from None
        limit_user(request, user.platform, user.user_id, lang)
        if table_id is None:
            table_id = await _own_table(web_table, user)
        if table_id is None:
            raise error(404, "no_table_for_you", lang)
    elif isinstance(link, str) and link:
        try:
            claims = web_table.signer.read(link, "link", now)
        except TokenError as exc:
            log.info("web: link refused: %s", exc)
            raise refuse(request, 401, "web_auth") from None
        user = UserRef(claims.platform, claims.user, claims.name, claims.lang)
        limit_user(request, user.platform, user.user_id, claims.lang)
        table_id = claims.table
    else:
        raise refuse(request, 400, "web_bad_request")
    stored = await web_table.service.store.load(table_id)
    doc = None if stored is None else TableDoc.model_validate_json(stored.document)
    if doc is None or (serial is not None and doc.serial != serial):
        # A start payload names one game: the chat's next game (same table id) needs its new link.
        raise error(404, "web_no_table", lang_of(request, negotiate(user.language)))
    lang = await web_table.service.language_of(user, doc.id)
    claims = Claims("session", table_id, user.user_id, user.name, lang, user.platform, 0)
    session = web_table.session_for(claims)
    seat = doc.seat_of(user.key)
    return web.json_response(
        {
            "session": session,
            "table": table_id,
            "seat": seat,
            "lang": lang,
            "platform": user.platform,
            "strings": ui_strings(lang),
        },
        headers={"Cache-Control": "no-store"},
    )


async def _own_table(web_table: WebTable, user: UserRef) -> str | None:
    """The one live table `user` sits at (a Mini App opened from the bot's menu, with no start payload)."""
    live = []
    for table_id in sorted(await web_table.service.store.tables_for_user(user.key)):
        stored = await web_table.service.store.load(table_id)
        if stored is None:
            continue
        doc = TableDoc.model_validate_json(stored.document)
        if doc.status != "finished" and doc.seat_of(user.key) is not None:
            live.append(table_id)
    return live[0] if len(live) == 1 else None


async def _view(request: web.Request) -> web.Response:
    """`POST /api/view` with `{"session": ...}`: the session's view (by POST, so the token is in no URL)."""
    check_origin(request)
    body = await json_body(request, SMALL_BODY)
    claims = session(request, body.get("session"))
    web_table = table_of(request)
    snapshot = await load_snapshot(
        web_table.service.store, web_table.service.cache, claims.table, lambda: web_table.service.ladder
    )
    if snapshot.doc is None:
        raise error(404, "web_no_table", claims.lang)
    text = snapshot.view(_seat(snapshot.doc, claims), claims.lang)
    if snapshot.doc.status == "finished" and snapshot.doc.rematch is not None:
        # A finished public game's offer to play again, as `/api/rematch` gives it (adapters.web.rematch).
        view = json.loads(text)
        view["rematch"] = (await rematch_of(web_table, claims))[2]
        text = json.dumps(view, ensure_ascii=False, separators=(",", ":"))
    return web.Response(text=text, content_type="application/json", headers={"Cache-Control": "no-store"})


async def _ticket(request: web.Request) -> web.Response:
    """`POST /api/ticket` with `{"session": ...}`: a ticket that opens one event stream, once, within
    `ticket_seconds` (an EventSource can only GET, and the session token must stay out of URLs)."""
    check_origin(request)
    body = await json_body(request, SMALL_BODY)
    claims = session(request, body.get("session"))
    web_table = table_of(request)
    return web.json_response(
        {"ticket": web_table.ticket_for(claims), "expires_in": web_table.options.ticket_seconds},
        headers={"Cache-Control": "no-store"},
    )


async def _act(request: web.Request) -> web.Response:
    """A move from the page: the same command a button press sends, through `Service.handle`."""
    check_origin(request)
    web_table = table_of(request)
    body = await json_body(request, ACT_BODY)
    claims = session(request, body.get("session"))
    payload = body.get("payload")
    if not isinstance(payload, str):
        raise error(400, "web_bad_request", claims.lang)
    user = user_of(claims)
    chat = ChatRef(claims.platform, claims.user, claims.name, private=True)
    command = from_payload(payload, chat, user)
    if command.table_id is not None and command.table_id != claims.table:
        raise error(403, "other_table", claims.lang)
    # Shielded: a client that goes away mid-move must not cut a stored move off from its delivery.
    return await asyncio.shield(run_move(web_table, command, user))


async def _stream_claims(request: web.Request) -> Claims:
    """The session a stream's ticket was issued for: genuine, unexpired and not used before (its use is
    counted in the store, so every process agrees)."""
    web_table = table_of(request)
    token = request.query.get("ticket")
    if not token:
        raise refuse(request, 401, "web_session")
    try:
        ticket = web_table.signer.read(token, "ticket", web_table.clock())
    except TokenError:
        raise refuse(request, 401, "web_session") from None
    if not ticket.nonce:
        raise refuse(request, 401, "web_session")
    uses, _ = await web_table.service.store.count_hit(
        f"web-ticket:{ticket.nonce}", window=web_table.options.ticket_seconds + 5
    )
    if uses > 1:
        raise refuse(request, 401, "web_session")
    limit_user(request, ticket.platform, ticket.user, ticket.lang)
    return Claims(
        "session", ticket.table, ticket.user, ticket.name, ticket.lang, ticket.platform, ticket.until
    )


def _disconnected(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


async def _events(request: web.Request) -> web.StreamResponse:
    """Server-Sent Events: the view at once and after every change of the table, a ping every 15 s.
    Opened with a single-use ticket (`POST /api/ticket`); the slot among the user's 8 streams of the
    table is freed as soon as the client goes."""
    check_origin(request, allow_missing=True)
    web_table = table_of(request)
    claims = await _stream_claims(request)
    stream_key = f"{claims.platform}:{claims.user}:{claims.table}"
    if web_table.streams.get(stream_key, 0) >= MAX_STREAMS_PER_SESSION:
        raise error(429, "web_rate", claims.lang)
    web_table.streams[stream_key] = web_table.streams.get(stream_key, 0) + 1
    response = web.StreamResponse(
        headers={
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-store",
            "X-Accel-Buffering": "no",
        }
    )
    page = secrets.token_hex(6)
    user_key = f"{claims.platform}:{claims.user}"
    assert web_table.presence is not None and web_table.watcher is not None
    present = False
    try:
        await response.prepare(request)
        options = web_table.options
        next_ping = web_table.clock() + options.ping_seconds
        next_presence = 0.0
        async with web_table.watcher.subscribe(claims.table) as queue:
            while not _disconnected(request):
                now = web_table.clock()
                if claims.expires < now:
                    await response.write(sse("gone", {"why": "expired"}))
                    break
                timeout = max(0.0, min(next_ping, next_presence if present else next_ping) - now)
                snapshot: Snapshot | None = None
                try:
                    snapshot = await asyncio.wait_for(
                        queue.get(), timeout=min(timeout, STREAM_CHECK_SECONDS) or 0.001
                    )
                except TimeoutError:
                    snapshot = None
                now = web_table.clock()
                if snapshot is not None:
                    if snapshot.doc is None:
                        await response.write(sse("gone", {"why": "no_table"}))
                        break
                    seat = _seat(snapshot.doc, claims)
                    await response.write(sse("view", snapshot.view(seat, claims.lang)))
                    if seat is not None and not present:
                        present = True
                        next_presence = 0.0
                    elif seat is None and present:
                        present = False
                        await web_table.presence.leave(claims.table, user_key, page)
                if present and now >= next_presence:
                    try:
                        await web_table.presence.touch(claims.table, user_key, page)
                    except StorageUnavailable:
                        log.warning("web: presence not refreshed (storage unavailable)")
                    next_presence = now + options.presence_seconds
                if now >= next_ping:
                    await response.write(sse("ping", {}))
                    next_ping = now + options.ping_seconds
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        web_table.streams[stream_key] -= 1
        if not web_table.streams[stream_key]:
            del web_table.streams[stream_key]
        if present:
            try:
                await asyncio.shield(web_table.presence.leave(claims.table, user_key, page))
            except Exception:
                log.warning("web: presence mark not removed (it expires)")
    return response


# --- the application -------------------------------------------------------------------------------


def add_static_routes(app: web.Application, static_dir: Path = STATIC_DIR) -> None:
    """`GET /` (the page) and `/static/<name>` (its scripts, styles and pictures)."""
    app[STATIC_KEY] = static_dir
    app.router.add_get("/", _index)
    app.router.add_get("/replay/{token}", _replay_page)
    if static_dir.is_dir():
        app.router.add_static("/static/", static_dir, append_version=False)


def make_static_app(static_dir: Path = STATIC_DIR) -> web.Application:
    """The page alone (for building the page against, before the API answers)."""
    app = web.Application(middlewares=[guard], client_max_size=SESSION_BODY)
    app.on_response_prepare.append(security_headers)
    add_static_routes(app, static_dir)
    return app


def make_app(web_table: WebTable, static_dir: Path = STATIC_DIR) -> web.Application:
    """The whole web table: page, API, live updates, replay."""
    app = make_static_app(static_dir)
    app[WEB_KEY] = web_table
    app.router.add_post("/api/session", _new_session)
    app.router.add_post("/api/view", _view)
    app.router.add_post("/api/ticket", _ticket)
    app.router.add_get("/api/events", _events)
    app.router.add_post("/api/act", _act)
    add_queue_routes(app)
    add_rematch_routes(app)
    add_replay_routes(app)
    return app


def runner_options(options: WebOptions) -> dict[str, Any]:
    """How the server treats connections: one without a complete request header for `idle_seconds` is
    closed (aiohttp's keep-alive timer runs from the connection's start and from each answer), the rest
    of a body left unread is drained at most `body_seconds`, and a handler whose client went away is
    cancelled (a closed event stream frees its slot at once)."""
    return {
        "keepalive_timeout": options.idle_seconds,
        "lingering_time": options.body_seconds,  # what is left of a refused body is drained this long
        "handler_cancellation": True,
    }


def make_runner(web_table: WebTable, static_dir: Path = STATIC_DIR, **kwargs: Any) -> web.AppRunner:
    """The runner every process serves the web table with (`thousand web`, `telegram`, `play --web`)."""
    return web.AppRunner(
        make_app(web_table, static_dir), access_log=None, **runner_options(web_table.options), **kwargs
    )
