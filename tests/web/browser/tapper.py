"""Playing the web table by taps only: what a person would tap next, read from the page (the DOM)."""

from __future__ import annotations

from browserkit import Tab
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

# The page's enabled controls, as [kind, value, target, confirm] (data attributes the page sets).
CONTROLS = """
() => [...document.querySelectorAll(
  '#actions button:not([disabled]), #result button[data-kind="close-result"]')].map((b) =>
  [b.dataset.kind || '', b.dataset.value || '', b.dataset.target || '', b.dataset.confirm || ''])
"""

# A point of the element that a tap there would reach (the element or something inside it), or null. On a
# phone a long hand overlaps: a card's middle may be under its neighbour (or under a raised, picked card),
# and a person taps the strip of it they see.
VISIBLE_POINT = """
(el) => {
  const r = el.getBoundingClientRect();
  for (const fy of [0.5, 0.3, 0.7])
    for (const fx of [0.5, 0.2, 0.8, 0.08, 0.92]) {
      const x = r.left + r.width * fx, y = r.top + r.height * fy;
      const hit = document.elementFromPoint(x, y);
      if (hit && el.contains(hit)) return [x, y];
    }
  return null;
}
"""


async def _click(page: Page, selector: str, what: str) -> str:
    """Click the first of `selector` where a person would tap it; returns `what`.

    The page redraws its hand on every event: a card found may be gone a moment later (then look again) or
    covered where Playwright would tap (then tap the part of it a person sees)."""
    for _ in range(5):
        target = page.locator(selector).first
        if not await page.locator(selector).count():
            return what  # gone since the page was read: the page moved on
        try:
            await target.scroll_into_view_if_needed(timeout=2000)
            point = await target.evaluate(VISIBLE_POINT, timeout=2000)
        except PlaywrightError:
            await page.wait_for_timeout(50)
            continue
        if point is not None:
            await page.mouse.click(point[0], point[1])
            return what
    # Not found in five looks: the page moved on (the move was made, the control is gone), or the
    # control is there but covered everywhere: Playwright's own click says which.
    if await page.locator(selector).count():
        await page.locator(selector).first.click()
    return what


# The steps of a give or discard being picked, in order: its confirm once every card is picked, a player for
# the card picked (a give), else the next card to pick. The hand is `choosing` but not `playing` only while
# cards are picked: a card tapped there is picked, never played.
PICK_STEPS = (
    "#actions button[data-confirm='1']",
    "#actions button[data-target]:not([disabled])",
    "#hand.choosing:not(.playing) button.cardbtn:not([disabled]):not(.selected):not(.given)",
)


async def pick_step(page: Page) -> str:
    """Take the next step of a give or discard being picked, if the page shows one, and nothing else:
    "confirm", "give-to", "pick", or "" when the page shows no pick. A 3-player give is a card and its
    player twice, then the confirm; a 2-player discard two cards, then the confirm. (A whole `tap` here,
    once the page had drawn the state after the move, would play the next card: a move nobody read.)"""
    for selector, what in zip(PICK_STEPS, ("confirm", "give-to", "pick"), strict=True):
        if await page.locator(selector).count():
            return await _click(page, selector, what)
    return ""


async def tap(tab: Tab, *, wait: bool = True) -> str:
    """Tap the next thing a quick player taps: finish a give or discard, pass when allowed, take the talon,
    look at the cards, the lowest bid or contract, a marriage when offered, else the first playable card.
    Returns what was tapped; with `wait` false, "" at once when the page offers nothing now."""
    page = tab.page
    controls: list[list[str]] = await page.evaluate(CONTROLS)
    card = page.locator("#hand button.cardbtn:not([disabled]):not(.selected):not(.given)")
    for i in range(400 if wait else 0):
        # A completed trick is held on the table for a moment, the hand waiting (the last tricks of a deal
        # one after another, each 1.5 s, the next deal's moves after its result): as a person, wait.
        if controls or await card.count():
            break
        if i >= 100 and not await page.locator("#app.between, #trick .completed").count():
            break
        await page.wait_for_timeout(100)
        controls = await page.evaluate(CONTROLS)
    kinds = [c[0] for c in controls]

    if "close-result" in kinds:  # a deal's result stands between the deals: read, then Continue
        return await _click(page, '#result button[data-kind="close-result"]', "continue")
    if any(c[3] for c in controls):
        return await _click(page, '#actions button[data-confirm="1"]', "confirm")
    if any(c[2] for c in controls):
        return await _click(page, "#actions button[data-target]:not([disabled])", "give-to")
    if "pass" in kinds:
        return await _click(page, '#actions button[data-kind="pass"]', "pass")
    if "blind" in kinds:
        return await _click(page, '#actions button[data-kind="blind"][data-value="0"]', "blind-no")
    if "take" in kinds:
        return await _click(page, '#actions button[data-kind="take"]', "take")
    if "declare" in kinds:
        return await _click(page, '#actions button[data-kind="declare"]', "declare")
    for kind in ("contract", "bid"):
        if kind in kinds:
            return await _click(page, f'#actions button[data-kind="{kind}"]', kind)
    if await card.count():
        return await _click(page, "#hand button.cardbtn:not([disabled]):not(.selected):not(.given)", "card")
    if controls:
        return await _click(page, "#actions button:not([disabled])", kinds[0])
    if not wait:
        return ""
    raise AssertionError("nothing to tap: " + await page.inner_text("#app"))
