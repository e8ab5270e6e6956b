"""The Play now panel, issue 25: a closed tab leaves the queue at once (pagehide and a beacon), the rules
and the pace are named in the reader's language (the pace with its time per turn, and explained), and
the panel offers a choice of language that the labels and the guest's table follow.
"""

from __future__ import annotations

import os

from test_play_now_browser import DESKTOP, PHONE, Lobby, find_game, lobby

__all__ = ["lobby"]  # the fixture, shared with test_play_now_browser


async def test_a_closed_tab_leaves_the_queue_at_once(lobby: Lobby) -> None:
    first = await lobby.open(PHONE, lang="en")
    await find_game(first, "Ala", "polish", 3, "slow")
    await first.page.wait_for_selector('#pn-status[data-state="waiting"]')
    second = await lobby.open(PHONE, lang="en")
    await find_game(second, "Bartek", "polish", 3, "slow")
    await second.page.wait_for_selector('#pn-status[data-state="waiting"]')
    await second.page.wait_for_selector("#pn-status p:has-text('Waiting for this game: 2')")
    # The first tab closes (pagehide): the next status of the other reads one waiting, at once (the
    # entry would otherwise stay until it expires, 120 s).
    await first.page.close(run_before_unload=True)
    await second.page.wait_for_selector("#pn-status p:has-text('Waiting for this game: 1')", timeout=5000)


async def test_the_panel_speaks_the_readers_language_and_offers_a_choice(lobby: Lobby) -> None:
    tab = await lobby.open(PHONE, lang="ru")
    page = tab.page
    await page.wait_for_selector("#pn-form")
    presets = await page.locator("#pn-preset option").all_inner_texts()
    assert presets == ["Любые правила", "Польский вариант", "Эстонский вариант", "Русский вариант"], presets
    paces = await page.locator("#pn-pace option").all_inner_texts()
    assert paces == ["Быстрый · 30 с", "Обычный · 90 с", "Медленный · 240 с"], paces
    assert "компьютер" in await page.inner_text("#pn-pace-help")
    # A choice of language, each named in itself; the panel follows it at once and keeps it.
    langs = await page.locator("#pn-lang option").all_inner_texts()
    assert langs == ["English", "Polski", "Русский", "Українська", "Eesti", "Türkçe"], langs
    await page.select_option("#pn-lang", "pl")
    await page.wait_for_function("() => document.querySelector('#playnow h1').textContent === 'Graj teraz'")
    assert (await page.locator("#pn-preset option").all_inner_texts())[1] == "Wariant polski"
    await page.reload()
    await page.wait_for_selector("#pn-form")
    assert await page.inner_text("#playnow h1") == "Graj teraz"
    # The guest's table speaks it too.
    await find_game(tab, "Ala", "polish", 3, "fast")
    await page.wait_for_selector('#pn-status[data-state="waiting"]')
    assert "Szukam gry" in await page.inner_text("#pn-status")
    # A guest known by their token (its language Polish) who chooses another language: the panel
    # follows the choice, not the token, also after a reload.
    await page.click("#pn-cancel")
    await page.wait_for_selector("#pn-form")
    await page.select_option("#pn-lang", "et")
    await page.wait_for_function("() => document.querySelector('#playnow h1').textContent === 'Mängi kohe'")
    await page.reload()
    await page.wait_for_selector("#pn-form")
    assert await page.inner_text("#playnow h1") == "Mängi kohe"


async def test_strangers_on_the_web_have_the_phrases_block_and_report(lobby: Lobby) -> None:
    """The chats' `/say gl`, `/block`, `/report` from the web table: a phrase reaches the other's page in
    their language, signed with the name; block and report answer as the chats do."""
    phone = await lobby.open(PHONE, lang="pl")
    desk = await lobby.open(DESKTOP, lang="en")
    await find_game(phone, "Ala", "polish", 2, "slow")
    await phone.page.wait_for_selector('#pn-status[data-state="waiting"]')
    await find_game(desk, "Bartek", "polish", 2, "slow")
    for tab in (phone, desk):
        await tab.page.wait_for_selector("#app[data-version]:not([hidden])", timeout=8000)
        await tab.page.wait_for_selector("#social:not([hidden]) button[data-phrase]")
    ala = int(await phone.page.get_attribute(".seat.me", "data-seat") or -1)
    # Ala says "Good luck!" on her page; Bartek reads it under her seat, in English, within a poll.
    await phone.page.locator('#social button[data-phrase="gl"]').click()
    said = desk.page.locator(f'.seat[data-seat="{ala}"] .said')
    await said.wait_for(timeout=6000)
    assert await said.inner_text() == "Good luck!"
    mine = phone.page.locator(f'.seat[data-seat="{ala}"] .said')
    await mine.wait_for(timeout=6000)
    assert await mine.inner_text() == "Powodzenia!"
    shots = os.environ.get("SHOTS_DIR")
    if shots:  # to look at: the phrases under the hand, a phrase under a seat
        await desk.page.screenshot(path=os.path.join(shots, "web-public-desktop.png"))
        await phone.page.screenshot(path=os.path.join(shots, "web-public-phone.png"), full_page=True)
    # Bartek blocks and reports Ala (the player and the reason chosen from lists): the chats' answers.
    await desk.page.locator("#social details.safety summary").click()
    await desk.page.select_option("#social-reason", "abuse")
    await desk.page.locator('#social button[data-kind="block-player"]').click()
    await desk.page.wait_for_selector("#social-notice:has-text('is blocked')")
    await desk.page.locator('#social button[data-kind="report-player"]').click()
    await desk.page.wait_for_selector("#social-notice:has-text('Report filed: Ala')")


async def test_a_page_dropped_from_the_queue_while_waiting_queues_again(lobby: Lobby) -> None:
    """A background tab's timers slow down (once a minute after a while in Chrome), past a page entry's
    short lifetime: the page, dropped without having cancelled, queues again with the same options."""
    tab = await lobby.open(PHONE, lang="en")
    await find_game(tab, "Ala", "polish", 3, "slow")
    await tab.page.wait_for_selector('#pn-status[data-state="waiting"]')
    # The entry goes (as if expired): removed behind the page's back.
    status = await tab.page.evaluate(
        """async () => (await fetch("/api/queue/cancel", { method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ player: localStorage.getItem("thousand.player") }) })).status"""
    )
    assert status == 200
    await tab.page.wait_for_timeout(4500)  # two polls
    assert await tab.page.locator("#pn-form").count() == 0
    await tab.page.wait_for_selector('#pn-status[data-state="waiting"]')
    assert "Waiting for this game: 1" in await tab.page.inner_text("#pn-status")


async def test_the_panel_draws_with_the_fonts_there_are(lobby: Lobby) -> None:
    """The status lines of /play begin with 🔎 in the chats; the panel shows none of what this machine's
    fonts lack (an empty box in Debian's chromium), in any language it offers."""
    from test_browser_seen import TEXT, _covered

    for lang in ("en", "ru", "tr"):
        tab = await lobby.open(PHONE, lang=lang)
        await find_game(tab, "Ala" + lang, "polish", 3, "slow")
        await tab.page.wait_for_selector('#pn-status[data-state="waiting"]')
        missing = _covered(set(await tab.page.evaluate(TEXT)))
        assert not missing, (lang, sorted(f"U+{ord(c):04X}" for c in missing))
        await tab.page.click("#pn-cancel")
