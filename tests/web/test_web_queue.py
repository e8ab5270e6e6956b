"""Play now from the web page (docs/WEB.md, "Play now"): guests' player tokens, the queue's calls, and the
public table the matcher builds, against the real aiohttp app, a real redis-server and `RedisQueue`.

Every refusal is translated and changes nothing (the queue is asked afterwards); a guest is never seated
twice; the page's process heartbeats `web` (without it, web players are not matched); a web seat at a
public table is played by the timer when its person is away, and nothing is delivered to `web` people.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer
from webkit import BOT_TOKEN, signer_of, static_dir, web_settings

from adapters.web.app import WebOptions, WebTable, make_app
from adapters.web.playnow import clean_name
from adapters.web.table import PlayNow
from bot.handlers import Handlers
from bot.matchmaking import MatchConfig, Options, Player, RedisQueue
from bot.model import Message, Private
from bot.presence import Presence
from bot.public.runtime import PublicRuntime
from bot.relay.base import Relay, platform_of
from bot.service import Service
from bot.storage import RedisStore
from bot.table import TableDoc
from bot.weblinks import Claims

COMPUTERS_AFTER = 1.0


class Recorder(Relay):
    """The process's relay, recording what it was asked to deliver."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def dispatch(self, messages: Sequence[Message]) -> None:
        self.messages.extend(messages)


@dataclass
class QRig:
    service: Service
    store: RedisStore
    queue: RedisQueue
    public: PublicRuntime
    relay: Recorder
    web: WebTable
    client: TestClient
    dispatched: list[Message] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return str(self.client.make_url("/")).rstrip("/")

    async def post(self, path: str, body: dict[str, Any], **headers: str) -> tuple[int, dict[str, Any]]:
        r = await self.client.post(path, json=body, headers={"Origin": self.origin, **headers})
        data: dict[str, Any] = await r.json()
        return r.status, data

    async def guest(self, name: str, lang: str = "en", **headers: str) -> str:
        status, data = await self.post("/api/guest", {"name": name, "lang": lang}, **headers)
        assert status == 200, data
        token = data["player"]
        assert isinstance(token, str)
        return token

    def key_of(self, token: str) -> str:
        claims = self.web.signer.read(token, "player", time.time())
        return f"{claims.platform}:{claims.user}"

    async def wait_state(self, token: str, state: str, timeout: float = 5.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            status, data = await self.post("/api/queue/status", {"player": token})
            assert status == 200, data
            if data["state"] == state:
                return data
            assert time.monotonic() < deadline, f"still {data}"
            await asyncio.sleep(0.05)


@pytest.fixture
async def qrig(redis_url: str, tmp_path: Path) -> AsyncIterator[QRig]:
    store = RedisStore.from_url(redis_url)
    settings = web_settings()
    service = Service(store, settings, handlers=Handlers, clock=time.time, presence=Presence(store))
    queue = RedisQueue(store, config=MatchConfig(computers_after=COMPUTERS_AFTER))
    relay = Recorder()
    # As `thousand web` alone runs it: the page's process beats `web` (and here `tg` too, so that a
    # Telegram player may be matched with web guests).
    public = PublicRuntime(service, queue, relay, "web", also=("tg",), match_every=0.02)
    await public.start()
    web = WebTable(
        service,
        signer_of(settings),
        WebOptions(telegram_token=BOT_TOKEN, poll_seconds=0.02, rate=1000, burst=1000, guest_burst=3),
        playnow=PlayNow(queue, public.dispatch),
    )
    async with TestClient(TestServer(make_app(web, static_dir(tmp_path)))) as client:
        yield QRig(service, store, queue, public, relay, web, client)
    await public.stop()
    await service.close()
    await store.close()


POLISH3 = {"preset": "polish", "players": 3, "pace": "fast"}


# --- guests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "x" * 33,
        "Ann\x07",
        "Ann\u202eevil",
        "zero\u200bwidth",
        "@ann",
        "http://evil.test",
        "see www.evil.test",
        "t.me/evil",
        "line\nbreak",
        42,
        None,
    ],
)
def test_names_that_are_not_display_names(name: object) -> None:
    assert clean_name(name) is None


