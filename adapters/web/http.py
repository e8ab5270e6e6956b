"""What every route of the page's API does the same way: find the process's `WebTable`, read a JSON body
within its limit and time, check the origin and the session, count refusals against the client's address
and requests against the signed-in user, answer a refusal in the person's language, run a move.

The routes live beside it (`adapters.web.app`: the table's own; `playnow`, `rematch`, `replay`, `social`)
and import these; this module imports none of them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final

from aiohttp import web

from adapters.web.security import client_address, loopback_host, same_origin
from adapters.web.strings import web_error
from adapters.web.table import WebTable
from bot.i18n import LANGUAGES, negotiate, translator
from bot.markup import to_plain
from bot.model import Command, Private, Sender, UserRef
from bot.render import render_error
from bot.weblinks import Claims, TokenError

__all__ = [
    "SMALL_BODY",
    "WEB_KEY",
    "check_origin",
    "client",
    "error",
    "guard",
    "json_body",
    "lang_of",
    "limit_user",
    "refuse",
    "run_move",
    "session",
    "table_of",
    "user_of",
]

log = logging.getLogger("thousand.web")

WEB_KEY: Final = web.AppKey("web_table", object)
SMALL_BODY: Final = 2 * 1024
"""The body of a call that carries a session and a few words (`/api/view`, `/api/ticket`, `/api/rematch`)."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def table_of(request: web.Request) -> WebTable:
    """The process's web table, which the application carries (`adapters.web.app.make_app`)."""
    table = request.config_dict[WEB_KEY]
    assert isinstance(table, WebTable)
    return table


def lang_of(request: web.Request, fallback: str | None = None) -> str:
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


def error(status: int, code: str, lang: str, **values: object) -> web.HTTPException:
    """A refusal as raised by the handlers: `{"error": "<text in the person's language>"}`."""
    text = web_error(lang, code) or to_plain(render_error(translator(lang), code, **values))
    kind = _STATUS.get(status, _TooLarge if status == 413 else web.HTTPBadRequest)
    return kind(
        text=json.dumps({"error": text}, ensure_ascii=False),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def client(request: web.Request) -> str:
    """The client's address (behind a trusted proxy: what it says in X-Forwarded-For)."""
    return client_address(request, table_of(request).proxy_networks)


def refuse(request: web.Request, status: int, code: str, lang: str | None = None) -> web.HTTPException:
    """A refusal of a request without a valid credential, counted against the client's address; past
    the address's budget of failures the answer is 429. A valid credential never draws on this bucket,
    so clients failing behind the same proxy cannot lock a signed-in player out."""
    table = table_of(request)
    assert table.failures is not None
    language = lang or lang_of(request)
    if not table.failures.allow(f"addr:{client(request)}"):
        return error(429, "web_rate", language)
    return error(status, code, language)


def limit_user(request: web.Request, platform: str, user: str, lang: str) -> None:
    """The budget of one signed-in user (all their sessions and pages, in this process)."""
    table = table_of(request)
    assert table.limiter is not None
    if not table.limiter.allow(f"user:{platform}:{user}"):
        raise error(429, "web_rate", lang)


async def json_body(request: web.Request, limit: int) -> dict[str, Any]:
    length = request.content_length
    if length is not None and length > limit:
        raise refuse(request, 413, "web_too_large")
    raw = b""
    try:
        async with asyncio.timeout(table_of(request).options.body_seconds):
            # `read(n)` answers with what has arrived so far: read until the end (or past the limit).
            while len(raw) <= limit:
                chunk = await request.content.read(limit + 1 - len(raw))
                if not chunk:
                    break
                raw += chunk
    except TimeoutError:
        slow = refuse(request, 408, "web_bad_request")
        slow.force_close()  # the rest of the body may still come: the connection cannot be reused
        raise slow from None
    if len(raw) > limit:
        raise refuse(request, 413, "web_too_large")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise refuse(request, 400, "web_bad_request") from None
    if not isinstance(data, dict):
        raise refuse(request, 400, "web_bad_request")
    return data


def check_origin(request: web.Request, *, allow_missing: bool = False) -> None:
    if not same_origin(request, table_of(request).options.public_url, allow_missing=allow_missing):
        log.info("web: refused origin %r for %s", request.headers.get("Origin"), request.path)
        raise refuse(request, 403, "web_origin")


def session(request: web.Request, token: object) -> Claims:
    """The claims of a genuine, unexpired session token (a refusal counts against the address)."""
    table = table_of(request)
    if not isinstance(token, str):
        raise refuse(request, 401, "web_session")
    try:
        claims = table.signer.read(token, "session", table.clock())
    except TokenError:
        raise refuse(request, 401, "web_session") from None
    limit_user(request, claims.platform, claims.user, claims.lang)
    return claims


def user_of(claims: Claims) -> UserRef:
    return UserRef(claims.platform, claims.user, claims.name, claims.lang)


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """One guard for all input the handlers could not read: any decode or parse error (a port out of
    range, JSON nested past the recursion limit, a lone surrogate, digits `int` does not take) is a 400
    with the usual translated error, never a 500. Without PUBLIC_URL the server trusts the Host for its
    own origin, so it answers only loopback names (421 otherwise)."""
    table = request.config_dict.get(WEB_KEY)
    if isinstance(table, WebTable) and not table.options.public_url and not loopback_host(request):
        raise error(421, "web_bad_request", "en")
    try:
        return await handler(request)
    except (ValueError, TypeError, RecursionError) as exc:
        log.info("web: unreadable request to %s: %s", request.path, type(exc).__name__, exc_info=True)
        try:
            lang = lang_of(request)
        except (ValueError, TypeError):
            lang = "en"
        raise error(400, "web_bad_request", lang) from None


async def run_move(table: WebTable, command: Command, user: UserRef) -> web.Response:
    """A command from the page (a move, Play again), through the service like a button press: what it
    causes for others delivered, the person's own refusal answered as `{"ok": false, "error": ...}`."""
    handle = table.handle or table.service.handle
    messages = await handle(command)
    refusals = [m for m in messages if m.kind == "error" and isinstance(m.audience, Sender)]
    # The person's own review (`/review`) is shown on the page that asked for it, not sent elsewhere.
    reviews = [
        m
        for m in messages
        if m.kind == "review" and isinstance(m.audience, Private) and m.audience.user.key == user.key
    ]
    messages = [m for m in messages if m not in reviews]
    # The page shows the move: the player's own hand message is not redrawn for it (others' are).
    outgoing = [
        m
        for m in messages
        if not isinstance(m.audience, Sender)
        and not (isinstance(m.audience, Private) and m.audience.user.key == user.key and m.kind == "hand")
    ]
    if outgoing and table.deliver is not None:
        try:
            await table.deliver(outgoing)
        except Exception:
            log.exception("web: delivering %d message(s) failed", len(outgoing))
    if refusals:
        return web.json_response(
            {"ok": False, "error": to_plain(refusals[0].text)}, headers={"Cache-Control": "no-store"}
        )
    if reviews:
        answer = {"ok": True, "review": to_plain(reviews[0].text)}
        return web.json_response(answer, headers={"Cache-Control": "no-store"})
    return web.json_response({"ok": True}, headers={"Cache-Control": "no-store"})
