"""What a player sees between taps, issue 25 ("the web table never shows a stale or missing state").

A watcher in the page (a MutationObserver installed by the test) records, on every change of the DOM:
when each deal's result panel first showed, when the page first offered a move of each deal, whether a
result panel stood over the next deal's moves, whether a seat still read "Bid …" once the contract was
fixed, and what the felt showed of the taken talon. A quick player taps at once, also on a trick on show
(that is how results were skipped). Other tests: the give's prompt and name tags on a phone, the deal
history and the score sheet's marks after a reload, the wide screen, the marks the page draws (no glyph
without a font on this machine), the turn's notice and what "1500?" and "+24" mean.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from botkit import action_text
from browserkit import HUMANS, Room, Tab, my_seat, to_exchange
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Route
from tapper import CONTROLS, tap

from core.actions import Bid, Pass
from core.game import GameState

DOCS = Path(__file__).resolve().parents[3] / "docs"

WATCH = """
() => {
  const w = window.__seen = { results: {}, asked: {}, under: [], stale: [], faces: [], late: [], told: {} };
  const look = () => {
    const now = performance.now();
    const app = document.getElementById("app");
    const deal = app.dataset.deal;
    for (const p of document.querySelectorAll("#result:not([hidden]) .panel[data-deal]"))
      if (!(p.dataset.deal in w.results)) w.results[p.dataset.deal] = now;
    const moves = document.querySelectorAll("#actions button, #hand button.cardbtn:not([disabled])").length;
    if (moves && !(deal in w.asked)) w.asked[deal] = now;
    // A result with its Continue while the next deal's moves, hand or felt show under it.
    const open = document.querySelector('#result:not([hidden]) button[data-kind="close-result"]');
    const felt = document.getElementById("felt");
    if (open && (moves || document.querySelector("#hand svg.card") || felt.offsetParent !== null
        || document.querySelector("#facts .phase, .seat .bid")))
      w.under.push(deal);
    // Bids are the auction's: once the contract is fixed no seat reads "Bid …" (or "Pass").
    if (app.dataset.contract !== "0")
      for (const b of document.querySelectorAll(".seat .bid"))
        if (!b.textContent.startsWith("Contract " + app.dataset.contract)) w.stale.push(b.textContent);
    const told = document.querySelector("#talon .talon-taken");
    if (told && app.dataset.tricks === "0") w.told[deal] = told.textContent;
    if (told && app.dataset.tricks !== "0") w.late.push(deal);
    if (["discard", "exchange", "contract", "play"].includes(app.dataset.phase)
        && document.querySelector("#talon svg.card:not(.back)")) w.faces.push(deal);
  };
  new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true });
  look();
}
"""


async def watch(tab: Tab) -> None:
    await tab.page.evaluate(WATCH)


async def seen(tab: Tab) -> dict[str, Any]:
    out: dict[str, Any] = await tab.page.evaluate("window.__seen")
    return out


async def quick_player(room: Room, tab: Tab, deals: int) -> GameState:
    """Tap whatever the page offers at once, and tap a completed trick on show away at once (a quick
    player during the last tricks of a deal), until `deals` deals are over."""
    page = tab.page
    for _ in range(3000):
        state: GameState = await room.harness.state()
        if len(state.results) >= deals or state.finished:
            return state
        held = page.locator("#trick .completed")
        if await held.count():
            with contextlib.suppress(PlaywrightError):
                await held.first.click(timeout=500)
            continue
        controls = await page.evaluate(CONTROLS)
        cards = await page.locator("#hand button.cardbtn:not([disabled])").count()
        if controls or (cards and state.to_act == await my_seat(tab)):
            with contextlib.suppress(PlaywrightError):
                await tap(tab, wait=False)
        else:
            await page.wait_for_timeout(15)
    raise AssertionError("the deals did not end")


async def test_a_quick_player_sees_every_result_before_the_next_deal_asks(room: Room) -> None:
    deals = 3
    await room.harness.open_table(HUMANS[:1], computers=2, preset="polish")
    tab = await room.open(HUMANS[0])
    errors: list[str] = []
    tab.page.on("pageerror", lambda e: errors.append(str(e)))
    await watch(tab)
    try:
        state = await quick_player(room, tab, deals)
    finally:
        print("page errors:", errors)
    # The last deal's result comes after its tricks (the quick player may have put it away already).
    for _ in range(200):
        w = await seen(tab)
        if str(deals) in w["results"]:
            break
        await tab.page.wait_for_timeout(100)
    assert errors == []
    for r in state.results[:deals]:
        number = r.number + 1
        assert str(number) in w["results"], (number, w["results"])  # every result was shown
        nxt = str(number + 1)
        if nxt in w["asked"]:  # ... before the next deal asked anything of the person
            assert w["results"][str(number)] < w["asked"][nxt], (number, w["results"], w["asked"])
    assert w["under"] == [], w["under"]  # no result panel over a running deal
    assert w["stale"] == [], w["stale"][:5]  # no bid once the contract was fixed
    # The talon the declarer took is told in words, not drawn as cards in play, never after trick 1.
    assert w["faces"] == [] and w["late"] == [], (w["faces"], w["late"])
    public = [r for r in state.results[:deals] if r.talon and r.declarer >= 0]
    for r in public:
        told = w["told"].get(str(r.number + 1), "")
        assert "Talon taken by" in told or "Talon you took" in told, (r.number, w["told"])
    print(f"results shown {len(w['results'])} of {deals}; talon told in {len(w['told'])} deals")


# Whether every point of an element is its own on the screen (nothing drawn over it).
UNCOVERED = """
(el) => {
  const r = el.getBoundingClientRect();
  if (!r.width || !r.height) return false;
  // Inside its rounded corners (a hit test there passes through to what is under the tag).
  for (const fx of [0.15, 0.5, 0.85]) for (const fy of [0.3, 0.7]) {
    const hit = document.elementFromPoint(r.left + r.width * fx, r.top + r.height * fy);
    if (!hit || !el.contains(hit)) return false;
  }
  return true;
}
"""


async def test_the_give_says_what_is_left_and_its_names_show_on_a_phone(room: Room) -> None:
    by_seat, giver = await to_exchange(room, "polish")
    page = by_seat[giver].page
    _, doc = await room.harness.doc()
    assert doc is not None
    names = {s: doc.seats[s].name for s in range(3)}
    # Two cards side by side in the hand, each to a player: the name tags both show whole, nothing of
    # the next card (or the next tag) over them.
    for _ in range(2):
        await page.locator("#hand button.cardbtn:not(.given)").first.click()
        await page.locator("#actions button[data-target]:not([disabled])").first.click()
    tags = page.locator("#hand .given .to")
    assert await tags.count() == 2
    await page.wait_for_timeout(300)  # a picked card, raised, settles back into the row (0.12 s)
    for i in range(2):
        assert await tags.nth(i).evaluate(UNCOVERED), await tags.nth(i).inner_text()
    told = {await tags.nth(i).get_attribute("title") for i in range(2)}
    assert told == {names[(giver + 1) % 3], names[(giver + 2) % 3]}, told
    # Every card picked: the prompt says what is left to do, naming the confirm (not a bare "Your turn:").
    confirm = await page.locator('#actions button[data-confirm="1"]').inner_text()
    prompt = await page.inner_text("#prompt")
    assert prompt.startswith("Your turn: tap “Give ") and confirm in prompt, (prompt, confirm)


async def test_deal_history_survives_a_reload_with_the_chats_marks(room: Room) -> None:
    await room.harness.open_table(HUMANS[:1], computers=2, preset="russian")
    tab = await room.open(HUMANS[0], viewport=(1280, 800))
    state = await quick_player(room, tab, 2)
    state = await room.harness.state()
    done = state.results
    # A reload (a Mini App closed and opened again): every deal is still a tap away.
    await tab.page.reload()
    await tab.page.wait_for_selector("#app[data-version]")
    links = tab.page.locator("#sheet button.deal-link")
    assert await links.count() == len(done)
    for r in done:
        row = tab.page.locator(f'#sheet tr.deal-row[data-deal="{r.number + 1}"]')
        # The chats' marks: ✓ made, ✗ failed, • bomb or concession, at the declarer's total; bolts, barrel.
        if r.declarer >= 0 and r.ending != "redeal":
            mark = "✓" if r.made else "✗" if r.made is False else "•"
            cell = row.locator(f'td[data-seat="{r.declarer}"] .mark')
            assert await cell.inner_text() == mark
        bolts = await row.locator('svg[data-icon="bolt"]').count()
        assert bolts == len(r.bolts), (r.number, r.bolts)
        await links.nth(r.number).click()
        panel = tab.page.locator(f'#sheet .deal-result .panel[data-deal="{r.number + 1}"]')
        await panel.wait_for()
        scores = await panel.locator(".score b").all_inner_texts()
        assert scores == [f"{s:+d}" if s else "0" for s in r.scores], (scores, r.scores)
        await links.nth(r.number).click()  # and put away
        await panel.wait_for(state="detached")
    legend = await tab.page.inner_text("#sheet .marks")
    assert "✓ contract made" in legend and "bolt" in legend
    # A bolt and the barrel are drawn where the result has them (set in the view: deals rarely have both).

    async def marked(route: Route) -> None:
        response = await route.fetch()
        view = await response.json()
        view["history"][0]["rows"][1]["bolt"] = True
        view["history"][-1]["rows"][2]["barrel"] = True
        await route.fulfill(response=response, json=view)

    await tab.page.route("**/api/view*", marked)
    await tab.page.reload()
    await tab.page.wait_for_selector("#sheet button.deal-link")
    first = tab.page.locator('#sheet tr.deal-row[data-deal="1"]')
    last = tab.page.locator(f'#sheet tr.deal-row[data-deal="{len(done)}"]')
    assert await first.locator('td[data-seat="1"] svg[data-icon="bolt"]').count() == 1
    assert await last.locator('td[data-seat="2"] svg[data-icon="barrel"]').count() == 1


async def test_a_wide_screen_uses_its_width_and_a_phone_keeps_its_layout(room: Room, tmp_path: Path) -> None:
    await room.harness.open_table(HUMANS[:1], computers=2, preset="polish")
    wide = await room.open(HUMANS[0], viewport=(1280, 800))
    phone = await room.open(HUMANS[0], viewport=(390, 844))

    async def sizes(tab: Tab) -> dict[str, float]:
        out: dict[str, float] = await tab.page.evaluate(
            """() => ({
              felt: document.getElementById("felt").getBoundingClientRect().width,
              card: document.querySelector("#hand svg.card").getBoundingClientRect().width,
              scroll: document.documentElement.scrollWidth,
              sheetLeft: document.getElementById("sheet").getBoundingClientRect().left,
              feltRight: document.getElementById("felt").getBoundingClientRect().right })"""
        )
        return out

    w, p = await sizes(wide), await sizes(phone)
    assert w["felt"] >= 700 and w["card"] >= 80, w  # a larger table and cards
    assert w["sheetLeft"] >= w["feltRight"], w  # the score sheet beside the table
    assert p["card"] == 58 and p["felt"] <= 390 and p["scroll"] <= 390, p  # the phone as it was
    await wide.page.screenshot(path=str(tmp_path / "web-desktop.png"))
    if os.environ.get("UPDATE_SCREENSHOTS"):
        (DOCS / "web-desktop.png").write_bytes((tmp_path / "web-desktop.png").read_bytes())


def _covered(chars: set[str]) -> set[str]:
    """The characters no installed font draws (fontconfig's view: what chromium falls back to)."""
    missing = set()
    for c in chars:
        if c.isspace() or ord(c) < 0x80:
            continue
        out = subprocess.run(
            ["fc-list", f":charset={ord(c):x}", "family"], capture_output=True, text=True, check=False
        )
        if not out.stdout.strip():
            missing.add(c)
    return missing


TEXT = """
() => {
  const out = [document.title];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) out.push(walk.currentNode.textContent);
  for (const e of document.querySelectorAll("[title], [aria-label], [data-to]"))
    for (const a of ["title", "aria-label", "data-to"]) out.push(e.getAttribute(a) || "");
  for (const e of document.querySelectorAll("*")) {
    const after = getComputedStyle(e, "::after").content, before = getComputedStyle(e, "::before").content;
    for (const c of [after, before]) if (c && c !== "none" && c !== "normal") out.push(c);
  }
  return out.join("\\n");
}
"""


@pytest.mark.skipif(
    subprocess.run(["which", "fc-list"], capture_output=True, check=False).returncode != 0,
    reason="fontconfig's fc-list is not installed",
)
async def test_every_mark_the_page_shows_has_a_font(room: Room) -> None:
    """The turn's clock, an away seat, a bolt, the barrel: drawn by the page, or characters this
    machine's fonts have (Debian's chromium draws ⏱ and 🔎 as empty boxes)."""
    await room.harness.open_table(HUMANS[:1], computers=2, preset="russian")
    tab = await room.open(HUMANS[0], live=False)
    deadline = 2_000_000_000.0

    async def marked(route: Route) -> None:  # a running turn, an away seat, a result with a bolt
        response = await route.fetch()
        view = await response.json()
        view["turn_deadline"] = deadline
        view["seats"][1]["away"] = True
        await route.fulfill(response=response, json=view)

    await tab.page.route("**/api/view*", marked)
    await tab.page.reload()
    await tab.page.wait_for_selector("#timer:not([hidden])")
    text = await tab.page.evaluate(TEXT)
    missing = _covered(set(text))
    assert not missing, sorted(f"U+{ord(c):04X}" for c in missing)
    assert await tab.page.locator('#timer svg[data-icon="clock"]').count() == 1
    assert await tab.page.locator('.seat svg[data-icon="pause"]').count() == 1


async def test_results_and_the_sheet_draw_with_the_fonts_there_are(room: Room) -> None:
    await room.harness.open_table(HUMANS[:1], computers=2, preset="russian")
    tab = await room.open(HUMANS[0])
    await quick_player(room, tab, 2)
    await tab.page.wait_for_selector("#sheet button.deal-link")
    await tab.page.locator("#sheet button.deal-link").first.click()
    text = await tab.page.evaluate(TEXT)
    missing = _covered(set(text))
    assert not missing, sorted(f"U+{ord(c):04X}" for c in missing)


INSTRUMENT = """
window.__alerts = { vibrate: 0, tones: 0 };
navigator.vibrate = () => { window.__alerts.vibrate += 1; return true; };
const Real = window.AudioContext;
window.AudioContext = class extends Real {
  createOscillator() { const o = super.createOscillator(); const start = o.start.bind(o);
    o.start = (...a) => { window.__alerts.tones += 1; return start(...a); }; return o; }
};
"""


async def title_turns(page: Any) -> None:
    """Wait until the document's title says it is the reader's turn (the page's CSP forbids the string
    evaluation wait_for_function uses)."""
    for _ in range(100):
        if (await page.title()).startswith("Your turn"):
            return
        await page.wait_for_timeout(50)
    raise AssertionError("the title never said it: " + await page.title())


async def test_the_turn_is_noticed_and_the_notice_can_be_switched_off(room: Room) -> None:
    await room.harness.open_table(HUMANS[:3], preset="polish")
    state = await room.harness.state()
    _, doc = await room.harness.doc()
    assert doc is not None and state.to_act is not None
    seat_of = {u.key: doc.seat_of(u.key) for u in HUMANS[:3]}
    user_at = {s: u for u in HUMANS[:3] for s in [seat_of[u.key]]}
    # The page of the seat after the one to act: not its turn yet.
    mine = (state.to_act + 1) % 3
    tab = await room.open(user_at[mine], wait=False)
    await tab.page.add_init_script(INSTRUMENT)
    await tab.page.reload()
    await tab.page.wait_for_selector("#app[data-version]")
    page = tab.page
    assert not (await page.title()).startswith("Your turn")
    alerts = await page.evaluate("window.__alerts")
    assert alerts == {"vibrate": 0, "tones": 0}

    async def play(seat: int, *, bid: bool = False) -> None:
        s = await room.harness.state()
        assert s.to_act == seat
        legal = s.legal_actions(seat)
        pick = next((a for a in legal if type(a) is (Bid if bid else Pass)), legal[0])
        await room.harness.text(user_at[seat], action_text(pick, s, seat))
        version, _ = await room.harness.doc()
        await room.settle(int(version), tabs=[tab])

    await play(state.to_act)  # now it is this page's turn
    await title_turns(page)
    # Clicks in the test unlock the page's sound as a person's first tap would; the tone is counted.
    alerts = await page.evaluate("window.__alerts")
    assert alerts["vibrate"] == 1 and alerts["tones"] == 1, alerts
    # The bell switches it off (and says so), and the page remembers it after a reload.
    bell = page.locator("#alerts")
    assert "on" in (await bell.get_attribute("title") or "")
    await bell.click()
    assert await page.locator("#alerts").get_attribute("aria-pressed") == "false"
    await page.reload()
    await page.wait_for_selector("#app[data-version]")
    assert await page.locator("#alerts").get_attribute("aria-pressed") == "false"
    await play(mine, bid=True)  # this seat bids (typed), the next passes: its turn comes again
    assert not (await page.title()).startswith("Your turn")
    await play((mine + 1) % 3)
    assert (await room.harness.state()).to_act == mine
    await title_turns(page)
    alerts = await page.evaluate("window.__alerts")
    assert alerts == {"vibrate": 0, "tones": 0}, alerts  # switched off (counted afresh since the reload)


async def test_rating_and_points_explain_themselves(room: Room) -> None:
    await room.harness.open_table(HUMANS[:1], computers=2, preset="polish")
    tab = await room.open(HUMANS[0], live=False)

    async def rated(route: Route) -> None:
        response = await route.fetch()
        view = await response.json()
        view["rating"] = {"preset": "polish", "rating": 1500, "provisional": True, "games": 0}
        view["seats"][1]["points"] = 24
        await route.fulfill(response=response, json=view)

    await tab.page.route("**/api/view*", rated)
    await tab.page.reload()
    await tab.page.wait_for_selector(".rating-fact")
    title = await tab.page.get_attribute(".rating-fact", "title") or ""
    assert "public rating" in title and "provisional" in title, title
    assert "1500?" in await tab.page.inner_text(".rating-fact")
    points = tab.page.locator(".seat .taken")
    assert await points.inner_text() == "+24"
    assert "points taken in this deal" in (await points.get_attribute("title") or "")


async def test_screenshots_of_the_wide_table_and_the_deal_history(room: Room, tmp_path: Path) -> None:
    """For the README: the desktop layout mid-deal (docs/web-desktop.png) and a phone's score sheet with
    an earlier deal's result open (docs/web-history.png); `UPDATE_SCREENSHOTS=1` writes them. What they
    show holds too: a wide screen's table uses the width (issue 25: a ~545 px column before), and the
    phone's score sheet opens an earlier deal's result."""
    await room.harness.open_table(HUMANS[:1], computers=2, preset="polish")
    wide = await room.open(HUMANS[0], viewport=(1280, 800))
    await quick_player(room, wide, 2)
    # Into the third deal's play, the result read: the table as a wide screen shows it.
    for _ in range(400):
        state = await room.harness.state()
        if state.deal.phase == "play" and state.deal.tricks >= 2 and state.deal.trick:
            break
        if state.finished:
            break
        controls = await wide.page.evaluate(CONTROLS)
        if controls or state.to_act == await my_seat(wide):
            with contextlib.suppress(PlaywrightError):
                await tap(wide)
        await wide.page.wait_for_timeout(20)
    version, _ = await room.harness.doc()
    await room.settle(int(version), tabs=[wide])
    with contextlib.suppress(PlaywrightError):
        await wide.page.wait_for_selector("#trick .completed", state="detached", timeout=3000)
    felt = await wide.page.locator("#felt").bounding_box()
    assert felt is not None and felt["width"] >= 800, felt
    desktop = tmp_path / "web-desktop.png"
    await wide.page.screenshot(path=str(desktop))
    phone = await room.open(HUMANS[0], viewport=(390, 844), scale=2)
    await phone.page.locator("#sheet button.deal-link").first.click()
    await phone.page.locator("#sheet .deal-result").scroll_into_view_if_needed()
    assert await phone.page.locator("#sheet .deal-result").is_visible()
    history = tmp_path / "web-history.png"
    await phone.page.screenshot(path=str(history))
    if os.environ.get("SHOTS_DIR"):
        for shot in (desktop, history):
            (Path(os.environ["SHOTS_DIR"]) / shot.name).write_bytes(shot.read_bytes())
    if os.environ.get("UPDATE_SCREENSHOTS"):
        for shot in (desktop, history):
            (DOCS / shot.name).write_bytes(shot.read_bytes())
