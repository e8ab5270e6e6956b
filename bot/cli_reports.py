"""``thousand reports``: the reports players filed about strangers at public tables, for operators.

    thousand reports [--since 7d] [--json]     the reports, newest first (a table, or JSON lines)
    thousand reports show ID [--json]          one report with its game record

Reads them from Redis (REDIS_URL, REDIS_PREFIX, REDIS_CLUSTER as the bots use; `--url` instead): the
memory store keeps no reports beyond its process. The output holds platform keys (`tg:123`): it is for
operators, never for players. Exit status 0, 1 for an unknown report id, 2 when Redis is not configured,
unreachable, or `--since` cannot be read.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import typer

if TYPE_CHECKING:
    from bot.reports import RedisReports, Report
    from bot.storage import RedisStore

__all__ = ["parse_since", "reports_app"]

T = TypeVar("T")

reports_app = typer.Typer(
    no_args_is_help=False, add_completion=False, help="Reports filed at public tables (operators)."
)

_UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_since(text: str, now: float) -> float:
    """`30m`, `24h`, `7d`, `2w` before now, or a date (`2026-12-01`, UTC) or ISO time: POSIX seconds."""
    found = re.fullmatch(r"(\d+)([mhdw])", text.strip())
    if found:
        return now - int(found.group(1)) * _UNITS[found.group(2)]
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise typer.BadParameter("use 30m, 24h, 7d, 2w or a date like 2026-12-01") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def _when(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M")


async def _open(url: str | None, env_file: Path) -> tuple[RedisStore, RedisReports]:
    from bot.ops.config import ConfigError, load_settings
    from bot.reports import RedisReports
    from bot.storage import RedisStore

    try:
        settings = load_settings(env_file)
    except ConfigError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from None
    target = url or settings.redis_url
    if not target:
        typer.echo("reports live in Redis: set REDIS_URL (or pass --url)", err=True)
        raise typer.Exit(2)
    store = RedisStore.from_url(target, prefix=settings.redis_prefix, cluster=bool(settings.redis_cluster))
    return store, RedisReports(store)


@reports_app.callback(invoke_without_command=True)
def list_reports(
    ctx: typer.Context,
    since: str | None = typer.Option(None, "--since", help="Only newer: 30m, 24h, 7d, 2w or a date."),
    json_output: bool = typer.Option(False, "--json", help="One JSON object per line (records left out)."),
    url: str | None = typer.Option(None, help="Redis URL instead of REDIS_URL."),
    env_file: Path = typer.Option(Path(".env"), help="Read this file too, if it exists."),
) -> None:
    """List the reports, newest first."""
    if ctx.invoked_subcommand is not None:
        ctx.obj = (url, env_file)
        return
    start = parse_since(since, time.time()) if since else 0.0
    rows = asyncio.run(_list(url, env_file, start))
    if json_output:
        for r in rows:
            data = {k: v for k, v in json.loads(r.to_json()).items() if k != "record"}
            typer.echo(json.dumps(data, ensure_ascii=False))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(rows)} reports", show_lines=False)
    for column in ("id", "filed (UTC)", "reason", "reported", "by", "preset", "deals"):
        table.add_column(column)
    for r in rows:
        deals = r.record.get("deals", [])
        table.add_row(
            r.id,
            _when(r.created),
            r.reason,
            f"{r.reported_name} ({r.reported})",
            f"{r.reporter_name} ({r.reporter})",
            r.preset,
            str(len(deals) if isinstance(deals, list) else 0),
        )
    Console(width=160).print(table)


async def _read(url: str | None, env_file: Path, read: Callable[[RedisReports], Awaitable[T]]) -> T:
    """`read` over the reports in Redis, the store closed after; Redis away: exit status 2."""
    from bot.storage import StorageError

    store, reports = await _open(url, env_file)
    try:
        return await read(reports)
    except StorageError as exc:
        typer.echo(f"Redis: {exc}", err=True)
        raise typer.Exit(2) from None
    finally:
        await store.close()


async def _list(url: str | None, env_file: Path, since: float) -> list[Report]:
    return await _read(url, env_file, lambda reports: reports.list(since))


@reports_app.command("show")
def show_report(
    ctx: typer.Context,
    report_id: str = typer.Argument(..., metavar="ID", help="A report id from the list."),
    json_output: bool = typer.Option(False, "--json", help="The report and its record as one JSON object."),
) -> None:
    """One report with its game record (as /export gives it)."""
    url, env_file = ctx.obj if ctx.obj else (None, Path(".env"))
    report = asyncio.run(_get(url, env_file, report_id))
    if report is None:
        typer.echo(f"no report {report_id!r} (unknown, or older than its lifetime)", err=True)
        raise typer.Exit(1)
    if json_output:
        typer.echo(report.to_json())
        return
    typer.echo(f"Report {report.id}, filed {_when(report.created)} UTC")
    typer.echo(f"Reason:   {report.reason}")
    typer.echo(f"Reported: {report.reported_name} ({report.reported})")
    typer.echo(f"By:       {report.reporter_name} ({report.reporter})")
    typer.echo(f"Table:    {report.table_id} (serial {report.serial}, {report.preset})")
    typer.echo("Record:")
    typer.echo(json.dumps(report.record, ensure_ascii=False, indent=1))


async def _get(url: str | None, env_file: Path, report_id: str) -> Report | None:
    return await _read(url, env_file, lambda reports: reports.get(report_id))
