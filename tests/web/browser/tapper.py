"""Playing the web table by taps only: what a person would tap next, read from the page (the DOM)."""

from __future__ import annotations

from browserkit import Tab

# The page's enabled controls, as [kind, value, target, confirm] (data attributes the page sets).
CONTROLS = """
() => [...document.querySelectorAll('#actions button:not([disabled])')].map((b) =>
  [b.dataset.kind || '', b.dataset.value || '', b.dataset.target || '', b.dataset.confirm || ''])
"""


async def tap(tab: Tab) -> str:
    """Tap the next thing a quick player taps: finish a give or discard, pass when allowed, take the talon,
    look at the cards, the lowest bid or contract, a marriage when offered, else the first playable card.
    Returns what was tapped."""
    page = tab.page
    controls: list[list[str]] = await page.evaluate(CONTROLS)
    kinds = [c[0] for c in controls]

    async def click(selector: str, what: str, position: dict[str, float] | None = None) -> str:
        await page.locator(selector).first.click(position=position)  # type: ignore[arg-type]
        return what

    if any(c[3] for c in controls):
        return await click('#actions button[data-confirm="1"]', "confirm")
    if any(c[2] for c in controls):
        return await click("#actions button[data-target]:not([disabled])", "give-to")
    if "pass" in kinds:
        return await click('#actions button[data-kind="pass"]', "pass")
    if "blind" in kinds:
        return await click('#actions button[data-kind="blind"][data-value="0"]', "blind-no")
    if "take" in kinds:
        return await click('#actions button[data-kind="take"]', "take")
    if "declare" in kinds:
        return await click('#actions button[data-kind="declare"]', "declare")
    for kind in ("contract", "bid"):
        if kind in kinds:
            return await click(f'#actions button[data-kind="{kind}"]', kind)
    card = page.locator("#hand button.cardbtn:not([disabled]):not(.selected):not(.given)")
    if await card.count():
        # On a phone a long hand overlaps, each card covered on its right by the next: a person taps the
        # strip they see, at the card's left edge (its middle may be under the next card).
        return await click(
            "#hand button.cardbtn:not([disabled]):not(.selected):not(.given)", "card", {"x": 6, "y": 30}
        )
    if controls:
        return await click("#actions button:not([disabled])", kinds[0])
    raise AssertionError("nothing to tap: " + await page.inner_text("#app"))
