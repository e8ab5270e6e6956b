"""Play now in the browser (docs/WEB.md, "Play now"): guests open the page with no table, type a name,
choose a game and press Find a game, against the real server, `RedisQueue` on a real Redis and the
matcher (`PublicRuntime` beating `web`, as `thousand web` runs it).

Two guests on two pages (a phone and a desktop) are matched with each other and play a whole deal by
taps to its result; after every move neither page holds a card private to the other (the DOM and every
answer and event it received: `cardspy`). A guest alone is offered computers, starts with them, and
sees their rating at the table. Screenshots of the panel go to /tmp (phone and desktop).
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from browserkit import BOT_TOKEN, CHROMIUM, Seen, Tab
from playwright.async_api import Browser, Page, Response, Route, async_playwright
from playwright.async_api import Error as PlaywrightError
from tapper import pick_step, tap
from test_browser_play import dom_parts, message_parts, private_to, seat_of

from adapters.web.app import STATIC_DIR, WebOptions, WebTable, make_app
from adapters.web.table import PlayNow
from bot.handlers import Handlers
from bot.matchmaking import MatchConfig, RedisQueue
from bot.model import Message
from bot.presence import Presence
from bot.public.runtime import PublicRuntime
from bot.relay.base import Relay
from bot.service import Service
from bot.storage import RedisStore
from bot.table import TableDoc
from bot.weblinks import signer_for
from core.game import GameState
from fakes.cardspy import leaks

COMPUTERS_AFTER = 1.0
PHONE = (390, 844)
DESKTOP = (1280, 800)


class Nowhere(Relay):
    async def dispatch(self, messages: Any) -> None:
        return None


@dataclass
class Lobby:
    service: Service
    store: RedisStore
    base: str
    browser: Browser
    tabs: list[Tab]

    async def open(self, viewport: tuple[int, int], lang: str = "en") -> Tab:
        """A page at the server's root, as a person opens the site: no link, no table."""
        context = await self.browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]}, locale=lang
        )
        page = await context.new_page()
        seen = Seen()
        cdp = await context.new_cdp_session(page)
        await cdp.send("Network.enable")
        cdp.on("Network.eventSourceMessageReceived", lambda p: seen.messages.append(str(p.get("data", ""))))

        async def on_response(response: Response) -> None:
            if "/api/" in response.url and "/api/events" not in response.url:
                with contextlib.suppress(Exception):
                    seen.messages.append(await response.text())

        page.on("response", on_response)

        async def off_server(route: Route) -> None:
            seen.external.append(route.request.url)
            await route.abort()

        await context.route(re.compile(r"^(?!" + re.escape(self.base) + r"(/|$))"), off_server)
        await page.goto(self.base + "/")
        tab = Tab(page, seen, cdp)
        self.tabs.append(tab)
        return tab

    async def table(self, table_id: str) -> tuple[int, TableDoc, GameState]:
        stored = await self.store.load(table_id)
        assert stored is not None
        doc = TableDoc.model_validate_json(stored.document)
        assert doc.game is not None
        return stored.version, doc, self.service.cache.state(doc.serial, doc.game.spec, doc.game.actions)


@pytest.fixture
async def lobby(redis_url: str) -> AsyncIterator[Lobby]:
    from botkit import quiet_settings

    store = RedisStore.from_url(redis_url)
    settings = quiet_settings(web_secret="browser-test-secret-0123456789")
    service = Service(store, settings, handlers=Handlers, clock=time.time, presence=Presence(store))
    queue = RedisQueue(store, config=MatchConfig(computers_after=COMPUTERS_AFTER))
    public = PublicRuntime(service, queue, Nowhere(), "web", match_every=0.05)
    await public.start()
    signer = signer_for(settings)
    assert signer is not None

    async def deliver(messages: list[Message]) -> None:
        return None

    web = WebTable(
        service,
        signer,
        WebOptions(telegram_token=BOT_TOKEN, poll_seconds=0.02, rate=1000, burst=1000),
        deliver=deliver,
        playnow=PlayNow(queue, public.dispatch),
    )
    from aiohttp.test_utils import TestServer

    server = TestServer(make_app(web, STATIC_DIR), host="127.0.0.1")
    await server.start_server()
    base = str(server.make_url("")).rstrip("/")
    assert CHROMIUM is not None
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            lobby = Lobby(service, store, base, browser, [])
            yield lobby
            assert [url for tab in lobby.tabs for url in tab.seen.external] == []
        finally:
            await browser.close()
    await server.close()
    await public.stop()
    await service.close()
    await store.close()


async def find_game(tab: Tab, name: str, preset: str, players: int, pace: str) -> None:
    page = tab.page
    await page.wait_for_selector("#pn-form")
    await page.fill("#pn-name", name)
    await page.select_option("#pn-preset", preset)
    await page.select_option("#pn-players", str(players))
    await page.select_option("#pn-pace", pace)
    await page.click("#pn-find")


