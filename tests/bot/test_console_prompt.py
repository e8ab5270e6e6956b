"""The terminal game's prompt edits lines as any prompt does: arrows move in it, ↑ recalls earlier lines.

Before (issue 25, "The operator's first hour"): the game read `sys.stdin.readline()`, so ↑ typed "^[[A"
into the move and ← could not fix a typo. Now Python's readline edits the line when standard input and
output are a terminal; piped input (.ci/run pipes a whole game into `make play`) is read as before.
"""

from __future__ import annotations

import builtins
import io
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from adapters.console.prompt import LineReader, line_editing

ROOT = Path(__file__).resolve().parents[2]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def clean_history() -> Iterator[None]:
    readline = pytest.importorskip("readline")
    readline.clear_history()
    yield
    readline.clear_history()


def test_piped_input_is_read_plainly_to_its_end() -> None:
    out = io.StringIO()
    reader = LineReader(io.StringIO("help\npass\n"), out)
    assert reader.readline is None
    assert [reader.read("> "), reader.read("> "), reader.read("> ")] == ["help\n", "pass\n", None]
    assert out.getvalue() == "> > > \n"
    assert reader.history() == []


def test_a_terminal_gets_readline() -> None:
    assert line_editing(FakeTerminal(), FakeTerminal()) is not None
    assert line_editing(FakeTerminal(), io.StringIO()) is None  # output to a file: no editing
    assert line_editing(io.StringIO(), FakeTerminal()) is None  # piped moves: no editing


def test_history_keeps_each_move_once_in_order(clean_history: None, monkeypatch: pytest.MonkeyPatch) -> None:
    typed = iter(["help", "", "pass", "pass", "  bid 120 ", "help"])
    prompts: list[str] = []

    def fake_input(prompt: str = "") -> str:
        prompts.append(prompt)
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr(builtins, "input", fake_input)
    out = FakeTerminal()
    reader = LineReader(FakeTerminal(), out)
    assert reader.readline is not None
    lines = [reader.read("> ") for _ in range(7)]
    assert lines == ["help\n", "\n", "pass\n", "pass\n", "  bid 120 \n", "help\n", None]
    assert prompts == ["> "] * 7  # input() writes the prompt itself, so readline knows where the line starts
    assert reader.history() == ["help", "pass", "bid 120", "help"]
    assert out.getvalue() == "\n"  # only the new line after Ctrl-D


# --- a real terminal -------------------------------------------------------------------------------------

TMUX = shutil.which("tmux")


class Tmux:
    """A game in a tmux pane of its own tmux server (-L), typed into with send-keys."""

    def __init__(self) -> None:
        self.socket = f"thousand-test-{uuid.uuid4().hex[:8]}"

    def run(self, *args: str) -> str:
        assert TMUX is not None
        done = subprocess.run(
            [TMUX, "-L", self.socket, *args], capture_output=True, text=True, timeout=20, check=True
        )
        return done.stdout

    def screen(self) -> list[str]:
        return self.run("capture-pane", "-p", "-t", "game").rstrip("\n").splitlines()

    def wait(self, check: str, seconds: float = 60) -> list[str]:
        deadline = time.monotonic() + seconds
        while True:
            lines = self.screen()
            if any(check in line for line in lines):
                return lines
            if time.monotonic() > deadline:
                raise AssertionError(f"{check!r} not on the screen:\n" + "\n".join(lines))
            time.sleep(0.2)

    def prompt_line(self) -> str:
        lines = [line for line in self.screen() if line.strip()]
        return lines[-1]


@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (apt-get install tmux)")
def test_up_arrow_recalls_the_previous_line_in_a_real_terminal() -> None:
    tmux = Tmux()
    game = f"cd {ROOT} && {sys.executable} -c 'from adapters.cli import main; main()' play --seed 1"
    tmux.run("new-session", "-d", "-s", "game", "-x", "120", "-y", "50", f"{game}; sleep 60")
    try:
        tmux.wait("Type help for help")
        tmux.run("send-keys", "-t", "game", "help", "Enter")
        tmux.wait("> help")
        time.sleep(0.5)
        tmux.run("send-keys", "-t", "game", "Up")
        deadline = time.monotonic() + 10
        while tmux.prompt_line() != "> help" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert tmux.prompt_line() == "> help"  # not "> ^[[A"
        # ← and Backspace edit inside the line: "hepl", ←, Backspace, →, "p" is "help".
        tmux.run("send-keys", "-t", "game", "C-u", "hepl", "Left", "BSpace", "Right", "p")
        deadline = time.monotonic() + 10
        while tmux.prompt_line() != "> help" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert tmux.prompt_line() == "> help"
        tmux.run("send-keys", "-t", "game", "C-u", "quit", "Enter")
        tmux.wait("The game is over")
    finally:
        subprocess.run([TMUX or "tmux", "-L", tmux.socket, "kill-server"], capture_output=True, check=False)
