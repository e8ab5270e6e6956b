"""Turn hands that a killed process had queued and not sent, sent by the next process that starts.

A process keeps its delivery queues in memory (`outbox`): a SIGKILL, an OOM kill or a lost machine takes
what waited there. Most of it heals by itself (the group's table is redrawn at the next trick), but a
player whose turn's hand was among it sees nothing to press, and the table would wait for the turn's
warning (`WARN_SECONDS` before the deadline, which brings the hand again).

So a process that starts looks once at the tables waiting for a turn (`Store.tables_with_deadlines`,
every such table has a deadline). Where the acting player's hand reference still shows an older table
version than the stored one, and the table has not changed for `grace` seconds (long enough for a live
process to have sent that hand itself), the hand is asked for again, as if the player had pressed My
hand. A process that stopped cleanly delivered its queues or handed them over (`Outbox.stop`), so after
a rolling restart nothing is found here: the next process takes what was handed over instead.

What a process that stopped cleanly handed over is taken by every live process's poller
(`bot.relay.handover.HandoverPoller`, started in `app`) into its outbox (`Outbox.take_over`), which drops
a message whose chat already shows its version or a newer one.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final

from adapters.telegram.refs import Ref, chat_scope
from bot.model import ChatRef, Command, Message, UserRef
from bot.storage import StorageError, Store
from bot.table import TableDoc

__all__ = ["LOST_HAND_GRACE", "resend_lost_hands"]

log = logging.getLogger("thousand.telegram.recovery")

LOST_HAND_GRACE: Final = 5.0
"""Seconds a table must have been unchanged before its acting hand counts as lost: a live process sends
the acting hand first (urgent), so a hand that waits this long for the budget is rare; one sent twice is
then replaced (the older one deleted), never wrong."""

SCAN_LIMIT: Final = 20_000
"""Tables looked at, at most (those waiting longest first)."""

Run = Callable[[Command], Awaitable[list[Message]]]


async def resend_lost_hands(
    store: Store,
    run: Run,
    *,
    now: float,
    grace: float = LOST_HAND_GRACE,
    limit: int = SCAN_LIMIT,
) -> int:
    """Ask again for every acting hand of a Telegram table that was never delivered; how many."""
    sent = 0
    try:
        tables = await store.tables_with_deadlines(limit)
    except StorageError:
        log.warning("store unavailable: lost hands not looked for", exc_info=True)
        return 0
    for table_id in tables:
        if not table_id.startswith("tg:"):
            continue
        try:
            command = await _lost_hand(store, table_id, now, grace)
        except StorageError:
            log.warning("store unavailable: lost hands not looked for", exc_info=True)
            return sent
        except ValueError:
            log.warning("table %s does not parse: skipped", table_id, exc_info=True)
            continue
        if command is None:
            continue
        log.info("the acting hand of %s was not delivered: sending it again", table_id)
        await run(command)
        sent += 1
    return sent


async def _lost_hand(store: Store, table_id: str, now: float, grace: float) -> Command | None:
    """The My hand command that brings the acting player their hand, when it went missing."""
    stored = await store.load(table_id)
    if stored is None:
        return None
    doc = TableDoc.model_validate_json(stored.document)
    turn = doc.turn
    if doc.status != "game" or turn is None or not 0 <= turn.seat < len(doc.seats):
        return None
    if now - doc.updated < grace:
        return None
    seat = doc.seats[turn.seat]
    if not seat.present or seat.user is None or seat.platform != "tg" or not (seat.user_id or "").isdigit():
        return None
    user_id = seat.user_id or ""
    refs = await store.get_refs(chat_scope(user_id))
    ref = Ref.decode(refs.get(f"hand:{table_id}"))
    if ref is not None and ref.version is not None and ref.version >= stored.version:
        return None
    user = UserRef("tg", user_id, seat.name, seat.lang)
    return Command("hand", (), ChatRef("tg", user_id, private=True), user, table_id=table_id)
