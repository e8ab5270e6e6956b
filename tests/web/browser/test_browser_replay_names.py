"""A self-contained replay page (`thousand replay --html`) of players whose names look like markup: the page
renders every name as text, runs only its own scripts (its meta Content-Security-Policy names them by
hash), and a name holding `<!--<script>` no longer swallows the rest of the page (issue 19)."""

from __future__ import annotations

import json
from pathlib import Path

from browserkit import Room
from test_browser_replay import EXAMPLES, step_through

from adapters.web.replay_page import replay_html

NAMES = ["A<!--<script>", "</script><img src=x onerror=alert(1)>", "$\\nosuchcommand$ & <b>B</b>"]


async def test_a_replay_of_players_named_like_markup_renders_and_runs_only_its_scripts(
    room: Room, tmp_path: Path
) -> None:
    record = json.loads((EXAMPLES / "polish-3p-s101-g000.json").read_text())
    record["players"] = NAMES
    out = tmp_path / "replay.html"
    out.write_text(replay_html(json.dumps(record), "en"), encoding="utf-8")
    context = await room.browser.new_context(viewport={"width": 390, "height": 844})
    page = await context.new_page()
    errors: list[str] = []
    refused: list[str] = []
    dialogs: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: refused.append(m.text) if "Content Security Policy" in m.text else None)
    page.on("dialog", lambda d: dialogs.append(d.message))
    await page.goto(out.as_uri())
    await step_through(page, 3)
    title = await page.locator("#title").inner_text()
    for name in NAMES:
        assert name in title, (name, title)
    # Names are text, never elements.
    assert await page.locator("#app img").count() == 0
    assert await page.locator("#app b:text-is('B')").count() == 0
    # The page's own inline scripts and style ran under its policy; nothing was refused.
    assert not errors and not refused and not dialogs, (errors, refused, dialogs)
    # The policy holds: a script added by anybody else is refused.
    await page.evaluate(
        "() => { const s = document.createElement('script'); s.textContent = 'window.pwned = 1';"
        " document.head.appendChild(s); }"
    )
    assert await page.evaluate("() => window.pwned") is None
    await context.close()
