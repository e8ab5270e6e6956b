"""Running the web table: inside a bot process (`start_web`) or alone (`thousand web`).

Inside `thousand telegram` the web table listens on WEB_LISTEN next to the webhook listener, and the
messages a move from the page causes (the group's table message, the others' hands) go out through the
Telegram adapter like any update's. `thousand web` alone serves pages for a Telegram bot whose updates
another process takes: it sends those messages with the bot token (no updates are read here) through the
sender the entry point hands it (`adapters.cli`: the Telegram adapter stands above the web table, whose
page it serves itself, so this module does not import it), and runs public tables for its web players
(Play now: the queue, the matcher, the heartbeat of `web`).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

from aiohttp import web

from adapters.web.app import WebOptions, WebTable, make_runner
from adapters.web.table import PlayNow
from bot.model import Command, Message
from bot.ops.config import parse_listen
from bot.ops.runtime import Runtime, prepare
from bot.public.process import ProcessPublic
from bot.settings import Settings
from bot.weblinks import signer_for

__all__ = ["StartSender", "main", "options_of", "start_web"]

Deliver = Callable[[list[Message]], Awaitable[None]]
StartSender = Callable[[Runtime, str], Awaitable[Deliver]]
"""Starts a Telegram sender for the runtime with the bot token (`adapters.telegram.app.start_sender`)."""


def options_of(settings: Settings) -> WebOptions:
    token = settings.telegram_token.get_secret_value() if settings.telegram_token is not None else None
    return WebOptions(
        public_url=settings.public_url,
        telegram_token=token,
        max_age=settings.webapp_max_age,
        session_seconds=settings.web_session_seconds,
        link_seconds=settings.web_link_seconds,
        trusted_proxies=tuple(p.strip() for p in settings.web_trusted_proxies.split(",") if p.strip()),
    )


async def start_web(
    runtime: Runtime,
    deliver: Deliver | None,
    listen: str | None = None,
    *,
    public: ProcessPublic | None = None,
) -> WebTable:
    """Serve the web table on `listen` (WEB_LISTEN) in this process, stopped with the runtime.

    `public`: the process's public tables (`ProcessPublic`, started before): the page's Play now uses its
    queue, and it heartbeats `web` from now on so that the queue matches web players (whose pages this
    process serves). Without it the page offers no Play now."""
    settings = runtime.settings
    signer = signer_for(settings)
    if signer is None:
        raise ValueError("the web table needs WEB_SECRET or a bot token to sign its links")

    async def handle(command: Command) -> list[Message]:
        return await runtime.handle(command, kind="web")

    table = WebTable(runtime.service, signer, options_of(settings), deliver=deliver, handle=handle)
    if public is not None:
        table.playnow = PlayNow(public.queue, public.dispatch)
        await public.add_platform("web")
    host, port = parse_listen(listen or settings.web_listen)
    runner = make_runner(table, shutdown_timeout=2.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    runtime.shutdown.on_stop_intake("web table", runner.cleanup)
    return table


async def serve(settings: Settings, telegram: StartSender) -> int:
    # With Redis, what a table built or moved here says to people of other platforms is handed over to
    # their processes (bot.relay); with a bot token this process shows Telegram's messages itself.
    runtime = Runtime(settings, platform="web", relay="tg" if settings.telegram_token is not None else "web")
    deliver: Deliver | None = None
    if settings.telegram_token is not None:
        deliver = await telegram(runtime, settings.telegram_token.get_secret_value())
    await runtime.start(deliver, timers=False)

    async def nowhere(messages: list[Message]) -> None:
        del messages  # no platform to show them on: web pages read their tables themselves

    try:
        # Public tables: Play now on the page, the matcher, and this process's heartbeat of `web`.
        public = ProcessPublic(runtime, deliver or nowhere, "web")
        await public.start()
        runtime.shutdown.on_stop_intake("public tables", public.stop)
        await start_web(runtime, deliver, public=public)
    except (OSError, ValueError) as exc:
        print(f"thousand web: {exc}", file=sys.stderr)
        await runtime.stop("failed to start")
        return 2
    runtime.health.set_connected("web", True)
    print(f"thousand web: serving on http://{settings.web_listen}/", file=sys.stderr)
    report = await runtime.run_until_stopped()
    return 0 if not report.failed_hooks else 1


def main(env_file: str | None = ".env", *, telegram: StartSender) -> int:
    """The body of `thousand web`; returns the exit status. `telegram` starts the sender of Telegram's
    messages when TELEGRAM_TOKEN is set."""
    settings = prepare(None, env_file)
    if signer_for(settings) is None:
        print("thousand web: set WEB_SECRET (or TELEGRAM_TOKEN) to sign table links", file=sys.stderr)
        return 2
    return asyncio.run(serve(settings, telegram))