def test_names_are_trimmed_and_kept() -> None:
    assert clean_name("  Ala   ma  kota ") == "Ala ma kota"
    assert clean_name("Łucja <b>&") == "Łucja <b>&"  # shown as text, escaped wherever it is drawn
    assert clean_name("x" * 32) == "x" * 32


async def test_a_bad_name_is_refused_in_the_players_language(qrig: QRig) -> None:
    status, data = await qrig.post("/api/guest", {"name": "@ann", "lang": "pl"})
    assert status == 400 and data["error"].startswith("Imię ma od 1 do 32 znaków")


async def test_a_guest_token_keeps_its_id_and_new_guests_are_limited_per_address(qrig: QRig) -> None:
    first = await qrig.guest("Ann")
    status, data = await qrig.post("/api/guest", {"name": "Anna", "player": first})
    assert status == 200 and qrig.key_of(data["player"]) == qrig.key_of(first)
    assert data["name"] == "Anna"
    await qrig.guest("Bob")
    await qrig.guest("Cid")
    status, data = await qrig.post("/api/guest", {"name": "Dan", "lang": "ru"})
    assert status == 429 and data["error"] == "Слишком много запросов. Подождите немного."
    # A guest who comes back keeps their id without a new one being counted.
    status, _ = await qrig.post("/api/guest", {"name": "Ann", "player": first})
    assert status == 200
    # Another address (behind no trusted proxy the peer is the address: the header is not believed).
    status, _ = await qrig.post("/api/guest", {"name": "Eve"}, **{"X-Forwarded-For": "203.0.113.9"})
    assert status == 429


async def test_play_panel_names_the_player_and_offers_the_choices(qrig: QRig) -> None:
    token = await qrig.guest("Ann", "et")
    status, data = await qrig.post("/api/play", {"player": token})
    assert status == 200 and data["available"] is True and data["lang"] == "et"
    assert data["me"] == {"name": "Ann", "platform": "web"}
    assert data["strings"]["play_now"] == "Mängi kohe"
    assert [p["value"] for p in data["presets"]] == ["any", "polish", "estonian", "russian"]
    assert data["ratings"] == [] and data["computers_after"] == COMPUTERS_AFTER
    status, data = await qrig.post("/api/play", {"lang": "uk"})
    assert status == 200 and "me" not in data and data["strings"]["find_game"] == "Знайти гру"


# --- credentials and options ------------------------------------------------------------------------


async def test_forged_expired_and_missing_tokens_are_refused_and_nothing_is_queued(qrig: QRig) -> None:
    token = await qrig.guest("Ann", "pl")
    key = qrig.key_of(token)
    body, mac = token.split(".")
    forged = body + "." + ("A" if mac[0] != "A" else "B") + mac[1:]
    claims = qrig.web.signer.read(token, "player", time.time())
    expired = qrig.web.signer.sign(
        Claims("player", "", claims.user, claims.name, "pl", "web", time.time() - 1)
    )
    session_kind = qrig.web.signer.sign(
        Claims("session", "", claims.user, claims.name, "pl", "web", time.time() + 60)
    )
    for bad in (forged, expired, session_kind, None, 7):
        status, data = await qrig.post("/api/queue/join", {"player": bad, "options": POLISH3})
        assert status == 401, (bad, data)
        assert "przepustka" in data["error"] or "Your player pass" in data["error"]
    # Someone else's name cannot be put into a token: the body of a token is signed as a whole.
    assert not (await qrig.queue.status(key)).queued
    for path in ("/api/queue/status", "/api/queue/cancel", "/api/queue/go"):
        status, _ = await qrig.post(path, {"player": forged})
        assert status == 401


