"""Redis may lose its last second of writes (append-only file, fsync every second, the machine dies) or
come back from a lagging replica: a table then goes back a few versions, and the next moves are made again,
differently. Every process must then play from the table as stored, not from what it remembers.

Two services (two processes) share one store; one of them has seen a table at a later point than the one
the store rolled back to; the other makes different moves up to the same number of actions. The first
must see the game the store holds.
"""

from __future__ import annotations

import random

from fuzz_machine import typed_move
from relkit import PRIVATES, USERS, group, quiet_settings

from bot.commands import parse_text
from bot.handlers import Handlers
from bot.service import Service
from bot.snapshot import GameCache
from bot.storage import MemoryStore
from bot.table import TableDoc
from core.actions import Discard, Give
from core.game import GameState

START = 1_700_000_000.0


async def _doc(store: MemoryStore, table_id: str) -> TableDoc:
    stored = await store.load(table_id)
    assert stored is not None
    return TableDoc.model_validate_json(stored.document)


def _fresh(doc: TableDoc) -> GameState:
    assert doc.game is not None
    return GameCache(1).state(doc.serial, doc.game.spec, doc.game.actions)


async def _move(service: Service, store: MemoryStore, table_id: str, choice: int) -> None:
    """The player to act makes their `choice`-th legal move, typed in the group, or in their private chat
    for a give or discard (the group refuses secret moves)."""
    doc = await _doc(store, table_id)
    state = _fresh(doc)
    seat = state.to_act
    assert seat is not None and seat >= 0
    legal = list(state.legal_actions(seat))
    action = legal[choice % len(legal)]
    who = next(u for u in USERS if u.key == doc.seats[seat].user)
    chat = PRIVATES[USERS.index(who)] if isinstance(action, Give | Discard) else group(1)
    command = parse_text(typed_move(action, state, seat), chat, who)
    assert command is not None
    out = await service.handle(command)
    assert not [m for m in out if m.kind == "error"], [m.text for m in out]


async def test_a_process_plays_from_the_stored_game_after_redis_lost_writes() -> None:
    clock = [START]
    store = MemoryStore(clock=lambda: clock[0])
    a = Service(store, quiet_settings(), handlers=Handlers, clock=lambda: clock[0], rng=random.Random(1))
    b = Service(store, quiet_settings(), handlers=Handlers, clock=lambda: clock[0], rng=random.Random(2))
    g1, table_id = group(1), group(1).key
    for who, line in ((USERS[0], "/new"), (USERS[1], "/join"), (USERS[2], "/join"), (USERS[0], "/start")):
        command = parse_text(line, g1, who)
        assert command is not None
        await a.handle(command)
    # Bidding: everyone passes or bids; B handles the moves, so B's cache holds the table at n actions.
    for _ in range(3):
        await _move(b, store, table_id, 0)
    kept = store._tables[table_id]  # what Redis had written to disk before the last two moves
    saved = (kept.version, kept.document, list(kept.events))
    await _move(b, store, table_id, 0)
    await _move(b, store, table_id, 0)
    seen_by_b = len((await _doc(store, table_id)).game.actions)  # type: ignore[union-attr]
    # The machine dies; Redis comes back without the last two moves.
    kept.version, kept.document = saved[0], saved[1]
    kept.events.clear()
    kept.events.extend(saved[2])
    # A makes two different moves: the table has as many actions as B saw, but not the same ones.
    await _move(a, store, table_id, 1)
    await _move(a, store, table_id, 1)
    doc = await _doc(store, table_id)
    assert doc.game is not None and len(doc.game.actions) == seen_by_b
    truth = _fresh(doc)
    b_state = b.cache.state(doc.serial, doc.game.spec, doc.game.actions)
    assert b_state.deal.hands == truth.deal.hands and b_state.to_act == truth.to_act
    assert b_state.actions_this_deal() == truth.actions_this_deal()
    await a.close()
    await b.close()
