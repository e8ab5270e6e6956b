"""The replay page marks a costly card on its trick with the better card (`thousand replay --review`),
opened from disk in chromium."""

from __future__ import annotations

import json
from pathlib import Path

from browserkit import Room
from reviewkit import blunder_deal

from adapters.web.replay_page import replay_html
from bot.review_job import decisions_json
from core.ai.review import review_deal
from core.record import build_record


async def test_the_costly_card_is_marked_on_its_trick(room: Room, tmp_path: Path) -> None:
    start, actions, step, end = blunder_deal()
    seat = actions[step][0]
    review = review_deal(start, actions, seat, steps={step}, seed=0)
    marks = decisions_json(review, start)
    (mark,) = marks
    assert mark["cost"] >= 10
    best = mark["best"].split()[1]
    text = json.dumps(build_record(end, ["Ann", "Bob", "Cy"]))
    out = tmp_path / "replay.html"
    out.write_text(replay_html(text, "en", marks), encoding="utf-8")
    context = await room.browser.new_context(viewport={"width": 390, "height": 844})
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(out.as_uri())
    await page.wait_for_selector("#app[data-step]")
    # Until the trick the blunder was played to: no mark before it.
    for _ in range(step + 2):
        if await page.locator("#trick .played.costly").count():
            break
        await page.locator('button[data-nav="next"]').click()
    costly = page.locator("#trick .played.costly")
    assert await costly.count() == 1
    chosen = actions[step][1]
    assert await costly.locator(".mark").get_attribute("data-best") == best
    assert (await costly.locator(".mark b").inner_text()) == f"−{round(mark['cost'])}"
    assert await costly.locator(".mark svg.card").count() == 1
    assert await costly.locator("span").first.inner_text() == ["Ann", "Bob", "Cy"][seat]
    assert chosen.kind == "play"
    shot = tmp_path / "review-mark.png"
    await page.screenshot(path=str(shot))
    print(f"screenshot: {shot}")
    assert not errors
    await context.close()
