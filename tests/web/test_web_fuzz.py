"""Fuzz of the web table's API (issue 19): odd unicode (lone surrogates, superscript digits, NUL, bidi
marks), deep nesting, malformed JSON and bytes, odd Origin headers and tokens, against the server as the
processes run it. Whatever comes in, the answer is never a 500: unreadable input is a 400 (or the usual
401/403/404/413 refusal), and a move that cannot be read is refused."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from aiohttp import web
from botkit import Clock, Harness
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from webkit import GROUP, HUMANS, web_settings

from adapters.web.app import WebOptions, WebTable, make_runner
from bot.handlers import Handlers
from bot.service import Service
from bot.storage import MemoryStore
from bot.weblinks import signer_for

ORIGIN = "https://example.test"


@dataclass
class Served:
    port: int
    session: str
    link: str
    loop: asyncio.AbstractEventLoop
    web: WebTable


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """The web table on a loopback port, run by `make_runner` in a thread of its own (hypothesis drives
    it from the test's thread with a plain HTTP client that can send any bytes)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def start() -> None:
        settings_ = web_settings()
        store = MemoryStore()
        service = Service(store, settings_, handlers=Handlers)
        await Harness(service, store, Clock(), chat=GROUP).open_table(HUMANS)
        signer = signer_for(settings_)
        assert signer is not None
        table = WebTable(
            service,
            signer,
            WebOptions(
                public_url=ORIGIN, telegram_token="1:x", rate=1e9, burst=1e9, fail_rate=1e9, fail_burst=1e9
            ),
        )
        runner = make_runner(table)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        link = table.link(GROUP.key, HUMANS[0]).split("?t=", 1)[1]
        from bot.weblinks import Claims

        session = table.session_for(Claims("session", GROUP.key, HUMANS[0].user_id, "A", "en", "tg", 0))
        box.update(
            runner=runner, service=service, served=Served(runner.addresses[0][1], session, link, loop, table)
        )

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(30)
    yield box["served"]

    async def stop() -> None:
        await box["runner"].cleanup()
        await box["service"].close()

    asyncio.run_coroutine_threadsafe(stop(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def request(served: Served, method: str, path: bytes, body: bytes, headers: dict[str, bytes]) -> int:
    """One request with exactly these bytes; the answer's status (the body is read and checked)."""
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=20)
    try:
        conn.putrequest(method, path.decode("latin-1"), skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            # Line breaks would end the header (http.client refuses them): anything else goes as it is.
            conn.putheader(name, value.replace(b"\r", b" ").replace(b"\n", b" ").strip() or b"x")
        if method == "POST":
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body if method == "POST" else None)
        answer = conn.getresponse()
        text = answer.read()
        if answer.status >= 500:
            raise AssertionError(f"{answer.status} for {method} {path!r} {body[:200]!r}: {text[:300]!r}")
        # The application's refusals are its JSON; aiohttp answers a request it cannot even parse (a
        # control character in a header, a bad request line) with its own plain 400, before any handler.
        ours = answer.getheader("Server") == "thousand"
        if (
            ours
            and path.startswith(b"/api/")
            and 400 <= answer.status < 500
            and answer.status not in (404, 405)
        ):
            assert "error" in json.loads(text), (answer.status, text[:200])
        elif not ours:
            assert answer.status == 400, (answer.status, text[:200])
        return answer.status
    finally:
        conn.close()


odd_chars = st.characters(exclude_categories=[])  # surrogates, controls, unassigned: everything
special = st.sampled_from(
    [
        "\ud800",
        "\udfff",
        "\u00b2\u00b3",
        "\u0663",
        "\x00",
        "\u202e",
        "\ufeff",
        "\U0001f0a1",
        "\\",
        "%ED%A0%80",
    ]
)
odd_text = st.one_of(
    st.text(odd_chars, max_size=40),
    st.lists(st.one_of(special, st.text(max_size=4)), max_size=8).map("".join),
)
leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), odd_text)
odd_json = st.recursive(
    leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(odd_text, inner, max_size=4)),
    max_leaves=20,
)


@st.composite
def bodies(draw: st.DrawFn, served: Served) -> bytes:
    kind = draw(st.sampled_from(["fields", "json", "nested", "bytes", "move"]))
    if kind == "nested":
        opener = draw(st.sampled_from(["[", '{"a":', '{"link":[', "[[{", '{"init_data":{"x":']))
        # Hypothesis prefers small numbers: the depths past the recursion limit are named outright.
        depth = draw(st.one_of(st.sampled_from([999, 1001, 1500, 2000, 2700]), st.integers(1, 3000)))
        return (opener * depth).encode()
    if kind == "bytes":
        return draw(st.binary(max_size=200))
    if kind == "move":
        data: Any = {"session": served.session, "payload": draw(odd_text)}
    elif kind == "fields":
        keys = ["link", "init_data", "session", "payload", "start"]
        data = {
            draw(st.sampled_from(keys)): draw(st.one_of(odd_text, odd_json))
            for _ in range(draw(st.integers(1, 3)))
        }
    else:
        data = draw(odd_json)
    text = json.dumps(data, ensure_ascii=draw(st.booleans()))
    return text.encode("utf-8", "surrogatepass")


origins = st.one_of(
    st.just(ORIGIN.encode()),
    st.sampled_from(
        [b"http://127.0.0.1:99999", b"https://[::1", b"null", b"https://example.test:0", b"\xff\xfe"]
    ),
    odd_text.map(lambda t: ("https://" + t).encode("utf-8", "surrogatepass")),
)
tokens = st.one_of(odd_text, st.sampled_from(["a.b", "=", "%ED%A0%80", "%00", "%F0%9F%82%A1" * 50]))


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
    derandomize=True,
)
@given(data=st.data())
def test_the_api_never_answers_500(served: Served, data: st.DataObject) -> None:
    method = data.draw(st.sampled_from(["POST", "POST", "POST", "GET"]))
    headers: dict[str, bytes] = {"Host": f"127.0.0.1:{served.port}".encode()}
    if data.draw(st.booleans()):
        headers["Origin"] = data.draw(origins)
    if data.draw(st.booleans()):
        headers["Accept-Language"] = data.draw(odd_text).encode("utf-8", "surrogatepass")
    if method == "POST":
        path = data.draw(st.sampled_from([b"/api/session", b"/api/view", b"/api/ticket", b"/api/act"]))
        body = data.draw(bodies(served))
    else:
        token = data.draw(tokens)
        quoted = token.encode("utf-8", "surrogatepass").replace(b" ", b"%20").replace(b"#", b"%23")
        quoted = quoted.replace(b"?", b"%3F").replace(b"\r", b"%0D").replace(b"\n", b"%0A")
        quoted = bytes(b if 0x21 <= b < 0x7F else 0x25 for b in quoted)  # request lines are ASCII
        path = data.draw(st.sampled_from([b"/api/events?ticket=", b"/api/replay/"])) + quoted
        body = b""
    request(served, method, path, body, headers)


def test_the_server_still_serves_after_the_fuzz(served: Served) -> None:
    """The fuzz left the server serving (no handler wedged, no state changed by unreadable input)."""
    headers = {"Origin": ORIGIN.encode(), "Host": b"127.0.0.1"}
    body = json.dumps({"session": served.session}).encode()
    assert request(served, "POST", b"/api/view", body, headers) == 200
