"""The page itself in chromium: its weight on first load, Telegram's theme and buttons (a stand-in of
telegram-web-app.js, initData in the URL fragment the server validates for real), the fallback when that
script does not load, the CSP in the browser, and phone screenshots mid-trick.

`UPDATE_SCREENSHOTS=1` also writes the screenshots to docs/web-light.png and docs/web-dark.png (README).
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

from browserkit import GROUP, HUMANS, Room, Tab, init_data
from playwright.async_api import Route
from tapper import tap

from adapters.web.security import TELEGRAM_SCRIPT
from adapters.web.strings import web_error
from core.actions import Play
from core.cards import card_name, cards_of
from core.game import GameState

DOCS = Path(__file__).resolve().parents[3] / "docs"


# How each card of the hand is drawn: any filter on the way from the button down to the card, its ink
# colour and opacity, its paper.
CARD_LOOKS = """
() => [...document.querySelectorAll("#hand button.cardbtn")].map((b) => {
  const svg = b.querySelector("svg.card"), pip = svg.querySelector(".pip");
  const rank = svg.querySelector(".rank"), paper = svg.querySelector(".paper");
  const filters = [b, svg, pip].map((e) => getComputedStyle(e).filter).filter((f) => f !== "none");
  return { card: b.dataset.card, disabled: b.disabled, red: svg.classList.contains("red"),
           filter: filters.join(" ") || "none", ink: getComputedStyle(pip).fill,
           opacity: getComputedStyle(rank).opacity, paper: getComputedStyle(paper).fill };
})
"""


def illegal_red(state: GameState) -> bool:
    """The player to act holds a heart or a diamond they may not play (what the screenshot must show)."""
    legal = {a.card for a in state.legal_actions() if type(a) is Play}
    held = cards_of(state.deal.hands[state.to_act])
    return any(card_name(c)[-1] in "HD" for c in held if c not in legal)


async def play_until(room: Room, by_seat: dict[int, Tab], done: object, limit: int = 300) -> None:
    """Tap moves (on the page of the seat to act) until `done(state)` holds."""
    for _ in range(limit):
        state = await room.harness.state()
        if done(state):  # type: ignore[operator]
            v, _ = await room.harness.doc()
            await room.settle(int(v))
            return
        v, _ = await room.harness.doc()
        await room.settle(int(v))
        page = by_seat[state.to_act].page
        tapped = await tap(by_seat[state.to_act])
        # A tap's move lands after the tap returns: read the next state once it has (a pick of a give
        # changes only the page). Read sooner, the version read was passed before the pages showed it,
        # and settle waited for a version no page would show again (twice on two busy workers).
        for _ in range(100):
            if tapped in ("give-to", "continue") or (await room.harness.doc())[0] != v:
                break
            await page.wait_for_timeout(20)
    raise AssertionError("never reached")


async def seats(room: Room, tabs: list[Tab]) -> dict[int, Tab]:
    out = {}
    for tab in tabs:
        out[int(await tab.page.get_attribute(".seat.me", "data-seat") or -1)] = tab
    return out


async def test_first_load_weighs_at_most_150_kb(room: Room) -> None:
    await room.harness.open_table(HUMANS[:3])
    tab = await room.open(HUMANS[0])
    await tab.page.wait_for_selector("#hand svg.card")
    await tab.page.wait_for_load_state("networkidle")
    # Every byte that came over the wire for the page, its scripts, styles and API answers (CDP's
    # encodedDataLength: headers and bodies as transferred).
    print(f"first load: {tab.seen.bytes} bytes transferred")
    assert 5_000 < tab.seen.bytes <= 150_000, tab.seen.bytes
    assert await tab.page.locator("#hand svg.card").count() == 7
    # A link page (Discord, terminal) does not load Telegram's script at all.
    assert tab.seen.telegram_script == 0 and tab.seen.external == []
    assert await tab.page.evaluate("typeof window.Telegram") == "undefined"


async def test_telegram_theme_buttons_and_a_give_by_taps(room: Room) -> None:
    await room.harness.open_table(HUMANS[:3])
    start = room.web.signer.start_payload(GROUP.key, await room.serial())
    tabs = [await room.open(telegram=u, start=start, lang="pl", scheme="dark") for u in HUMANS[:3]]
    by_seat = await seats(room, tabs)
    page = tabs[0].page
    # The theme comes from themeParams: the page's background is Telegram's dark bg_color.
    assert await page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(33, 45, 59)"
    calls = await page.evaluate("window.__tgCalls.map((c) => c[0])")
    assert "ready" in calls and "expand" in calls
    assert [t.seen.telegram_script for t in tabs] == [1, 1, 1]  # each loaded telegram-web-app.js
    # Polish strings and rank letters (D for the queen) from the catalogs.
    assert await page.inner_text("#sheet-title") == "Tabela wyników"
    # Play until the declarer must give a card to each of the others: pick a card, then a player.
    await play_until(room, by_seat, lambda s: s.deal.phase == "exchange")
    state = await room.harness.state()
    giver = by_seat[state.to_act]
    assert await giver.page.locator("#actions button[data-target]:disabled").count() == 2
    await giver.page.locator("#hand button.cardbtn:not([disabled])").first.click()
    await giver.page.locator("#actions button[data-target]:not([disabled])").first.click()
    assert await giver.page.locator("#hand button.given").count() == 1
    # Telegram's BackButton undoes the pick.
    assert await giver.page.evaluate("Telegram.WebApp.BackButton.isVisible")
    await giver.page.evaluate("Telegram.WebApp.BackButton.click()")
    assert await giver.page.locator("#hand button.given").count() == 0
    for _ in range(2):
        await giver.page.locator("#hand button.cardbtn:not([disabled]):not(.given)").first.click()
        await giver.page.locator("#actions button[data-target]:not([disabled])").first.click()
    # Both picked: Telegram's MainButton offers the give; pressing it makes the move.
    assert await giver.page.evaluate("Telegram.WebApp.MainButton.isVisible")
    before, _ = await room.harness.doc()
    await giver.page.evaluate("Telegram.WebApp.MainButton.click()")
    await room.settle(int(before) + 1)
    assert (await room.harness.state()).deal.phase != "exchange"
    assert not await giver.page.evaluate("Telegram.WebApp.MainButton.isVisible")


async def test_without_telegrams_script_the_page_signs_in_from_the_url_fragment(room: Room) -> None:
    await room.harness.open_table(HUMANS[:3])
    start = room.web.signer.start_payload(GROUP.key, await room.serial())
    # telegram-web-app.js answers 404: the page reads initData and the theme from #tgWebAppData=...
    tab = await room.open(telegram=HUMANS[1], start=start, lang="pl", scheme="dark", telegram_script=False)
    assert tab.seen.telegram_script == 1
    assert await tab.page.evaluate("typeof window.Telegram") == "undefined"
    await tab.page.wait_for_selector("#hand svg.card")
    assert await tab.page.locator("#hand svg.card").count() == 7
    assert await tab.page.inner_text("#sheet-title") == "Tabela wyników"  # initData's language_code
    assert await tab.page.get_attribute(".seat.me", "data-seat") is not None  # seated as Bartek
    assert "Bartek" in await tab.page.inner_text(".seat.me")
    bg = await tab.page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg == "rgb(33, 45, 59)"  # tgWebAppThemeParams' bg_color
    # The fragment is checked by the server as strictly as the script's initData: a forged one is refused.
    forged = init_data(HUMANS[1], start, lang="pl", token="654321:another-bots-token")
    bad = await room.open(
        telegram=HUMANS[1], start=start, lang="pl", init=forged, telegram_script=False, wait=False
    )
    await bad.page.wait_for_selector("p.error")
    assert await bad.page.inner_text("p.error") == web_error("pl", "web_auth")


async def test_csp_lets_the_page_load_telegrams_script_and_nothing_else_external(room: Room) -> None:
    await room.harness.open_table(HUMANS[:3])
    tab = await room.open(HUMANS[0])
    served: list[str] = []

    async def script(route: Route) -> None:  # would serve any script the CSP let through
        served.append(route.request.url)
        await route.fulfill(body="window.__loaded = 1;", content_type="text/javascript")

    for url in (
        "https://example.com/x.js",
        "https://telegram.org/js/other.js",
        "https://cdn.telegram.org/x.js",
    ):
        await tab.page.route(url, script)
    # Each script element settles on load or error; CSP violations are reported by the page itself.
    outcome = await tab.page.evaluate(
        """async (urls) => {
          const blocked = [];
          document.addEventListener("securitypolicyviolation", (e) => blocked.push(e.blockedURI));
          const load = (src) => new Promise((resolve) => {
            const s = document.createElement("script");
            s.src = src;
            s.onload = () => resolve("load");
            s.onerror = () => resolve("error");
            document.head.append(s);
          });
          const results = [];
          for (const u of urls) results.push(await load(u));
          await new Promise((r) => setTimeout(r, 50));
          return { results, blocked, telegram: typeof window.Telegram };
        }""",
        [
            TELEGRAM_SCRIPT,
            "https://example.com/x.js",
            "https://telegram.org/js/other.js",
            "https://cdn.telegram.org/x.js",
        ],
    )
    assert outcome["results"] == ["load", "error", "error", "error"], outcome
    assert outcome["telegram"] == "object"  # the stand-in of telegram-web-app.js ran
    assert sorted(outcome["blocked"]) == sorted(
        ["https://example.com/x.js", "https://telegram.org/js/other.js", "https://cdn.telegram.org/x.js"]
    )
    assert served == [] and tab.seen.telegram_script == 1  # the blocked ones were never even requested


async def test_forged_initdata_and_a_stale_move_are_refused_in_the_players_language(room: Room) -> None:
    russians = [dataclasses.replace(u, language="ru") for u in HUMANS[:3]]
    await room.harness.open_table(russians)
    start = room.web.signer.start_payload(GROUP.key, await room.serial())
    forged = init_data(HUMANS[0], start, lang="pl", token="654321:another-bots-token")
    tab = await room.open(telegram=HUMANS[0], start=start, lang="pl", init=forged, wait=False)
    await tab.page.wait_for_selector("p.error")
    assert await tab.page.inner_text("p.error") == web_error("pl", "web_auth")
    assert await tab.page.locator("#hand").count() == 0
    # Two pages of the player to act; one no longer hears the table (its event stream is cut).
    mover = (await room.harness.state()).to_act
    pages = [await room.open(u, lang="ru") for u in russians]
    by_seat = await seats(room, pages)
    stale = await room.open(russians[pages.index(by_seat[mover])], lang="ru", live=False)
    before, _ = await room.harness.doc()
    await tap(by_seat[mover])
    await room.settle(int(before) + 1, tabs=pages)
    await tap(stale)  # the same move again, on the view before it: refused, nothing changes
    await stale.page.wait_for_selector("#notice:not([hidden])")
    text = await stale.page.inner_text("#notice")
    assert text and any("а" <= ch <= "я" for ch in text.lower()), text  # said in Russian
    assert (await room.harness.doc())[0] == int(before) + 1


async def test_phone_screenshots_mid_trick_light_and_dark(room: Room, tmp_path: Path) -> None:
    await room.harness.open_table(HUMANS[:3])
    start = room.web.signer.start_payload(GROUP.key, await room.serial())
    tabs = [await room.open(u) for u in HUMANS[:3]]
    by_seat = await seats(room, tabs)
    user_of = {s: HUMANS[tabs.index(t)] for s, t in by_seat.items()}
    # Mid-trick (one or two cards on the table) after the first trick, seen by the player to act.
    await play_until(
        room,
        by_seat,
        lambda s: (
            s.deal.phase == "play"
            and len(s.deal.trick) in (1, 2)
            and 4 <= s.deal.hands[s.to_act].bit_count() <= 7
            and illegal_red(s)
        ),
    )
    seat = (await room.harness.state()).to_act
    shots = {}
    for scheme in ("light", "dark"):
        tab = await room.open(telegram=user_of[seat], start=start, scheme=scheme, scale=2)
        await tab.page.wait_for_selector("#trick svg.card")
        assert await tab.page.locator("#trick .played").count() in (1, 2)
        # Illegal cards are visibly disabled, the legal ones raised; the prompt is a sentence.
        assert await tab.page.locator("#hand button.cardbtn:not([disabled])").count() >= 1
        assert (await tab.page.inner_text("#prompt")).startswith("Your turn: "), scheme
        looks = await tab.page.evaluate(CARD_LOOKS)
        legal = {look["paper"] for look in looks if not look["disabled"]}
        assert any(look["disabled"] and look["red"] for look in looks), looks
        for look in looks:
            # No greyscale: a disabled heart or diamond stays red (hearts and diamonds looked black).
            assert look["filter"] == "none", look
            assert look["ink"] == ("rgb(198, 40, 40)" if look["red"] else "rgb(27, 31, 35)"), look
            if look["disabled"]:
                assert float(look["opacity"]) < 0.7 and look["paper"] not in legal, look
        bg = await tab.page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert bg == ("rgb(33, 45, 59)" if scheme == "dark" else "rgb(255, 255, 255)")
        shot = tmp_path / f"web-{scheme}.png"
        await tab.page.screenshot(path=str(shot), full_page=False)
        shots[scheme] = shot
        if os.environ.get("UPDATE_SCREENSHOTS"):
            (DOCS / f"web-{scheme}.png").write_bytes(shot.read_bytes())
    assert shots["light"].read_bytes() != shots["dark"].read_bytes()
