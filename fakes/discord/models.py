"""The fake's world: users, guilds, roles, members, channels, messages, and their Discord payload shapes.

Payloads follow the documented v10 objects (user, role, guild member, channel, message, attachment) so the
real client library parses them exactly as it would parse Discord's.
"""

from __future__ import annotations

import copy
import datetime
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import permissions as perms
from .snowflake import snowflake_time_ms

if TYPE_CHECKING:
    from .server import FakeDiscord

JSON = dict[str, Any]

# Channel types.
GUILD_TEXT = 0
DM = 1
GUILD_CATEGORY = 4

# Message flags.
FLAG_SUPPRESS_EMBEDS = 1 << 2
FLAG_EPHEMERAL = 1 << 6
FLAG_LOADING = 1 << 7
FLAG_SUPPRESS_NOTIFICATIONS = 1 << 12
FLAG_IS_COMPONENTS_V2 = 1 << 15

USER_MENTION = re.compile(r"<@!?(\d+)>")

# Message types.
MSG_DEFAULT = 0
MSG_REPLY = 19
MSG_CHAT_INPUT_COMMAND = 20


def iso(ts: datetime.datetime) -> str:
    return ts.isoformat()


def snowflake_iso(snowflake: int) -> str:
    ts = datetime.datetime.fromtimestamp(snowflake_time_ms(snowflake) / 1000, tz=datetime.UTC)
    return iso(ts)


def now_iso() -> str:
    return iso(datetime.datetime.now(datetime.UTC))


@dataclass(eq=False)
class FakeUser:
    """A Discord account. ``dms_open=False`` makes the bot's DMs fail with 50007, like a privacy setting."""

    id: int
    username: str
    global_name: str | None = None
    bot: bool = False
    dms_open: bool = True
    locale: str = "en-US"

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"

    def payload(self) -> JSON:
        return {
            "id": str(self.id),
            "username": self.username,
            "global_name": self.global_name,
            "discriminator": "0",
            "avatar": None,
            "avatar_decoration_data": None,
            "banner": None,
            "accent_color": None,
            "public_flags": 0,
            "flags": 0,
            "bot": self.bot,
            "system": False,
            "primary_guild": None,
            "collectibles": None,
        }


@dataclass(eq=False)
class FakeRole:
    id: int
    guild_id: int
    name: str
    permissions: int
    position: int = 0
    color: int = 0
    hoist: bool = False
    managed: bool = False
    mentionable: bool = False

    @property
    def mention(self) -> str:
        return f"<@&{self.id}>"

    def payload(self) -> JSON:
        return {
            "id": str(self.id),
            "name": self.name,
            "description": None,
            "color": self.color,
            "colors": {"primary_color": self.color, "secondary_color": None, "tertiary_color": None},
            "hoist": self.hoist,
            "icon": None,
            "unicode_emoji": None,
            "position": self.position,
            "permissions": str(self.permissions),
            "managed": self.managed,
            "mentionable": self.mentionable,
            "flags": 0,
        }


@dataclass(eq=False)
class FakeMember:
    user: FakeUser
    guild: FakeGuild
    role_ids: list[int] = field(default_factory=list)
    nick: str | None = None
    joined_at: str = field(default_factory=now_iso)

    def payload(self, *, with_user: bool = True, permissions: int | None = None) -> JSON:
        data: JSON = {
            "roles": [str(r) for r in self.role_ids],
            "nick": self.nick,
            "avatar": None,
            "banner": None,
            "joined_at": self.joined_at,
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }
        if with_user:
            data["user"] = self.user.payload()
        if permissions is not None:
            data["permissions"] = str(permissions)
        return data

    @property
    def guild_permissions(self) -> int:
        g = self.guild
        return perms.base_permissions(
            is_owner=g.owner_id == self.user.id,
            everyone=g.everyone.permissions,
            role_permissions=[g.roles[r].permissions for r in self.role_ids if r in g.roles],
        )


@dataclass
class FakeAttachment:
    id: int
    channel_id: int
    filename: str
    data: bytes
    content_type: str | None = None
    description: str | None = None
    ephemeral: bool = False

    @property
    def url(self) -> str:
        return f"https://cdn.discordapp.com/attachments/{self.channel_id}/{self.id}/{self.filename}"

    def payload(self) -> JSON:
        data: JSON = {
            "id": str(self.id),
            "filename": self.filename,
            "size": len(self.data),
            "url": self.url,
            "proxy_url": self.url.replace("cdn.discordapp.com", "media.discordapp.net"),
        }
        if self.content_type:
            data["content_type"] = self.content_type
        if self.description:
            data["description"] = self.description
        if self.ephemeral:
            data["ephemeral"] = True
        return data


@dataclass
class MessageVersion:
    """One state of a message; ``FakeMessage.history`` keeps the states that edits replaced."""

    content: str
    embeds: list[JSON]
    components: list[JSON]
    attachments: list[FakeAttachment]
    flags: int
    edited_timestamp: str | None


