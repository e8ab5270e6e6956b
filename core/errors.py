"""Typed refusals of the engine.

Every refusal carries a stable ``code`` (used by the bot to pick a translated message and by
``thousand replay`` in its error object) and an English message for logs and the replay output.
"""

from __future__ import annotations


class IllegalAction(Exception):
    """An action the rules do not allow now; the state it was tried on is unchanged."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class GameOver(IllegalAction):
    def __init__(self) -> None:
        super().__init__("game_over", "the game is over")
