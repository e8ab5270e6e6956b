"""Play now on the web page (docs/WEB.md, "Play now"): the public games' queue as a browser player uses it.

Who plays: the person of the page's session or Telegram initData (a Telegram or Discord player queueing
from the Mini App or a link page), else a guest of platform `web`: a display name they typed and a random
id, held in a signed `player` token the browser keeps (localStorage). Every call carries that token (or
a session); nothing the page says about itself is believed without a signature.

The queue is the process's own (`bot.matchmaking.MatchQueue`, shared through `ProcessPublic`), decided
atomically there as for `/play`: the same options (`parse_options`), the same rating (`ladder_ratings`),
the same refusals (seated at a table already), the same status lines (`render_waiting`), the same table
builder (`build_match`). A web player's entry is renewed only by the page asking its status (no desk
keeps it alive): a closed tab leaves the queue after `PUBLIC_ENTRY_SECONDS`.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import secrets
import unicodedata
from typing import Any, Final

from aiohttp import web

from adapters.web.http import check_origin, client, error, json_body, lang_of, limit_user, refuse, table_of
from adapters.web.social import add_social_routes
from adapters.web.strings import ui_strings, web_error
from adapters.web.table import PlayNow
from adapters.web.telegram_auth import InitDataError, validate_init_data
from bot.handlers.public_safety import ladder_ratings
from bot.handlers.queue import OptionError, parse_options, seated_where
from bot.i18n import LANGUAGE_NAMES, LANGUAGES, N_, negotiate, translator
from bot.markup import to_plain
from bot.matchmaking.ladder_store import LadderStore
from bot.matchmaking.model import ANY_PRESET, PACES, CancelOutcome, JoinOutcome, Options, Player
from bot.model import UserRef
from bot.public.builder import build_match
from bot.public.tables import PACE_SECONDS, public_table_id
from bot.render_queue import render_waiting
from bot.table import TableDoc
from bot.weblinks import Claims, TokenError
from core.rules import PRESETS

__all__ = ["NAME_MAX", "add_queue_routes", "clean_name"]

log = logging.getLogger("thousand.web.playnow")

PLAY_BODY: Final = 8 * 1024
"""`/api/play` may carry Telegram's initData (as `/api/session`)."""
QUEUE_BODY: Final = 2 * 1024
NAME_MAX: Final = 32
HISTORY: Final = 10
_LINKISH: Final = re.compile(r"(?i)(://|www\.|\.(com|org|net|ru|me|io|gg)\b|t\.me/|discord\.gg|^@)")


def clean_name(raw: object) -> str | None:
    """A guest's display name as shown to the others, or None when it is not acceptable: 1 to 32
    characters after trimming (spaces collapsed, NFC), no control or format characters (no bidi
    overrides, no zero-width joiners), nothing like a link or a handle (`@name`, `://`, `t.me/`)."""
    if not isinstance(raw, str) or len(raw) > 4 * NAME_MAX:
        return None
    text = unicodedata.normalize("NFC", raw)
    if any(unicodedata.category(c)[0] == "C" or unicodedata.category(c) in ("Zl", "Zp") for c in text):
        return None
    name = " ".join(text.split())
    if not 1 <= len(name) <= NAME_MAX:
        return None
    if _LINKISH.search(name):
        return None
    return name


def _playnow(request: web.Request) -> PlayNow:
    play = table_of(request).playnow
    if play is None:
        raise error(404, "web_no_play", lang_of(request))
    return play


def _language(request: web.Request, body: dict[str, Any]) -> str:
    wanted = body.get("lang")
    return lang_of(request, negotiate(wanted) if isinstance(wanted, str) and len(wanted) < 36 else None)


def _identity(request: web.Request, body: dict[str, Any]) -> UserRef:
    """The person a queue call is for: a `player` token, else a session (a refusal counts against the
    client's address and changes nothing)."""
    web_table = table_of(request)
    token, kind = body.get("player"), "player"
    if token is None:
        token, kind = body.get("session"), "session"
    if not isinstance(token, str):
        raise refuse(request, 401, "web_player")
    try:
        claims = web_table.signer.read(token, kind, web_table.clock())
    except TokenError:
        raise refuse(request, 401, "web_player" if kind == "player" else "web_session") from None
    limit_user(request, claims.platform, claims.user, claims.lang)
    return UserRef(claims.platform, claims.user, claims.name, claims.lang)