@dataclass(eq=False)
class FakeMessage:
    id: int
    channel: FakeChannel
    author: FakeUser
    content: str = ""
    embeds: list[JSON] = field(default_factory=list)
    components: list[JSON] = field(default_factory=list)
    attachments: list[FakeAttachment] = field(default_factory=list)
    flags: int = 0
    type: int = MSG_DEFAULT
    edited_timestamp: str | None = None
    deleted: bool = False
    #: When it was created and deleted (time.monotonic(), like `RequestRecord.at`).
    created_at: float = field(default_factory=time.monotonic)
    deleted_at: float | None = None
    webhook_id: int | None = None
    application_id: int | None = None
    interaction_metadata: JSON | None = None
    interaction_legacy: JSON | None = None
    message_reference: JSON | None = None
    #: For ephemeral messages: the only user who can see the message.
    visible_to: FakeUser | None = None
    history: list[MessageVersion] = field(default_factory=list)
    #: The ``allowed_mentions`` the message was sent (or last edited) with; None: Discord's default (all).
    allowed_mentions: JSON | None = None
    #: Users who got a mention notification: resolved and allowed mentions at creation (edits never ping).
    notified: list[FakeUser] = field(default_factory=list)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & FLAG_EPHEMERAL)

    @property
    def loading(self) -> bool:
        return bool(self.flags & FLAG_LOADING)

    @property
    def timestamp(self) -> str:
        return snowflake_iso(self.id)

    def snapshot(self) -> MessageVersion:
        return MessageVersion(
            content=self.content,
            embeds=copy.deepcopy(self.embeds),
            components=copy.deepcopy(self.components),
            attachments=list(self.attachments),
            flags=self.flags,
            edited_timestamp=self.edited_timestamp,
        )

    # Queries tests use --------------------------------------------------------------------------------
    def iter_components(self) -> list[JSON]:
        """All components, flattened depth-first (rows, their children, v2 containers...)."""
        out: list[JSON] = []

        def walk(items: list[JSON]) -> None:
            for item in items:
                out.append(item)
                walk(item.get("components", []))
                accessory = item.get("accessory")
                if isinstance(accessory, dict):
                    out.append(accessory)

        walk(self.components)
        return out

    def buttons(self) -> list[JSON]:
        return [c for c in self.iter_components() if c.get("type") == 2]

    def custom_ids(self) -> list[str]:
        return [str(c["custom_id"]) for c in self.iter_components() if "custom_id" in c]

    def button(self, *, label: str | None = None, custom_id: str | None = None) -> JSON:
        for b in self.buttons():
            if (label is None or b.get("label") == label) and (
                custom_id is None or b.get("custom_id") == custom_id
            ):
                return b
        raise LookupError(f"no button label={label!r} custom_id={custom_id!r} on message {self.id}")

    def _everyone_allowed(self) -> bool:
        return self.allowed_mentions is None or "everyone" in (self.allowed_mentions.get("parse") or [])

    def mentioned_users(self) -> list[FakeUser]:
        """Users mentioned as ``<@id>`` who can be resolved in the channel (guild members, DM parties)."""
        if self.channel.guild is not None:
            known = {uid: m.user for uid, m in self.channel.guild.members.items()}
        else:
            known = {u.id: u for u in (self.channel.recipient, self.author) if u is not None}
        found: list[FakeUser] = []
        for raw in USER_MENTION.findall(self.content):
            user = known.get(int(raw))
            if user is not None and user not in found:
                found.append(user)
        return found

    def allowed_users(self) -> list[FakeUser]:
        """The mentioned users ``allowed_mentions`` lets through (what ``mentions`` holds, who is pinged).

        Discord: without ``allowed_mentions`` every mention counts; with it, a user mention counts only if
        ``parse`` holds ``"users"`` or the user's id is listed in ``users``.
        """
        found = self.mentioned_users()
        allowed = self.allowed_mentions
        if allowed is None:
            return found
        parse = allowed.get("parse") or []
        listed = {str(u) for u in allowed.get("users") or []}
        return [u for u in found if "users" in parse or str(u.id) in listed]

    def payload(self, *, gateway: bool = False) -> JSON:
        data: JSON = {
            "id": str(self.id),
            "channel_id": str(self.channel.id),
            "author": self.author.payload(),
            "content": self.content,
            "timestamp": self.timestamp,
            "edited_timestamp": self.edited_timestamp,
            "tts": False,
            "mention_everyone": "@everyone" in self.content and self._everyone_allowed(),
            "mentions": [u.payload() for u in self.allowed_users()],
            "mention_roles": [],
            "attachments": [a.payload() for a in self.attachments],
            "embeds": copy.deepcopy(self.embeds),
            "pinned": False,
            "type": self.type,
            "flags": self.flags,
            "components": copy.deepcopy(self.components),
        }
        if self.webhook_id is not None:
            data["webhook_id"] = str(self.webhook_id)
        if self.application_id is not None:
            data["application_id"] = str(self.application_id)
        if self.interaction_metadata is not None:
            data["interaction_metadata"] = copy.deepcopy(self.interaction_metadata)
        if self.interaction_legacy is not None:
            data["interaction"] = copy.deepcopy(self.interaction_legacy)
        if self.message_reference is not None:
            data["message_reference"] = dict(self.message_reference)
        if gateway and self.channel.guild is not None:
            data["guild_id"] = str(self.channel.guild.id)
            member = self.channel.guild.members.get(self.author.id)
            if member is not None and self.webhook_id is None:
                data["member"] = member.payload(with_user=False)
        return data


