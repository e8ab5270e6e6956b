"""A real `thousand telegram` process for the tests that stop, kill and restart one (restarts, SIGTERM
hand-over): started with the environment a test builds, its output appended to a log file the test reads."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[2]


@asynccontextmanager
async def bot_process(env: dict[str, str], log: Path) -> AsyncIterator[asyncio.subprocess.Process]:
    with log.open("ab") as out:
        command = [sys.executable, "-c", "from adapters.cli import main; main()", "telegram"]
        process = await asyncio.create_subprocess_exec(
            *command, "--env-file", "/nonexistent", cwd=str(ROOT), env=env, stdout=out, stderr=out
        )
    try:
        yield process
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def wait_ready(port: int, process: asyncio.subprocess.Process, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with aiohttp.ClientSession() as session:
        while loop.time() < deadline:
            assert process.returncode is None, "the bot process exited"
            try:
                async with session.get(f"http://127.0.0.1:{port}/readyz") as answer:
                    if answer.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise TimeoutError("the bot process did not become ready")
