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
from adapters.web.playnow import PlayNow
from adapters.web.security import (
    RateLimiter,
    client_address,
    loopback_host,
    same_origin,
    security_headers,
    trusted_networks,
)
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

__all__ = ["STATIC_DIR", "WebOptions", "WebTable", "make_app", "make_runner", "make_static_app"]

log = logging.getLogger("thousand.web")

STATIC_DIR: Final = Path(__file__).parent / "static"
STATIC_KEY: Final = web.AppKey("static_dir", Path)
WEB_KEY: Final = web.AppKey("web_table", object)

SESSION_BODY: Final = 8 * 1024
ACT_BODY: Final = 2 * 1024
VIEW_BODY: Final = 2 * 1024
MAX_STREAMS_PER_SESSION: Final = 8
STREAM_CHECK_SECONDS: Final = 1.0
"""How often an open stream looks whether its client is still connected when the server does not cancel
handlers of closed connections (a sub-application of another server); `make_runner` cancels them."""

Deliver = Callable[[list[Message]], Awaitable[None]]
Handle = Callable[[Command], Awaitable[list[Message]]]
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


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
    """Requests a second of one signed-in user (bursts of `burst`), counted in each process."""
    burst: float = 40.0
    fail_rate: float = 2.0
    """Refused requests a second of one client address (bursts of `fail_burst`): forged, expired or
    missing credentials, foreign origins, unreadable bodies. Past it, 429."""
    fail_burst: float = 30.0
    trusted_proxies: tuple[str, ...] = ()
    """Reverse proxies (addresses, networks) whose X-Forwarded-For names the client (WEB_TRUSTED_PROXIES)."""
    ticket_seconds: float = 30.0
    """Lifetime of an event stream's single-use ticket."""
    idle_seconds: float = 20.0
    """A connection that sends no complete request header for this long is closed (idle keep-alive
    connections and half-sent headers alike)."""
    body_seconds: float = 10.0
    """Time a client has to send a request's body once its headers arrived (408 past it)."""
    guest_rate: float = 0.1
    """New guests (Play now) a second from one client address (bursts of `guest_burst`): a guest id is
    cheap to make, and each is a new newcomer on the ladder."""
    guest_burst: float = 5.0


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
    failures: RateLimiter | None = None
    playnow: PlayNow | None = None
    """Play now on the page (`adapters.web.playnow`): the process's public queue; None: not offered."""
    guests: RateLimiter | None = None
    _streams: dict[str, int] = field(default_factory=dict)
    _trusted: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        if self.presence is None:
            self.presence = self.service.presence or Presence(self.service.store)
        if self.watcher is None:
            self.watcher = TableWatcher(
                self.service.store,
                self.service.cache,
                interval=self.options.poll_seconds,
                ladder=lambda: self.service.ladder,
            )
        if self.limiter is None:
            self.limiter = RateLimiter(rate=self.options.rate, burst=self.options.burst)
        if self.failures is None:
            self.failures = RateLimiter(rate=self.options.fail_rate, burst=self.options.fail_burst)
        if self.guests is None:
            self.guests = RateLimiter(rate=self.options.guest_rate, burst=self.options.guest_burst)
        self._trusted = trusted_networks(self.options.trusted_proxies)

    # --- links -----------------------------------------------------------------------------------

    def link(self, table_id: str, user: UserRef, lang: str | None = None, *, base: str | None = None) -> str:
        """A page address bound to `user` and `table_id`, valid `link_seconds` (Discord, terminal)."""
        expires = self.clock() + self.options.link_seconds
        language = lang or negotiate(user.language) or "en"
        return link_url(self.signer, base or self.options.public_url or "", table_id, user, language, expires)

    def ticket_for(self, claims: Claims) -> str:
        """A single-use ticket opening one event stream of the session `claims` (the session token itself
        never goes in a URL, where proxy logs would keep it)."""
        return self.signer.sign(
            Claims(
                kind="ticket",
                table=claims.table,
                user=claims.user,
                name=claims.name,
                lang=claims.lang,
                platform=claims.platform,
                expires=self.clock() + self.options.ticket_seconds,
                nonce=secrets.token_urlsafe(12),
                until=claims.expires,
            )
        )

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
    408: web.HTTPRequestTimeout,
    409: web.HTTPConflict,
    421: web.HTTPMisdirectedRequest,
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
    """The client's address (behind a trusted proxy: what it says in X-Forwarded-For)."""
    return client_address(request, _web(request)._trusted)


