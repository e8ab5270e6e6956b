"""The moving parts of the soak and what goes wrong with them: bot processes that are killed and started
again, a load balancer in front of their webhooks, Redis crashed or unreachable, and Telegram answering
5xx, timing out or flooding. `bench/soak.py` drives them; a test can use them alone.

Everything listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

ROOT = Path(__file__).resolve().parents[1]

__all__ = [
    "Balancer",
    "BotProcess",
    "FaultEvent",
    "FaultPlan",
    "free_port",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# --------------------------------------------------------------------------- a bot process


@dataclass
class BotProcess:
    """One `thousand telegram` process in webhook mode; killed and started again under the same name."""

    name: str
    env: Mapping[str, str]
    webhook_url: str
    listen_port: int
    metrics_port: int
    secret: str
    log_path: Path
    process: asyncio.subprocess.Process | None = None
    starts: int = 0
    kills: int = 0
    exit_codes: list[int] = field(default_factory=list)

    @property
    def url(self) -> str:
        """Where the balancer forwards updates to."""
        return f"http://127.0.0.1:{self.listen_port}/telegram"

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def start(self) -> None:
        command = [
            sys.executable,
            "-c",
            "from adapters.cli import main; main()",
            "telegram",
            "--webhook",
            self.webhook_url,
            "--listen",
            f"127.0.0.1:{self.listen_port}",
            "--secret",
            self.secret,
            "--env-file",
            "/nonexistent",
        ]
        env = dict(self.env)
        env["METRICS_PORT"] = str(self.metrics_port)
        with self.log_path.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                *command, cwd=str(ROOT), env=env, stdout=out, stderr=out, stdin=asyncio.subprocess.DEVNULL
            )
        self.starts += 1

    async def ready(self, timeout: float = 60.0) -> float:
        """Wait for /readyz; the seconds it took."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
            while loop.time() - began < timeout:
                if not self.running:
                    raise RuntimeError(f"{self.name} exited at start; see {self.log_path}")
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with session.get(f"http://127.0.0.1:{self.metrics_port}/readyz") as answer:
                        if answer.status == 200:
                            return loop.time() - began
                await asyncio.sleep(0.1)
        raise TimeoutError(f"{self.name} was not ready within {timeout} s")

    async def kill(self) -> None:
        """SIGKILL: no drain, no flush; what the process had queued is lost."""
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
            self.exit_codes.append(await self.process.wait())
            self.kills += 1

    async def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM and wait: the exit status (0 after a clean drain), None if it had to be killed."""
        process = self.process
        if process is None or process.returncode is not None:
            return None if process is None else process.returncode
        process.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.wait_for(process.wait(), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            return None
        self.exit_codes.append(code)
        return code


# --------------------------------------------------------------------------- the load balancer


class Balancer:
    """Round-robin HTTP proxy in front of the processes' webhook listeners. A target that refuses the
    connection is skipped for the next one (as a load balancer's health checks would), so an update is
    lost only when every process is down, or when the process that took it dies before handling it."""

    def __init__(self, targets: list[str]) -> None:
        self.targets = targets
        self.forwarded = 0
        self.failovers = 0
        self.refused = 0
        self._next = 0
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    async def start(self) -> str:
        app = web.Application()
        app.router.add_post("/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        self.port = free_port()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10, connect=1))
        return f"http://127.0.0.1:{self.port}/telegram"

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        body = await request.read()
        headers = {
            k: v for k, v in request.headers.items() if k.lower().startswith(("x-telegram", "content-type"))
        }
        for _ in range(len(self.targets)):
            target = self.targets[self._next % len(self.targets)]
            self._next += 1
            try:
                async with self._session.post(target, data=body, headers=headers) as answer:
                    self.forwarded += 1
                    return web.Response(status=answer.status, body=await answer.read())
            except (aiohttp.ClientError, TimeoutError):
                self.failovers += 1
        self.refused += 1
        return web.Response(status=502, text="no backend")

    async def stop(self) -> None:
        if self._session is not None:
            await self._session.close()
        if self._runner is not None:
            await self._runner.cleanup()


# --------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class FaultEvent:
    """One fault at `at` seconds into the soak. kinds: kill (a bot process, SIGKILL, started again at
    once), redis_crash (SIGKILL, started again on its append-only file), redis_outage (stopped for
    `seconds`, then started), tg_5xx / tg_timeout / tg_flood (the next `count` Bot API calls)."""

    at: float
    kind: str
    seconds: float = 0.0
    count: int = 0
    target: int = 0


@dataclass
class FaultPlan:
    events: list[FaultEvent]

    @classmethod
    def build(
        cls,
        duration: float,
        *,
        kills: int,
        processes: int,
        redis_crash: bool,
        outage_seconds: float,
        telegram_bursts: int,
        rng: random.Random,
    ) -> FaultPlan:
        """Spread the faults over the soak: Redis faults at about 40 % and 65 %, kills at random moments
        (never within 12 s of a Redis fault, so each fault's effect can be told apart), Telegram bursts
        in between. The last 20 % of the soak has no fault: every table must move on after the last one."""
        end = duration * 0.8
        events: list[FaultEvent] = []
        quiet: list[tuple[float, float]] = []
        if redis_crash:
            at = duration * 0.4
            events.append(FaultEvent(at, "redis_crash"))
            quiet.append((at - 12, at + 12))
        if outage_seconds > 0:
            at = duration * 0.65
            events.append(FaultEvent(at, "redis_outage", seconds=outage_seconds))
            quiet.append((at - 12, at + outage_seconds + 12))
        start = min(10.0, duration * 0.1)
        slots = [start + (end - start) * (i + 0.5) / max(1, kills) for i in range(kills)]
        for slot in slots:
            spread = (end - start) / max(1, kills) / 3
            for _ in range(50):
                at = slot + rng.uniform(-spread, spread)
                if not any(a <= at <= b for a, b in quiet):
                    break
            events.append(FaultEvent(round(at, 2), "kill", target=rng.randrange(processes)))
        kinds = ("tg_5xx", "tg_timeout", "tg_flood")
        for i in range(telegram_bursts):
            at = start + (end - start) * (i + 0.3) / max(1, telegram_bursts)
            events.append(FaultEvent(round(at, 2), kinds[i % 3], count=rng.randint(8, 20)))
        return cls(sorted(events, key=lambda e: e.at))

    def summary(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for e in self.events:
            counts[e.kind] = counts.get(e.kind, 0) + 1
        return counts


def now() -> float:
    return time.time()


def environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The process environment without anything of the caller's bot configuration."""
    source = os.environ if base is None else base
    drop = ("TELEGRAM_", "REDIS_", "DISCORD_", "METRICS_", "LOG_")
    return {k: v for k, v in source.items() if not k.startswith(drop)}
