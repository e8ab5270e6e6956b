"""Liveness, readiness and metrics over HTTP (aiohttp), on the metrics port.

- ``GET /livez`` (alias ``/healthz``): 200 while the event loop answers. An orchestrator restarts the
  process when it stops answering; nothing else makes a bot "dead" (Redis being away is not a reason to
  restart, it is a reason to stop sending traffic).
- ``GET /readyz``: 200 when every readiness check passes (the store answers PING) and every registered
  component reports connected (the Telegram or Discord adapter), and the process is not stopping; else 503.
  The body is JSON naming each check and why it failed, so ``kubectl describe`` shows the cause. Every
  reason passes through the redactor's public mode first (`Redactor.public`): a Redis error names the
  host and port, an exception may carry a URL with a password, and whoever reaches the probe port is not
  meant to learn either. The full error is in the logs.
- ``GET /metrics``: Prometheus text exposition of the process's `Metrics`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from aiohttp import web

from bot.ops.logs import Redactor
from bot.ops.metrics import CONTENT_TYPE_LATEST, Metrics

__all__ = ["Check", "Health", "HealthServer"]

log = logging.getLogger(__name__)

Check = Callable[[], Awaitable[object]]
"""A readiness probe: returns when healthy, raises (anything) when not."""

_OK: Final = "ok"


class Health:
    """What readiness depends on. The process entry point registers checks (`add_check("redis",
    store.ping)`) and components (`add_component("telegram")`), which the adapters flip with
    `set_connected` as they connect and lose their platform."""

    def __init__(self, *, check_timeout: float = 2.0, redactor: Redactor | None = None) -> None:
        """`redactor` knows the process's secrets (`Redactor(secrets_of(settings))`); without one, only
        secret-shaped strings and addresses are hidden."""
        self.check_timeout = check_timeout
        self._redact = (redactor or Redactor()).public
        self._checks: dict[str, Check] = {}
        self._components: dict[str, str] = {}
        self.draining = False

    def add_check(self, name: str, check: Check) -> None:
        self._checks[name] = check

    def add_component(self, name: str) -> None:
        """A component that starts not ready and is ready only after `set_connected(name, True)`."""
        self._components.setdefault(name, "not connected yet")

    def set_connected(self, name: str, connected: bool, detail: str = "") -> None:
        if name not in self._components:
            raise KeyError(f"unknown component {name!r}: add_component first")
        self._components[name] = _OK if connected else (detail or "disconnected")

    def mark_draining(self) -> None:
        """The process is stopping: no longer ready, whatever the checks say."""
        self.draining = True

    async def _run(self, name: str, check: Check) -> tuple[str, str]:
        try:
            await asyncio.wait_for(check(), self.check_timeout)
        except TimeoutError:
            return name, f"no answer within {self.check_timeout:g}s"
        except Exception as exc:  # a probe reports failures, it never raises
            log.info("readiness check %s failed: %s", name, exc, extra={"event": "not_ready"})
            return name, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return name, _OK

    async def readiness(self) -> tuple[bool, dict[str, str]]:
        """(ready, {check or component: "ok" or why not})."""
        results = dict(await asyncio.gather(*(self._run(n, c) for n, c in self._checks.items())))
        results.update(self._components)
        if self.draining:
            results["shutdown"] = "stopping"
        return all(v == _OK for v in results.values()), {k: self._redact(v) for k, v in results.items()}


class HealthServer:
    """The HTTP listener for probes and scrapes. `port=0` picks a free port (see `port` after start)."""

    def __init__(
        self, health: Health, metrics: Metrics, *, host: str = "127.0.0.1", port: int = 9100
    ) -> None:
        self.health = health
        self.metrics = metrics
        self.host = host
        self._requested_port = port
        self._runner: web.AppRunner | None = None
        self.port = port

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/livez", self._live)
        app.router.add_get("/healthz", self._live)
        app.router.add_get("/readyz", self._ready)
        app.router.add_get("/metrics", self._metrics)
        return app

    async def start(self) -> int:
        """Listen; returns the bound port."""
        runner = web.AppRunner(self.app(), access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self._requested_port, reuse_address=True)
        try:
            await site.start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner
        server = site._server
        sockets = getattr(server, "sockets", None) or ()
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        log.info("health and metrics on http://%s:%d", self.host, self.port, extra={"event": "listen"})
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def _live(self, request: web.Request) -> web.Response:
        return web.json_response({"status": "alive"})

    async def _ready(self, request: web.Request) -> web.Response:
        ready, results = await self.health.readiness()
        return web.json_response({"ready": ready, "checks": results}, status=200 if ready else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        body = self.metrics.render()
        response = web.Response(body=body)
        response.headers["Content-Type"] = CONTENT_TYPE_LATEST
        return response