@pytest.mark.parametrize(
    "options",
    [
        None,
        "polish",
        {"preset": "chess", "players": 3, "pace": "fast"},
        {"preset": "polish", "players": 7, "pace": "fast"},
        {"preset": "polish", "players": "3", "pace": "fast"},
        {"preset": "polish", "players": True, "pace": "fast"},
        {"preset": "polish", "players": 3, "pace": "warp"},
        {"preset": "russian", "players": 2, "pace": "fast"},
    ],
)
async def test_bad_options_are_refused_and_nothing_is_queued(qrig: QRig, options: object) -> None:
    token = await qrig.guest("Ann", "ru")
    status, data = await qrig.post("/api/queue/join", {"player": token, "options": options})
    assert status == 400 and data["error"]
    assert data["error"] != "The request could not be read."  # translated: Russian
    assert not (await qrig.queue.status(qrig.key_of(token))).queued


async def test_a_foreign_origin_is_refused(qrig: QRig) -> None:
    token = await qrig.guest("Ann")
    r = await qrig.client.post(
        "/api/queue/join",
        json={"player": token, "options": POLISH3},
        headers={"Origin": "https://evil.test"},
    )
    assert r.status == 403
    assert not (await qrig.queue.status(qrig.key_of(token))).queued


async def test_a_large_body_is_refused(qrig: QRig) -> None:
    token = await qrig.guest("Ann")
    status, _ = await qrig.post("/api/queue/join", {"player": token, "options": POLISH3, "x": "y" * 3000})
    assert status == 413


# --- the queue -------------------------------------------------------------------------------------


async def test_join_status_cancel(qrig: QRig) -> None:
    token = await qrig.guest("Ann", "pl")
    status, data = await qrig.post("/api/queue/join", {"player": token, "options": POLISH3})
    assert status == 200 and data["state"] == "waiting" and data["waiting"] == 1 and not data["offer"]
    assert data["lines"][0].startswith("🔎 Szukam gry") or "gry" in data["lines"][0]
    status, again = await qrig.post("/api/queue/join", {"player": token, "options": POLISH3})
    assert again["state"] == "waiting"  # already queued: one entry
    status, data = await qrig.post("/api/queue/cancel", {"player": token})
    assert data["state"] == "idle" and data["notice"] == "Kolejka opuszczona."
    assert not (await qrig.queue.status(qrig.key_of(token))).queued
    status, data = await qrig.post("/api/queue/cancel", {"player": token})
    assert data["state"] == "idle" and "notice" not in data


async def test_start_with_computers_after_the_offer_and_play_the_table(qrig: QRig) -> None:
    token = await qrig.guest("Ann")
    await qrig.post("/api/queue/join", {"player": token, "options": POLISH3})
    status, data = await qrig.post("/api/queue/go", {"player": token})
    assert data["state"] == "waiting" and data["notice"].startswith("Not yet")
    await asyncio.sleep(COMPUTERS_AFTER + 0.1)
    status, data = await qrig.post("/api/queue/status", {"player": token, "options": POLISH3})
    assert data["offer"] is True and len(data["lines"]) == 4
    status, data = await qrig.post("/api/queue/go", {"player": token})
    assert status == 200 and data["state"] == "seated" and data["table"].startswith("pub:")
    r = await qrig.client.post(
        "/api/view", json={"session": data["session"]}, headers={"Origin": qrig.origin}
    )
    view = await r.json()
    # 7 cards, or 10 when both computers passed and the talon came to the seat at once.
    assert view["me"] == 0 and view["public"] is True and len(view["hand"]) in (7, 10)
    assert view["rating"] == {"preset": "polish", "rating": 1500, "provisional": True, "games": 0}
    assert sum(s["computer"] for s in view["seats"]) == 2
    # Nothing was handed to a platform for the web person: the page reads the table itself.
    assert [m for m in qrig.relay.messages if platform_of(m) == "web"] == []
    # Joining again while seated: the same table, never a second one.
    status, data2 = await qrig.post("/api/queue/join", {"player": token, "options": POLISH3})
    assert data2["state"] == "seated" and data2["table"] == data["table"]
    assert not (await qrig.queue.status(qrig.key_of(token))).queued