def _refuse(request: web.Request, status: int, code: str, lang: str | None = None) -> web.HTTPException:
    """A refusal of a request without a valid credential, counted against the client's address; past
    the address's budget of failures the answer is 429. A valid credential never draws on this bucket,
    so clients failing behind the same proxy cannot lock a signed-in player out."""
    web_table = _web(request)
    assert web_table.failures is not None
    language = lang or _lang_of(request)
    if not web_table.failures.allow(f"addr:{_client(request)}"):
        return _error(429, "web_rate", language)
    return _error(status, code, language)


def _limit_user(request: web.Request, platform: str, user: str, lang: str) -> None:
    """The budget of one signed-in user (all their sessions and pages, in this process)."""
    web_table = _web(request)
    assert web_table.limiter is not None
    if not web_table.limiter.allow(f"user:{platform}:{user}"):
        raise _error(429, "web_rate", lang)


async def _json_body(request: web.Request, limit: int) -> dict[str, Any]:
    length = request.content_length
    if length is not None and length > limit:
        raise _refuse(request, 413, "web_too_large")
    raw = b""
    try:
        async with asyncio.timeout(_web(request).options.body_seconds):
            # `read(n)` answers with what has arrived so far: read until the end (or past the limit).
            while len(raw) <= limit:
                chunk = await request.content.read(limit + 1 - len(raw))
                if not chunk:
                    break
                raw += chunk
    except TimeoutError:
        slow = _refuse(request, 408, "web_bad_request")
        slow.force_close()  # the rest of the body may still come: the connection cannot be reused
        raise slow from None
    if len(raw) > limit:
        raise _refuse(request, 413, "web_too_large")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise _refuse(request, 400, "web_bad_request") from None
    if not isinstance(data, dict):
        raise _refuse(request, 400, "web_bad_request")
    return data


def _check_origin(request: web.Request, *, allow_missing: bool = False) -> None:
    if not same_origin(request, _web(request).options.public_url, allow_missing=allow_missing):
        log.info("web: refused origin %r for %s", request.headers.get("Origin"), request.path)
        raise _refuse(request, 403, "web_origin")


def _session(request: web.Request, token: object) -> Claims:
    """The claims of a genuine, unexpired session token (a refusal counts against the address)."""
    web_table = _web(request)
    if not isinstance(token, str):
        raise _refuse(request, 401, "web_session")
    try:
        claims = web_table.signer.read(token, "session", web_table.clock())
    except TokenError:
        raise _refuse(request, 401, "web_session") from None
    _limit_user(request, claims.platform, claims.user, claims.lang)
    return claims


@web.middleware
async def _guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """One guard for all input the handlers could not read: any decode or parse error (a port out of
    range, JSON nested past the recursion limit, a lone surrogate, digits `int` does not take) is a 400
    with the usual translated error, never a 500. Without PUBLIC_URL the server trusts the Host for its
    own origin, so it answers only loopback names (421 otherwise)."""
    web_table = request.config_dict.get(WEB_KEY)
    if isinstance(web_table, WebTable) and not web_table.options.public_url and not loopback_host(request):
        raise _error(421, "web_bad_request", "en")
    try:
        return await handler(request)
    except (ValueError, TypeError, RecursionError) as exc:
        log.info("web: unreadable request to %s: %s", request.path, type(exc).__name__, exc_info=True)
        try:
            lang = _lang_of(request)
        except (ValueError, TypeError):
            lang = "en"
        raise _error(400, "web_bad_request", lang) from None


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
    web_table = _web(request)
    body = await _json_body(request, SESSION_BODY)
    now = web_table.clock()
    init_data, link = body.get("init_data"), body.get("link")
    serial: str | None = None
    if isinstance(init_data, str) and init_data:
        token = web_table.options.telegram_token
        if not token:
            raise _refuse(request, 401, "web_auth")
        try:
            tg = validate_init_data(init_data, token, now=now, max_age=web_table.options.max_age)
        except InitDataError as exc:
            log.info("web: initData refused: %s", exc)
            raise _refuse(request, 401, "web_auth") from None
        user = UserRef("tg", tg.user_id, tg.name, tg.language)
        lang = _lang_of(request, negotiate(tg.language))
        start = tg.start_param or body.get("start")
        table_id: str | None = None
        if isinstance(start, str) and start:
            try:
                table_id, serial = web_table.signer.read_start(start)
            except TokenError:
                raise _refuse(request, 403, "web_auth", lang) from None
        _limit_user(request, user.platform, user.user_id, lang)
        if table_id is None:
            table_id = await _own_table(web_table, user)
        if table_id is None:
            raise _error(404, "no_table_for_you", lang)
    elif isinstance(link, str) and link:
        try:
            claims = web_table.signer.read(link, "link", now)
        except TokenError as exc:
            log.info("web: link refused: %s", exc)
            raise _refuse(request, 401, "web_auth") from None
        user = UserRef(claims.platform, claims.user, claims.name, claims.lang)
        _limit_user(request, user.platform, user.user_id, claims.lang)
        table_id = claims.table
    else:
        raise _refuse(request, 400, "web_bad_request")
    stored = await web_table.service.store.load(table_id)
    doc = None if stored is None else TableDoc.model_validate_json(stored.document)
    if doc is None or (serial is not None and doc.serial != serial):
        # A start payload names one game: the chat's next game (same table id) needs its new link.
        raise _error(404, "web_no_table", _lang_of(request, negotiate(user.language)))
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
    _check_origin(request)
    body = await _json_body(request, VIEW_BODY)
    claims = _session(request, body.get("session"))
    web_table = _web(request)
    from adapters.web.live import load_snapshot

    snapshot = await load_snapshot(
        web_table.service.store, web_table.service.cache, claims.table, lambda: web_table.service.ladder
    )
    if snapshot.doc is None:
        raise _error(404, "web_no_table", claims.lang)
    text = snapshot.view(_seat(snapshot.doc, claims), claims.lang)
    if snapshot.doc.status == "finished" and snapshot.doc.rematch is not None:
        # A finished public game's offer to play again, as `/api/rematch` gives it (adapters.web.rematch).
        from adapters.web.rematch import rematch_of

        view = json.loads(text)
        view["rematch"] = (await rematch_of(web_table, claims))[2]
        text = json.dumps(view, ensure_ascii=False, separators=(",", ":"))
    return web.Response(text=text, content_type="application/json", headers={"Cache-Control": "no-store"})