def _player_token(request: web.Request, user: UserRef) -> str:
    web_table = table_of(request)
    play = _playnow(request)
    lang = user.language if user.language in LANGUAGES else "en"
    claims = Claims(
        "player", "", user.user_id, user.name, lang, user.platform, web_table.clock() + play.player_seconds
    )
    return web_table.signer.sign(claims)


def _answer(data: dict[str, Any], status: int = 200) -> web.Response:
    return web.json_response(data, status=status, headers={"Cache-Control": "no-store"})


async def _ratings(ladder: LadderStore | None, key: str, lang: str) -> list[dict[str, Any]]:
    """The player's public rating of each preset they played publicly, with its last changes."""
    if ladder is None:
        return []
    t = translator(lang)
    out = []
    for name in PRESETS:
        rating = await ladder.get(name, key)
        if not rating.games:
            continue
        points = (await ladder.history(name, key))[-HISTORY - 1 :]
        changes = [round(b.rating - a.rating) for a, b in itertools.pairwise(points)]
        out.append(
            {
                "preset": name,
                "name": t.preset(name),
                "rating": round(rating.rating),
                "provisional": rating.provisional,
                "games": rating.games,
                "changes": changes,
            }
        )
    return out


PACE_HELP: Final = N_("The time for each turn; when it is up, a computer plays that turn for you.")


def _choices(lang: str) -> dict[str, Any]:
    """What the panel offers, in the reader's words: presets (with the player counts each allows), paces
    with the time each gives a turn, and the languages the page speaks (each named in itself)."""
    t = translator(lang)
    counts = sorted({n for p in PRESETS.values() for n in p.player_counts})

    def title(text: str) -> str:  # a name alone in a list begins with a capital, as a menu's entries
        return text[:1].upper() + text[1:]

    presets = [{"value": ANY_PRESET, "name": title(t._("any rules")), "players": counts}]
    presets += [
        {"value": n, "name": title(t.preset(n)), "players": list(p.player_counts)} for n, p in PRESETS.items()
    ]
    paces = [
        {
            "value": p,
            "name": title(t._(p)) + " · " + t._("{seconds} s").format(seconds=PACE_SECONDS[p]),
            "seconds": PACE_SECONDS[p],
        }
        for p in PACES
    ]
    languages = [{"value": code, "name": LANGUAGE_NAMES[code]} for code in LANGUAGES]
    return {"presets": presets, "paces": paces, "pace_help": t._(PACE_HELP), "languages": languages}


# --- handlers --------------------------------------------------------------------------------------


async def _play(request: web.Request) -> web.Response:
    """`POST /api/play`: the Play now panel's data: whether public games are offered here, the labels,
    the choices, and who the page plays as (a `player` token for them, their public ratings). Body:
    `{"lang"?, "player"? | "session"? | "init_data"?}`; with none, nobody yet (a guest types a name)."""
    check_origin(request)
    web_table = table_of(request)
    body = await json_body(request, PLAY_BODY)
    lang = _language(request, body)
    available = web_table.playnow is not None
    user: UserRef | None = None
    init_data = body.get("init_data")
    if isinstance(init_data, str) and init_data:
        token = web_table.options.telegram_token
        if not token:
            raise refuse(request, 401, "web_auth", lang)
        try:
            tg = validate_init_data(
                init_data, token, now=web_table.clock(), max_age=web_table.options.max_age
            )
        except InitDataError as exc:
            log.info("web: initData refused for Play now: %s", exc)
            raise refuse(request, 401, "web_auth", lang) from None
        user = UserRef("tg", tg.user_id, tg.name, negotiate(tg.language) or lang)
        limit_user(request, "tg", tg.user_id, lang)
    elif body.get("player") is not None or body.get("session") is not None:
        user = _identity(request, body)
    # The person's own language, unless they chose one on the panel (`chosen`: the page's language list).
    if user is not None and user.language in LANGUAGES and body.get("chosen") is not True:
        lang = user.language
    data: dict[str, Any] = {"available": available, "lang": lang, "strings": ui_strings(lang)}
    data.update(_choices(lang))
    if user is not None:
        data["me"] = {"name": user.name, "platform": user.platform}
        data["ratings"] = await _ratings(web_table.service.ladder, user.key, lang)
        if available:
            data["player"] = _player_token(request, user)
            data["computers_after"] = _playnow(request).queue.config.computers_after
    return _answer(data)


