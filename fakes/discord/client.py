"""Pointing a real discord.py client at the fake, without patching the library.

discord.py builds every URL from Discord's real hosts (``https://discord.com/api/v10``,
``wss://gateway.discord.gg``, the READY ``resume_gateway_url``).  Its public ``connector`` option
(``discord.Client(connector=...)``, or ``client.http.connector`` before login) is honoured for REST,
webhooks/interaction callbacks, the gateway websocket and CDN downloads alike, so the fake supplies an
aiohttp connector that resolves those hosts to itself and trusts its test certificate.  No class attribute
of the library is overridden.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TypeVar

import discord

from .server import FakeDiscord

ClientT = TypeVar("ClientT", bound=discord.Client)


def attach(client: discord.Client, fake: FakeDiscord) -> None:
    """Route ``client`` to ``fake`` (call before ``login``/``start``; each client needs its own connector)."""
    client.http.connector = fake.connector()


@contextlib.asynccontextmanager
async def connect_client(
    client: ClientT, fake: FakeDiscord, *, token: str | None = None, ready_timeout: float = 10.0
) -> AsyncIterator[ClientT]:
    """Start ``client`` against ``fake``, wait for ``on_ready``, and close it on exit.

    Errors raised by ``client.start`` before READY (bad token, disallowed intents...) propagate.
    """
    attach(client, fake)
    task = asyncio.create_task(client.start(token or fake.token), name="fake-discord-client")
    try:
        deadline = asyncio.get_running_loop().time() + ready_timeout
        while not client.is_ready():
            if task.done():
                task.result()
                raise RuntimeError("discord client stopped before becoming ready")
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("discord client did not become ready against the fake")
            await asyncio.sleep(0.01)
        yield client
    finally:
        await client.close()
        with contextlib.suppress(asyncio.CancelledError, discord.ConnectionClosed):
            await asyncio.wait_for(task, 10)
