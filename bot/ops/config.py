"""Settings checked before a process starts: one clear line per missing or malformed value.

`bot.settings.Settings` parses the environment; this module turns its validation errors into lines that
name the environment variable, adds the checks that depend on which front end starts (a Telegram
process needs TELEGRAM_TOKEN, a webhook needs its secret...), and describes the settings for
`thousand check-config` with every secret shown only as "set". No line ever quotes a secret's value.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Literal, NamedTuple, TextIO
from urllib.parse import urlsplit

from pydantic import SecretStr, ValidationError
from pydantic_settings import SettingsError

from bot.ops.doctor import safe_url
from bot.settings import Settings
from bot.storage.keys import KeyLayout

__all__ = [
    "ConfigError",
    "LoadedSettings",
    "Platform",
    "check_settings",
    "describe",
    "disagreements",
    "every_problem",
    "gather_settings",
    "load_settings",
    "parse_listen",
    "secrets_of",
    "shard_ids",
    "startup_settings",
    "unknown_variables",
]

Platform = Literal["telegram", "discord"]

# Fields whose values never appear in a message (REDIS_URL may carry a password: shown redacted).
_SECRET_FIELDS: Final = frozenset(
    {"telegram_token", "discord_token", "telegram_webhook_secret", "link_secret", "redis_url", "web_secret"}
)
_LINK_SECRET_MIN: Final = 32
"""LINK_SECRET signs Telegram deep links: long enough not to be guessed (`openssl rand -hex 32`)."""
_TELEGRAM_TOKEN: Final = re.compile(r"\d+:[A-Za-z0-9_-]{20,}")
_DISCORD_TOKEN: Final = re.compile(r"[^\s.]{10,}\.[^\s.]{4,}\.[^\s.]{10,}")
_WEBHOOK_SECRET: Final = re.compile(r"[A-Za-z0-9_-]{1,256}")
_LOG_LEVELS: Final = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")


class ConfigError(Exception):
    """The settings cannot start a process. `problems`: one line each, naming the variable."""

    def __init__(self, problems: Iterable[str]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(self.problems))


def _env_name(loc: tuple[int | str, ...]) -> str:
    return "_".join(str(part) for part in loc).upper() if loc else "SETTINGS"


def _shown(field: str, value: Any, message: str) -> str:
    """ " (got 'x')" after a message, unless it names a secret or already quotes the value itself
    ("unknown preset 'german' (known: ...)" says it once)."""
    if field in _SECRET_FIELDS:
        return ""
    text = repr(value)
    if text in message:
        return ""
    return f" (got {text[:60]}{'...' if len(text) > 60 else ''})"


class LoadedSettings(NamedTuple):
    """What `gather_settings` read: settings in which every value that could not be read is its default,
    a line for each such value, and the fields so replaced."""

    settings: Settings
    problems: list[str]
    replaced: frozenset[str]


def gather_settings(env_file: Path | str | None = ".env", **values: Any) -> LoadedSettings:
    """Settings from the environment and `env_file` (if it exists); `values` override both (tests).

    A value that cannot be read is reported (one line, naming the variable) and replaced by its default,
    so that the checks of everything else still run: one run of check-config names every wrong setting,
    not only the first kind (before: a bad DEFAULT_PRESET hid a malformed TELEGRAM_TOKEN until the next
    run). Lines are pydantic's messages without its multi-line report (which quotes inputs, secrets
    included)."""
    problems: list[str] = []
    replaced: dict[str, Any] = {}
    while True:
        try:
            settings = Settings(_env_file=env_file, **{**values, **replaced})
        except ValidationError as exc:
            fresh = {}
            for err in exc.errors(include_url=False):
                field = str(err["loc"][0]) if err["loc"] else ""
                message = err["msg"].removeprefix("Value error, ")
                line = f"{_env_name(err['loc'])}: {message}{_shown(field, err.get('input'), message)}"
                if line not in problems:
                    problems.append(line)
                if field in Settings.model_fields and field not in replaced:
                    fresh[field] = Settings.model_fields[field].get_default(call_default_factory=True)
        except SettingsError as exc:
            # pydantic-settings names the field: "error parsing value for field "x" from source ..."
            match = re.search(r'field "([^"]+)"', str(exc))
            field = match.group(1) if match else ""
            problems.append(f"{field.upper() or 'SETTINGS'}: cannot be parsed")
            fresh = {}
            if field in Settings.model_fields and field not in replaced:
                fresh[field] = Settings.model_fields[field].get_default(call_default_factory=True)
        else:
            return LoadedSettings(settings, problems, frozenset(replaced))
        if not fresh:  # an error no default can take away (none today): report what is known
            raise ConfigError(problems)
        replaced.update(fresh)


def load_settings(env_file: Path | str | None = ".env", **values: Any) -> Settings:
    """Settings from the environment and `env_file` (if it exists); `values` override both (tests).

    Raises `ConfigError` with one line per value that cannot be read (`gather_settings`)."""
    loaded = gather_settings(env_file, **values)
    if loaded.problems:
        raise ConfigError(loaded.problems)
    return loaded.settings


def every_problem(loaded: LoadedSettings, platform: Platform | None = None) -> list[str]:
    """Every problem of the settings as `platform`'s process would meet them, each once: the values
    that could not be read, then the checks of the rest. A check that involves a replaced value is left
    out (it would judge the default standing in for it, e.g. WARN_SECONDS against a TURN_SECONDS that
    was not a number)."""
    names = [re.compile(rf"\b{field.upper()}\b") for field in loaded.replaced]
    problems = list(loaded.problems)
    for line in check_settings(loaded.settings, platform):
        if line not in problems and not any(name.search(line) for name in names):
            problems.append(line)
    return problems


def parse_listen(value: str) -> tuple[str, int]:
    """'HOST:PORT' (or '[v6]:PORT') as a pair; ValueError with a short reason otherwise."""
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("expected HOST:PORT with a port from 1 to 65535")
    return host.strip("[]"), int(port)


def shard_ids(value: str | None, count: int | None) -> tuple[int, ...] | None:
    """DISCORD_SHARD_IDS ('0,1', '0-3', '2') as shard numbers, checked against the shard count."""
    if value is None or not value.strip():
        return None
    ids: list[int] = []
    for part in value.split(","):
        part = part.strip()
        lo, dash, hi = part.partition("-")
        if not lo.isdigit() or (dash and not hi.isdigit()):
            raise ValueError(f"{part!r} is not a shard number or range like 0-3")
        first, last = int(lo), int(hi) if dash else int(lo)
        if last < first:
            raise ValueError(f"range {part!r} runs backwards")
        ids.extend(range(first, last + 1))
    if len(set(ids)) != len(ids):
        raise ValueError("a shard is listed twice")
    if count is None:
        raise ValueError("DISCORD_SHARD_COUNT must be set when shard ids are")
    if max(ids) >= count:
        raise ValueError(f"shard {max(ids)} does not exist with DISCORD_SHARD_COUNT={count} (ids start at 0)")
    return tuple(ids)


def _secret(value: SecretStr | None) -> str | None:
    return None if value is None else value.get_secret_value()


def check_settings(settings: Settings, platform: Platform | None = None) -> list[str]:
    """Problems that would stop `platform`'s process (both platforms' optional values are checked
    whenever they are set). Empty when it may start."""
    problems: list[str] = []
    if settings.log_level.upper() not in _LOG_LEVELS:
        problems.append(f"LOG_LEVEL: must be one of {', '.join(_LOG_LEVELS)} (got {settings.log_level!r})")
    if settings.redis_url is not None:
        try:
            scheme = urlsplit(settings.redis_url).scheme
            if scheme not in ("redis", "rediss", "unix"):
                raise ValueError
        except ValueError:
            problems.append(
                f"REDIS_URL: must be redis://, rediss:// or unix:// (got {safe_url(settings.redis_url)})"
            )
    elif settings.redis_cluster:
        problems.append("REDIS_CLUSTER: set, but REDIS_URL is not")
    try:
        KeyLayout(settings.redis_prefix)
    except ValueError as exc:
        problems.append(f"REDIS_PREFIX: {exc}")

    telegram = _secret(settings.telegram_token)
    if telegram is not None and not _TELEGRAM_TOKEN.fullmatch(telegram):
        problems.append("TELEGRAM_TOKEN: not a bot token (digits, a colon, then the key from @BotFather)")
    elif telegram is None and platform == "telegram":
        problems.append("TELEGRAM_TOKEN: missing (the bot token from @BotFather)")
    if settings.telegram_webhook_url is not None:
        url = urlsplit(settings.telegram_webhook_url)
        if url.scheme != "https" or not url.hostname:
            problems.append(
                f"TELEGRAM_WEBHOOK_URL: must be an https:// URL (got {settings.telegram_webhook_url!r})"
            )
        secret = _secret(settings.telegram_webhook_secret)
        if secret is None:
            problems.append("TELEGRAM_WEBHOOK_SECRET: missing (required with TELEGRAM_WEBHOOK_URL)")
        elif not _WEBHOOK_SECRET.fullmatch(secret):
            problems.append("TELEGRAM_WEBHOOK_SECRET: 1-256 characters of A-Z, a-z, 0-9, _ and - only")
    # Checked even without a webhook URL: a malformed value would otherwise surface only on the day
    # webhook mode is switched on.
    try:
        parse_listen(settings.telegram_webhook_listen)
    except ValueError as exc:
        problems.append(f"TELEGRAM_WEBHOOK_LISTEN: {exc} (got {settings.telegram_webhook_listen!r})")

    problems.extend(_web_problems(settings))
    link = _secret(settings.link_secret)
    if link is not None and len(link) < _LINK_SECRET_MIN:
        # Unset is fine: the key is then derived from TELEGRAM_TOKEN (docs/TELEGRAM.md, "Deep links").
        problems.append(f"LINK_SECRET: at least {_LINK_SECRET_MIN} characters (e.g. openssl rand -hex 32)")

    discord = _secret(settings.discord_token)
    if discord is not None and not _DISCORD_TOKEN.fullmatch(discord):
        problems.append("DISCORD_TOKEN: not a bot token (three parts separated by dots)")
    elif discord is None and platform == "discord":
        problems.append("DISCORD_TOKEN: missing (the bot token from the Developer Portal)")
    try:
        shard_ids(settings.discord_shard_ids, settings.discord_shard_count)
    except ValueError as exc:
        problems.append(f"DISCORD_SHARD_IDS: {exc}")
    problems.extend(disagreements(settings))
    return problems


_WILDCARD_HOSTS: Final = frozenset({"", "0.0.0.0", "::", "*"})


def disagreements(settings: Settings) -> list[str]:
    """Values each valid alone that do not work together: one line each, naming both settings.

    Checked here (at start-up and by check-config) rather than in `Settings`, which tests build with
    deliberately odd values (a two-second turn) to drive the timers quickly."""
    s = settings
    problems: list[str] = []
    if s.turn_seconds and s.warn_seconds and s.warn_seconds >= s.turn_seconds:
        problems.append(
            f"WARN_SECONDS: must be less than TURN_SECONDS ({s.warn_seconds} >= {s.turn_seconds}): the "
            "warning before a turn's deadline would never be sent (WARN_SECONDS=0 switches it off)"
        )
    if s.turn_seconds and s.turn_seconds >= s.game_ttl:
        problems.append(
            f"GAME_TTL: must be longer than TURN_SECONDS ({s.game_ttl:g} <= {s.turn_seconds}): a game "
            "waiting for a turn would be deleted before the turn's deadline"
        )
    if s.lobby_idle_seconds >= s.lobby_ttl:
        problems.append(
            f"LOBBY_IDLE_SECONDS: must be less than LOBBY_TTL ({s.lobby_idle_seconds:g} >= {s.lobby_ttl:g}): "
            "an idle lobby would be deleted before it is closed with a message"
        )
    if s.ai_budget_seconds is not None and s.ai_budget_seconds >= s.deadline_lease_seconds:
        problems.append(
            f"AI_BUDGET_SECONDS: must be less than DEADLINE_LEASE_SECONDS ({s.ai_budget_seconds:g} >= "
            f"{s.deadline_lease_seconds:g}): a deadline whose computer player is still thinking would be "
            "claimed again by another process"
        )
    if s.redis_cluster and s.redis_url is not None and urlsplit(s.redis_url).scheme == "unix":
        problems.append("REDIS_CLUSTER: a Redis Cluster is reached over TCP, not a unix:// REDIS_URL")
    if s.telegram_webhook_url is not None and s.metrics_port:
        try:
            host, port = parse_listen(s.telegram_webhook_listen)
        except ValueError:
            pass  # reported above
        else:
            same_host = host == s.metrics_host or {host, s.metrics_host} & _WILDCARD_HOSTS
            if port == s.metrics_port and same_host:
                problems.append(
                    f"METRICS_PORT: the same port as TELEGRAM_WEBHOOK_LISTEN ({port}): the two listeners "
                    "cannot both bind it (METRICS_PORT=0 switches the metrics listener off)"
                )
    return problems


def _web_problems(settings: Settings) -> list[str]:
    """The web table's URLs: absolute, https for a Mini App (Telegram opens nothing else), no query."""
    problems = []
    for name in ("public_url", "telegram_webapp_url"):
        value = getattr(settings, name)
        if value is None:
            continue
        url = urlsplit(value)
        local = url.hostname in ("127.0.0.1", "localhost", "::1")
        if url.scheme not in ("https", "http") or not url.hostname or url.query or url.fragment:
            problems.append(f"{name.upper()}: must be an absolute URL without query (got {value!r})")
        elif url.scheme != "https" and (name == "telegram_webapp_url" or not local):
            problems.append(f"{name.upper()}: must be https:// (Telegram opens Mini Apps over https only)")
    if settings.telegram_webapp_name is not None and not re.fullmatch(
        r"[A-Za-z0-9_]{3,30}", settings.telegram_webapp_name
    ):
        problems.append("TELEGRAM_WEBAPP_NAME: the Mini App's short name (3-30 of A-Z, a-z, 0-9, _)")
    if settings.telegram_webapp_name is not None and settings.telegram_webapp_url is None:
        problems.append("TELEGRAM_WEBAPP_NAME: set, but TELEGRAM_WEBAPP_URL is not")
    secret = _secret(settings.web_secret)
    if secret is not None and len(secret) < 16:
        problems.append("WEB_SECRET: at least 16 characters")
    try:
        parse_listen(settings.web_listen)
    except ValueError as exc:
        problems.append(f"WEB_LISTEN: {exc} (got {settings.web_listen!r})")
    return problems