async def test_two_guests_and_a_telegram_player_are_matched_once(qrig: QRig) -> None:
    ann, bob = await qrig.guest("Ann"), await qrig.guest("Bob", "pl")
    for token in (ann, bob):
        status, data = await qrig.post("/api/queue/join", {"player": token, "options": POLISH3})
        assert status == 200 and data["state"] == "waiting"
    await qrig.queue.join(Player("tg", "555", "Tadek", "pl"), 1500.0, Options("polish", 3, "fast"))
    seated = [await qrig.wait_state(t, "seated") for t in (ann, bob)]
    table = seated[0]["table"]
    assert seated[1]["table"] == table and len({s["seat"] for s in seated}) == 2
    stored = await qrig.store.load(table)
    assert stored is not None
    doc = TableDoc.model_validate_json(stored.document)
    assert sorted(s.user for s in doc.seats if s.user) == sorted(
        [qrig.key_of(ann), qrig.key_of(bob), "tg:555"]
    )
    # The Telegram player's messages went to the relay; none was for a web person.
    tg = [m for m in qrig.relay.messages if isinstance(m.audience, Private)]
    assert tg and {platform_of(m) for m in tg} == {"tg"}
    # A second join of a seated guest never makes a second table.
    _status, data = await qrig.post("/api/queue/join", {"player": ann, "options": POLISH3})
    assert data["state"] == "seated" and data["table"] == table
    assert len({k for k in await qrig.store.tables_for_user(qrig.key_of(ann)) if k.startswith("pub:")}) == 1


async def test_cancel_after_a_match_says_too_late(qrig: QRig) -> None:
    ann, bob = await qrig.guest("Ann"), await qrig.guest("Bob")
    two = {"preset": "estonian", "players": 2, "pace": "slow"}
    await qrig.post("/api/queue/join", {"player": ann, "options": two})
    await qrig.post("/api/queue/join", {"player": bob, "options": two})
    await qrig.wait_state(bob, "seated")
    _status, data = await qrig.post("/api/queue/cancel", {"player": ann})
    assert data["state"] == "seated" and data["notice"].startswith("Too late to cancel")


async def test_web_players_are_matched_only_while_a_process_beats_web(redis_url: str) -> None:
    store = RedisStore.from_url(redis_url)
    service = Service(store, web_settings(), handlers=Handlers, clock=time.time)
    queue = RedisQueue(store, config=MatchConfig(heartbeat_seconds=0.6))
    public = PublicRuntime(service, queue, Recorder(), "tg", match_every=0.02)
    await public.start()
    try:
        two = Options("polish", 2, "normal")
        for i in range(2):
            await queue.join(Player("web", f"g{i}", f"G{i}"), 1500.0, two)
        await asyncio.sleep(0.3)
        assert (await queue.status("web:g0")).queued  # nobody beats `web`: not matched
        await public.add_platform("web")
        # Past the first beat's freshness: only the loop's beats of `web` keep web players matchable.
        for i in range(2):
            await queue.cancel(f"web:g{i}")
        await asyncio.sleep(1.0)
        for i in range(2):
            await queue.join(Player("web", f"g{i}", f"G{i}"), 1500.0, two)
        for _ in range(100):
            if await queue.seated_at("web:g0"):
                break
            await asyncio.sleep(0.02)
        assert await queue.seated_at("web:g0") and await queue.seated_at("web:g1")
    finally:
        await public.stop()
        await service.close()
        await store.close()


async def test_an_absent_web_player_is_played_for_by_the_timer(qrig: QRig) -> None:
    token = await qrig.guest("Ann")
    await qrig.post("/api/queue/join", {"player": token, "options": POLISH3})
    await asyncio.sleep(COMPUTERS_AFTER + 0.1)
    _, data = await qrig.post("/api/queue/go", {"player": token})
    table = data["table"]

    async def doc() -> TableDoc:
        stored = await qrig.store.load(table)
        assert stored is not None
        return TableDoc.model_validate_json(stored.document)

    start = await doc()
    assert start.turn is not None
    # Nobody has the page open: the fast pace's turn timer runs out, a computer plays for the web
    # seat, and the game goes on (nothing raises because the seat is on platform `web`).
    messages = await qrig.service.tick(start.turn.deadline + 1)
    after = await doc()
    assert after.game is not None and start.game is not None
    assert len(after.game.actions) > len(start.game.actions)
    assert all(platform_of(m) != "web" or isinstance(m.audience, Private) for m in messages)


