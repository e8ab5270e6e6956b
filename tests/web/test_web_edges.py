"""The web table at its edges (issue 19): rate limits that one client behind the proxy cannot turn against
everybody, the client's address only from a trusted proxy, unreadable input answered 400 (never 500),
tokens kept out of URLs (the view by POST, the stream by a single-use ticket), strict base64, headers on
event streams, connection timeouts, a closed stream's slot, start payloads of one game, `/api/session`'s
own origin and size checks, and a spectator's stream next to a seat's in the same language."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer, make_mocked_request
from botkit import make_user
from webkit import BOT_TOKEN, GROUP, HUMANS, Rig

from adapters.web.app import WebOptions, WebTable, make_app, make_runner
from adapters.web.security import client_address, trusted_networks
from bot.weblinks import Claims, Signer, TokenError

CODE = re.compile(r"(?<![A-Za-z0-9])(?:9|10|J|Q|K|A)[CSHD](?![A-Za-z0-9])")


@asynccontextmanager
async def served(rig: Rig, **options: Any) -> AsyncIterator[tuple[WebTable, TestClient]]:
    """Another web table over the rig's service, with `options` (rates, proxies, timeouts)."""
    web_table = WebTable(
        rig.service,
        rig.web.signer,
        WebOptions(telegram_token=BOT_TOKEN, **options),
    )
    async with TestClient(TestServer(make_app(web_table))) as client:
        yield web_table, client


@asynccontextmanager
async def really_served(web_table: WebTable) -> AsyncIterator[str]:
    """The web table served as the processes serve it (`make_runner`) on a loopback port: its base URL."""
    runner = make_runner(web_table)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def origin(client: TestClient) -> dict[str, str]:
    return {"Origin": str(client.make_url("/")).rstrip("/")}


async def session_of(client: TestClient, web_table: WebTable, user: Any, **headers: str) -> str:
    link = web_table.link(GROUP.key, user).split("?t=", 1)[1]
    r = await client.post("/api/session", json={"link": link}, headers={**origin(client), **headers})
    assert r.status == 200, await r.text()
    token = (await r.json())["session"]
    assert isinstance(token, str)
    return token


# --- rate limits ----------------------------------------------------------------------------------


async def test_clients_failing_behind_the_proxy_cannot_make_a_signed_in_player_429(rig: Rig) -> None:
    """Two clients without credentials loop `POST /api/view` behind the same reverse proxy (one address
    for everybody, as when the proxy is not configured as trusted); a signed-in player behind that proxy
    still gets every view."""
    await rig.harness.open_table(HUMANS)
    async with served(rig, rate=5, burst=10) as (web_table, client):
        player = await session_of(client, web_table, HUMANS[0])
        attackers: list[int] = []
        mine: list[int] = []

        async def attack() -> None:
            for _ in range(100):
                r = await client.post("/api/view", json={"session": "x"}, headers=origin(client))
                attackers.append(r.status)
                await asyncio.sleep(0)

        async def play() -> None:
            for _ in range(8):
                r = await client.post("/api/view", json={"session": player}, headers=origin(client))
                mine.append(r.status)
                await asyncio.sleep(0.01)

        await asyncio.gather(attack(), attack(), play())
        assert mine == [200] * 8, mine
        assert attackers.count(429) > 100 and set(attackers) == {401, 429}, set(attackers)