def secrets_of(settings: Settings) -> list[str]:
    """Every secret value in the settings, for the log redactor."""
    out = [
        s
        for s in (
            _secret(settings.telegram_token),
            _secret(settings.discord_token),
            _secret(settings.telegram_webhook_secret),
            _secret(settings.web_secret),
            _secret(settings.link_secret),
        )
        if s
    ]
    if settings.redis_url:
        password = urlsplit(settings.redis_url).password
        if password:
            out.append(password)
    return out


def describe(settings: Settings) -> list[str]:
    """`NAME=value` lines for check-config, secrets as `set`/`unset`, REDIS_URL without its password."""
    lines = []
    for name in sorted(Settings.model_fields):
        value = getattr(settings, name)
        if isinstance(value, SecretStr):
            shown = "set"
        elif name == "redis_url" and value is not None:
            shown = safe_url(value)
        elif value is None:
            shown = "unset"
        else:
            shown = str(value)
        lines.append(f"{name.upper()}={shown}")
    return lines


def startup_settings(
    platform: Platform | None, env_file: Path | str | None = ".env", *, warn: TextIO | None = None
) -> Settings:
    """Load and check for `platform`; raise `ConfigError` listing every problem. The adapters' mains call
    this first and exit on error (see `adapters.cli`). Variables that look like settings but are none are
    printed to `warn` (stderr) first, as warnings: logging is not set up yet, and a misspelled name
    often explains the error that follows ("TELEGRAM_TOKNE" before "TELEGRAM_TOKEN: missing")."""
    for line in unknown_variables(os.environ, env_file):
        print(f"thousand: warning: {line}", file=warn or sys.stderr)
    loaded = gather_settings(env_file)
    problems = every_problem(loaded, platform)
    if problems:
        raise ConfigError(problems)
    settings = loaded.settings
    logging.getLogger(__name__).debug("settings checked for %s", platform or "no platform")
    return settings