@dataclass(eq=False)
class FakeChannel:
    id: int
    type: int
    name: str | None = None
    guild: FakeGuild | None = None
    position: int = 0
    topic: str | None = None
    parent_id: int | None = None
    overwrites: list[perms.Overwrite] = field(default_factory=list)
    #: For DM channels: the other user (the bot is implicit).
    recipient: FakeUser | None = None
    messages: list[FakeMessage] = field(default_factory=list)

    @property
    def mention(self) -> str:
        return f"<#{self.id}>"

    @property
    def last_message_id(self) -> int | None:
        live = [m.id for m in self.messages if not m.deleted and not m.ephemeral]
        return live[-1] if live else None

    def visible_messages(self) -> list[FakeMessage]:
        """Messages everyone in the channel sees (no ephemerals, no deleted), oldest first."""
        return [m for m in self.messages if not m.deleted and not m.ephemeral]

    def payload(self) -> JSON:
        last = self.last_message_id
        if self.type == DM:
            assert self.recipient is not None
            return {
                "id": str(self.id),
                "type": DM,
                "last_message_id": str(last) if last else None,
                "flags": 0,
                "recipients": [self.recipient.payload()],
            }
        assert self.guild is not None
        return {
            "id": str(self.id),
            "type": self.type,
            "guild_id": str(self.guild.id),
            "name": self.name,
            "position": self.position,
            "permission_overwrites": [o.payload() for o in self.overwrites],
            "parent_id": str(self.parent_id) if self.parent_id else None,
            "topic": self.topic,
            "nsfw": False,
            "last_message_id": str(last) if last else None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }


@dataclass(eq=False)
class FakeGuild:
    id: int
    name: str
    owner_id: int
    fake: FakeDiscord = field(repr=False)
    locale: str = "en-US"
    roles: dict[int, FakeRole] = field(default_factory=dict)
    members: dict[int, FakeMember] = field(default_factory=dict)
    channels: dict[int, FakeChannel] = field(default_factory=dict)

    @property
    def everyone(self) -> FakeRole:
        return self.roles[self.id]

    # Delegating builders so tests can write guild.add_text_channel("cards").
    def add_role(self, name: str, permissions: int = 0, **kwargs: Any) -> FakeRole:
        return self.fake.add_role(self, name, permissions, **kwargs)

    def add_member(
        self, user: FakeUser, roles: list[FakeRole] | None = None, nick: str | None = None
    ) -> FakeMember:
        return self.fake.add_member(self, user, roles=roles, nick=nick)

    def add_text_channel(
        self, name: str, overwrites: list[perms.Overwrite] | None = None, topic: str | None = None
    ) -> FakeChannel:
        return self.fake.add_text_channel(self, name, overwrites=overwrites, topic=topic)

    def member(self, user: FakeUser) -> FakeMember:
        return self.members[user.id]

    def permissions_in(self, user: FakeUser, channel: FakeChannel | None = None) -> int:
        member = self.members.get(user.id)
        if member is None:
            return 0
        base = member.guild_permissions
        if channel is None:
            return base
        return perms.channel_permissions(
            base, guild_id=self.id, member_id=user.id, role_ids=member.role_ids, overwrites=channel.overwrites
        )

    def payload(self, *, members: list[FakeMember] | None = None) -> JSON:
        """A GUILD_CREATE payload (documented guild object plus the gateway-only extra fields)."""
        shown = list(self.members.values()) if members is None else members
        return {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": str(self.owner_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 1,
            "explicit_content_filter": 0,
            "roles": [r.payload() for r in self.roles.values()],
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "max_members": 500000,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": self.locale,
            "public_updates_channel_id": None,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "safety_alerts_channel_id": None,
            # Gateway-only fields.
            "joined_at": now_iso(),
            "large": len(self.members) > 250,
            "unavailable": False,
            "member_count": len(self.members),
            "voice_states": [],
            "members": [m.payload() for m in shown],
            "channels": [c.payload() for c in self.channels.values()],
            "threads": [],
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }
