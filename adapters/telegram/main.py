"""`thousand telegram`: the Telegram bot process.

Settings come from the environment (see `bot.settings`): `TELEGRAM_TOKEN`, `REDIS_URL` (without it the
memory store, with a loud warning: games die with the process), and for webhook mode
`TELEGRAM_WEBHOOK_URL`, `TELEGRAM_WEBHOOK_LISTEN`, `TELEGRAM_WEBHOOK_SECRET`, which the command line
options override. Two more are read here: `TELEGRAM_API_URL`, the root of a self-hosted Bot API server
(`http://127.0.0.1:8081`), and `TELEGRAM_LIMITS`, the send limits when Telegram granted others
(`chat=1/1,group=20/60,global=30/1`).

Long polling serves one process. Webhook mode serves any number behind a load balancer sharing one Redis:
each sets the same webhook URL; the store keeps the tables, message references and send budgets.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from urllib.parse import urlsplit

from adapters.telegram.app import TelegramBot, Webhook
from adapters.telegram.limits import SendLimits
from bot.ops.config import parse_listen
from bot.ops.runtime import Runtime, prepare
from bot.public.process import ProcessPublic
from bot.settings import Settings

__all__ = ["main", "run", "webhook_of"]

_SECRET = re.compile(r"[A-Za-z0-9_-]{1,256}")


def webhook_of(
    settings: Settings, url: str | None, listen: str | None, secret: str | None, *, self_hosted: bool
) -> Webhook | None:
    """The webhook the options and settings describe, or None for long polling; ValueError if wrong."""
    url = url or settings.telegram_webhook_url
    if not url:
        if listen or secret:
            raise ValueError("--listen and --secret need --webhook URL")
        return None
    parts = urlsplit(url)
    if not parts.hostname or parts.scheme not in ("https", "http"):
        raise ValueError(f"--webhook: not a URL: {url!r}")
    if parts.scheme != "https" and not self_hosted:
        raise ValueError("--webhook: Telegram only posts to https:// URLs")
    host, port = parse_listen(listen or settings.telegram_webhook_listen)
    if secret is None and settings.telegram_webhook_secret is not None:
        secret = settings.telegram_webhook_secret.get_secret_value()
    if not secret:
        raise ValueError("--secret (or TELEGRAM_WEBHOOK_SECRET) is required in webhook mode")
    if not _SECRET.fullmatch(secret):
        raise ValueError("--secret: 1-256 characters of A-Z, a-z, 0-9, _ and -")
    return Webhook(url, host, port, secret)


async def run(settings: Settings, webhook: Webhook | None, api_url: str | None, limits: SendLimits) -> int:
    token = settings.telegram_token
    assert token is not None
    # relay="tg": with Redis, a public table's messages for Discord people are handed over to Discord's
    # processes, and this process shows what they hand over to Telegram (bot.relay).
    runtime = Runtime(settings, platform="telegram", relay="tg")
    bot = TelegramBot(runtime, token.get_secret_value(), api_url=api_url, limits=limits)
    try:
        await bot.start(webhook=webhook)
        # Public tables: /play in the private chat, the matcher, the queue's status messages.
        public = ProcessPublic(runtime, bot.adapter.deliver, "tg")
        await public.start()
        runtime.shutdown.on_stop_intake("public tables", public.stop)
        if settings.public_url or settings.telegram_webapp_url:
            # The web table in this process too (WEB_LISTEN): its moves' messages go out through this bot;
            # its Play now queues on this process's public tables, which then heartbeat `web` too.
            from adapters.web.main import start_web

            await start_web(runtime, bot.adapter.deliver, public=public)
    except Exception:
        await runtime.stop("failed to start")
        raise
    report = await runtime.run_until_stopped()
    # 0, 1 (a stop hook failed) or 3 (queued messages lost: nothing could take them), see bot.ops.shutdown.
    return report.exit_code


def main(
    webhook_url: str | None = None,
    listen: str | None = None,
    secret: str | None = None,
    env_file: str | None = ".env",
) -> int:
    """The body of `thousand telegram`; returns the exit status."""
    settings = prepare("telegram", env_file)
    api_url = os.environ.get("TELEGRAM_API_URL") or None
    try:
        limits = SendLimits.parse(os.environ.get("TELEGRAM_LIMITS"))
    except ValueError as exc:
        print(f"thousand: TELEGRAM_LIMITS: {exc}", file=sys.stderr)
        return 2
    try:
        webhook = webhook_of(settings, webhook_url, listen, secret, self_hosted=api_url is not None)
    except ValueError as exc:
        print(f"thousand telegram: {exc}", file=sys.stderr)
        return 2
    if not settings.redis_url:
        print(
            "thousand telegram: WARNING: REDIS_URL is not set. Games live in this process's memory and are "
            "lost when it stops; run one process only.",
            file=sys.stderr,
        )
        if webhook is not None:
            print(
                "thousand telegram: WARNING: webhook mode with several processes needs Redis.",
                file=sys.stderr,
            )
    return asyncio.run(run(settings, webhook, api_url, limits))
