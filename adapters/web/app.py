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
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from aiohttp import web

from adapters.web.live import Snapshot, TableWatcher, sse
from adapters.web.security import RateLimiter, same_origin, security_headers
from adapters.web.strings import ui_strings, web_error
from adapters.web.telegram_auth import InitDataError, validate_init_data
from bot.commands import from_payload
from bot.i18n import LANGUAGES, negotiate, translator
from bot.markup import to_plain
from bot.model import ChatRef, Command, Message, Private, Sender, UserRef
from bot.presence import Presence
from bot.render import render_error
from bot.service import Service
from bot.storage import StorageUnavailable
from bot.table import TableDoc
from bot.weblinks import Claims, Signer, TokenError, link_url

__all__ = ["STATIC_DIR", "WebOptions", "WebTable", "make_app", "make_static_app"]

log = logging.getLogger("thousand.web")

STATIC_DIR: Final = Path(__file__).parent / "static"
STATIC_KEY: Final = web.AppKey("static_dir", Path)
WEB_KEY: Final = web.AppKey("web_table", object)

SESSION_BODY: Final = 8 * 1024
ACT_BODY: Final = 2 * 1024
MAX_STREAMS_PER_SESSION: Final = 8

Deliver = Callable[[list[Message]], Awaitable[None]]
Handle = Callable[[Command], Awaitable[list[Message]]]


@dataclass(frozen=True)
class WebOptions:
    """How the web table behaves (from `bot.settings.Settings` in the processes, chosen in tests)."""

    public_url: str | None = None
    telegram_token: str | None = None
    max_age: float = 86400
    session_seconds: float = 12 * 3600
    link_seconds: float = 900
    ping_seconds: float = 15.0
    presence_seconds: float = 15.0
    poll_seconds: float = 0.05
    rate: float = 20.0
    burst: float = 40.0


@dataclass
class WebTable:
    """The state the web handlers share (one per process)."""

    service: Service
    signer: Signer
    options: WebOptions = field(default_factory=WebOptions)
    deliver: Deliver | None = None
    handle: Handle | None = None
    clock: Callable[[], float] = time.time
    presence: Presence | None = None
    watcher: TableWatcher | None = None
    limiter: RateLimiter | None = None
    _streams: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.presence is None:
            self.presence = self.service.presence or Presence(self.service.store)
        if self.watcher is None:
            self.watcher = TableWatcher(
                self.service.store, self.service.cache, interval=self.options.poll_seconds
            )
        if self.limiter is None:
            self.limiter = RateLimiter(rate=self.options.rate, burst=self.options.burst)

    # --- links -----------------------------------------------------------------------------------

    def link(self, table_id: str, user: UserRef, lang: str | None = None, *, base: str | None = None) -> str:
        """A page address bound to `user` and `table_id`, valid `link_seconds` (Discord, terminal)."""
        expires = self.clock() + self.options.link_seconds
        language = lang or negotiate(user.language) or "en"
        return link_url(self.signer, base or self.options.public_url or "", table_id, user, language, expires)

    def session_for(self, claims: Claims) -> str:
        return self.signer.sign(
            Claims(
                kind="session",
                table=claims.table,
                user=claims.user,
                name=claims.name,
                lang=claims.lang,
                platform=claims.platform,
                expires=self.clock() + self.options.session_seconds,
            )
        )


# --- helpers ---------------------------------------------------------------------------------------


def _web(request: web.Request) -> WebTable:
    table = request.config_dict[WEB_KEY]
    assert isinstance(table, WebTable)
    return table


def _lang_of(request: web.Request, fallback: str | None = None) -> str:
    if fallback in LANGUAGES:
        return str(fallback)
    return negotiate(request.headers.get("Accept-Language", "").split(",")[0].split(";")[0]) or "en"


_STATUS: Final[dict[int, type[web.HTTPException]]] = {
    400: web.HTTPBadRequest,
    401: web.HTTPUnauthorized,
    403: web.HTTPForbidden,
    404: web.HTTPNotFound,
    429: web.HTTPTooManyRequests,
}


