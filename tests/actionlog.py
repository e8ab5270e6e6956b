"""Reading a table's stored action log the way the tests count moves."""

from __future__ import annotations

from bot.snapshot import GameSpec, decode_action
from bot.table import TableDoc
from core.actions import Play

__all__ = ["played_for_them"]


def played_for_them(doc: TableDoc) -> int:
    """Stored actions nobody pressed or typed: a person's last card, which plays itself
    (`GameFlow.forced_card`); not when conceding was open too."""
    if doc.game is None:
        return 0
    state = GameSpec.from_json(doc.game.spec).start()
    count = 0
    for text in doc.game.actions:
        seat, action = decode_action(text)
        last = type(action) is Play and state.deal.hands[seat].bit_count() == 1
        count += last and len(state.legal_actions(seat)) == 1
        state.apply_action(seat, action)
    return count
