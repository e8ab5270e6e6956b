"""The web table of one process: what every handler of the page's API shares (`WebTable`), how it behaves
(`WebOptions`), and the public queue the page's Play now uses when the process offers it (`PlayNow`).

Built once per process (`adapters.web.main.start_web`, `adapters.web.terminal`) and handed to
`adapters.web.app.make_app`; the handlers reach it through `adapters.web.http.web_table`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from adapters.web.live import TableWatcher
from adapters.web.security import RateLimiter, trusted_networks
from bot.i18n import negotiate
from bot.matchmaking.base import MatchQueue
from bot.model import Command, Message, UserRef
from bot.presence import Presence
from bot.service import Service
from bot.weblinks import Claims, Signer, link_url

__all__ = ["Deliver", "Dispatch", "Handle", "PlayNow", "WebOptions", "WebTable"]

Deliver = Callable[[list[Message]], Awaitable[None]]
Handle = Callable[[Command], Awaitable[list[Message]]]
Dispatch = Callable[[Sequence[Message]], Awaitable[None]]


@dataclass(frozen=True)
class WebOptions:
    """How the web table behaves (from `bot.settings.Settings` in the processes, chosen in tests)."""

    public_url: str | None = None
    telegram_token: str | None = None
    max_age: float = 86400
    session_seconds: float = 12 * 3600
    link_seconds: float = 900
    ping_seconds: float = 15.0
    presence_seconds: float = 15.0
    poll_seconds: float = 0.05
    rate: float = 20.0
    """Requests a second of one signed-in user (bursts of `burst`), counted in each process."""
    burst: float = 40.0
    fail_rate: float = 2.0
    """Refused requests a second of one client address (bursts of `fail_burst`): forged, expired or
    missing credentials, foreign origins, unreadable bodies. Past it, 429."""
    fail_burst: float = 30.0
    trusted_proxies: tuple[str, ...] = ()
    """Reverse proxies (addresses, networks) whose X-Forwarded-For names the client (WEB_TRUSTED_PROXIES)."""
    ticket_seconds: float = 30.0
    """Lifetime of an event stream's single-use ticket."""
    idle_seconds: float = 20.0
    """A connection that sends no complete request header for this long is closed (idle keep-alive
    connections and half-sent headers alike)."""
    body_seconds: float = 10.0
    """Time a client has to send a request's body once its headers arrived (408 past it)."""
    guest_rate: float = 0.1
    """New guests (Play now) a second from one client address (bursts of `guest_burst`): a guest id is
    cheap to make, and each is a new newcomer on the ladder."""
    guest_burst: float = 5.0


@dataclass
class PlayNow:
    """What the web page's queue calls need of the process: its queue and how to deliver what a table
    built here says to people of other platforms (`ProcessPublic.dispatch`)."""

    queue: MatchQueue
    dispatch: Dispatch
    player_seconds: float = 30 * 24 * 3600
    """Lifetime of a guest's `player` token, renewed by each visit: the guest keeps their id (and so
    their public rating) while they come back within it."""


@dataclass
class WebTable:
    """The state the web handlers share (one per process)."""

    service: Service
    signer: Signer
    options: WebOptions = field(default_factory=WebOptions)
    deliver: Deliver | None = None
    handle: Handle | None = None
    clock: Callable[[], float] = time.time
    presence: Presence | None = None
    watcher: TableWatcher | None = None
    limiter: RateLimiter | None = None
    failures: RateLimiter | None = None
    playnow: PlayNow | None = None
    """Play now on the page (`adapters.web.playnow`): the process's public queue; None: not offered."""
    guests: RateLimiter | None = None
    streams: dict[str, int] = field(default_factory=dict, init=False)
    """Open event streams of each person's table (`platform:user:table`), at most
    `adapters.web.app.MAX_STREAMS_PER_SESSION` each."""
    proxy_networks: tuple[Any, ...] = field(default=(), init=False)
    """`options.trusted_proxies` read as networks (`adapters.web.security.trusted_networks`)."""

    def __post_init__(self) -> None:
        if self.presence is None:
            self.presence = self.service.presence or Presence(self.service.store)
        if self.watcher is None:
            self.watcher = TableWatcher(
                self.service.store,
                self.service.cache,
                interval=self.options.poll_seconds,
                ladder=lambda: self.service.ladder,
            )
        if self.limiter is None:
            self.limiter = RateLimiter(rate=self.options.rate, burst=self.options.burst)
        if self.failures is None:
            self.failures = RateLimiter(rate=self.options.fail_rate, burst=self.options.fail_burst)
        if self.guests is None:
            self.guests = RateLimiter(rate=self.options.guest_rate, burst=self.options.guest_burst)
        self.proxy_networks = trusted_networks(self.options.trusted_proxies)

    # --- links -----------------------------------------------------------------------------------

    def link(self, table_id: str, user: UserRef, lang: str | None = None, *, base: str | None = None) -> str:
        """A page address bound to `user` and `table_id`, valid `link_seconds` (Discord, terminal)."""
        expires = self.clock() + self.options.link_seconds
        language = lang or negotiate(user.language) or "en"
        return link_url(self.signer, base or self.options.public_url or "", table_id, user, language, expires)

    def ticket_for(self, claims: Claims) -> str:
        """A single-use ticket opening one event stream of the session `claims` (the session token itself
        never goes in a URL, where proxy logs would keep it)."""
        return self._signed(
            claims,
            "ticket",
            self.options.ticket_seconds,
            nonce=secrets.token_urlsafe(12),
            until=claims.expires,
        )

    def session_for(self, claims: Claims) -> str:
        return self._signed(claims, "session", self.options.session_seconds)

    def _signed(
        self, claims: Claims, kind: str, seconds: float, *, nonce: str = "", until: float = 0.0
    ) -> str:
        """Another token for the same person at the same table, of `kind`, valid `seconds` from now."""
        return self.signer.sign(
            Claims(
                kind=kind,
                table=claims.table,
                user=claims.user,
                name=claims.name,
                lang=claims.lang,
                platform=claims.platform,
                expires=self.clock() + seconds,
                nonce=nonce,
                until=until,
            )
        )