async def _guest(request: web.Request) -> web.Response:
    """`POST /api/guest` `{"name", "lang"?, "player"?}`: a guest's `player` token. With a valid guest
    token the same id keeps its rating (a new name and language may come with it); else a new random
    id, at most a few a minute per client address."""
    check_origin(request)
    web_table = table_of(request)
    _playnow(request)
    body = await json_body(request, QUEUE_BODY)
    lang = _language(request, body)
    name = clean_name(body.get("name"))
    if name is None:
        raise refuse(request, 400, "web_name", lang)
    user_id: str | None = None
    old = body.get("player")
    if isinstance(old, str):
        try:
            claims = web_table.signer.read(old, "player", web_table.clock())
        except TokenError:
            claims = None
        if claims is not None and claims.platform == "web":
            user_id = claims.user
    if user_id is None:
        assert web_table.guests is not None
        if not web_table.guests.allow(f"guest:{client(request)}"):
            raise error(429, "web_rate", lang)
        user_id = secrets.token_hex(8)
    user = UserRef("web", user_id, name, lang)
    return _answer({"player": _player_token(request, user), "name": name, "lang": lang})


async def _body_and_user(request: web.Request) -> tuple[dict[str, Any], UserRef, PlayNow]:
    check_origin(request)
    body = await json_body(request, QUEUE_BODY)
    user = _identity(request, body)
    return body, user, _playnow(request)


def _options(body: dict[str, Any], lang: str) -> Options:
    """The options the panel sends, checked as `/play`'s words are (`parse_options`)."""
    raw = body.get("options")
    if not isinstance(raw, dict):
        raise error(400, "web_options", lang)
    preset, players, pace = raw.get("preset", ANY_PRESET), raw.get("players"), raw.get("pace", "normal")
    if not isinstance(preset, str) or preset not in (ANY_PRESET, *PRESETS) or pace not in PACES:
        raise error(400, "web_options", lang)
    words = [preset, pace]
    if players is not None:
        if not isinstance(players, int) or isinstance(players, bool) or not 0 <= players <= 9:
            raise error(400, "web_options", lang)
        words.append(str(players))
    try:
        return parse_options(translator(lang), words)
    except OptionError as exc:
        raise _refusal(400, to_plain(exc.text)) from None


async def _status(
    request: web.Request,
    user: UserRef,
    play: PlayNow,
    shown: Options,
    notice: str = "",
) -> dict[str, Any]:
    """Where the player stands: waiting (the status lines `/play` shows, the offer of computers), a
    table found and being set up, seated (a session for the public table: the page opens it), or idle."""
    web_table = table_of(request)
    lang = user.language if user.language in LANGUAGES else "en"
    t = translator(lang)
    out: dict[str, Any] = {"state": "idle"}
    status = await play.queue.status(user.key)
    if status.queued:
        options = shown
        lines = render_waiting(t, options, max(1, status.waiting), status.waited, status.computers_offered)
        out = {
            "state": "waiting",
            "waiting": max(1, status.waiting),
            "waited": round(status.waited, 1),
            "offer": status.computers_offered,
            "options": {"preset": options.preset, "players": options.players, "pace": options.pace},
            "lines": [to_plain(line).removeprefix("🔎 ") for line in lines.split("\n")],
        }
    else:
        seat_id = await play.queue.seated_at(user.key)
        if seat_id is not None:
            table_id = seat_id if seat_id.startswith("pub:") else public_table_id(seat_id)
            stored = await web_table.service.store.load(table_id)
            doc = None if stored is None else TableDoc.model_validate_json(stored.document)
            seat = None if doc is None else doc.seat_of(user.key)
            if doc is None:
                out = {"state": "found", "lines": [web_error(lang, "web_found") or ""]}
            elif seat is not None and doc.status != "finished":
                claims = Claims("session", table_id, user.user_id, user.name, lang, user.platform, 0)
                out = {
                    "state": "seated",
                    "table": table_id,
                    "seat": seat,
                    "session": web_table.session_for(claims),
                    "lines": [web_error(lang, "web_found") or ""],
                }
    if notice:
        out["notice"] = notice
    return out


