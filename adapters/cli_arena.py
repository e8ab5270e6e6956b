"""``thousand arena``: the arena's command line (the measurement is ``core.ai.arena``).

Also ``python -m adapters.cli_arena`` (``make arena`` runs it with the compiled engine).
"""

from __future__ import annotations

import json
import os
import sys

import typer

from core.ai import LEVELS
from core.ai.arena import ArenaSpec, format_text, run_arena
from core.rules import RuleError, preset

__all__ = ["arena", "main"]


def arena(
    candidate: str = typer.Option(..., "--candidate", help="Level measured: random, easy, medium or hard."),
    baseline: str = typer.Option(..., "--baseline", help="Level in the other seats."),
    preset_name: str = typer.Option("polish", "--preset", help="Rule preset: polish, estonian or russian."),
    players: int = typer.Option(3, "--players", help="Players at the table (2, 3 or 4)."),
    deals: int = typer.Option(200, "--deals", help="Deals to play (each with the candidate in every seat)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the games; the same seed gives the same figures."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON object instead of text."),
    workers: int = typer.Option(
        0, "--workers", help="Processes playing games (0: the number of CPUs, at most 2)."
    ),
    candidate_budget: float | None = typer.Option(
        None, help="Seconds per candidate decision (default: level's)."
    ),
    baseline_budget: float | None = typer.Option(
        None, help="Seconds per baseline decision (default: level's)."
    ),
) -> None:
    """Duplicate-deal match of a computer level against another: points per deal, win share, timings."""
    for level in (candidate, baseline):
        if level not in LEVELS:
            print(f"thousand arena: unknown level {level!r} (known: {', '.join(LEVELS)})", file=sys.stderr)
            raise typer.Exit(2)
    try:
        preset(preset_name).check_players(players)
    except RuleError as exc:
        print(f"thousand arena: {exc}", file=sys.stderr)
        raise typer.Exit(2) from None
    if deals < 1:
        print("thousand arena: --deals must be at least 1", file=sys.stderr)
        raise typer.Exit(2)
    if workers <= 0:
        workers = min(2, os.cpu_count() or 1)
    spec = ArenaSpec(candidate, baseline, preset_name, players, seed, candidate_budget, baseline_budget)
    if sys.stderr.isatty():
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        with Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            transient=True,
        ) as bar:
            task = bar.add_task(f"{candidate} vs {baseline}", total=deals)

            def advance(done: int, total: int) -> None:
                bar.update(task, completed=done)

            report = run_arena(spec, deals, workers=workers, progress=advance)
    else:
        report = run_arena(spec, deals, workers=workers)
    if json_output:
        print(json.dumps(report))
    else:
        print(format_text(report))


def main() -> None:
    """Stand-alone entry point (``python -m adapters.cli_arena``); ``thousand arena`` is the same command."""
    app = typer.Typer(add_completion=False)
    app.command()(arena)
    app()


if __name__ == "__main__":
    main()
