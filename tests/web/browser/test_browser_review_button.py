"""The Review button on a finished deal's result in the web page's score sheet: the seat's own review
shows on the page."""

from __future__ import annotations

import random
from pathlib import Path

from browserkit import HUMANS, Room


async def test_the_review_button_shows_the_seats_own_review(room: Room, tmp_path: Path) -> None:
    await room.harness.open_table(HUMANS[:1], computers=2)
    rng = random.Random(4)
    while not (await room.harness.state()).history:
        assert await room.harness.play_turn(rng, {0: HUMANS[0]}, sensible=True)
    tab = await room.open(HUMANS[0], viewport=(390, 844))
    page = tab.page
    await page.wait_for_selector("#app[data-version]")
    await page.locator("#sheet button.deal-link").first.click()
    button = page.locator("#sheet .deal-result button.review-deal")
    await button.wait_for()
    assert await button.inner_text() == "Review"
    await button.click()
    notice = page.locator("#notice")
    await notice.wait_for(state="visible", timeout=60_000)
    text = await notice.inner_text()
    assert text.startswith("Your review of deal 1"), text
    await page.screenshot(path=str(tmp_path / "review-button.png"), full_page=True)
    print(f"screenshot: {tmp_path / 'review-button.png'}")