async def _ticket(request: web.Request) -> web.Response:
    """`POST /api/ticket` with `{"session": ...}`: a ticket that opens one event stream, once, within
    `ticket_seconds` (an EventSource can only GET, and the session token must stay out of URLs)."""
    _check_origin(request)
    body = await _json_body(request, VIEW_BODY)
    claims = _session(request, body.get("session"))
    web_table = _web(request)
    return web.json_response(
        {"ticket": web_table.ticket_for(claims), "expires_in": web_table.options.ticket_seconds},
        headers={"Cache-Control": "no-store"},
    )


async def _act(request: web.Request) -> web.Response:
    """A move from the page: the same command a button press sends, through `Service.handle`."""
    _check_origin(request)
    web_table = _web(request)
    body = await _json_body(request, ACT_BODY)
    claims = _session(request, body.get("session"))
    payload = body.get("payload")
    if not isinstance(payload, str):
        raise _error(400, "web_bad_request", claims.lang)
    user = _user(claims)
    chat = ChatRef(claims.platform, claims.user, claims.name, private=True)
    command = from_payload(payload, chat, user)
    if command.table_id is not None and command.table_id != claims.table:
        raise _error(403, "other_table", claims.lang)
    # Shielded: a client that goes away mid-move must not cut a stored move off from its delivery.
    return await asyncio.shield(_run_move(web_table, command, user))


async def _run_move(web_table: WebTable, command: Command, user: UserRef) -> web.Response:
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


async def _stream_claims(request: web.Request) -> Claims:
    """The session a stream's ticket was issued for: genuine, unexpired and not used before (its use is
    counted in the store, so every process agrees)."""
    web_table = _web(request)
    token = request.query.get("ticket")
    if not token:
        raise _refuse(request, 401, "web_session")
    try:
        ticket = web_table.signer.read(token, "ticket", web_table.clock())
    except TokenError:
        raise _refuse(request, 401, "web_session") from None
    if not ticket.nonce:
        raise _refuse(request, 401, "web_session")
    uses, _ = await web_table.service.store.count_hit(
        f"web-ticket:{ticket.nonce}", window=web_table.options.ticket_seconds + 5
    )
    if uses > 1:
        raise _refuse(request, 401, "web_session")
    _limit_user(request, ticket.platform, ticket.user, ticket.lang)
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
    _check_origin(request, allow_missing=True)
    web_table = _web(request)
    claims = await _stream_claims(request)
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
    app = web.Application(middlewares=[_guard], client_max_size=SESSION_BODY)
    app.on_response_prepare.append(security_headers)
    add_static_routes(app, static_dir)
    return app


def make_app(web_table: WebTable, static_dir: Path = STATIC_DIR) -> web.Application:
    """The whole web table: page, API, live updates, replay."""
    from adapters.web.playnow import add_queue_routes
    from adapters.web.rematch import add_rematch_routes
    from adapters.web.replay import add_replay_routes

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
