"""`thousand play --web`: the page's address is printed, served on 127.0.0.1, and a move from the page
plays at the terminal's table (the terminal shows what it caused)."""

from __future__ import annotations

import asyncio
import io
import re
from urllib.parse import parse_qs, urlsplit

import aiohttp
from rich.console import Console

from adapters.console.app import GameOptions
from adapters.web.terminal import play_web


async def test_play_web_serves_the_table_on_loopback() -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False, color_system=None)
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    async def read_line(prompt: str) -> str | None:
        return await lines.get()

    game = asyncio.create_task(
        play_web(GameOptions(level="easy", seed=5), console=console, read_line=read_line)
    )
    try:
        url = ""
        for _ in range(200):
            found = re.search(r"http://127\.0\.0\.1:\d+/\?t=\S+", out.getvalue())
            if found:
                url = found.group(0)
                break
            await asyncio.sleep(0.02)
        assert url, out.getvalue()
        base = url.split("/?t=")[0]
        token = parse_qs(urlsplit(url).query)["t"][0]
        async with aiohttp.ClientSession() as http:
            async with http.post(f"{base}/api/session", json={"link": token}, headers={"Origin": base}) as r:
                assert r.status == 200, await r.text()
                session = await r.json()
            assert session["seat"] == 0 and session["table"] == "console:local"
            async with http.post(
                f"{base}/api/view", json={"session": session["session"]}, headers={"Origin": base}
            ) as r:
                view = await r.json()
            for _ in range(50):  # the computers move first when they lead
                if view["actions"]:
                    break
                await asyncio.sleep(0.05)
                async with http.post(
                    f"{base}/api/view", json={"session": session["session"]}, headers={"Origin": base}
                ) as r:
                    view = await r.json()
            assert view["actions"] and view["hand"]
            # The heading names the game and its players, not the terminal's chat ("Terminal").
            assert view["heading"].startswith("1000 · ") and "Terminal" not in view["heading"]
            assert view["heading"].endswith(", ".join(seat["name"] for seat in view["seats"][1:]))
            before = len(out.getvalue())
            move = {"session": session["session"], "payload": view["actions"][0]["payload"]}
            async with http.post(f"{base}/api/act", json=move, headers={"Origin": base}) as r:
                assert (await r.json()) == {"ok": True}
            async with http.post(
                f"{base}/api/view", json={"session": session["session"]}, headers={"Origin": base}
            ) as r:
                assert (await r.json())["version"] > view["version"]
            assert len(out.getvalue()) > before  # the terminal showed what the move caused
            # Without PUBLIC_URL the page's origin comes from the Host: only loopback names are served
            # (a DNS-rebinding page at evil.example resolving to 127.0.0.1 is refused).
            for host in ("evil.example", f"evil.example:{urlsplit(base).port}", "127.0.0.2"):
                async with http.post(
                    f"{base}/api/session", json={"link": token}, headers={"Origin": base, "Host": host}
                ) as r:
                    assert r.status == 421, (host, r.status)
            local = f"localhost:{urlsplit(base).port}"
            async with http.post(
                f"{base}/api/session",
                json={"link": token},
                headers={"Origin": f"http://{local}", "Host": local},
            ) as r:
                assert r.status == 200
    finally:
        await lines.put("quit")
        assert await asyncio.wait_for(game, 10) == 0