def _shown_options(body: dict[str, Any]) -> Options:
    """The options the status lines name: the page sends what it asked for with every status call (the
    queue keeps its own copy with the entry and decides by that; these are only shown back). Anything
    unreadable shows the defaults."""
    raw = body.get("options")
    if isinstance(raw, dict):
        try:
            return Options(str(raw.get("preset")), int(raw.get("players", 3)), str(raw.get("pace")))
        except (ValueError, TypeError):
            pass
    return Options()


def _refusal(status: int, text: str) -> web.HTTPException:
    kind = web.HTTPConflict if status == 409 else web.HTTPBadRequest
    return kind(
        text=json.dumps({"error": text}, ensure_ascii=False),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


async def _join(request: web.Request) -> web.Response:
    """`POST /api/queue/join` `{"player" | "session", "options": {"preset", "players", "pace"}}`."""
    body, user, play = await _body_and_user(request)
    lang = user.language if user.language in LANGUAGES else "en"
    options = _options(body, lang)
    web_table = table_of(request)
    player = Player(user.platform, user.user_id, user.name, lang)
    if await play.queue.seated_at(user.key) is None:
        where = await seated_where(web_table.service.store, user.key)
        if where is not None:
            t = translator(lang)
            text = t._("You already sit at a table: «{title}». Finish it (or /leave it) first.")
            raise _refusal(409, to_plain(text.format(title=where)))
    ladder = web_table.service.ladder
    rating = 1500.0 if ladder is None else await ladder_ratings(ladder)(player, options)
    result = await play.queue.join(player, rating, options)
    if result.outcome is JoinOutcome.QUEUED:
        log.info("web: %s queued for %s", user.key, options)
    return _answer(await _status(request, user, play, options))


async def _status_call(request: web.Request) -> web.Response:
    """`POST /api/queue/status`: asked by the page every 2 s while waiting (this renews the entry)."""
    body, user, play = await _body_and_user(request)
    return _answer(await _status(request, user, play, _shown_options(body)))


async def _cancel(request: web.Request) -> web.Response:
    """`POST /api/queue/cancel`: out of the queue, unless a table was found first (then: seated)."""
    body, user, play = await _body_and_user(request)
    lang = user.language if user.language in LANGUAGES else "en"
    shown = _shown_options(body)
    result = await play.queue.cancel(user.key)
    t = translator(lang)
    if result.outcome is CancelOutcome.CANCELLED:
        return _answer(await _status(request, user, play, shown, t._("You left the queue.")))
    if result.outcome is CancelOutcome.MATCHED:
        return _answer(await _status(request, user, play, shown, web_error(lang, "web_too_late") or ""))
    return _answer(await _status(request, user, play, shown))


async def _go(request: web.Request) -> web.Response:
    """`POST /api/queue/go`: start at once with computers in the empty seats (after the offer)."""
    body, user, play = await _body_and_user(request)
    lang = user.language if user.language in LANGUAGES else "en"
    shown = _shown_options(body)
    match = await play.queue.take_with_computers(user.key)
    if match is None:
        t = translator(lang)
        status = await _status(request, user, play, shown)
        if status["state"] == "waiting":
            status["notice"] = t._("Not yet: the offer comes after a while of waiting.")
        return _answer(status)
    service = table_of(request).service
    _, messages = await build_match(service, play.queue, match)
    try:
        await play.dispatch(messages)
    except Exception:
        log.exception("web: delivering a new table's messages failed")
    return _answer(await _status(request, user, play, shown))


def add_queue_routes(app: web.Application) -> None:
    """Play now's routes, and what strangers at a public table may do from the page (phrases, block,
    report: `adapters.web.social`)."""
    add_social_routes(app)
    app.router.add_post("/api/play", _play)
    app.router.add_post("/api/guest", _guest)
    app.router.add_post("/api/queue/join", _join)
    app.router.add_post("/api/queue/status", _status_call)
    app.router.add_post("/api/queue/cancel", _cancel)
    app.router.add_post("/api/queue/go", _go)
