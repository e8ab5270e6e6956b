"""One Telegram bot process: the PTB `Application`, the adapter and the process runtime, started and
stopped together.

    runtime = Runtime(settings, platform="telegram")
    bot = TelegramBot(runtime, token)                    # api_url= for a self-hosted Bot API server
    await bot.start()                                    # long polling; or webhook=Webhook(...)
    await runtime.run_until_stopped()                    # SIGTERM: stop intake, drain, flush

Every Bot API call goes through `SharedRateLimiter` (the budget in the store is shared by all processes);
updates of one chat are handled in order, different chats at once (`ChatOrderedProcessor`).

On SIGTERM the outbox delivers for up to `DELIVER_ON_STOP` seconds, then hands what still waits for a
budget over to the store, and a live process's `HandoverPoller` (`bot.relay.handover`) queues it in
its outbox (see `outbox`). The poller stops
with the intake, so a stopping process takes nothing it would have to hand over again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any, Final
from urllib.parse import urlsplit

from telegram.ext import Application
from telegram.request import BaseRequest

from adapters.telegram.adapter import ALLOWED_UPDATES, TelegramAdapter
from adapters.telegram.clock import Clock, SystemClock
from adapters.telegram.handover import HANDOVER_PLATFORM
from adapters.telegram.limits import PAID_BROADCAST_RATE, SendLimits
from adapters.telegram.outbox import StopReport
from adapters.telegram.processor import ChatOrderedProcessor
from adapters.telegram.ratelimit import SharedRateLimiter
from adapters.telegram.webapp import WebAppButtons
from bot.model import Message
from bot.ops.runtime import Runtime
from bot.relay.handover import POLL_SECONDS, HandoverPoller
from bot.storage import HandedOver

__all__ = ["DELIVER_ON_STOP", "TelegramBot", "Webhook", "start_sender"]

DELIVER_ON_STOP: Final = 5.0
"""On stop, seconds the outbox keeps delivering before it hands the rest over (less when the stop
sequence has less left: the hook must end within its own 10 s and the whole within `STOP_WITHIN`)."""
HANDOVER_MARGIN: Final = 4.0
"""Seconds of the stop sequence kept after the delivery: the workers give way, the hand-over is written,
the application shuts down."""


@dataclass(frozen=True, slots=True)
class Webhook:
    """Where Telegram posts updates (`url`, public) and where this process listens for them."""

    url: str
    host: str = "0.0.0.0"
    port: int = 8443
    secret: str | None = None
    max_connections: int = 40

    @property
    def path(self) -> str:
        return urlsplit(self.url).path.lstrip("/")


class TelegramBot:
    def __init__(
        self,
        runtime: Runtime,
        token: str,
        *,
        api_url: str | None = None,
        limits: SendLimits | None = None,
        clock: Clock | None = None,
        request: BaseRequest | None = None,
        updates_request: BaseRequest | None = None,
        concurrency: int = 64,
        refs_ttl: float = 365 * 24 * 3600,
    ) -> None:
        """`request`/`updates_request`: PTB transports (tests hand in the fake's in-process one)."""
        self.runtime = runtime
        self.clock: Clock = clock or SystemClock()
        paid = runtime.settings.telegram_paid_broadcast
        if paid:
            # Paid broadcasts lift the bot-wide 30/s to 1000/s (per chat and per group limits stay).
            limits = replace(limits or SendLimits(), overall=(PAID_BROADCAST_RATE, 1.0))
        self.limiter = SharedRateLimiter(
            runtime.store,
            token.split(":", 1)[0],
            limits=limits,
            clock=self.clock,
            metrics=runtime.metrics,
        )
        builder = (
            Application.builder()
            .token(token)
            .rate_limiter(self.limiter)
            .concurrent_updates(ChatOrderedProcessor(concurrency))
        )
        if api_url:
            root = api_url.rstrip("/")
            builder = builder.base_url(f"{root}/bot").base_file_url(f"{root}/file/bot")
        if request is not None:
            builder = builder.request(request)
        if updates_request is not None:
            builder = builder.get_updates_request(updates_request)
        self.application: Application[Any, Any, Any, Any, Any, Any] = builder.build()
        self.adapter = TelegramAdapter(
            runtime,
            runtime.store,
            clock=self.clock,
            metrics=runtime.metrics,
            health=runtime.health,
            refs_ttl=refs_ttl,
            web=WebAppButtons.from_settings(runtime.settings),
            link_secret=_link_secret(runtime),
            paid_broadcast=paid,
        )
        self.adapter.install(self.application)
        self.handover: HandoverPoller | None = None
        """Takes what stopping processes handed over (only with a store that outlives processes)."""
        self.stop_report: StopReport | None = None
        """What the outbox did with its queues at the stop."""
        self._started = False

    async def start(
        self,
        *,
        webhook: Webhook | None = None,
        poll_timeout: float = 10.0,
        signals: bool = True,
        timers: bool = True,
        handover_poll: float | None = None,
    ) -> None:
        """Connect (getMe), start the runtime (health, timers, signals), take updates (long polling, or
        the webhook listener and `setWebhook`), then set the command menu, report ready and take what
        stopping processes hand over (every `handover_poll` seconds, `bot.relay.handover.POLL_SECONDS` by
        default; only when the store outlives processes)."""
        app = self.application
        await app.initialize()
        await self.runtime.start(self.adapter.deliver, signals=signals, timers=timers)
        shutdown = self.runtime.shutdown
        shutdown.on_stop_intake("telegram updates", self._stop_intake)
        # Flush hooks run newest first: this one before the runtime's store and service are closed.
        shutdown.on_flush("telegram", self._flush)
        await app.start()
        updater = app.updater
        assert updater is not None
        if webhook is None:
            await updater.start_polling(
                poll_interval=0.0,
                timeout=int(poll_timeout),
                allowed_updates=list(ALLOWED_UPDATES),
                drop_pending_updates=False,
                error_callback=self.adapter.connection_lost,
            )
        else:
            await updater.start_webhook(
                listen=webhook.host,
                port=webhook.port,
                url_path=webhook.path,
                webhook_url=webhook.url,
                secret_token=webhook.secret,
                allowed_updates=list(ALLOWED_UPDATES),
                drop_pending_updates=False,
                max_connections=webhook.max_connections,
            )
        # Ready (for probes and the load balancer) once updates flow: polling runs or the webhook is set.
        await self.adapter.start()
        if self.runtime.store.keeps_after_exit:
            outbox = self.adapter.outbox

            async def take(handed: list[HandedOver]) -> int:
                return outbox.take_over(handed)

            interval = POLL_SECONDS if handover_poll is None else handover_poll
            self.handover = HandoverPoller(
                self.runtime.store, HANDOVER_PLATFORM, take, interval=interval, name="telegram-handover"
            )
            self.handover.start()
        self._started = True

    async def _stop_intake(self) -> None:
        if self.handover is not None:
            await self.handover.stop()
        updater = self.application.updater
        if updater is not None and updater.running:
            await updater.stop()

    async def _flush(self) -> None:
        app = self.application
        if app.running:
            await app.stop()
        shutdown = self.runtime.shutdown
        deliver_for = max(0.0, min(DELIVER_ON_STOP, shutdown.remaining() - HANDOVER_MARGIN))
        report = await self.adapter.outbox.stop(deliver_for)
        self.stop_report = report
        shutdown.undelivered(report.lost)
        await self.adapter.stop(timeout=0.1)  # the queues are empty: its tasks and health only
        await app.shutdown()

    async def stop(self, reason: str = "stop") -> None:
        """Run the process's stop sequence (as SIGTERM would)."""
        await self.runtime.stop(reason)


def _link_secret(runtime: Runtime) -> str | None:
    """LINK_SECRET, when the deployment sets one (else the adapter derives the key from the token)."""
    secret = runtime.settings.link_secret
    return secret.get_secret_value() if secret is not None else None


async def start_sender(runtime: Runtime, token: str) -> Callable[[list[Message]], Awaitable[None]]:
    """The bot as a sender alone, stopped with the runtime: `thousand web` with TELEGRAM_TOKEN shows the
    messages its pages' moves cause, while another process reads the updates (`adapters.web.main`)."""
    bot = TelegramBot(runtime, token)
    await bot.application.initialize()
    deliver = bot.adapter.deliver
    runtime.shutdown.on_flush("telegram sender", bot.application.shutdown)
    return deliver
