"""The browser tests' kit: Debian's chromium driven by Playwright against the real web server and Redis.

Playwright's own browsers are never downloaded: the system's chromium is launched by path. The tests never
reach the network: every request that is not to the test server is aborted and recorded (`Seen.external`),
and `https://telegram.org/js/telegram-web-app.js` is answered with a stand-in of `window.Telegram.WebApp`
that reads initData from the URL fragment as Telegram's script does (signed with the test bot token; the
server validates it for real), or with a 404 (`telegram_script=False`: the page falls back to the fragment).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from playwright.async_api import Browser, CDPSession, Page, Response, Route

from adapters.web.app import WebTable
from adapters.web.security import TELEGRAM_SCRIPT
from adapters.web.telegram_auth import sign_init_data
from bot.model import ChatRef, UserRef
from bot.service import Service

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).exists()), None
)
BOT_TOKEN = "123456:TEST-token-of-the-browser-tests"
GROUP = ChatRef("tg", "-100888", "Browser table")
NAMES = ("Ala", "Bartek", "Celina", "Dorota")
HUMANS = [UserRef("tg", str(100 + i), name, "en", False) for i, name in enumerate(NAMES)]
CODE = re.compile(r"(?<![A-Za-z0-9])(?:9|10|J|Q|K|A)[CSHD](?![A-Za-z0-9])")

LIGHT = {
    "bg_color": "#ffffff",
    "text_color": "#000000",
    "hint_color": "#999999",
    "link_color": "#2481cc",
    "button_color": "#2481cc",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#efeff3",
}
DARK = {
    "bg_color": "#212d3b",
    "text_color": "#ffffff",
    "hint_color": "#7d8b99",
    "link_color": "#5eabe1",
    "button_color": "#5288c1",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#151e27",
}

# The stand-in of Telegram's telegram-web-app.js: the WebApp object with what the page uses of it, initData
# read from the URL fragment (#tgWebAppData=...) like the real script, recording every call.
STAND_IN = """
(() => {
  const calls = [];
  const rec = (name) => (...args) => {
    calls.push([name, ...args.map((a) => typeof a === "function" ? "fn" : a)]);
  };
  const button = (name) => {
    const b = { text: "", isVisible: false, handlers: [] };
    b.setText = (t) => { b.text = t; calls.push([name + ".setText", t]); return b; };
    b.show = () => { b.isVisible = true; calls.push([name + ".show"]); return b; };
    b.hide = () => { b.isVisible = false; calls.push([name + ".hide"]); return b; };
    b.onClick = (f) => { b.handlers.push(f); return b; };
    b.offClick = (f) => { b.handlers = b.handlers.filter((h) => h !== f); return b; };
    b.click = () => b.handlers.forEach((h) => h());
    return b;
  };
  window.__tgCalls = calls;
  window.Telegram = { WebApp: {
    initData: new URLSearchParams(location.hash.slice(1)).get("tgWebAppData") || "",
    initDataUnsafe: {}, colorScheme: SCHEME, themeParams: THEME, platform: "android",
    ready: rec("ready"), expand: rec("expand"), onEvent: rec("onEvent"),
    MainButton: button("MainButton"), BackButton: button("BackButton"),
    HapticFeedback: { impactOccurred: rec("impact"), notificationOccurred: rec("notification"),
                      selectionChanged: rec("selection") },
  } };
})();
"""


def init_data(user: UserRef, start: str | None, *, lang: str = "en", token: str = BOT_TOKEN) -> str:
    fields = {
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps({"id": int(user.user_id), "first_name": user.name, "language_code": lang}),
        "auth_date": str(int(time.time())),
    }
    if start is not None:
        fields["start_param"] = start
    return sign_init_data(fields, token)


def stand_in(scheme: str = "light") -> str:
    theme = DARK if scheme == "dark" else LIGHT
    return STAND_IN.replace("SCHEME", json.dumps(scheme)).replace("THEME", json.dumps(theme))


def launch_fragment(init: str, scheme: str = "light") -> str:
    """The launch parameters Telegram's clients put in the Mini App's URL fragment."""
    theme = DARK if scheme == "dark" else LIGHT
    params = {
        "tgWebAppData": init,
        "tgWebAppVersion": "8.0",
        "tgWebAppPlatform": "android",
        "tgWebAppThemeParams": json.dumps(theme, separators=(",", ":")),
    }
    return "#" + "&".join(f"{k}={quote(v, safe='')}" for k, v in params.items())


@dataclass
class Seen:
    """Everything one page received: API answers (fetch) and every Server-Sent Event message."""

    messages: list[str] = field(default_factory=list)
    events: int = 0
    bytes: int = 0
    external: list[str] = field(default_factory=list)  # requests off the test server (aborted)
    telegram_script: int = 0  # requests of telegram-web-app.js (answered by the test)

    def text(self) -> str:
        return "\n".join(self.messages)


@dataclass
class Tab:
    page: Page
    seen: Seen
    cdp: CDPSession

    async def version(self) -> int:
        value = await self.page.get_attribute("#app", "data-version")
        return int(value) if value else -1

    async def dom(self) -> str:
        return await self.page.content()


@dataclass
class Room:
    """The server, its service and a browser; `open` opens one page for a user."""

    service: Service
    web: WebTable
    base: str
    browser: Browser
    harness: Any
    tabs: list[Tab] = field(default_factory=list)

    async def open(
        self,
        user: UserRef | None = None,
        *,
        telegram: UserRef | None = None,
        start: str | None = None,
        lang: str = "en",
        scheme: str = "light",
        viewport: tuple[int, int] = (390, 844),
        scale: float = 1,
        init: str | None = None,
        live: bool = True,
        wait: bool = True,
        telegram_script: bool = True,
    ) -> Tab:
        """A page for `user` (a Discord/terminal-style link) or `telegram` (opened as Telegram does: launch
        parameters with initData, `init` when given verbatim, in the fragment; Telegram's script answered
        by the stand-in, or by a 404 when `telegram_script` is false); `live=False` cuts its event stream
        (a stale page)."""
        context = await self.browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]},
            device_scale_factor=scale,
            color_scheme="dark" if scheme == "dark" else "light",
            locale=lang,
        )
        page = await context.new_page()
        seen = Seen()
        cdp = await context.new_cdp_session(page)
        await cdp.send("Network.enable")

        def on_event(params: dict[str, Any]) -> None:
            seen.messages.append(str(params.get("data", "")))
            seen.events += 1

        def on_finished(params: dict[str, Any]) -> None:
            seen.bytes += int(params.get("encodedDataLength", 0))

        cdp.on("Network.eventSourceMessageReceived", on_event)
        cdp.on("Network.loadingFinished", on_finished)

        async def on_response(response: Response) -> None:
            if "/api/" in response.url and "/api/events" not in response.url:
                with contextlib.suppress(Exception):  # a page closed while the body was read
                    seen.messages.append(await response.text())

        page.on("response", on_response)

        async def off_server(route: Route) -> None:
            seen.external.append(route.request.url)
            await route.abort()

        async def telegram_js(route: Route) -> None:
            seen.telegram_script += 1
            if telegram_script:
                await route.fulfill(body=stand_in(scheme), content_type="text/javascript")
            else:
                await route.fulfill(status=404, body="not found", content_type="text/plain")

        # The last route added wins: Telegram's script first, anything else off the test server aborted.
        await context.route(re.compile(r"^(?!" + re.escape(self.base) + r"(/|$))"), off_server)
        await context.route(TELEGRAM_SCRIPT, telegram_js)
        if not live:
            await page.route("**/api/events*", lambda route: route.abort())
        if telegram is not None:
            signed = init if init is not None else init_data(telegram, start, lang=lang)
            url = self.base + "/" + (f"?t={start}" if start else "") + launch_fragment(signed, scheme)
        else:
            assert user is not None
            url = self.web.link(self.harness.chat.key, user, lang, base=self.base)
        await page.goto(url)
        if wait:
            await page.wait_for_selector("#app[data-version]")
        tab = Tab(page, seen, cdp)
        self.tabs.append(tab)
        return tab

    async def serial(self) -> str:
        """The serial of the chat's game (a group's direct link names one game: its start payload)."""
        _, doc = await self.harness.doc()
        assert doc is not None
        return str(doc.serial)

    async def settle(self, version: int, timeout: float = 15.0, tabs: list[Tab] | None = None) -> None:
        """Wait until every open page (or `tabs`) shows `version` (it came by the event stream). A wait, not
        a bound, so it is generous for a busy machine."""
        for tab in self.tabs if tabs is None else tabs:
            await tab.page.wait_for_selector(f'#app[data-version="{version}"]', timeout=timeout * 1000)


async def my_seat(tab: Tab) -> int:
    """The seat the page is drawn for (-1: a spectator)."""
    return int(await tab.page.get_attribute(".seat.me", "data-seat") or -1)


async def to_exchange(room: Room, preset: str) -> tuple[dict[int, Tab], int]:
    """Three people on pages at a new table of `preset`; the first to bid wins the auction and takes the
    talon (typed, not tapped); returns the pages by seat and the declarer, once the pages show it."""
    from botkit import action_text

    from core.actions import Action, Bid, Pass, TakeTalon

    await room.harness.open_table(HUMANS[:3], preset=preset)
    tabs = [await room.open(u) for u in HUMANS[:3]]
    by_seat = {await my_seat(t): t for t in tabs}
    user_of = {s: HUMANS[tabs.index(t)] for s, t in by_seat.items()}
    declarer = None
    pick: Action
    for _ in range(20):
        state = await room.harness.state()
        if state.deal.phase == "exchange":
            break
        seat = state.to_act
        assert seat is not None
        legal = state.legal_actions(seat)
        takes = [a for a in legal if type(a) is TakeTalon]
        bids = [a for a in legal if type(a) is Bid]
        passes = [a for a in legal if type(a) is Pass]
        if takes:
            pick = takes[0]
        elif bids and declarer in (None, seat):
            declarer, pick = seat, bids[0]
        else:
            pick = passes[0] if passes else legal[0]
        await room.harness.text(user_of[seat], action_text(pick, state, seat))
    state = await room.harness.state()
    assert state.deal.phase == "exchange" and state.to_act is not None
    version, _ = await room.harness.doc()
    await room.settle(int(version))
    return by_seat, state.to_act
