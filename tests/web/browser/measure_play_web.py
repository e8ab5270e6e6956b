"""What a player sees of `thousand play --web` in chromium (issue 18's figures): the terminal game with its
page, one person tapping against two computers (easy, instant) for 5 deals of each preset, once tapping
at once (cutting each trick's moment short) and once waiting for each taken trick to go. Prints one JSON
line per run: tricks of the finished deals, how many appeared on screen and how many for at least 1 s,
result panels shown, and the deals a computer declared with a public talon and whether its faces were on
the felt in play. Not a test (about 3 minutes): `.venv/bin/python tests/web/browser/measure_play_web.py`.
"""

import asyncio
import io
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parents[1] / "bot"), str(HERE.parents[2])]
from browserkit import CHROMIUM  # noqa: E402
from playwright.async_api import async_playwright  # noqa: E402
from rich.console import Console  # noqa: E402
from test_browser_tricks import WATCH  # noqa: E402

from adapters.console.app import GameOptions  # noqa: E402
from adapters.web.terminal import play_web  # noqa: E402

TAP = """
() => {
  const c = document.querySelector('#actions button[data-confirm="1"]')
    || document.querySelector('#actions button[data-target]:not([disabled])')
    || document.querySelector('#actions button[data-kind="pass"]')
    || document.querySelector('#actions button[data-kind="blind"][data-value="0"]')
    || document.querySelector('#actions button[data-kind="take"]')
    || document.querySelector('#actions button[data-kind="declare"]')
    || document.querySelector('#actions button[data-kind="contract"]')
    || document.querySelector('#actions button[data-kind="bid"]')
    || document.querySelector('#hand button.cardbtn:not([disabled]):not(.selected):not(.given)');
  if (!c) return false;
  c.click(); return true;
}
"""


async def run(preset: str, deals: int, seed: int, patient: bool = False) -> dict[str, object]:
    out = io.StringIO()
    stop = asyncio.Event()

    async def read_line(prompt: str = "") -> str:
        await stop.wait()
        return "quit"

    console = Console(file=out, width=400, force_terminal=False)
    game = asyncio.create_task(
        play_web(GameOptions(preset=preset, level="easy", seed=seed), 0, console=console, read_line=read_line)
    )
    for _ in range(100):
        m = re.search(r"http://127\.0\.0\.1:\d+/\?t=\S+", out.getvalue())
        if m:
            break
        await asyncio.sleep(0.1)
    assert m is not None, out.getvalue()
    url = m.group(0)
    views: list[str] = []
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        ctx = await b.new_context(viewport={"width": 390, "height": 844})
        page = await ctx.new_page()
        cdp = await ctx.new_cdp_session(page)
        await cdp.send("Network.enable")
        cdp.on("Network.eventSourceMessageReceived", lambda e: views.append(e.get("data", "")))
        await page.goto(url)
        await page.wait_for_selector("#app[data-version]")
        await page.evaluate(WATCH)
        for _ in range(3000):
            vs = [x for x in (json.loads(v) for v in views if v.startswith("{")) if "version" in x]
            last = vs[-1] if vs else None
            if last and ((last.get("recent") and last["deal"] > deals) or last.get("finished")):
                break
            if patient and await page.locator("#trick .completed").count():
                await page.wait_for_timeout(50)
                continue
            await page.evaluate(TAP)
            await page.wait_for_timeout(60)
        await page.wait_for_timeout(4000)  # the last deal's tricks and result come on the page
        w = await page.evaluate("window.__watch")
        await b.close()
    stop.set()
    await asyncio.wait_for(game, 10)
    vs = [x for x in (json.loads(v) for v in views if v.startswith("{")) if "version" in x]
    me = vs[-1]["me"]
    tricks: dict[int, int] = {}
    results: dict[int, dict[str, object]] = {}
    talon_deals: set[int] = set()
    public: set[int] = set()
    for v in vs:
        for item in v.get("recent", []):
            tricks[item["deal"]] = len(item["tricks"])
            results[item["deal"]] = item["result"]
        if v["declarer"] >= 0 and v["declarer"] != me and v.get("talon") and v["phase"] in ("play",):
            talon_deals.add(v["deal"])
        if v.get("talon") and v["declarer"] != me:
            public.add(v["deal"])
    finished = [d for d in results if d <= deals]
    total = sum(tricks[d] for d in finished)
    seen = sum(1 for d in finished for i in range(tricks[d]) if f"{d}:{i}" in w["tricks"])
    long = sum(
        1
        for d in finished
        for i in range(tricks[d])
        if f"{d}:{i}" in w["tricks"]
        and ((w["tricks"][f"{d}:{i}"]["gone"] or 1e12) - w["tricks"][f"{d}:{i}"]["shown"]) >= 1000
    )
    computer = [d for d in finished if results[d]["declarer"] != me and results[d]["ending"] == "played"]
    shown_talon = [d for d in computer if str(d) in w["talon"]]
    return {
        "patient": patient,
        "preset": preset,
        "deals": len(finished),
        "tricks": total,
        "tricks_on_screen": seen,
        "tricks_1s": long,
        "results_shown": sum(1 for d in finished if str(d) in w["results"]),
        "computer_declared": len(computer),
        "computer_declared_public_talon": len([d for d in computer if d in public]),
        "talon_in_view_in_play": len([d for d in computer if d in talon_deals]),
        "talon_on_felt": len(shown_talon),
    }


async def main() -> None:
    for patient in (False, True):
        for preset, seed in (("polish", 1), ("russian", 1)):
            print(json.dumps(await run(preset, 5, seed, patient)), flush=True)


asyncio.run(main())