async def test_an_away_web_player_comes_back_from_the_page(qrig: QRig) -> None:
    token = await qrig.guest("Ann")
    await qrig.post("/api/queue/join", {"player": token, "options": POLISH3})
    await asyncio.sleep(COMPUTERS_AFTER + 0.1)
    _, data = await qrig.post("/api/queue/go", {"player": token})
    table, session = data["table"], data["session"]

    async def view() -> dict[str, Any]:
        r = await qrig.client.post("/api/view", json={"session": session}, headers={"Origin": qrig.origin})
        out: dict[str, Any] = await r.json()
        return out

    for _ in range(qrig.service.settings.missed_turns_to_away + 2):
        stored = await qrig.store.load(table)
        assert stored is not None
        doc = TableDoc.model_validate_json(stored.document)
        if doc.seats[0].away or doc.turn is None:
            break
        await qrig.service.tick(doc.turn.deadline + 1)
    seen = await view()
    assert seen["seats"][0]["away"] is True
    back = [a for a in seen["actions"] if a["kind"] == "back"]
    assert back and back[0]["label"] == "Back to the game"
    r = await qrig.client.post(
        "/api/act", json={"session": session, "payload": back[0]["payload"]}, headers={"Origin": qrig.origin}
    )
    assert (await r.json())["ok"] is True
    seen = await view()
    assert seen["seats"][0]["away"] is False and not [a for a in seen["actions"] if a["kind"] == "back"]


# --- properties that once broke silently (issue 26) ------------------------------------------------


@pytest.mark.parametrize("platform", ["tg", "dc"])
async def test_another_platforms_player_token_is_not_reissued_as_a_guest(qrig: QRig, platform: str) -> None:
    """A Telegram or Discord person's `player` token (valid, signed by this server for the Mini App or a
    link page) presented to `/api/guest` gives a fresh guest, never a web token carrying that person's id
    (breakage held: the `platform == "web"` check removed from `_guest`, so `web:555` played as the
    Telegram person 555 and took their place in the queue and on the ladder)."""
    person = qrig.web.signer.sign(Claims("player", "", "555", "Tadek", "pl", platform, time.time() + 600))
    status, data = await qrig.post("/api/guest", {"name": "Tadek", "player": person})
    assert status == 200, data
    claims = qrig.web.signer.read(data["player"], "player", time.time())
    assert claims.platform == "web" and claims.user != "555", claims
    # A fresh guest: counted against the address's new guests as any other (3 here).
    await qrig.guest("Bob")
    await qrig.guest("Cid")
    status, data = await qrig.post("/api/guest", {"name": "Tadek", "player": person})
    assert status == 429, data


async def test_an_expired_guest_token_gives_a_new_id_counted_per_address(qrig: QRig) -> None:
    """A guest token past its lifetime is expired at `/api/guest`: a new id (not the old one back) and
    a new guest counted against the address's limit (breakage held: the token read with `now=0`, so an
    expired token kept its id, its rating, and skipped the per-address limit forever)."""
    first = await qrig.guest("Ann")
    old = qrig.web.signer.read(first, "player", time.time())
    expired = qrig.web.signer.sign(Claims("player", "", old.user, "Ann", "en", "web", time.time() - 1))
    ids = set()
    for _ in range(2):  # the first guest and these two: the address's 3
        status, data = await qrig.post("/api/guest", {"name": "Ann", "player": expired})
        assert status == 200, data
        ids.add(qrig.web.signer.read(data["player"], "player", time.time()).user)
    assert old.user not in ids and len(ids) == 2
    status, data = await qrig.post("/api/guest", {"name": "Ann", "player": expired})
    assert status == 429, data