async def test_a_guest_refused_name_then_starts_with_computers(lobby: Lobby) -> None:
    tab = await lobby.open(PHONE, lang="pl")
    page = tab.page
    await page.wait_for_selector("#pn-form")
    assert await page.inner_text("#playnow h1") == "Graj teraz"
    await page.screenshot(path="/tmp/playnow-phone.png")
    await find_game(tab, "@ala", "polish", 3, "fast")
    await page.wait_for_selector("#pn-notice:not(:empty)")
    assert "Imię ma od 1 do 32 znaków" in await page.inner_text("#pn-notice")
    await find_game(tab, "Ala <b>", "polish", 3, "fast")
    await page.wait_for_selector('#pn-status[data-state="waiting"]')
    await page.screenshot(path="/tmp/playnow-phone-waiting.png")
    assert await page.evaluate("localStorage.getItem('thousand.player')")  # the guest's signed token
    await page.wait_for_selector("#pn-go", timeout=8000)
    await page.screenshot(path="/tmp/playnow-phone-offer.png")
    await page.click("#pn-go")
    await page.wait_for_selector("#app[data-version]:not([hidden])")
    assert await page.is_hidden("#playnow")
    rating = await page.inner_text(".fact b.rating")
    assert rating == "1500?"
    names = await page.locator(".seat .name").all_inner_texts()
    assert names[0].startswith("Ala <b>")  # as typed, shown as text
    await page.screenshot(path="/tmp/playnow-phone-table.png")


async def test_two_guests_are_matched_and_play_a_whole_deal(lobby: Lobby) -> None:
    phone = await lobby.open(PHONE, lang="pl")
    desk = await lobby.open(DESKTOP, lang="en")
    await desk.page.wait_for_selector("#pn-form")
    await desk.page.screenshot(path="/tmp/playnow-desktop.png")
    await find_game(phone, "Ala", "polish", 2, "slow")
    await phone.page.wait_for_selector('#pn-status[data-state="waiting"]')
    await find_game(desk, "Bartek", "polish", 2, "slow")
    for tab in (phone, desk):
        await tab.page.wait_for_selector("#app[data-version]:not([hidden])", timeout=8000)
    by_seat = {await seat_of(t): t for t in (phone, desk)}
    assert sorted(s for s in by_seat if s is not None) == [0, 1]
    table_id = await _table_of(lobby, phone)
    langs = {id(phone): "pl", id(desk): "en"}
    checked = {id(phone): 0, id(desk): 0}

    async def check_privacy(state: GameState) -> None:
        # The service may save again on its own after `state` was read (the last card of a deal plays
        # itself), and a page may show either version and hold events of the newer: a card counts as
        # private when it is private in both (within a deal, cards only become public).
        for tab in (phone, desk):
            _, _, newest = await lobby.table(table_id)
            seat = await seat_of(tab)
            fresh = tab.seen.messages[checked[id(tab)] :]
            checked[id(tab)] = len(tab.seen.messages)
            parts = await dom_parts(tab) + [p for m in fresh for p in message_parts(m)]
            private = private_to(state, seat) & private_to(newest, seat)
            found = leaks(parts, private, [langs[id(tab)], "en"])
            assert not found, (seat, state.deal.phase, found)

    version, _, state = await lobby.table(table_id)
    first = state.deal_number
    moves = 0
    while state.deal_number == first and not state.finished:
        await by_seat[state.to_act].page.wait_for_selector(f'#app[data-version="{version}"]')
        await check_privacy(state)
        while await tap(by_seat[state.to_act]) == "continue":  # a result read first: no move
            pass
        for _ in range(200):
            now, _, _ = await lobby.table(table_id)
            if now != version:
                break
            page = by_seat[state.to_act].page
            await page.wait_for_timeout(20)
            # A give or discard is finished step by step (its next card, player or confirm), clicked
            # itself: a whole tap there, once the page had drawn the state after the move, played the
            # next card, a move the loop did not read (the next tap found the page waiting for the other
            # player).
            if await page.get_attribute("#app", "data-version") != str(version):
                continue
            await click_pending(page)
        version, _, state = await lobby.table(table_id)
        moves += 1
        assert moves < 200
    # (Not checked once the next deal is dealt: the last deal's tricks, shown face up with its result,
    # are the same card codes as the new hands; test_browser_play checks `recent` against the engine.)
    # Both see the deal's result.
    for tab in (phone, desk):
        await tab.page.wait_for_selector(f'#result .panel[data-deal="{first + 1}"]', timeout=10000)
    await desk.page.screenshot(path="/tmp/playnow-desktop-result.png")


async def click_pending(page: Page) -> str:
    """The next step of a give or discard being picked, if the page still shows one (its confirm, a player
    for the card picked, the next card to pick); nothing else, whatever the page has drawn since. Returns
    the step taken, "" for none. (It once clicked only a confirm or a player: a 2-player discard's second
    card was never picked, and that deal waited out 200 looks of 0.3 s; a page declaring a 3-player deal
    never gave its second card: the cross-platform test timed out whenever the page won the auction.)"""
    with contextlib.suppress(PlaywrightError):
        return await pick_step(page)
    return ""


async def _table_of(lobby: Lobby, tab: Tab) -> str:
    table = await tab.page.get_attribute("#app", "data-table")
    if table:
        return table
    for message in reversed(tab.seen.messages):
        m = re.search(r'"table":\s*"(pub:[0-9a-f]+)"', message)
        if m:
            return m.group(1)
    raise AssertionError("no table id seen")
