"""The terminal game, played to its end through its real input loop (a subprocess reading stdin)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

THOUSAND = Path(sys.executable).with_name("thousand")


def run_game(*args: str, lines: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(THOUSAND), "play", *args],
        input=lines,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": "/usr/bin:/bin", "COLUMNS": "100", "HOME": str(Path.home())},
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "finished"),
    [
        (("--seed", "5", "--level", "easy"), "Game over"),
        (("--seed", "9", "--level", "easy", "--preset", "russian", "--players", "4", "--lang", "pl"), "🏆"),
    ],
)
def test_a_whole_game_by_typing_numbers(args: tuple[str, ...], finished: str, tmp_path: Path) -> None:
    chart = tmp_path / "chart.png"
    result = run_game(*args, "--chart", str(chart), lines="1\n" * 4000)
    assert result.returncode == 0, result.stderr[-2000:]
    assert finished in result.stdout
    assert "🏆" in result.stdout
    assert chart.read_bytes().startswith(b"\x89PNG")


def test_cards_commands_and_quit() -> None:
    lines = "help\nrules\nscore\nhand\nbid 9999\nQS\nnonsense\n1\nquit\n"
    result = run_game("--seed", "1", "--level", "easy", lines=lines)
    assert result.returncode == 0, result.stderr[-2000:]
    out = result.stdout
    assert "bid 120 · pass" in out  # the command list (the terminal's words)
    assert "Rules: polish" in out
    assert "Score sheet" in out
    assert "ended the game" in out


def test_bad_options_are_refused() -> None:
    result = run_game("--preset", "russian", "--players", "2", lines="")
    assert result.returncode == 2 and "russian" in result.stderr
    result = run_game("--lang", "xx", lines="")
    assert result.returncode == 2
