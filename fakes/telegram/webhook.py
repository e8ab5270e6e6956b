"""Webhook delivery: POST each update as JSON to the bot, in order, retrying like Telegram.

Telegram sends one update at a time per bot, with `X-Telegram-Bot-Api-Secret-Token` when a secret
was set, treats any non-2xx answer as a failure, retries with growing pauses and eventually gives
up on the update. The bounds here are small so that tests of that behaviour stay fast.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from http import HTTPStatus

import aiohttp

from .models import JSONDict
from .world import WebhookAttempt, WebhookConfig, World

Poster = Callable[[str, bytes, Mapping[str, str]], Awaitable[int]]


@dataclass(frozen=True)
class WebhookPolicy:
    """Pauses before each retry (their count bounds the attempts) and the per-request timeout."""

    retry_delays: tuple[float, ...] = (0.2, 0.5, 1.0, 2.0)
    timeout: float = 5.0


class _Outcome(enum.Enum):
    DELIVERED = "delivered"
    GAVE_UP = "gave_up"
    ABORTED = "aborted"


def _phrase(status: int) -> str:
    try:
        return f"{status} {HTTPStatus(status).phrase}"
    except ValueError:
        return str(status)


class WebhookDelivery:
    """Background task feeding the webhook from the world's update queue."""

    def __init__(self, world: World, policy: WebhookPolicy, poster: Poster | None = None) -> None:
        self._world = world
        self._policy = policy
        self._poster = poster
        self._task: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None

    def ensure_running(self) -> None:
        if self._world.webhook is not None and (self._task is None or self._task.done()):
            self._task = asyncio.get_running_loop().create_task(self._run(), name="fake-telegram-webhook")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def _post(self, url: str, body: bytes, headers: Mapping[str, str]) -> int:
        if self._poster is not None:
            return await self._poster(url, body, headers)
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self._policy.timeout))
        async with self._session.post(url, data=body, headers=dict(headers)) as response:
            await response.read()
            return response.status

    async def _run(self) -> None:
        world = self._world
        while world.webhook is not None:
            config = world.webhook
            if not world.updates:
                await world.changed.wait(None)
                continue
            update = world.updates[0]
            outcome = await self._deliver(config, update)
            if outcome is not _Outcome.ABORTED and world.updates and world.updates[0] is update:
                world.updates.pop(0)
                world.changed.notify()

    async def _deliver(self, config: WebhookConfig, update: JSONDict) -> _Outcome:
        world = self._world
        body = json.dumps(update, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json"}
        if config.secret_token:
            headers["X-Telegram-Bot-Api-Secret-Token"] = config.secret_token
        for delay in (0.0, *self._policy.retry_delays):
            if delay:
                await asyncio.sleep(delay)
            if world.webhook is not config or not world.updates or world.updates[0] is not update:
                return _Outcome.ABORTED
            status: int | None = None
            error: str | None = None
            try:
                status = await self._post(config.url, body, headers)
            except (aiohttp.ClientConnectorError, ConnectionError):
                error = "Connection refused"
            except TimeoutError:
                error = "Read timeout expired"
            except aiohttp.ClientError as exc:
                error = f"Connection error: {exc.__class__.__name__}"
            if status is not None and 200 <= status < 300:
                world.webhook_attempts.append(
                    WebhookAttempt(update["update_id"], config.url, status, None, config.secret_token)
                )
                world.changed.notify()
                return _Outcome.DELIVERED
            if error is None:
                assert status is not None
                error = f"Wrong response from the webhook: {_phrase(status)}"
            world.webhook_attempts.append(
                WebhookAttempt(update["update_id"], config.url, status, error, config.secret_token)
            )
            world.webhook_last_error = (world.date(), error)
            world.changed.notify()
        return _Outcome.GAVE_UP