async def test_a_seat_pointer_that_outlived_the_seat_gives_no_session(qrig: QRig) -> None:
    """The queue's seat pointer (`seated_at`) names a public table where the guest no longer sits (their
    seat handed to a computer, as `/leave` does, with the pointer left behind), or never sat: the status
    gives no session of that table (breakage held: the seat check removed from `_status`, so such a
    pointer opened the table to its holder as a spectator's session)."""
    ann, bob = await qrig.guest("Ann"), await qrig.guest("Bob")
    await qrig.post("/api/queue/join", {"player": ann, "options": POLISH3})
    await asyncio.sleep(COMPUTERS_AFTER + 0.1)
    _, data = await qrig.post("/api/queue/go", {"player": ann})
    assert data["state"] == "seated" and "session" in data
    table = data["table"]
    stored = await qrig.store.load(table)
    assert stored is not None
    doc = TableDoc.model_validate_json(stored.document)
    seat = doc.seat_of(qrig.key_of(ann))
    assert seat is not None
    doc.seats[seat].kicked = True
    await qrig.store.save(table, stored.version, doc.model_dump_json(), ttl_seconds=600)
    # Bob never sat there; a pointer naming the table (a stale or crossed write) is not a seat either.
    await qrig.queue.seat(qrig.key_of(bob), table)
    for token in (ann, bob):
        assert await qrig.queue.seated_at(qrig.key_of(token)) == table
        for path in ("/api/queue/status", "/api/queue/join", "/api/queue/cancel"):
            body = {"player": token, "options": POLISH3}
            status, data = await qrig.post(path, body)
            assert status == 200 and "session" not in data and data["state"] != "seated", (path, data)


async def test_each_seat_of_a_public_table_sees_its_own_rating(qrig: QRig) -> None:
    """Two guests with different ladder ratings at one public table: each one's page (`/api/view` and
    the event stream, which shares one snapshot between pages) shows that reader's own rating (breakage
    held: the reader ignored, so every seat showed seat 0's rating; only a lone guest's 1500 against
    computers was asserted before, which any seat's rating satisfied)."""
    ann, bob = await qrig.guest("Ann"), await qrig.guest("Bob")
    keys = {qrig.key_of(ann): "Ann", qrig.key_of(bob): "Bob"}
    two = {"preset": "estonian", "players": 2, "pace": "slow"}
    for token in (ann, bob):
        await qrig.post("/api/queue/join", {"player": token, "options": two})
    seated = {t: await qrig.wait_state(t, "seated") for t in (ann, bob)}
    assert seated[ann]["table"] == seated[bob]["table"] and seated[ann]["seat"] != seated[bob]["seat"]
    # Rated apart once seated (so far apart, the matcher would not have put them together at once): a
    # page reads the ratings as the game is played.
    ladder = qrig.service.ladder
    assert ladder is not None
    await ladder.apply_game("estonian", "earlier", {qrig.key_of(ann): 1000, qrig.key_of(bob): 0}, keys)
    want = {t: round((await ladder.get("estonian", qrig.key_of(t))).rating) for t in (ann, bob)}
    assert want[ann] > 1500 > want[bob]
    streams = []
    try:
        for token in (ann, bob):
            session = seated[token]["session"]
            r = await qrig.client.post(
                "/api/view", json={"session": session}, headers={"Origin": qrig.origin}
            )
            view = await r.json()
            assert view["me"] == seated[token]["seat"]
            assert view["rating"]["preset"] == "estonian" and view["rating"]["rating"] == want[token], (
                keys[qrig.key_of(token)],
                view["rating"],
            )
            r = await qrig.client.post(
                "/api/ticket", json={"session": session}, headers={"Origin": qrig.origin}
            )
            assert r.status == 200
            ticket = (await r.json())["ticket"]
            streams.append((token, await qrig.client.get("/api/events", params={"ticket": ticket})))
        for token, stream in streams:
            view = await _next_view(stream)
            assert view["me"] == seated[token]["seat"] and view["rating"]["rating"] == want[token]
    finally:
        for _, stream in streams:
            stream.close()


async def _next_view(resp: Any, timeout: float = 5.0) -> dict[str, Any]:
    """The next `view` event of an event stream."""
    event = ""
    async with asyncio.timeout(timeout):
        while True:
            line = (await resp.content.readline()).decode()
            if line.startswith("event: "):
                event = line[7:].strip()
            elif line.startswith("data: ") and event == "view":
                data: dict[str, Any] = json.loads(line[6:])
                return data
