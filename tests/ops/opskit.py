"""Helpers for the ops tests: a scripted human who reads the stored table and answers with a random legal
move, typed as a person would, and the setup of a short game (target 200) against two computers."""

from __future__ import annotations

import random

from kit import typed as typed

from bot.snapshot import GameCache
from bot.storage import Store
from bot.table import TableDoc
from core.game import GameState

# A game that ends after a few deals: target 200 (the barrel threshold must stay below it).
SHORT_GAME = (
    "/new polish",
    "/set barrel_at 100",
    "/set target 200",
    "/add_ai easy",
    "/add_ai easy",
    "/start",
)


class Reader:
    """Reads a table the way the service stores it."""

    def __init__(self, store: Store, table_id: str) -> None:
        self.store = store
        self.table_id = table_id
        self.cache = GameCache()

    async def doc(self) -> tuple[int, TableDoc]:
        stored = await self.store.load(self.table_id)
        assert stored is not None
        return stored.version, TableDoc.model_validate_json(stored.document)

    async def state(self) -> GameState | None:
        _, doc = await self.doc()
        if doc.game is None:
            return None
        return self.cache.state(doc.serial, doc.game.spec, doc.game.actions)

    async def next_move(self, rng: random.Random) -> str | None:
        """A random legal move of the human to act, typed; None when the game is over."""
        _, doc = await self.doc()
        if doc.status != "game":
            return None
        state = await self.state()
        assert state is not None and state.to_act is not None and state.to_act >= 0
        seat = state.to_act
        options = [typed(a, state, seat) for a in state.legal_actions(seat)]
        return options[rng.randrange(len(options))]