OTHER_VARIABLES: Final = frozenset({"TELEGRAM_API_URL", "TELEGRAM_LIMITS"})
"""Read by `thousand telegram` itself rather than through `Settings` (docs/OPERATIONS.md)."""
_OUR_PREFIX: Final = "THOUSAND_"
"""Not a prefix of any setting, but one an operator may well guess (THOUSAND_REDIS_URL)."""
_NOT_OURS: Final = re.compile(
    # Kubernetes service links (a Service `redis` gives REDIS_SERVICE_HOST, REDIS_PORT_6379_TCP_ADDR...)
    # and docker compose's own variables in the same .env file.
    r"[A-Z0-9_]+_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT|PORT_\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)"
    r"|COMPOSE_[A-Z0-9_]+"
    # The test suite's own knobs (tests/redis_server.py, tests/reliability; RELIABILITY.md).
    r"|THOUSAND_(FUZZ_[A-Z0-9_]+|REDIS_SERVER)"
)
_CLOSE: Final = 0.85
"""difflib ratio above which a name without one of our prefixes is still taken for a misspelling."""


def known_variables() -> frozenset[str]:
    """Every environment variable thousand reads (upper case; the settings are case-insensitive)."""
    return frozenset(name.upper() for name in Settings.model_fields) | OTHER_VARIABLES