async def test_x_forwarded_for_is_believed_only_from_the_trusted_proxy(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    # No proxy configured: a client cannot escape its bucket by inventing addresses.
    async with served(rig, fail_rate=0.01, fail_burst=5) as (_, client):
        statuses = [
            (
                await client.post(
                    "/api/view",
                    json={"session": "x"},
                    headers={**origin(client), "X-Forwarded-For": f"203.0.113.{i}"},
                )
            ).status
            for i in range(10)
        ]
        assert statuses[:5] == [401] * 5 and statuses[5:] == [429] * 5, statuses
    # Behind the trusted proxy: each client has its own bucket, named by the right-most address the
    # proxy added (what the client itself wrote further left is not believed).
    async with served(rig, fail_rate=0.01, fail_burst=5, trusted_proxies=("127.0.0.0/8",)) as (_, client):

        async def fail(xff: str) -> int:
            r = await client.post(
                "/api/view", json={"session": "x"}, headers={**origin(client), "X-Forwarded-For": xff}
            )
            return r.status

        assert [await fail("203.0.113.1") for _ in range(5)] == [401] * 5
        assert await fail("203.0.113.1") == 429
        assert await fail("203.0.113.2") == 401
        assert await fail("10.9.9.9, 203.0.113.1") == 429  # a spoofed left part changes nothing


def test_client_address_from_the_right_of_x_forwarded_for() -> None:
    proxies = trusted_networks(["10.0.0.0/8", "127.0.0.1"])

    def address(peer: str, xff: str | None) -> str:
        headers = {} if xff is None else {"X-Forwarded-For": xff}
        request = make_mocked_request("GET", "/", headers=headers)
        request._transport_peername = (peer, 1234)  # type: ignore[attr-defined]
        return client_address(request.clone(remote=peer), proxies)

    assert address("203.0.113.5", "1.2.3.4") == "203.0.113.5"  # not a proxy: the header is ignored
    assert address("127.0.0.1", "1.2.3.4") == "1.2.3.4"
    assert address("127.0.0.1", "6.6.6.6, 1.2.3.4, 10.1.1.1") == "1.2.3.4"  # two proxies deep
    assert address("127.0.0.1", None) == "127.0.0.1"
    assert address("127.0.0.1", "not-an-address") == "127.0.0.1"


async def test_forged_sessions_on_act_are_rate_limited_before_anything_runs(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    async with served(rig, fail_rate=0.01, fail_burst=10) as (web_table, client):
        handled: list[object] = []

        async def handle(command: Any) -> list[Any]:
            handled.append(command)
            return []

        web_table.handle = handle
        forged = Signer(b"f" * 32).sign(Claims("session", GROUP.key, "1", "A", "en", "tg", time.time() + 60))
        statuses = [
            (
                await client.post(
                    "/api/act", json={"session": forged, "payload": "x:::tg:-100777"}, headers=origin(client)
                )
            ).status
            for _ in range(60)
        ]
        assert statuses[:10] == [401] * 10 and statuses.count(429) == 50, statuses
        assert handled == []


async def test_failed_sign_ins_count_per_address_but_never_block_a_genuine_one(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    async with served(rig, fail_rate=0.01, fail_burst=5) as (web_table, client):
        bad = [
            (await client.post("/api/session", json={"link": "a.b"}, headers=origin(client))).status
            for _ in range(8)
        ]
        assert bad == [401] * 5 + [429] * 3
        # A genuine link from the same address still signs in, and its session works.
        token = await session_of(client, web_table, HUMANS[1])
        assert (await client.post("/api/view", json={"session": token}, headers=origin(client))).status == 200


async def test_each_signed_in_user_has_a_budget_of_their_own(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    async with served(rig, rate=0.01, burst=6) as (web_table, client):
        greedy = await session_of(client, web_table, HUMANS[0])  # 1 of 6
        other = await session_of(client, web_table, HUMANS[1])
        statuses = [
            (await client.post("/api/view", json={"session": greedy}, headers=origin(client))).status
            for _ in range(8)
        ]
        assert statuses[:5] == [200] * 5 and statuses[5:] == [429] * 3, statuses
        r = await client.post("/api/view", json={"session": other}, headers=origin(client))
        assert r.status == 200


# --- unreadable input -----------------------------------------------------------------------------


async def test_unreadable_input_is_400_or_a_refusal_never_500(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    session = (await rig.session_by_link(HUMANS[0]))["session"]
    post, get = rig.client.post, rig.client.get
    h = rig.headers()
    surrogate_init = '{"init_data": "user=1&hash=\\ud800"}'
    surrogate_move = f'{{"session": "{session}", "payload": "\\ud800"}}'
    superscript = {"session": session, "payload": "b:1:\u00b2:tg:-100777"}  # int() refuses "²"
    cases: list[tuple[str, Callable[[], Awaitable[aiohttp.ClientResponse]]]] = [
        ("port 99999", lambda: post("/api/session", json={"link": "a.b"}, headers={"Origin": "http://127.0.0.1:99999"})),
        ("unicode origin", lambda: post("/api/session", json={"link": "a.b"}, headers={"Origin": "http://ex\u00e4mple"})),
        ("1,500 [", lambda: post("/api/session", data="[" * 1500, headers=h)),
        ("1,500 { in act", lambda: post("/api/act", data='{"a":' * 1500, headers=h)),
        ("lone surrogate link", lambda: post("/api/session", data='{"link": "\\ud800.\\udfff"}', headers=h)),
        ("lone surrogate initData", lambda: post("/api/session", data=surrogate_init, headers=h)),
        ("lone surrogate session", lambda: post("/api/view", data='{"session": "\\ud800"}', headers=h)),
        ("lone surrogate payload", lambda: post("/api/act", data=surrogate_move, headers=h)),
        ("superscript digits", lambda: post("/api/act", json=superscript, headers=h)),
        ("latin-1 body", lambda: post("/api/session", data=b'{"link": "\xff\xfe"}', headers=h)),
        ("surrogate ticket", lambda: get("/api/events?ticket=%ED%A0%80")),
        ("surrogate replay", lambda: get("/api/replay/%ED%A0%80")),
        ("padded session", lambda: post("/api/view", json={"session": f"{session}="}, headers=h)),
    ]  # fmt: skip
    for name, call in cases:
        r = await call()
        answer = await r.json()
        assert "Content-Security-Policy" in r.headers, name
        if r.status == 200:  # a move refused by the service, in words
            assert answer["ok"] is False and answer["error"], (name, answer)
            continue
        assert 400 <= r.status < 500, (name, r.status, answer)
        assert answer["error"], name


async def test_one_guard_turns_any_parse_error_into_400(rig: Rig) -> None:
    """A handler that fails to read its input (whatever the exception's kind) answers the usual 400."""
    app = make_app(rig.web)

    async def broken(request: web.Request) -> web.Response:
        kind = request.match_info["kind"]
        raise {"value": ValueError("x"), "type": TypeError("x"), "deep": RecursionError("x")}[kind]

    app.router.add_get("/broken/{kind}", broken)
    async with TestClient(TestServer(app)) as client:
        for kind in ("value", "type", "deep"):
            r = await client.get(f"/broken/{kind}", headers={"Accept-Language": "pl"})
            assert r.status == 400, kind
            assert (await r.json())["error"] == "Nie udało się odczytać żądania.", kind


# --- tokens out of URLs ---------------------------------------------------------------------------


async def test_the_view_by_post_and_the_stream_by_a_single_use_ticket(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    session = (await rig.session_by_link(HUMANS[0]))["session"]
    # The session is no longer read from a URL.
    assert (await rig.client.get("/api/view", params={"session": str(session)})).status == 405
    r = await rig.client.get("/api/events", params={"session": str(session)})
    assert r.status == 401
    r = await rig.client.get("/api/events", params={"ticket": str(session)})  # a session is no ticket
    assert r.status == 401
    ticket = await rig.ticket(session)
    assert str(session) not in ticket
    first = await rig.client.get("/api/events", params={"ticket": ticket})
    assert first.status == 200
    first.close()
    again = await rig.client.get("/api/events", params={"ticket": ticket})
    assert again.status == 401  # used once already (counted in the store: every process agrees)
    now = time.time()
    expired = rig.web.signer.sign(
        Claims("ticket", GROUP.key, HUMANS[0].user_id, "A", "en", "tg", now - 1, nonce="n1", until=now + 99)
    )
    assert (await rig.client.get("/api/events", params={"ticket": expired})).status == 401
    forged = Signer(b"f" * 32).sign(
        Claims("ticket", GROUP.key, HUMANS[0].user_id, "A", "en", "tg", now + 9, nonce="n2", until=now + 99)
    )
    assert (await rig.client.get("/api/events", params={"ticket": forged})).status == 401
    # A ticket's stream ends when the session it was issued for does.
    ending = rig.web.signer.sign(
        Claims("ticket", GROUP.key, HUMANS[0].user_id, "A", "en", "tg", now + 9, nonce="n3", until=now - 1)
    )
    r = await rig.client.get("/api/events", params={"ticket": ending})
    assert r.status == 200 and b"event: gone" in await r.content.readuntil(b"\n\n")
    r.close()


def test_base64_is_decoded_strictly() -> None:
    signer = Signer(b"k" * 32)
    claims = Claims("session", "tg:-1", "7", "Ann", "en", "tg", 2000.0)
    token = next(
        t
        for t in (
            signer.sign(Claims("session", "tg:-1", str(i), "Ann", "en", "tg", 2000.0)) for i in range(200)
        )
        if "-" in t or "_" in t
    )
    claims = signer.read(token, "session", 1000.0)
    assert claims.user.isdigit()
    body, mac = token.split(".")
    spellings = [
        token + "=",
        f"{body}=.{mac}",
        f"{body}.{mac}==",
        token.replace("-", "+").replace("_", "/"),
        f" {token}",
        f"{token}\n",
    ]
    # The MAC's last character carries 2 unused bits: another letter that decodes to the same bytes.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    last = alphabet.index(mac[-1])
    spellings.append(f"{body}.{mac[:-1]}{alphabet[last ^ 1]}")
    for spelling in spellings:
        assert spelling != token
        try:
            signer.read(spelling, "session", 1000.0)
        except TokenError:
            continue
        raise AssertionError(f"accepted {spelling!r}")


# --- headers --------------------------------------------------------------------------------------


async def test_an_event_stream_carries_the_security_headers(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    session = (await rig.session_by_link(HUMANS[0]))["session"]
    stream = await rig.stream(session)
    try:
        assert stream.status == 200
        for r in (stream, await rig.view(session), await rig.client.get("/")):
            directives = {
                d.split()[0]: d.split()[1:]
                for d in r.headers["Content-Security-Policy"].split(";")
                if d.strip()
            }
            assert directives["frame-ancestors"] == ["'self'", "https://web.telegram.org"]
            assert r.headers["X-Content-Type-Options"] == "nosniff"
            assert r.headers["Referrer-Policy"] == "no-referrer"
            assert r.headers["Server"] == "thousand"  # no library or version
    finally:
        stream.close()


# --- connections ----------------------------------------------------------------------------------


def _closed_within(sock: socket.socket, seconds: float) -> bytes:
    """What the server sent before closing the connection; fails if it is still open after `seconds`."""
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except TimeoutError:
        raise AssertionError(f"still open after {seconds} s (got {received[:80]!r})") from None
    return received


async def test_idle_and_half_sent_connections_are_closed(rig: Rig) -> None:
    web_table = WebTable(
        rig.service,
        rig.web.signer,
        WebOptions(public_url="https://example.test", idle_seconds=0.5, body_seconds=0.5),
    )
    async with really_served(web_table) as base:
        port = int(base.rsplit(":", 1)[1])

        def probe(data: bytes) -> bytes:
            with socket.create_connection(("127.0.0.1", port)) as sock:
                if data:
                    sock.sendall(data)
                return _closed_within(sock, 3.0)

        started = time.perf_counter()
        assert await asyncio.to_thread(probe, b"") == b""  # connected, never a byte
        assert await asyncio.to_thread(probe, b"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\n") == b""
        half_body = (
            b"POST /api/session HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: https://example.test\r\n"
            b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"link": '
        )
        answer = await asyncio.to_thread(probe, half_body)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
        assert time.perf_counter() - started < 6.0


async def test_a_closed_stream_frees_its_slot_at_once(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    web_table = WebTable(rig.service, rig.web.signer, WebOptions(public_url="https://example.test"))
    async with really_served(web_table) as base, aiohttp.ClientSession() as http:
        headers = {"Origin": "https://example.test"}
        link = web_table.link(GROUP.key, HUMANS[0]).split("?t=", 1)[1]
        async with http.post(f"{base}/api/session", json={"link": link}, headers=headers) as r:
            session = (await r.json())["session"]

        async def open_stream() -> aiohttp.ClientResponse:
            async with http.post(f"{base}/api/ticket", json={"session": session}, headers=headers) as r:
                ticket = (await r.json())["ticket"]
            return await http.get(f"{base}/api/events", params={"ticket": ticket})

        streams = [await open_stream() for _ in range(8)]
        assert all(s.status == 200 for s in streams)
        ninth = await open_stream()
        assert ninth.status == 429  # the cap of 8 holds
        ninth.close()
        for _ in range(3):  # a page that reconnects a few times in a row
            streams.pop(0).close()
            await asyncio.sleep(0.2)
            again = await open_stream()
            assert again.status == 200, await again.text()
            streams.append(again)
        for s in streams:
            s.close()
        for _ in range(50):
            if not web_table.streams:
                break
            await asyncio.sleep(0.02)
        assert web_table.streams == {}


# --- start payloads, /api/session's own checks, the view cache ----------------------------------


async def test_a_start_payload_opens_only_its_own_game(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    from test_web_api import init_data

    start = await rig.start()
    r = await rig.client.post(
        "/api/session", json={"init_data": init_data(100, start)}, headers=rig.headers()
    )
    assert r.status == 200, await r.text()
    # A link of an earlier game of this chat (same table id, another serial): this game is not shown.
    old = rig.web.signer.start_payload(GROUP.key, "0ld5e41a1")
    for body in ({"init_data": init_data(100, old)}, {"init_data": init_data(100), "start": old}):
        r = await rig.client.post("/api/session", json=body, headers=rig.headers())
        assert r.status == 404, body
        assert "session" not in await r.json()


async def test_session_checks_its_origin_and_its_size(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    link = rig.web.link(GROUP.key, HUMANS[0]).split("?t=", 1)[1]
    for headers in (
        {},
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
    ):
        r = await rig.client.post("/api/session", json={"link": link}, headers=headers)
        assert r.status == 403, headers
        assert "session" not in await r.json()
    # 8 KB: a body just under passes, just over is 413 (declared or streamed without a length).
    pad = "x" * (8 * 1024 - len(json.dumps({"link": link, "pad": ""})))
    fits = json.dumps({"link": link, "pad": pad})
    assert len(fits.encode()) == 8 * 1024
    r = await rig.client.post("/api/session", data=fits, headers=rig.headers())
    assert r.status == 200, await r.text()
    r = await rig.client.post("/api/session", data=fits + " ", headers=rig.headers())
    assert r.status == 413

    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b" " * 1024

    r = await rig.client.post("/api/session", data=chunks(), headers=rig.headers())
    assert r.status == 413


async def test_a_spectators_stream_next_to_a_seats_in_the_same_language(rig: Rig) -> None:
    """The view cache is per seat and language: a spectator opening the table right after seat 0 (or
    before it) in the same language never gets seat 0's view."""
    await rig.harness.open_table(HUMANS)
    from test_web_live import next_view

    state = await rig.harness.state()
    hand0 = {c for c in CODE.findall(json.dumps(await _view_of(rig, HUMANS[0])))}
    assert hand0 and state.deal_number >= 0
    watcher = make_user(40, platform="tg")
    for order in ((HUMANS[0], watcher), (watcher, HUMANS[0])):
        streams = []
        try:
            views = {}
            for user in order:
                session = (await rig.session_by_link(user))["session"]
                stream = await rig.stream(session)
                streams.append(stream)
                views[user.key] = await next_view(stream)
            assert views[HUMANS[0].key]["lang"] == views[watcher.key]["lang"]
            assert views[HUMANS[0].key]["me"] == 0 and views[HUMANS[0].key]["hand"]
            spectator = views[watcher.key]
            assert spectator["me"] is None and spectator["hand"] is None, order
            assert not set(CODE.findall(json.dumps(spectator))) & set(views[HUMANS[0].key]["hand"])
        finally:
            for s in streams:
                s.close()


async def _view_of(rig: Rig, user: Any) -> dict[str, Any]:
    session = (await rig.session_by_link(user))["session"]
    r = await rig.view(session)
    data: dict[str, Any] = await r.json()
    return data
