"""The person's line at the terminal, edited as at any prompt: arrows, Home/End, and ↑ for earlier lines.

Python's `readline` module gives `input()` that editing when standard input and output are a terminal.
Piped input (`.ci/run` pipes a whole game into `make play`, tests pipe moves) is read as before, a line
at a time with no editing: readline would gain nothing there, and would echo differently.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TextIO

__all__ = ["LineReader", "line_editing"]


def line_editing(stdin: TextIO, stdout: TextIO) -> ModuleType | None:
    """The readline module, set up for the game, when both ends are a terminal; else None."""
    if not (stdin.isatty() and stdout.isatty()):
        return None
    try:
        import readline
    except ImportError:  # a Python built without it (Windows): plain lines, as when piped
        return None
    # The history is kept by LineReader: blank lines and a line repeated at once are not added, so ↑
    # goes back through different moves.
    readline.set_auto_history(False)
    return readline


class LineReader:
    """Reads one line after a prompt; None at the end of input (Ctrl-D, or the pipe's end)."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.readline = line_editing(self.stdin, self.stdout)

    def read(self, prompt: str) -> str | None:
        if self.readline is None:
            self.stdout.write(prompt)
            self.stdout.flush()
            line = self.stdin.readline()
            if line == "":
                self.stdout.write("\n")  # Ctrl-D leaves the cursor after the prompt
                return None
            return line
        try:
            text = input(prompt)  # readline edits it: input() uses readline once it is imported
        except EOFError:
            self.stdout.write("\n")
            return None
        self.remember(text)
        return text + "\n"

    def remember(self, text: str) -> None:
        """Add a line to the history ↑ walks back through, unless blank or the same as the last one."""
        if self.readline is None:
            return
        text = text.strip()
        length = self.readline.get_current_history_length()
        if text and (length == 0 or self.readline.get_history_item(length) != text):
            self.readline.add_history(text)

    def history(self) -> list[str]:
        if self.readline is None:
            return []
        length = self.readline.get_current_history_length()
        return [self.readline.get_history_item(i) for i in range(1, length + 1)]