def _env_file_names(env_file: Path | str | None) -> list[str]:
    if env_file is None or not Path(env_file).is_file():
        return []
    from dotenv import dotenv_values

    return [name for name in dotenv_values(env_file) if name]


def unknown_variables(environ: Mapping[str, str], env_file: Path | str | None = ".env") -> list[str]:
    """One line for each variable (in `environ` or `env_file`) that looks like a setting but is none:
    it starts like one of ours (REDIS_, TELEGRAM_, WEB_...), is spelled almost like one, or is one (or
    nearly) with THOUSAND_ in front.
    Such a value is silently ignored by `Settings`, so a misspelled REDIS_URL would run on the memory
    store with nothing but a note. Names only: a value (perhaps a token) is never quoted."""
    known = known_variables()
    prefixes = tuple({name.split("_")[0] + "_" for name in known})
    sources = [(name, "") for name in environ] + [
        (name, f" (in {env_file})") for name in _env_file_names(env_file)
    ]
    lines: dict[str, str] = {}
    for name, where in sources:
        upper = name.upper()
        if upper in known or upper in lines or _NOT_OURS.fullmatch(upper):
            continue
        bare = upper.removeprefix(_OUR_PREFIX)
        close = difflib.get_close_matches(bare, known, n=1, cutoff=0.7)
        if upper.startswith(_OUR_PREFIX):
            if not close:  # THOUSAND_ in front of a setting's name (or nearly); not any THOUSAND_ name
                continue
        elif not upper.startswith(prefixes) and not difflib.get_close_matches(
            upper, known, n=1, cutoff=_CLOSE
        ):
            continue
        if bare in known:
            hint = f"did you mean {bare}? (settings have no prefix; REDIS_PREFIX separates deployments)"
        elif close:
            hint = f"did you mean {close[0]}?"
        else:
            hint = "the settings are listed in docs/OPERATIONS.md"
        lines[upper] = f"{name}{where}: not a setting of thousand, ignored; {hint}"
    return [lines[name] for name in sorted(lines)]
