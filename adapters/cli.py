"""The ``thousand`` command: replay, play, bots and tools, each a subcommand.

The entry point stands above every layer (docs/ARCHITECTURE.md): it starts the adapters, which start the
transport-neutral application (`bot`) over the engine (`core`); nothing below imports it."""

from __future__ import annotations

import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from bot.extras import require
from core.record import RecordError, replay_text

if TYPE_CHECKING:
    from bot.model import Message
    from bot.ops.runtime import Runtime

app = typer.Typer(no_args_is_help=True, add_completion=False, help="thousand: the card game 1000.")


@app.callback()
def _root() -> None:
    """thousand: the card game 1000 for chats and terminals."""


def _need(extra: str, what: str) -> None:
    """Stop with a sentence naming the extra to install when `what` needs one that is missing.

    Every import of a bot or the web table happens inside its subcommand, after this check: the terminal
    game (`thousand play`) loads none of python-telegram-bot, discord.py, aiohttp or matplotlib, and runs
    on an installation without them (`make play`, `pip install thousand`)."""
    message = require(extra, what)
    if message is not None:
        print(f"thousand: {message}", file=sys.stderr)
        raise typer.Exit(2)


@app.command()
def replay(
    file: Path = typer.Argument(..., help="A game record (thousand-record/1 JSON)."),
    html: Path | None = typer.Option(
        None, "--html", help="Also write one self-contained page stepping through the game, hands open."
    ),
    lang: str = typer.Option("en", "--lang", help="Language of the page's labels (en pl ru uk et tr)."),
    review: bool = typer.Option(
        False, "--review", help="With --html: mark the costly cards (thousand review; seconds per deal)."
    ),
) -> None:
    """Replay a game record through the engine and print the outcome as JSON.

    Exit status 0 when every action was legal, 1 when one was not, 2 when the file is not a record
    (or the page cannot be written).
    """
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"thousand replay: cannot read {file}: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    try:
        report = replay_text(text)
    except RecordError as exc:
        print(f"thousand replay: {file}: not a game record: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    if html is not None:
        from adapters.web.replay_page import replay_html

        marks = None
        if review and report["ok"]:
            from bot.review_job import review_text_json

            def progress(done: int, total: int, d: int, s: int) -> None:
                print(f"thousand replay: reviewing deal {d}, seat {s} ({done + 1}/{total})", file=sys.stderr)

            marks = review_text_json(text, progress=progress)[1]
        try:
            html.write_text(replay_html(text, lang, marks), encoding="utf-8")
        except OSError as exc:
            print(f"thousand replay: cannot write {html}: {exc}", file=sys.stderr)
            raise typer.Exit(2) from None
    print(json.dumps(report, indent=1, ensure_ascii=False))
    raise typer.Exit(0 if report["ok"] else 1)


@app.command()
def review(
    file: Path = typer.Argument(..., help="A game record (thousand-record/1 JSON)."),
    seat: list[int] | None = typer.Option(
        None, "--seat", help="Review this seat (0-based; repeatable). Default: all."
    ),
    deal: list[int] | None = typer.Option(
        None, "--deal", help="Review this deal (1-based; repeatable). Default: all."
    ),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object per decision."),
    seed: int = typer.Option(0, help="Seed of the sampled deals (the same seed gives the same review)."),
) -> None:
    """Review each decision of a record's finished deals: the expected points of every option over the
    deals the player could not tell apart, each solved with open hands, and what the choice cost.

    Progress goes to stderr. Exit status 0, or 2 when the file is not a record.
    """
    from bot.review_job import review_text_json

    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"thousand review: cannot read {file}: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None

    def progress(done: int, total: int, d: int, s: int) -> None:
        print(f"thousand review: deal {d}, seat {s} ({done + 1}/{total})", file=sys.stderr, flush=True)

    try:
        reviews, objects = review_text_json(
            text, seat or None, deals=deal or None, seed=seed, progress=progress
        )
    except RecordError as exc:
        print(f"thousand review: {file}: not a game record: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    if json_output:
        print(json.dumps(objects, indent=1, ensure_ascii=False))
        return
    by_deal: dict[tuple[int, int], list[dict[str, object]]] = {}
    for o in objects:
        by_deal.setdefault((int(str(o["deal"])), int(str(o["seat"]))), []).append(o)
    for r in reviews:
        head = f"Deal {r.deal}, seat {r.seat}"
        if r.declarer == r.seat:
            made = {True: "makeable", False: "not makeable", None: "-"}[r.makeable]
            head += f": declarer, contract {r.contract} ({made} with open hands)"
        print(head)
        for o in by_deal.get((r.deal, r.seat), []):
            cost = float(str(o["cost"]))
            mark = "!" if cost >= 10 else " "
            where = f"trick {o['trick']}" if o["trick"] is not None else str(o["phase"])
            line = f" {mark} step {o['step']:>2} {where:<9} {o['chosen']:<16} cost {cost:6.2f}"
            if o["best"] != o["chosen"]:
                line += f"  best {o['best']}"
            if o["contract_lost"]:
                line += "  (decided the contract)"
            print(line)


@app.command("check-config")
def check_config(
    platform: str | None = typer.Option(None, help="telegram or discord: also require what that bot needs."),
    env_file: Path = typer.Option(Path(".env"), help="Read this file too, if it exists."),
    strict: bool = typer.Option(
        False, "--strict", help="Also fail on variables that look like settings but are none (REDIS_ULR)."
    ),
) -> None:
    """Validate the settings (environment and .env) without starting anything. Secrets are never shown.

    Exit status 0 when a process could start, 2 when a value is missing or malformed (one line each), or
    with --strict when a variable looks like a setting but is none.
    """
    from adapters.telegram.limits import env_problems
    from bot.ops.commands import check_config as run

    raise typer.Exit(run(platform, env_file, strict=strict, env_checks=env_problems))


@app.command()
def doctor(
    url: str | None = typer.Option(None, help="Redis URL to check instead of REDIS_URL."),
    env_file: Path = typer.Option(Path(".env"), help="Read this file too, if it exists."),
    json_output: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
) -> None:
    """Check Redis for what would lose games: persistence, eviction, memory, version, cluster keys.

    Exit status 0 when nothing would (warnings allowed), 1 when something would, 2 when Redis is unreachable.
    """
    from bot.ops.commands import doctor as run

    raise typer.Exit(run(url, env_file, as_json=json_output))


@app.command()
def play(
    preset: str = typer.Option("polish", help="Rules: polish, estonian or russian."),
    players: int = typer.Option(3, min=2, max=4, help="Seats at the table, you included (2 to 4)."),
    level: str = typer.Option("medium", help="Computer players: easy, medium or hard."),
    lang: str = typer.Option("en", help="Language: en, pl, ru, uk, et or tr."),
    seed: int | None = typer.Option(None, help="Seed for the deals (the same seed gives the same cards)."),
    name: str | None = typer.Option(None, help="Your name at the table (default: 'You' in your language)."),
    chart: Path | None = typer.Option(None, help="Save the score chart (PNG) here at the end."),
    web: bool = typer.Option(False, "--web", help="Also show the table in a browser (127.0.0.1 only)."),
    port: int = typer.Option(0, min=0, max=65535, help="With --web: the port (default: any free one)."),
) -> None:
    """Play 1000 in the terminal against computer players (with --web, in a browser too)."""
    from adapters.console.app import GameOptions, run
    from bot.i18n import LANGUAGES
    from bot.settings import AI_LEVELS
    from core.rules import PRESETS

    problems = []
    if preset not in PRESETS:
        problems.append(f"--preset: choose one of {', '.join(PRESETS)}")
    elif players not in PRESETS[preset].player_counts:
        counts = ", ".join(map(str, PRESETS[preset].player_counts))
        problems.append(f"--players: {preset} is played by {counts} players")
    if level not in AI_LEVELS:
        problems.append(f"--level: choose one of {', '.join(AI_LEVELS)}")
    if lang not in LANGUAGES:
        problems.append(f"--lang: choose one of {', '.join(LANGUAGES)}")
    if problems:
        for line in problems:
            print(f"thousand play: {line}", file=sys.stderr)
        raise typer.Exit(2)
    if web:
        _need("web", "thousand play --web")
    if chart is not None:
        _need("charts", "thousand play --chart")
    options = GameOptions(
        preset=preset, players=players, level=level, lang=lang, seed=seed, name=name, chart=chart
    )
    if web:
        from adapters.web.terminal import run_web

        raise typer.Exit(run_web(options, port))
    raise typer.Exit(run(options))


@app.command()
def telegram(
    webhook: str | None = typer.Option(None, help="Webhook mode: the public URL Telegram posts updates to."),
    listen: str | None = typer.Option(
        None, help="Webhook mode: HOST:PORT to listen on (default 0.0.0.0:8443)."
    ),
    secret: str | None = typer.Option(None, help="Webhook mode: the secret token Telegram sends back."),
    env_file: Path = typer.Option(Path(".env"), help="Read this file too, if it exists."),
) -> None:
    """Run the Telegram bot (TELEGRAM_TOKEN; REDIS_URL, else games live in memory; TELEGRAM_API_URL for a
    self-hosted Bot API server). Long polling, or a webhook with --webhook URL --listen HOST:PORT --secret.
    """
    _need("telegram", "thousand telegram")
    from adapters.telegram.main import main as run

    raise typer.Exit(run(webhook, listen, secret, str(env_file)))


@app.command()
def web(
    env_file: Path = typer.Option(Path(".env"), help="Read this file too, if it exists."),
) -> None:
    """Serve the web table (WEB_LISTEN; PUBLIC_URL, TELEGRAM_WEBAPP_URL; REDIS_URL shared with the bots).
    With TELEGRAM_TOKEN, the messages moves cause are sent to Telegram from here. See docs/WEB.md.
    """
    _need("web", "thousand web")
    from adapters.web.main import main as run

    raise typer.Exit(run(str(env_file), telegram=_telegram_sender))


async def _telegram_sender(runtime: Runtime, token: str) -> Callable[[list[Message]], Awaitable[None]]:
    """`thousand web`'s sender of Telegram's messages (with TELEGRAM_TOKEN only: python-telegram-bot is
    imported then, as before the web table and the Telegram adapter were told apart)."""
    from adapters.telegram.app import start_sender

    return await start_sender(runtime, token)


@app.command()
def discord(
    shards: int | None = typer.Option(
        None,
        "--shards",
        min=1,
        help="Total shards of the bot (default DISCORD_SHARD_COUNT, else Discord's advice).",
    ),
    shard_ids: str | None = typer.Option(
        None,
        "--shard-ids",
        help="Shards this process runs: '0,1' or '0-3' (default DISCORD_SHARD_IDS, else all).",
    ),
    sync: bool = typer.Option(
        False, "--sync", help="Register the /thousand commands with Discord, then exit."
    ),
    sync_guild: int | None = typer.Option(
        None,
        "--sync-guild",
        help="Register the commands in this guild only (instant; for testing), then exit.",
    ),
    members_intent: bool = typer.Option(
        False,
        "--members-intent",
        help="Use the privileged Server Members intent (enable it in the Developer Portal): players who "
        "leave the server get a computer in their seat at once.",
    ),
    env_file: Path = typer.Option(Path(".env"), help="Read this file too, if it exists."),
) -> None:
    """Run the Discord bot (DISCORD_TOKEN; REDIS_URL, else games live in memory). Several processes on one
    Redis split a large bot with --shards N --shard-ids LIST. Commands are registered only with --sync.
    """
    _need("discord", "thousand discord")
    from adapters.discord.main import main as run

    raise typer.Exit(
        run(
            shards=shards,
            shard_ids=shard_ids,
            sync=sync,
            sync_guild=sync_guild,
            members_intent=members_intent,
            env_file=env_file,
        )
    )


def _register_arena() -> None:
    """``thousand arena`` lives in its own module (it pulls in the process pool and rich progress)."""
    from adapters.cli_arena import arena

    app.command("arena")(arena)


_register_arena()


def _register_reports() -> None:
    """``thousand reports`` (and ``reports show ID``): what players reported at public tables."""
    from bot.cli_reports import reports_app

    app.add_typer(reports_app, name="reports")


_register_reports()


def main() -> None:
    app()
