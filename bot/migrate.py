"""A chat that changes its platform id: the table, the chat's settings and what points at them follow it.

Telegram upgrades a basic group to a supergroup (when it grows, or an admin changes certain settings): the
group gets a new chat id and the old one refuses every message. The table id embeds the chat id
(`tg:-123`), so the table must move to the new id (`tg:-100...`) to go on in the new chat. What moves, in
one compare-and-set per stored document (`Store.move_table`): the table (its document names its chat, so
it is rewritten), its events, version and turn deadline, the chat index, the players' user indexes, and the
chat's settings. The old id keeps a pointer to the new one (`Store.moved_to`), so a button drawn before
the move (its payload names the old table) reaches the moved table: it works if the table did not move on
since it was drawn, and is stale as usual otherwise.

Statistics and ratings kept per chat (`/top` in the group) stay under the old id. Platform message
references are the adapter's business (message ids may not survive the move).
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Protocol

from bot.model import ChatRef, Command
from bot.settings import Settings
from bot.storage import Store, VersionConflict
from bot.table import TableDoc

__all__ = ["follow_move", "move_chat"]

log = logging.getLogger("thousand.migrate")


class HasStore(Protocol):
    """What a move needs of the service: its store and settings (the service calls in, never the reverse)."""

    @property
    def store(self) -> Store: ...

    @property
    def settings(self) -> Settings: ...


def _ttl(service: HasStore, doc: TableDoc) -> float:
    s = service.settings
    return {"lobby": s.lobby_ttl, "game": s.game_ttl, "finished": s.finished_ttl}[doc.status]


async def move_chat(service: HasStore, old: ChatRef, new: ChatRef) -> tuple[str, ...] | None:
    """Move the chat's table and settings from `old` to `new`. When this call moved a table: the user
    keys of its seats (the adapter re-keys their private messages); None when there was no table to move
    (none, or another call moved it first, or the new chat has its own). Safe to call twice and from
    several processes at once (both service messages of an upgrade, and a send refused with the new id,
    lead here): one of them moves the table."""
    if old.platform != new.platform or old.key == new.key:
        raise ValueError("a chat moves to another id on the same platform")
    store = service.store
    await _move_settings(service, old, new)
    for _ in range(service.settings.cas_retries):
        stored = await store.load(old.key)
        if stored is None:
            return None
        doc = TableDoc.model_validate_json(stored.document)
        doc.id, doc.chat_id = new.key, new.chat_id
        users = sorted(set(doc.human_keys))  # the user index lists the seated humans (not kicked ones)
        try:
            await store.move_table(
                old.key,
                new.key,
                stored.version,
                doc.model_dump_json(),
                ttl_seconds=_ttl(service, doc),
                chat_keys=(old.key, new.key),
                user_keys=users,
            )
        except VersionConflict as conflict:
            if conflict.table_id == new.key:
                # Someone opened a table in the new chat before the move: that one stays; the old
                # table stays under the old id (its players see it with /table from the private chat).
                log.warning("chat %s moved to %s, which has a table already: not moved", old.key, new.key)
                return None
            continue  # the table changed (or another process moved it): look again
        log.info("table of chat %s moved to %s (%s)", old.key, new.key, doc.status, extra={"event": "moved"})
        return tuple(users)
    log.warning("chat %s: the table kept changing, not moved to %s", old.key, new.key)
    return None


async def _move_settings(service: HasStore, old: ChatRef, new: ChatRef) -> bool:
    store = service.store
    old_id, new_id = f"settings:{old.key}", f"settings:{new.key}"
    for _ in range(service.settings.cas_retries):
        stored = await store.load(old_id)
        if stored is None:
            return False
        try:
            await store.move_table(
                old_id, new_id, stored.version, stored.document, ttl_seconds=service.settings.settings_ttl
            )
        except VersionConflict as conflict:
            if conflict.table_id == new_id:
                return False  # the new chat chose its own settings already: they stay
            continue
        return True
    return False


async def follow_move(service: HasStore, command: Command) -> Command:
    """The command as it applies after a move: a button naming a table that moved (drawn before the move)
    is for the moved table, and if it was pressed in the old chat its group messages go to the new chat.
    The command itself when nothing moved. The service asks only when the button's table is missing, so
    commands pay nothing for this."""
    if command.table_id is None:
        return command
    target = await service.store.moved_to(command.table_id)
    if target is None:
        return command
    chat = command.chat
    if not chat.private and chat.key == command.table_id:
        platform, _, chat_id = target.partition(":")
        chat = ChatRef(platform, chat_id, chat.title)
    return replace(command, table_id=target, chat=chat)
