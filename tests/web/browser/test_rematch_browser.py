"""Play again at a public table, in the browser (docs/WEB.md "Play again"): a guest alone starts a
short public game with computers from the Play now panel (target 200: the rules' `preset` patched for
the test), its moves made through the page's own API; when the game is over the page shows the offer's
panel (the text, the guest's ⏳ and name, Play again and No thanks); a tap on Play again (everyone human
has answered: the guest alone) opens the new public table in the same page, by its new session.
"""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import aiohttp
import pytest
from test_play_now_browser import PHONE, Lobby, find_game, lobby  # noqa: F401  (the fixture)

import bot.handlers.lobby as lobby_handlers
from bot.table import TableDoc
from bot.weblinks import Claims
from core.rules import preset as real_preset


@pytest.fixture(autouse=True)
def short_games(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        lobby_handlers,
        "preset",
        lambda name, options=None: real_preset(name, {"target": 200, "barrel_at": 100}),
    )


def _choose(actions: list[dict[str, Any]], rng: random.Random) -> dict[str, Any]:
    for kind in ("pass", "contract", "bid"):
        found = [a for a in actions if a["kind"] == kind]
        if found:
            return min(found, key=lambda a: a.get("value", 0))
    return rng.choice(actions)


async def test_the_offer_on_the_page_and_a_tap_opens_the_new_table(lobby: Lobby) -> None:  # noqa: F811
    tab = await lobby.open(PHONE)
    page = tab.page
    await find_game(tab, "Ala", "polish", 3, "slow")
    await page.wait_for_selector("#pn-go", timeout=8000)
    await page.click("#pn-go")
    await page.wait_for_selector("#app[data-version]:not([hidden])")
    token = await page.evaluate("localStorage.getItem('thousand.player')")
    signer = _signer()
    player = signer.read(token, "player", time.time())
    key = f"web:{player.user}"
    table_id = None
    for table in sorted(await lobby.store.tables_for_user(key)):
        table_id = table
    assert table_id is not None and table_id.startswith("pub:")
    session = signer.sign(Claims("session", table_id, player.user, "Ala", "en", "web", time.time() + 600))
    rng = random.Random(5)
    headers = {"Origin": lobby.base}
    async with aiohttp.ClientSession(lobby.base, headers=headers) as http:
        for _ in range(3000):
            async with http.post("/api/view", json={"session": session}) as r:
                view = await r.json()
            if view["finished"]:
                break
            actions = [a for a in view.get("actions") or [] if a["kind"] not in ("back", "again")]
            if actions:
                payload = _choose(actions, rng)["payload"]
                async with http.post("/api/act", json={"session": session, "payload": payload}) as r:
                    assert (await r.json()).get("ok"), payload
        else:
            raise AssertionError("the game did not end")
    panel = await page.wait_for_selector('[data-kind="rematch-yes"]', timeout=10000)
    text = await page.inner_text("#rematch")
    assert "Play again" in text and "… Ala" in text, text
    # Drawn with characters every system font has (no emoji: a box where no emoji font is installed).
    assert not [c for c in text if ord(c) >= 0x1F000 or c in "✅❌⏳"], text
    assert await page.is_visible('[data-kind="rematch-no"]')
    await page.screenshot(path="/tmp/rematch-phone.png")
    await panel.click()
    new_id = None

    async def moved() -> bool:
        nonlocal new_id
        stored = await lobby.store.load(table_id)
        assert stored is not None
        doc = TableDoc.model_validate_json(stored.document)
        new_id = doc.rematch.next if doc.rematch is not None else None
        return new_id is not None

    for _ in range(200):
        if await moved():
            break
        await asyncio.sleep(0.05)
    assert new_id is not None
    # The page left the finished table for the new one: no offer panel, a hand to play.
    await page.wait_for_selector("#rematch", state="detached", timeout=10000)
    await page.wait_for_function("document.querySelectorAll('#hand button, #hand .card').length > 0")


def _signer() -> Any:
    """The fixture's signer (the same secret: `test_play_now_browser.lobby`)."""
    from botkit import quiet_settings

    from bot.weblinks import signer_for

    return signer_for(quiet_settings(web_secret="browser-test-secret-0123456789"))
