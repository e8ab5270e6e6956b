"""Who may do what at a table: the one rule of every platform (docs/SERVICE.md, "Who may do what"; the
sentence of `/help` says the same).

- Reach: a command from another chat than the table's (a private chat, or a button of the table pressed
  elsewhere) acts on it only for someone seated at it. A seat itself (`new`, `join`) is only taken in the
  table's own chat: Telegram's deep link, signed for the person who pressed Join there, becomes a command
  of the group before it gets here. Refusals to anyone else say nothing about the table or its chat.
- Start (and computers in the lobby): a seated player or an admin of the table's chat.
- Settings and ending: the table's creator while seated at it, or an admin of the table's chat.
- Kicking: in a lobby the creator or an admin; in a game an admin at once, or a majority of the other
  seated people by vote.
- Secret moves (`give`, `discard`: they name cards that stay hidden) are never typed in a group.

Admin means an admin of the table's own chat as its adapter says (`UserRef.is_admin`); a command from a
private chat carries no admin right for a group (the adapter does not know which group it is about).
"""

from __future__ import annotations

from typing import Final

from bot.commands import SECRET_MOVES
from bot.context import Context, Refusal
from bot.table import TableDoc

__all__ = ["SEATING", "check_reach", "is_admin", "may_manage", "may_start"]

SEATING: Final = frozenset({"new", "join"})
"""Commands that seat their sender: only in the table's own chat."""


def is_admin(ctx: Context) -> bool:
    """An admin of the table's own chat (not of the chat a command came from when that is another)."""
    return bool(ctx.user.is_admin) and ctx.table_id == ctx.chat.key


def own_private_table(ctx: Context) -> bool:
    """The table of the sender's own private chat: theirs to manage."""
    return ctx.chat.private and ctx.table_id == ctx.chat.key


def seated(doc: TableDoc | None, user_key: str) -> bool:
    return doc is not None and doc.seat_of(user_key) is not None


def may_manage(ctx: Context) -> bool:
    """Settings, ending, removing people from a lobby: a chat admin, the owner of a private chat's table,
    or the live table's creator while still seated at it."""
    if is_admin(ctx) or own_private_table(ctx):
        return True
    doc = ctx.doc
    return (
        doc is not None
        and doc.status != "finished"
        and doc.creator == ctx.user.key
        and seated(doc, ctx.user.key)
    )


def may_start(ctx: Context) -> bool:
    """Start the game, add or remove computers: anyone seated, or whoever may manage the table."""
    return seated(ctx.doc, ctx.user.key) or may_manage(ctx)


def check_reach(ctx: Context) -> None:
    """Refuse a command that comes from outside the table's chat from someone not seated there, any
    seat taken from outside, and a secret move typed in a group."""
    cmd = ctx.command
    if ctx.table_id == ctx.chat.key:
        if cmd.name in SECRET_MOVES and cmd.source == "text" and not ctx.chat.private:
            raise Refusal("secret_in_group")
        return
    if cmd.name in SEATING or not seated(ctx.doc, ctx.user.key):
        raise Refusal("not_seated")
