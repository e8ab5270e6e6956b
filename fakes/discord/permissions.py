"""Discord permission bits and the documented overwrite algorithm.

The adapter checks things like MANAGE_GUILD, so the fake computes permissions the way Discord does
(base from roles, ADMINISTRATOR and owner short-circuit, then @everyone/role/member channel overwrites).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

CREATE_INSTANT_INVITE = 1 << 0
KICK_MEMBERS = 1 << 1
BAN_MEMBERS = 1 << 2
ADMINISTRATOR = 1 << 3
MANAGE_CHANNELS = 1 << 4
MANAGE_GUILD = 1 << 5
ADD_REACTIONS = 1 << 6
VIEW_AUDIT_LOG = 1 << 7
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
SEND_TTS_MESSAGES = 1 << 12
MANAGE_MESSAGES = 1 << 13
EMBED_LINKS = 1 << 14
ATTACH_FILES = 1 << 15
READ_MESSAGE_HISTORY = 1 << 16
MENTION_EVERYONE = 1 << 17
USE_EXTERNAL_EMOJIS = 1 << 18
CHANGE_NICKNAME = 1 << 26
MANAGE_ROLES = 1 << 28
USE_APPLICATION_COMMANDS = 1 << 31
CREATE_PUBLIC_THREADS = 1 << 35
SEND_MESSAGES_IN_THREADS = 1 << 38
USE_EXTERNAL_APPS = 1 << 50

ALL = (1 << 51) - 1

#: What @everyone gets in a freshly created guild (close to Discord's default role).
DEFAULT_EVERYONE = (
    CREATE_INSTANT_INVITE
    | ADD_REACTIONS
    | VIEW_CHANNEL
    | SEND_MESSAGES
    | EMBED_LINKS
    | ATTACH_FILES
    | READ_MESSAGE_HISTORY
    | MENTION_EVERYONE
    | USE_EXTERNAL_EMOJIS
    | CHANGE_NICKNAME
    | USE_APPLICATION_COMMANDS
    | CREATE_PUBLIC_THREADS
    | SEND_MESSAGES_IN_THREADS
    | USE_EXTERNAL_APPS
)

#: What a bot usually asks for in its invite link.
DEFAULT_BOT = VIEW_CHANNEL | SEND_MESSAGES | EMBED_LINKS | ATTACH_FILES | READ_MESSAGE_HISTORY | ADD_REACTIONS


@dataclass
class Overwrite:
    """A channel permission overwrite; kind 0 = role, 1 = member."""

    id: int
    kind: int
    allow: int = 0
    deny: int = 0

    def payload(self) -> dict[str, object]:
        return {"id": str(self.id), "type": self.kind, "allow": str(self.allow), "deny": str(self.deny)}


def base_permissions(*, is_owner: bool, everyone: int, role_permissions: Iterable[int]) -> int:
    """Guild-level permissions of a member."""
    if is_owner:
        return ALL
    perms = everyone
    for value in role_permissions:
        perms |= value
    if perms & ADMINISTRATOR:
        return ALL
    return perms


def channel_permissions(
    base: int, *, guild_id: int, member_id: int, role_ids: Iterable[int], overwrites: Iterable[Overwrite]
) -> int:
    """Apply channel overwrites in Discord's order: @everyone, roles combined, then the member."""
    if base & ADMINISTRATOR or base == ALL:
        return ALL
    table = list(overwrites)
    perms = base
    for ow in table:
        if ow.kind == 0 and ow.id == guild_id:
            perms = (perms & ~ow.deny) | ow.allow
    roles = set(role_ids)
    allow = deny = 0
    for ow in table:
        if ow.kind == 0 and ow.id in roles:
            allow |= ow.allow
            deny |= ow.deny
    perms = (perms & ~deny) | allow
    for ow in table:
        if ow.kind == 1 and ow.id == member_id:
            perms = (perms & ~ow.deny) | ow.allow
    # Without VIEW_CHANNEL nothing else in the channel applies.
    if not perms & VIEW_CHANNEL:
        return 0
    return perms