class _TooLarge(web.HTTPClientError):
    status_code = 413


def _error(status: int, code: str, lang: str, **values: object) -> web.HTTPException:
    """A refusal as raised by the handlers: `{"error": "<text in the person's language>"}`."""
    text = web_error(lang, code) or to_plain(render_error(translator(lang), code, **values))
    kind = _STATUS.get(status, _TooLarge if status == 413 else web.HTTPBadRequest)
    return kind(
        text=json.dumps({"error": text}, ensure_ascii=False),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def _client(request: web.Request) -> str:
    return request.remote or "?"


def _limit(request: web.Request, *keys: str) -> None:
    web_table = _web(request)
    assert web_table.limiter is not None
    for key in (f"ip:{_client(request)}", *keys):
        if not web_table.limiter.allow(key):
            raise _error(429, "web_rate", _lang_of(request))


async def _json_body(request: web.Request, limit: int) -> dict[str, Any]:
    length = request.content_length
    if length is not None and length > limit:
        raise _error(413, "web_too_large", _lang_of(request))
    raw = await request.content.read(limit + 1)
    if len(raw) > limit:
        raise _error(413, "web_too_large", _lang_of(request))
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise _error(400, "web_bad_request", _lang_of(request)) from None
    if not isinstance(data, dict):
        raise _error(400, "web_bad_request", _lang_of(request))
    return data


def _check_origin(request: web.Request, *, allow_missing: bool = False) -> None:
    if not same_origin(request, _web(request).options.public_url, allow_missing=allow_missing):
        log.info("web: refused origin %r for %s", request.headers.get("Origin"), request.path)
        raise _error(403, "web_origin", _lang_of(request))


def _session(request: web.Request, token: object) -> Claims:
    web_table = _web(request)
    if not isinstance(token, str):
        raise _error(401, "web_session", _lang_of(request))
    try:
        return web_table.signer.read(token, "session", web_table.clock())
    except TokenError:
        raise _error(401, "web_session", _lang_of(request)) from None


def _user(claims: Claims) -> UserRef:
    return UserRef(claims.platform, claims.user, claims.name, claims.lang)


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
    _check_origin(request)
    _limit(request)
    web_table = _web(request)
    body = await _json_body(request, SESSION_BODY)
    now = web_table.clock()
    init_data, link = body.get("init_data"), body.get("link")
    if isinstance(init_data, str) and init_data:
        token = web_table.options.telegram_token
        if not token:
            raise _error(401, "web_auth", _lang_of(request))
        try:
            tg = validate_init_data(init_data, token, now=now, max_age=web_table.options.max_age)
        except InitDataError as exc:
            log.info("web: initData refused: %s", exc)
            raise _error(401, "web_auth", _lang_of(request)) from None
        user = UserRef("tg", tg.user_id, tg.name, tg.language)
        start = tg.start_param or body.get("start")
        table_id: str | None = None
        if isinstance(start, str) and start:
            try:
                table_id = web_table.signer.read_start(start)
            except TokenError:
                raise _error(403, "web_auth", _lang_of(request, negotiate(tg.language))) from None
        if table_id is None:
            table_id = await _own_table(web_table, user)
        if table_id is None:
            raise _error(404, "no_table_for_you", _lang_of(request, negotiate(tg.language)))
    elif isinstance(link, str) and link:
        try:
            claims = web_table.signer.read(link, "link", now)
        except TokenError as exc:
            log.info("web: link refused: %s", exc)
            raise _error(401, "web_auth", _lang_of(request)) from None
        user = UserRef(claims.platform, claims.user, claims.name, claims.lang)
        table_id = claims.table
    else:
        raise _error(400, "web_bad_request", _lang_of(request))
    stored = await web_table.service.store.load(table_id)
    if stored is None:
        raise _error(404, "web_no_table", _lang_of(request, negotiate(user.language)))
    doc = TableDoc.model_validate_json(stored.document)
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
    _limit(request)
    claims = _session(request, request.query.get("session"))
    web_table = _web(request)
    from adapters.web.live import load_snapshot

    snapshot = await load_snapshot(web_table.service.store, web_table.service.cache, claims.table)
    if snapshot.doc is None:
        raise _error(404, "web_no_table", claims.lang)
    text = snapshot.view(_seat(snapshot.doc, claims), claims.lang)
    return web.Response(text=text, content_type="application/json", headers={"Cache-Control": "no-store"})


async def _act(request: web.Request) -> web.Response:
    """A move from the page: the same command a button press sends, through `Service.handle`."""
    _check_origin(request)
    web_table = _web(request)
    body = await _json_body(request, ACT_BODY)
    claims = _session(request, body.get("session"))
    _limit(request, f"session:{claims.platform}:{claims.user}")
    payload = body.get("payload")
    if not isinstance(payload, str):
        raise _error(400, "web_bad_request", claims.lang)
    user = _user(claims)
    chat = ChatRef(claims.platform, claims.user, claims.name, private=True)
    command = from_payload(payload, chat, user)
    if command.table_id is not None and command.table_id != claims.table:
        raise _error(403, "other_table", claims.lang)
    handle = web_table.handle or web_table.service.handle
    messages = await handle(command)
    refusals = [m for m in messages if m.kind == "error" and isinstance(m.audience, Sender)]
    # The page shows the move: the player's own hand message is not redrawn for it (others' are).
    outgoing = [
        m
        for m in messages
        if not isinstance(m.audience, Sender)
        and not (isinstance(m.audience, Private) and m.audience.user.key == user.key and m.kind == "hand")
    ]
    if outgoing and web_table.deliver is not None:
        try:
            await web_table.deliver(outgoing)
        except Exception:
            log.exception("web: delivering %d message(s) failed", len(outgoing))
    if refusals:
        return web.json_response(
            {"ok": False, "error": to_plain(refusals[0].text)}, headers={"Cache-Control": "no-store"}
        )
    return web.json_response({"ok": True}, headers={"Cache-Control": "no-store"})


async def _events(request: web.Request) -> web.StreamResponse:
    """Server-Sent Events: the view at once and after every change of the table, a ping every 15 s."""
    _check_origin(request, allow_missing=True)
    _limit(request)
    web_table = _web(request)
    claims = _session(request, request.query.get("session"))
    stream_key = f"{claims.platform}:{claims.user}:{claims.table}"
    if web_table._streams.get(stream_key, 0) >= MAX_STREAMS_PER_SESSION:
        raise _error(429, "web_rate", claims.lang)
    web_table._streams[stream_key] = web_table._streams.get(stream_key, 0) + 1
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
            while True:
                now = web_table.clock()
                if claims.expires < now:
                    await response.write(sse("gone", {"why": "expired"}))
                    break
                timeout = max(0.0, min(next_ping, next_presence if present else next_ping) - now)
                snapshot: Snapshot | None = None
                try:
                    snapshot = await asyncio.wait_for(queue.get(), timeout=timeout or 0.001)
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
        web_table._streams[stream_key] -= 1
        if not web_table._streams[stream_key]:
            del web_table._streams[stream_key]
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
    app = web.Application(middlewares=[security_headers], client_max_size=SESSION_BODY)
    add_static_routes(app, static_dir)
    return app


def make_app(web_table: WebTable, static_dir: Path = STATIC_DIR) -> web.Application:
    """The whole web table: page, API, live updates, replay."""
    from adapters.web.replay import add_replay_routes

    app = make_static_app(static_dir)
    app[WEB_KEY] = web_table
    app.router.add_post("/api/session", _new_session)
    app.router.add_get("/api/view", _view)
    app.router.add_get("/api/events", _events)
    app.router.add_post("/api/act", _act)
    add_replay_routes(app)
    return app
