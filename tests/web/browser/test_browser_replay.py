"""The replay page in chromium: the file `thousand replay --html` writes, opened from disk, and the page
the server serves for /export's link (under its Content-Security-Policy), stepped by taps."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

from browserkit import GROUP, HUMANS, Room
from playwright.async_api import Page

from core.actions import Play
from core.game import unroll

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "examples"


async def step_through(page: Page, players: int) -> None:
    await page.wait_for_selector("#app[data-step]")
    # The first step: the cards as dealt, every hand open (7, 8 or 10 ... cards each).
    hands = page.locator(".openhand")
    assert await hands.count() == players
    for i in range(players):
        assert await hands.nth(i).locator("svg.card").count() >= 5
    assert await page.locator('button[data-nav="prev"]').is_disabled()
    # Next trick: the step of a completed trick, its cards on the table and the winner marked.
    await page.locator('button[data-nav="trick+"]').click()
    while await page.locator("#trick .played.win").count() == 0:
        assert await page.locator('button[data-nav="trick+"]').is_enabled()
        await page.locator('button[data-nav="trick+"]').click()
    assert await page.locator("#trick .played").count() >= 2
    step = int(await page.get_attribute("#app", "data-step") or 0)
    await page.locator('button[data-nav="next"]').click()
    assert int(await page.get_attribute("#app", "data-step") or 0) == step + 1
    await page.locator('button[data-nav="prev"]').click()
    assert int(await page.get_attribute("#app", "data-step") or 0) == step


async def test_the_page_of_a_record_file_steps_deal_by_deal(room: Room, tmp_path: Path) -> None:
    out = tmp_path / "replay.html"
    record = EXAMPLES / "polish-3p-s101-g000.json"
    done = subprocess.run(
        [
            *(sys.executable, "-c", "from adapters.cli import main; main()"),
            *("replay", str(record), "--html", str(out)),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    context = await room.browser.new_context(viewport={"width": 390, "height": 844})
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    await page.goto(out.as_uri())
    await step_through(page, 3)
    # Next deal: the following deal as dealt; the score sheet has a row for each deal before it.
    deal = int(await page.locator("#facts b").first.inner_text())
    await page.locator('button[data-nav="deal+"]').click()
    assert int(await page.locator("#facts b").first.inner_text()) == deal + 1
    deals = json.loads(record.read_text())["deals"]
    first = await page.locator(".openhand").nth(0).locator("svg.card").count()
    assert first == len(deals[deal]["hands"][0])
    assert await page.locator("#sheet-body tbody tr").count() == deal
    await page.locator('button[data-nav="deal-"]').click()
    assert int(await page.locator("#facts b").first.inner_text()) == deal
    assert not errors


async def test_the_served_replay_of_a_finished_deal(room: Room) -> None:
    await room.harness.open_table(HUMANS[:3])
    rng = random.Random(5)
    users = dict(enumerate(HUMANS[:3]))
    for _ in range(1000):  # until a finished deal had tricks (a deal may end by a bomb)
        state = await room.harness.state()
        if any(isinstance(a, Play) for _, log in state.history for _, a in unroll(log)):
            break
        assert await room.harness.play_turn(rng, users, sensible=True)
    _, doc = await room.harness.doc()
    assert doc is not None
    token = room.web.signer.replay_token(GROUP.key, doc.serial, time.time() + 600)
    context = await room.browser.new_context(viewport={"width": 390, "height": 844}, locale="pl")
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    await page.goto(f"{room.base}/replay/{token}")
    await step_through(page, 3)
    assert not errors
