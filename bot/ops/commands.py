"""The bodies of `thousand check-config` and `thousand doctor` (adapters.cli holds only their signatures).

Both print to the given streams and return the exit status, so tests call them without a subprocess.
Exit status: 0 fine, 1 (doctor) something would lose games, 2 the settings or the connection are wrong.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

from bot.ops.config import (
    ConfigError,
    Platform,
    describe,
    every_problem,
    gather_settings,
    load_settings,
    unknown_variables,
)
from bot.ops.doctor import run_doctor

__all__ = ["check_config", "doctor"]

PLATFORMS: tuple[Platform, ...] = ("telegram", "discord")


def _platform(name: str | None, err: TextIO) -> tuple[bool, Platform | None]:
    if name is None:
        return True, None
    if name not in PLATFORMS:
        print(f"thousand: --platform must be one of {', '.join(PLATFORMS)} (got {name!r})", file=err)
        return False, None
    return True, name


def check_config(
    platform: str | None,
    env_file: Path | None,
    *,
    strict: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
    env_checks: Callable[[Mapping[str, str]], list[str]] | None = None,
) -> int:
    """Validate the settings as `platform`'s process would at start; print them (secrets hidden).

    `env_checks`: an adapter's check of its own variables that are no settings (the CLI passes
    Telegram's `TELEGRAM_LIMITS` and `TELEGRAM_API_URL`), one line per problem.

    Variables that look like settings but are none (REDIS_ULR) are warned about first, since they often
    explain the errors that follow; with `strict` they make the check fail too."""
    out, err = out or sys.stdout, err or sys.stderr
    ok, chosen = _platform(platform, err)
    if not ok:
        return 2
    unknown = unknown_variables(os.environ, env_file)
    for line in unknown:
        print(f"thousand: {'' if strict else 'warning: '}{line}", file=err)
    # Every problem in one run, each once: values that cannot be read (each replaced by its default
    # so the rest is still checked), the checks of the rest, then the adapter's own variables.
    try:
        loaded = gather_settings(env_file)
    except ConfigError as exc:
        for line in exc.problems:
            print(f"thousand: {line}", file=err)
        return 2
    problems = every_problem(loaded, chosen)
    if env_checks is not None:
        problems += [line for line in env_checks(os.environ) if line not in problems]
    settings = loaded.settings
    if problems:
        for line in problems:
            print(f"thousand: {line}", file=err)
        return 2
    if strict and unknown:
        print(f"thousand: --strict: {len(unknown)} unknown variable(s) above", file=err)
        return 2
    for line in describe(settings):
        print(line, file=out)
    store = "redis" if settings.redis_url else "memory (games are lost when the process stops)"
    ignored = f"; {len(unknown)} unknown variable(s) ignored (see above)" if unknown else ""
    print(f"config ok for {chosen or 'any front end'}; store: {store}{ignored}", file=out)
    return 0


def doctor(
    url: str | None,
    env_file: Path | None,
    *,
    as_json: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Check the configured Redis (or `url`) for what would lose games."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        settings = load_settings(env_file)
    except ConfigError as exc:
        for line in exc.problems:
            print(f"thousand: {line}", file=err)
        return 2
    target = url or settings.redis_url
    if target is None:
        print(
            "thousand doctor: REDIS_URL is not set: the bot would keep games in memory and lose every one "
            "of them when the process stops",
            file=err,
        )
        return 1
    report = run_doctor(target, prefix=settings.redis_prefix, cluster=settings.redis_cluster)
    print(report.to_json() if as_json else report.to_text(), file=out)
    return report.exit_code
