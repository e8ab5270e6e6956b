"""The web table inside a process (`adapters.web.main.start_web`, as `thousand telegram`, `thousand
discord` and `thousand web` run it): it listens on WEB_LISTEN, answers with the process's service, and
stops with the process."""

from __future__ import annotations

import socket

import aiohttp
import pytest

from adapters.web.main import start_web
from bot.model import Message
from bot.ops.runtime import Runtime
from bot.settings import Settings
from bot.storage import MemoryStore


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def test_start_web_serves_until_the_process_stops() -> None:
    port = free_port()
    settings = Settings(  # type: ignore[call-arg]
        _env_file=None,
        metrics_port=0,
        ai_workers=0,
        web_secret="process-web-secret-0123",
        log_format="console",
    )
    runtime = Runtime(settings, platform="web", store=MemoryStore())
    delivered: list[Message] = []

    async def deliver(messages: list[Message]) -> None:
        delivered.extend(messages)

    await runtime.start(deliver, signals=False, timers=False)
    await start_web(runtime, deliver, listen=f"127.0.0.1:{port}")
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/api/view", json={"session": "x.y"}, headers={"Origin": base}) as r:
            assert r.status == 401 and "error" in await r.json()
            assert "script-src 'self'" in r.headers["Content-Security-Policy"]
            assert r.headers["Server"] == "thousand"  # no library version
        await runtime.stop("test over")
        with pytest.raises(aiohttp.ClientConnectionError):
            async with http.post(f"{base}/api/view", json={"session": "x.y"}, headers={"Origin": base}):
                pass


async def test_start_web_needs_a_signing_key() -> None:
    settings = Settings(_env_file=None, metrics_port=0, ai_workers=0)  # type: ignore[call-arg]
    runtime = Runtime(settings, platform="web", store=MemoryStore())
    with pytest.raises(ValueError, match="WEB_SECRET"):
        await start_web(runtime, None, listen=f"127.0.0.1:{free_port()}")
    await runtime.service.close()
