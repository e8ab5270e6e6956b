"""The ``thousand`` command: replay, play, bots and tools, each a subcommand."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from core.record import RecordError, replay_text

app = typer.Typer(no_args_is_help=True, add_completion=False, help="thousand: the card game 1000.")


@app.callback()
def _root() -> None:
    """thousand: the card game 1000 for chats and terminals."""


@app.command()
def replay(file: Path = typer.Argument(..., help="A game record (thousand-record/1 JSON).")) -> None:
    """Replay a game record through the engine and print the outcome as JSON.

    Exit status 0 when every action was legal, 1 when one was not, 2 when the file is not a record.
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
    print(json.dumps(report, indent=1, ensure_ascii=False))
    raise typer.Exit(0 if report["ok"] else 1)


def main() -> None:
    app()
