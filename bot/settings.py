"""Configuration of a bot process, from the environment (and an optional `.env` file).

One model for every front end, so that the Telegram and Discord processes and the terminal game read
the same names. Values that a chat may change (preset, language, turn time, computer level) are only the
defaults for chats that never set them; a chat's own choices live with its tables.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from bot.i18n import LANGUAGES
from core.rules import PRESETS

AI_LEVELS = ("easy", "medium", "hard")
"""Computer levels a chat may choose (the names of `core.ai.LEVELS`)."""


class Settings(BaseSettings):
    """Process settings. Environment variables use the field names in upper case, no prefix."""

    # env_ignore_empty: `DISCORD_TOKEN=` (as deploy/.env.example leaves the bot not run) means unset, not
    # an empty token that stops the Telegram process sharing the file.
    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", env_ignore_empty=True
    )

    # Connections
    redis_url: str | None = Field(None, description="Redis URL; without it the memory store is used.")
    redis_prefix: str = Field("thousand", description="Key prefix separating deployments in one Redis.")
    telegram_token: SecretStr | None = None
    discord_token: SecretStr | None = None

    # Defaults for chats that never changed them
    default_language: str = "en"
    default_preset: str = "polish"
    turn_seconds: int = Field(90, ge=0, description="Time for a human's turn; 0 switches timers off.")
    warn_seconds: int = Field(30, ge=0, description="A private warning this long before the deadline.")
    default_ai_level: str = "medium"
    missed_turns_to_away: int = Field(2, ge=1, description="Missed turns in a row before a computer sits in.")

    # Lifetimes of stored tables (seconds)
    lobby_ttl: float = Field(3600, gt=0)
    game_ttl: float = Field(7 * 24 * 3600, gt=0, description="A game lives this long after its last action.")
    finished_ttl: float = Field(24 * 3600, gt=0)
    lobby_idle_seconds: float = Field(15 * 60, gt=0, description="An idle lobby closes after this.")
    settings_ttl: float = Field(365 * 24 * 3600, gt=0, description="Chat settings and user preferences.")
    stats_ttl: float = Field(
        365 * 24 * 3600, gt=0, description="Statistics and ratings are kept this long after the last game."
    )
    rating_board_max: int = Field(
        100_000, ge=1, description="Members kept per rating board; past it the least recently rated go."
    )

    # Service behaviour
    table_updates: str = Field(
        "compact",
        description="compact: the group's table message changes at tricks and phases; every_action: always.",
    )
    table_trick_seconds: float = Field(
        10.0,
        ge=0,
        description="compact: a card also redraws the table when it was last drawn this long ago (0: never).",
    )
    cas_retries: int = Field(8, ge=1, description="Compare-and-set attempts before a command gives up.")
    ai_workers: int = Field(2, ge=0, description="Processes for medium/hard computer players (0: threads).")
    ai_budget_seconds: float | None = Field(
        None, gt=0, description="Thinking time per hard decision (None: AI's)."
    )
    ai_hard_stop: bool = Field(
        True,
        description="Stop a decision that runs far past its budget on the wall clock (off: the same "
        "decision on any machine, however busy; tests that replay a run turn it off).",
    )
    charts: bool = Field(True, description="Attach a score-progress PNG at the end of a game.")
    tick_claim_limit: int = Field(50, ge=1)
    deadline_lease_seconds: float = Field(30.0, gt=0)

    # Flood control (bot.throttle; docs/OPERATIONS.md)
    command_limit: int = Field(
        12, ge=0, description="Commands one person may send in one chat per window (moves excepted); 0: off."
    )
    command_window: float = Field(60.0, gt=0, description="The window of command_limit, in seconds.")

    # Public tables (bot.matchmaking; docs/SERVICE.md "Public tables: queue and ladder")
    public_computers_after: float = Field(
        60.0, ge=0, description="Seconds in the queue before starting at once with computers is offered."
    )
    public_entry_seconds: float = Field(
        120.0, gt=0, description="A queue entry its process stopped renewing expires after this."
    )
    public_spread_max: float = Field(
        700.0, gt=0, description="The widest rating window the matcher opens for a long wait."
    )

    log_level: str = "INFO"

    # Operations (bot.ops; checked by `thousand check-config`)
    log_format: Literal["json", "console"] = Field("json", description="json for collectors; console.")
    metrics_host: str = Field(
        "127.0.0.1",
        description="Address of the /livez, /readyz and /metrics listener (0.0.0.0 inside a container).",
    )
    metrics_port: int = Field(9100, ge=0, le=65535, description="Port of that listener; 0: no listener.")
    drain_seconds: float = Field(20.0, ge=0, description="On SIGTERM, wait this long for updates in flight.")
    redis_cluster: bool = Field(False, description="REDIS_URL names a node of a Redis Cluster.")
    redis_deadline_shards: int = Field(
        12,
        ge=1,
        le=1024,
        description="Shards of the turn deadline index (spread over the cluster's masters); the same in "
        "every process of a deployment.",
    )
    redis_wait_replicas: int = Field(
        0,
        ge=0,
        description="Replicas that must acknowledge a move before it is answered (WAIT); 0: off. "
        "1 in production with replicas: an acknowledged move survives a failover.",
    )
    redis_wait_timeout_ms: int = Field(
        500, ge=0, description="How long a save waits for those replicas before saying it may have been lost."
    )
    deadline_sweep_seconds: float = Field(
        300.0, gt=0, description="How often the timer loop repairs the deadline index (and at start)."
    )

    # Telegram webhook mode (several processes behind a load balancer); long polling without a URL
    telegram_webhook_url: str | None = Field(None, description="Public https URL Telegram posts updates to.")
    telegram_webhook_listen: str = Field("0.0.0.0:8443", description="HOST:PORT the webhook server binds.")
    telegram_webhook_secret: SecretStr | None = Field(None, description="Telegram's secret_token header.")
    link_secret: SecretStr | None = Field(
        None,
        description="Signs Telegram deep links (t.me/<bot>?start=...); unset: derived from TELEGRAM_TOKEN.",
    )
    telegram_paid_broadcast: bool = Field(
        False,
        description="Send with allow_paid_broadcast: up to 1000 messages/s (not 30) for 0.1 Stars each.",
    )

    # The web table (adapters/web, docs/WEB.md)
    public_url: str | None = Field(
        None, description="Public base URL of the web table (https in production); links start with it."
    )
    telegram_webapp_url: str | None = Field(
        None, description="URL of the Telegram Mini App (https; usually PUBLIC_URL/): the hand's button."
    )
    telegram_webapp_name: str | None = Field(
        None, description="Short name of the Mini App (@BotFather /newapp): the group's t.me direct link."
    )
    web_secret: SecretStr | None = Field(
        None, description="Key signing web links and sessions (unset: derived from the bot token)."
    )
    web_listen: str = Field("127.0.0.1:8080", description="HOST:PORT `thousand web` listens on.")
    webapp_max_age: int = Field(86400, ge=60, description="Oldest Telegram initData accepted (seconds).")
    web_session_seconds: int = Field(12 * 3600, ge=60, description="Lifetime of a web table session.")
    web_link_seconds: int = Field(900, ge=60, description="Lifetime of a Discord or terminal table link.")
    web_trusted_proxies: str = Field(
        "", description="Proxies whose X-Forwarded-For is believed (addresses or networks, comma-separated)."
    )

    @field_validator("web_trusted_proxies")
    @classmethod
    def _proxies(cls, value: str) -> str:
        import ipaddress

        for spec in value.split(","):
            if spec.strip():
                ipaddress.ip_network(spec.strip(), strict=False)  # ValueError names the bad one
        return value

    # Discord sharding
    discord_shard_count: int | None = Field(None, ge=1, description="Total shards (unset: Discord's advice).")
    discord_shard_ids: str | None = Field(None, description="Shards this process runs: '0,1' or '0-3'.")

    @field_validator("default_language")
    @classmethod
    def _language(cls, value: str) -> str:
        if value not in LANGUAGES:
            raise ValueError(f"unsupported language {value!r} (supported: {', '.join(LANGUAGES)})")
        return value

    @field_validator("default_preset")
    @classmethod
    def _preset(cls, value: str) -> str:
        # Checked here, not when the first table opens: a typo would otherwise pass check-config and
        # every new table in a chat without its own preset would fail with "Unknown preset".
        if value not in PRESETS:
            raise ValueError(f"unknown preset {value!r} (known: {', '.join(PRESETS)})")
        return value

    @field_validator("default_ai_level")
    @classmethod
    def _level(cls, value: str) -> str:
        if value not in AI_LEVELS:
            raise ValueError(f"unknown computer level {value!r} (known: {', '.join(AI_LEVELS)})")
        return value

    @field_validator("table_updates")
    @classmethod
    def _updates(cls, value: str) -> str:
        if value not in ("compact", "every_action"):
            raise ValueError("table_updates is 'compact' or 'every_action'")
        return value
