"""A basic group upgraded to a supergroup: what the Telegram adapter does besides moving the table.

The service moves the table and the chat's settings to the new chat id (`Service.move_chat`). The message
references are Telegram's business, and they do not simply move:

- The group's references (table, lobby, results: `tg:<old id>`) name messages of the old chat. Message ids
  are per chat, and the supergroup numbers its messages from 1 again, so an old id would name another
  message there (maybe one of the bot's). They are forgotten: the next message under each key is posted
  in the new chat, and the adapter posts the table there at once.
- Each player's hand in their private chat is kept under `hand:<table id>`; the table id changed, so the
  reference is copied to `hand:<new table id>` and the same hand message goes on being edited (one hand
  per private chat, as before). The old name stays too: a message drawn before the move and still on its
  way (another chat's queue, another process) edits the same hand instead of posting a second one; it
  is pruned with the chat's old references. If a hand for the new id exists already, nothing is copied.
"""

from __future__ import annotations

from collections.abc import Iterable

from adapters.telegram.inbound import PLATFORM
from adapters.telegram.refs import PILE_SUFFIX, chat_scope
from bot.storage import Store

__all__ = ["forget_group_refs", "rekey_hands"]


async def rekey_hands(store: Store, old_chat: int, new_chat: int, users: Iterable[str], *, ttl: float) -> int:
    """Copy the players' hand references (and the replaced hands still on screen) from the old table id to
    the new one; how many hand references were copied."""
    old_name, new_name = f"hand:{PLATFORM}:{old_chat}", f"hand:{PLATFORM}:{new_chat}"
    moved = 0
    for user in users:
        platform, _, user_id = user.partition(":")
        if platform != PLATFORM or not user_id.isdigit():
            continue
        scope = chat_scope(user_id)
        refs = await store.get_refs(scope)
        value = refs.get(old_name)
        if value is None:
            continue
        if new_name not in refs:
            await store.set_ref(scope, new_name, value, ttl_seconds=ttl)
            moved += 1
        pile = refs.get(old_name + PILE_SUFFIX)
        if pile is not None and new_name + PILE_SUFFIX not in refs:
            # The replaced hands of the deal still on screen go with the next deal's hand as before.
            await store.set_ref(scope, new_name + PILE_SUFFIX, pile, ttl_seconds=ttl)
    return moved


async def forget_group_refs(store: Store, old_chat: int) -> None:
    """Forget the old chat's message references (its messages cannot be edited any more)."""
    scope = chat_scope(old_chat)
    for name in await store.get_refs(scope):
        await store.delete_ref(scope, name)
