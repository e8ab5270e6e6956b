"""``FakeDiscord``: the loopback Discord (REST + gateway) and the helpers that act as its users.

Tests build a world (users, guilds with roles and channels), connect a real discord.py client (see
``client.connect_client``), then drive it as people would: ``slash``, ``autocomplete``, ``press``,
``select``, ``submit_modal``, ``say``; and inspect what the bot did: ``messages``, ``ephemerals``, ``dms``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import secrets
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from . import errors
from . import permissions as perms
from .commands import CommandStore, build_command_data
from .errors import APIError, FakeUsageError
from .faults import Faults
from .gateway import (
    DIRECT_MESSAGES,
    GUILD_MEMBERS,
    GUILD_MESSAGES,
    GUILD_PRESENCES,
    GUILDS,
    MESSAGE_CONTENT,
    PRIVILEGED_INTENTS,
    Gateway,
    GatewaySession,
)
from .interactions import (
    APPLICATION_COMMAND,
    AUTOCOMPLETE,
    MESSAGE_COMPONENT,
    MODAL,
    MODAL_SUBMIT,
    FakeInteraction,
    make_token,
)
from .models import (
    DM,
    FLAG_EPHEMERAL,
    GUILD_TEXT,
    JSON,
    FakeAttachment,
    FakeChannel,
    FakeGuild,
    FakeMember,
    FakeMessage,
    FakeRole,
    FakeUser,
    now_iso,
)
from .ratelimit import RateLimiter
from .snowflake import SnowflakeFactory
from .transport import make_connector, server_ssl_context

POLL_INTERVAL = 0.02
_GATEWAY_ONLY_GUILD_FIELDS = frozenset(
    {
        "joined_at", "large", "unavailable", "member_count", "voice_states", "members", "channels",
        "threads", "presences", "stage_instances", "guild_scheduled_events", "soundboard_sounds",
    }
)  # fmt: skip


@dataclass
class FakeDiscordConfig:
    """Knobs; defaults are Discord's documented values."""

    #: Seconds the application has for its first callback before 10062 "Unknown interaction".
    interaction_deadline: float = 3.0
    #: Seconds an interaction token stays valid for followups/edits (15 minutes).
    token_ttl: float = 900.0
    heartbeat_interval_ms: int = 41_250
    gateway_url: str = "wss://gateway.discord.gg"
    resume_gateway_url: str = "wss://gateway-us-east1-b.discord.gg"
    recommended_shards: int = 1
    #: Privileged intents switched on in the (fake) developer portal; others close the gateway with 4014.
    privileged_intents: int = PRIVILEGED_INTENTS
    application_flags: int = 0
    attachment_size_limit: int = 10 * 1024 * 1024
    #: Per-route buckets, see ``ratelimit.DEFAULT_ROUTE_LIMITS``; ``None`` keeps the defaults.
    route_limits: dict[str, tuple[int, float]] | None = None
    global_rate_limit: int | None = 50
    bot_name: str = "Thousand"
    bot_permissions: int = perms.DEFAULT_BOT


@dataclass
class RequestRecord:
    method: str
    route: str
    status: int
    at: float
    #: The route's major parameters (channel id, guild id, webhook id and token), as rate limits see them.
    major: str = ""
    #: The JSON error code of an error answer (10008 Unknown Message...), None for a success.
    code: int | None = None
    #: The request's path as sent (with the message id a route template leaves out).
    path: str = ""


@dataclass
class _Upload:
    index: int
    filename: str
    content_type: str | None
    data: bytes


@dataclass
class _Pending:
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)


class FakeDiscord:
    """A Discord server for one bot application, on 127.0.0.1 over TLS with Discord's host names."""

    def __init__(self, config: FakeDiscordConfig | None = None) -> None:
        self.config = config or FakeDiscordConfig()
        self.ids = SnowflakeFactory()
        self.application_id = self.ids.next()
        self.bot_user = FakeUser(self.application_id, self.config.bot_name, bot=True)
        self.owner = FakeUser(self.ids.next(), "app-owner")
        raw_id = base64.b64encode(str(self.application_id).encode()).decode().rstrip("=")
        self.token = f"{raw_id}.{secrets.token_urlsafe(4)}.{secrets.token_urlsafe(27)}"
        self.users: dict[int, FakeUser] = {self.bot_user.id: self.bot_user, self.owner.id: self.owner}
        self.guilds: dict[int, FakeGuild] = {}
        self.channels: dict[int, FakeChannel] = {}
        self.dm_channels: dict[int, FakeChannel] = {}
        self.messages_by_id: dict[int, FakeMessage] = {}
        self.interactions: dict[int, FakeInteraction] = {}
        self.interactions_by_token: dict[str, FakeInteraction] = {}
        self.commands = CommandStore(self.application_id, self.ids)
        self.gateway = Gateway(self)
        self.ratelimits = RateLimiter(
            self.config.route_limits, global_per_second=self.config.global_rate_limit
        )
        self.faults = Faults()
        self.requests: list[RequestRecord] = []
        #: Called at once, in order, with ("create" | "edit" | "delete", message) for every message change,
        #: so a test can check a property at every moment rather than at the points it looks.
        self.watchers: list[Callable[[str, FakeMessage], None]] = []
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._changed = asyncio.Event()
        self._pending = _Pending()

    # Lifecycle ----------------------------------------------------------------------------------------
    async def start(self) -> FakeDiscord:
        from .rest import build_app

        self._runner = web.AppRunner(build_app(self), handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=server_ssl_context())
        await site.start()
        self.port = int(self._runner.addresses[0][1])
        return self

    async def close(self) -> None:
        await self.settle()
        for conn in list(self.gateway.connections):
            await conn.close(1001, "fake shutting down")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def connector(self) -> aiohttp.TCPConnector:
        """A new aiohttp connector reaching this fake at Discord's URLs (``Client(connector=...)``)."""
        if not self.port:
            raise RuntimeError("start the fake first")
        return make_connector(self.port)

    def session(self) -> aiohttp.ClientSession:
        """A raw HTTP session for probing the API directly (``https://discord.com/api/v10/...``)."""
        return aiohttp.ClientSession(connector=self.connector())

    @property
    def auth_header(self) -> dict[str, str]:
        return {"Authorization": f"Bot {self.token}"}

    # Change notification ------------------------------------------------------------------------------
    def notify(self) -> asyncio.Event:
        """The event set at the next change of state (used by every waiting helper)."""
        return self._changed

    def changed(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Wait for ``predicate``; re-checked at every fake state change and every 20 ms (so predicates on
        the client's own state work too)."""
        deadline = time.monotonic() + timeout
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("fake Discord: condition not reached in time")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(remaining, POLL_INTERVAL))

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._pending.tasks.add(task)
        task.add_done_callback(self._pending.tasks.discard)

    async def settle(self) -> None:
        """Wait for gateway dispatches queued by synchronous builders."""
        while self._pending.tasks:
            await asyncio.gather(*list(self._pending.tasks), return_exceptions=True)

    def _dispatch_later(self, event: str, data: Any, *, guild_id: int | None, intent: int | None) -> None:
        if self.gateway.sessions:
            self._spawn(self.gateway.dispatch(event, data, guild_id=guild_id, intent=intent))

    # World building -----------------------------------------------------------------------------------
    def add_user(
        self,
        username: str,
        *,
        global_name: str | None = None,
        bot: bool = False,
        dms_open: bool = True,
        locale: str = "en-US",
    ) -> FakeUser:
        user = FakeUser(
            self.ids.next(), username, global_name=global_name, bot=bot, dms_open=dms_open, locale=locale
        )
        self.users[user.id] = user
        return user

    def close_dms(self, user: FakeUser) -> None:
        """Like the user turning off "Direct messages from server members": bot DMs now fail with 50007."""
        user.dms_open = False

    def open_dms(self, user: FakeUser) -> None:
        user.dms_open = True

    def add_guild(
        self,
        name: str,
        *,
        owner: FakeUser | None = None,
        guild_id: int | None = None,
        bot_permissions: int | None = None,
        everyone_permissions: int = perms.DEFAULT_EVERYONE,
        locale: str = "en-US",
    ) -> FakeGuild:
        """A guild the bot is in; the bot gets a managed role with ``bot_permissions``."""
        owner = owner or self.owner
        gid = guild_id if guild_id is not None else self.ids.next()
        guild = FakeGuild(gid, name, owner.id, fake=self, locale=locale)
        guild.roles[gid] = FakeRole(gid, gid, "@everyone", everyone_permissions, position=0)
        self.guilds[gid] = guild
        guild.members[owner.id] = FakeMember(owner, guild)
        bot_role = FakeRole(
            self.ids.next(),
            gid,
            self.bot_user.username,
            self.config.bot_permissions if bot_permissions is None else bot_permissions,
            position=1,
            managed=True,
        )
        guild.roles[bot_role.id] = bot_role
        guild.members[self.bot_user.id] = FakeMember(self.bot_user, guild, role_ids=[bot_role.id])
        for session in self.gateway.sessions_for(gid):
            if session.intents & GUILDS:
                self._spawn(self._emit_guild_create(session, guild))
        self.changed()
        return guild

    async def _emit_guild_create(self, session: GatewaySession, guild: FakeGuild) -> None:
        await self.gateway.dispatch(
            "GUILD_CREATE",
            lambda s: self.guild_create_payload(guild, s) if s is session else None,
            guild_id=guild.id,
            intent=GUILDS,
        )

    def guild_create_payload(self, guild: FakeGuild, session: GatewaySession) -> JSON:
        # Without GUILD_PRESENCES, Discord only includes the bot's own member (others come by chunking).
        if session.intents & GUILD_PRESENCES:
            members = list(guild.members.values())
        else:
            members = [guild.members[self.bot_user.id]]
        return guild.payload(members=members)

    def add_role(self, guild: FakeGuild, name: str, permissions: int = 0, **kwargs: Any) -> FakeRole:
        role = FakeRole(self.ids.next(), guild.id, name, permissions, position=len(guild.roles), **kwargs)
        guild.roles[role.id] = role
        self._dispatch_later(
            "GUILD_ROLE_CREATE",
            {"guild_id": str(guild.id), "role": role.payload()},
            guild_id=guild.id,
            intent=GUILDS,
        )
        self.changed()
        return role

    def add_member(
        self,
        guild: FakeGuild,
        user: FakeUser,
        *,
        roles: list[FakeRole] | None = None,
        nick: str | None = None,
    ) -> FakeMember:
        member = FakeMember(user, guild, role_ids=[r.id for r in roles or []], nick=nick)
        guild.members[user.id] = member
        self._dispatch_later(
            "GUILD_MEMBER_ADD",
            member.payload() | {"guild_id": str(guild.id)},
            guild_id=guild.id,
            intent=GUILD_MEMBERS,
        )
        self.changed()
        return member

    def remove_member(self, guild: FakeGuild, user: FakeUser) -> None:
        """The user leaves (or is kicked from) the guild: GUILD_MEMBER_REMOVE (GUILD_MEMBERS intent)."""
        if guild.members.pop(user.id, None) is None:
            raise FakeUsageError(f"{user.username} is not a member of {guild.name}")
        self._dispatch_later(
            "GUILD_MEMBER_REMOVE",
            {"guild_id": str(guild.id), "user": user.payload()},
            guild_id=guild.id,
            intent=GUILD_MEMBERS,
        )
        self.changed()

    def rename_channel(self, channel: FakeChannel, name: str) -> None:
        """A guild channel renamed: CHANNEL_UPDATE (GUILDS intent)."""
        if channel.guild is None:
            raise FakeUsageError("only guild channels have names")
        channel.name = name
        self._dispatch_later("CHANNEL_UPDATE", channel.payload(), guild_id=channel.guild.id, intent=GUILDS)
        self.changed()

    def rename_guild(self, guild: FakeGuild, name: str) -> None:
        """The guild renamed: GUILD_UPDATE (GUILDS intent; the guild object without gateway-only fields)."""
        guild.name = name
        data = {k: v for k, v in guild.payload().items() if k not in _GATEWAY_ONLY_GUILD_FIELDS}
        self._dispatch_later("GUILD_UPDATE", data, guild_id=guild.id, intent=GUILDS)
        self.changed()

    def add_text_channel(
        self,
        guild: FakeGuild,
        name: str,
        *,
        overwrites: list[perms.Overwrite] | None = None,
        topic: str | None = None,
    ) -> FakeChannel:
        channel = FakeChannel(
            self.ids.next(),
            GUILD_TEXT,
            name=name,
            guild=guild,
            position=len(guild.channels),
            topic=topic,
            overwrites=list(overwrites or []),
        )
        guild.channels[channel.id] = channel
        self.channels[channel.id] = channel
        self._dispatch_later("CHANNEL_CREATE", channel.payload(), guild_id=guild.id, intent=GUILDS)
        self.changed()
        return channel

    def dm_channel(self, user: FakeUser) -> FakeChannel:
        """The bot's DM channel with ``user`` (created on first use, as POST /users/@me/channels does)."""
        channel = self.dm_channels.get(user.id)
        if channel is None:
            channel = FakeChannel(self.ids.next(), DM, recipient=user)
            self.dm_channels[user.id] = channel
            self.channels[channel.id] = channel
        return channel

    # Queries ------------------------------------------------------------------------------------------
    def messages(self, channel: FakeChannel) -> list[FakeMessage]:
        """What everyone sees in a channel, oldest first (edits applied; ``.history`` has earlier states)."""
        return channel.visible_messages()

    def ephemerals(self, user: FakeUser) -> list[FakeMessage]:
        """Ephemeral messages only ``user`` can see (not deleted), oldest first."""
        found = [
            m
            for ch in self.channels.values()
            for m in ch.messages
            if m.ephemeral and not m.deleted and m.visible_to is user
        ]
        return sorted(found, key=lambda m: m.id)

    def dms(self, user: FakeUser) -> list[FakeMessage]:
        """Messages in the bot's DM channel with ``user``."""
        channel = self.dm_channels.get(user.id)
        return channel.visible_messages() if channel else []

    def visible_to(self, user: FakeUser, channel: FakeChannel) -> list[FakeMessage]:
        """Everything ``user`` sees in ``channel``: public messages plus their own ephemerals."""
        return [m for m in channel.messages if not m.deleted and (not m.ephemeral or m.visible_to is user)]

    def responses(
        self, *, status: int | None = None, route: str | None = None, major: str | None = None
    ) -> list[RequestRecord]:
        return [
            r
            for r in self.requests
            if (status is None or r.status == status)
            and (route is None or route in r.route)
            and (major is None or r.major == major)
        ]

    @property
    def rate_limited_count(self) -> int:
        """How many 429 responses the fake has sent."""
        return len(self.responses(status=429))

    def live_sessions(self) -> list[GatewaySession]:
        return [s for s in self.gateway.sessions.values() if s.connected]

    # Messages (shared by REST and the user helpers) ---------------------------------------------------
    def create_message(
        self,
        channel: FakeChannel,
        author: FakeUser,
        body: JSON,
        uploads: list[_Upload],
        *,
        ephemeral_for: FakeUser | None = None,
        extra: JSON | None = None,
    ) -> FakeMessage:
        flags = int(body.get("flags") or 0)
        msg = FakeMessage(
            id=self.ids.next(),
            channel=channel,
            author=author,
            content=str(body.get("content") or ""),
            embeds=self._embeds(body),
            components=copy.deepcopy(body.get("components") or []),
            attachments=self._attachments(
                channel, body, uploads, keep=[], ephemeral=ephemeral_for is not None
            ),
            flags=flags,
        )
        if ephemeral_for is not None:
            msg.flags |= FLAG_EPHEMERAL
            msg.visible_to = ephemeral_for
        else:
            msg.flags &= ~FLAG_EPHEMERAL
        for key, value in (extra or {}).items():
            setattr(msg, key, value)
        if isinstance(body.get("allowed_mentions"), dict):
            msg.allowed_mentions = dict(body["allowed_mentions"])
        msg.notified = [] if msg.ephemeral else msg.allowed_users()
        from .validation import assign_component_ids

        assign_component_ids(msg.components)
        channel.messages.append(msg)
        self.messages_by_id[msg.id] = msg
        if not msg.ephemeral:
            self._dispatch_message("MESSAGE_CREATE", msg)
        self._watch("create", msg)
        self.changed()
        return msg

    def _watch(self, change: str, msg: FakeMessage) -> None:
        for watcher in list(self.watchers):
            watcher(change, msg)

    def edit_message(
        self, msg: FakeMessage, body: JSON, uploads: list[_Upload], *, clear_loading: bool
    ) -> None:
        msg.history.append(msg.snapshot())
        if "content" in body:
            msg.content = str(body.get("content") or "")
        if isinstance(body.get("allowed_mentions"), dict):
            msg.allowed_mentions = dict(body["allowed_mentions"])
        if "embeds" in body or "embed" in body:
            msg.embeds = self._embeds(body)
        if "components" in body:
            msg.components = copy.deepcopy(body.get("components") or [])
            from .validation import assign_component_ids

            assign_component_ids(msg.components)
        if "attachments" in body or uploads:
            keep_ids = {int(a["id"]) for a in body.get("attachments") or [] if _is_existing(a)}
            kept = (
                [a for a in msg.attachments if a.id in keep_ids] if "attachments" in body else msg.attachments
            )
            msg.attachments = self._attachments(
                msg.channel, body, uploads, keep=kept, ephemeral=msg.ephemeral
            )
        if "flags" in body and body["flags"] is not None:
            # Only SUPPRESS_EMBEDS can be toggled on edit; ephemeral/v2 state is kept.
            msg.flags = (msg.flags & ~4) | (int(body["flags"]) & 4)
        if clear_loading:
            msg.flags &= ~(1 << 7)
        msg.edited_timestamp = now_iso()
        if not msg.ephemeral:
            self._dispatch_message("MESSAGE_UPDATE", msg)
        self._watch("edit", msg)
        self.changed()

    def delete_message(self, msg: FakeMessage) -> None:
        msg.deleted = True
        msg.deleted_at = time.monotonic()
        if not msg.ephemeral:
            guild = msg.channel.guild
            data: JSON = {"id": str(msg.id), "channel_id": str(msg.channel.id)}
            if guild is not None:
                data["guild_id"] = str(guild.id)
            self._dispatch_later(
                "MESSAGE_DELETE",
                data,
                guild_id=guild.id if guild else None,
                intent=GUILD_MESSAGES if guild else DIRECT_MESSAGES,
            )
        self._watch("delete", msg)
        self.changed()

    def _embeds(self, body: JSON) -> list[JSON]:
        embeds = body.get("embeds")
        if embeds is None and body.get("embed") is not None:
            embeds = [body["embed"]]
        out = []
        for embed in embeds or []:
            e = copy.deepcopy(embed)
            e.setdefault("type", "rich")
            e.setdefault("content_scan_version", 0)
            out.append(e)
        return out

    def _attachments(
        self,
        channel: FakeChannel,
        body: JSON,
        uploads: list[_Upload],
        *,
        keep: list[FakeAttachment],
        ephemeral: bool,
    ) -> list[FakeAttachment]:
        described = {int(a["id"]): a for a in body.get("attachments") or [] if not _is_existing(a)}
        out = list(keep)
        for up in uploads:
            meta = described.get(up.index, {})
            out.append(
                FakeAttachment(
                    id=self.ids.next(),
                    channel_id=channel.id,
                    filename=str(meta.get("filename") or up.filename),
                    data=up.data,
                    content_type=up.content_type,
                    description=meta.get("description"),
                    ephemeral=ephemeral,
                )
            )
        return out

    def _dispatch_message(self, event: str, msg: FakeMessage) -> None:
        guild = msg.channel.guild

        def shape(session: GatewaySession) -> JSON:
            data = msg.payload(gateway=True)
            sees_content = (
                guild is None
                or msg.author is self.bot_user
                or session.intents & MESSAGE_CONTENT
                or any(m.get("id") == str(self.bot_user.id) for m in data.get("mentions", []))
            )
            if not sees_content:
                data.update(content="", embeds=[], attachments=[], components=[])
            return data

        self._dispatch_later(
            event,
            shape,
            guild_id=guild.id if guild else None,
            intent=GUILD_MESSAGES if guild else DIRECT_MESSAGES,
        )

    def find_attachment(self, attachment_id: int) -> FakeAttachment | None:
        for msg in self.messages_by_id.values():
            for att in msg.attachments:
                if att.id == attachment_id:
                    return att
        return None

    # Users acting -------------------------------------------------------------------------------------
    async def say(self, user: FakeUser, channel: FakeChannel, content: str) -> FakeMessage:
        """``user`` posts a plain message (dispatched as MESSAGE_CREATE)."""
        self._check_can_see(user, channel)
        msg = self.create_message(channel, user, {"content": content}, [])
        await self.settle()
        return msg

    def _check_can_see(self, user: FakeUser, channel: FakeChannel) -> None:
        if channel.guild is None:
            if channel.recipient is not user:
                raise FakeUsageError(f"{user.username} is not in this DM")
            return
        if user.id not in channel.guild.members:
            raise FakeUsageError(f"{user.username} is not a member of {channel.guild.name}")
        if not channel.guild.permissions_in(user, channel) & perms.VIEW_CHANNEL:
            raise FakeUsageError(f"{user.username} cannot see #{channel.name}")

    async def slash(
        self,
        user: FakeUser,
        channel: FakeChannel,
        command: str,
        subcommand: str | None = None,
        /,
        **options: Any,
    ) -> FakeInteraction:
        """``user`` runs ``/command [group] [subcommand] option:value...`` in ``channel``.

        Fails with ``FakeUsageError`` where the Discord client would not offer the command (not registered,
        missing ``default_member_permissions``, wrong context, bad option values).
        """
        cmd = self._command_for(user, channel, command)
        data = build_command_data(
            cmd, subcommand=subcommand, options=options, guild=channel.guild, channel=channel, invoker=user
        )
        return await self._interact(APPLICATION_COMMAND, user, channel, data)

    async def autocomplete(
        self,
        user: FakeUser,
        channel: FakeChannel,
        command: str,
        subcommand: str | None = None,
        /,
        *,
        focused: str,
        **options: Any,
    ) -> FakeInteraction:
        """``user`` is typing into option ``focused`` (its text so far is ``options[focused]``)."""
        cmd = self._command_for(user, channel, command)
        data = build_command_data(
            cmd,
            subcommand=subcommand,
            options=options,
            guild=channel.guild,
            channel=channel,
            invoker=user,
            focused=focused,
        )
        return await self._interact(AUTOCOMPLETE, user, channel, data)

    def _command_for(self, user: FakeUser, channel: FakeChannel, name: str) -> JSON:
        guild = channel.guild
        self._check_can_see(user, channel)
        cmd = self.commands.find(guild.id if guild else None, name)
        if cmd is None:
            raise FakeUsageError(f"/{name} is not registered for this application here")
        if guild is None:
            contexts = cmd.get("contexts")
            if cmd.get("guild_id") or (contexts is not None and 1 not in contexts):
                raise FakeUsageError(f"/{name} is not available in DMs")
            return cmd
        if not guild.permissions_in(user, channel) & perms.USE_APPLICATION_COMMANDS:
            raise FakeUsageError(f"{user.username} may not use application commands in #{channel.name}")
        required = cmd.get("default_member_permissions")
        if required is not None:
            have = guild.permissions_in(user)
            need = int(required)
            if not have & perms.ADMINISTRATOR and (need == 0 or have & need != need):
                raise FakeUsageError(f"/{name} is hidden from {user.username} (default_member_permissions)")
        return cmd

    async def press(self, user: FakeUser, message: FakeMessage, custom_id: str) -> FakeInteraction:
        """``user`` clicks the button ``custom_id`` on ``message``."""
        comp = self._component(user, message, custom_id)
        if comp.get("type") != 2:
            raise FakeUsageError(f"{custom_id!r} is not a button")
        data = {"custom_id": custom_id, "component_type": 2, "id": comp.get("id")}
        return await self._interact(MESSAGE_COMPONENT, user, message.channel, data, message=message)

    async def select(
        self, user: FakeUser, message: FakeMessage, custom_id: str, values: list[str]
    ) -> FakeInteraction:
        """``user`` picks ``values`` in the string select ``custom_id`` on ``message``."""
        comp = self._component(user, message, custom_id)
        if comp.get("type") != 3:
            raise FakeUsageError(f"{custom_id!r} is not a string select")
        offered = [o["value"] for o in comp.get("options") or []]
        lo, hi = comp.get("min_values", 1), comp.get("max_values", 1)
        if not set(values) <= set(offered) or not lo <= len(values) <= hi:
            raise FakeUsageError(f"invalid selection {values!r} for {custom_id!r}")
        data = {"custom_id": custom_id, "component_type": 3, "values": list(values), "id": comp.get("id")}
        return await self._interact(MESSAGE_COMPONENT, user, message.channel, data, message=message)

    def _component(self, user: FakeUser, message: FakeMessage, custom_id: str) -> JSON:
        if message.deleted:
            raise FakeUsageError("the message was deleted")
        if message.ephemeral and message.visible_to is not user:
            raise FakeUsageError(f"{user.username} cannot see that ephemeral message")
        self._check_can_see(user, message.channel)
        for comp in message.iter_components():
            if comp.get("custom_id") == custom_id:
                if comp.get("disabled"):
                    raise FakeUsageError(f"{custom_id!r} is disabled")
                return comp
        raise FakeUsageError(f"no component {custom_id!r} on message {message.id}")

    async def submit_modal(
        self, user: FakeUser, opened_by: FakeInteraction, values: dict[str, str]
    ) -> FakeInteraction:
        """``user`` fills the modal that ``opened_by`` answered with (callback type 9) and submits it."""
        cb = opened_by.callback
        if cb is None or cb.type != MODAL or opened_by.user is not user:
            raise FakeUsageError("that interaction did not open a modal for this user")
        rows: list[JSON] = []
        for top in cb.data.get("components") or []:
            inputs = [c for c in _walk([top]) if c.get("type") == 4]
            for comp in inputs:
                cid = comp["custom_id"]
                text = values.get(cid, "")
                if comp.get("required", True) and not text:
                    raise FakeUsageError(f"modal field {cid!r} is required")
                if text and not comp.get("min_length", 0) <= len(text) <= comp.get("max_length", 4000):
                    raise FakeUsageError(f"modal field {cid!r}: length out of range")
                answer = {"type": 4, "id": comp.get("id"), "custom_id": cid, "value": values.get(cid, "")}
                if top.get("type") == 18:  # Label wrapping one input
                    rows.append({"type": 18, "id": top.get("id"), "component": answer})
                else:
                    rows.append({"type": 1, "id": top.get("id"), "components": [answer]})
        unknown = set(values) - {c.get("custom_id") for c in _walk(cb.data.get("components") or [])}
        if unknown:
            raise FakeUsageError(f"modal has no fields {sorted(unknown)}")
        data = {"custom_id": cb.data["custom_id"], "components": rows}
        return await self._interact(MODAL_SUBMIT, user, opened_by.channel, data, message=opened_by.message)

    async def _interact(
        self,
        itype: int,
        user: FakeUser,
        channel: FakeChannel,
        data: JSON,
        *,
        message: FakeMessage | None = None,
    ) -> FakeInteraction:
        guild = channel.guild
        if not self.gateway.sessions_for(guild.id if guild else None):
            raise FakeUsageError("no gateway session receives this guild's events (is the bot connected?)")
        iid = self.ids.next()
        token = make_token(iid)
        payload: JSON = {
            "id": str(iid),
            "application_id": str(self.application_id),
            "type": itype,
            "data": data,
            "channel": channel.payload(),
            "channel_id": str(channel.id),
            "token": token,
            "version": 1,
            "locale": user.locale,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": self.config.attachment_size_limit,
        }
        if guild is not None:
            member = guild.members[user.id]
            payload.update(
                guild_id=str(guild.id),
                guild={"id": str(guild.id), "locale": guild.locale, "features": []},
                guild_locale=guild.locale,
                member=member.payload(permissions=guild.permissions_in(user, channel)),
                app_permissions=str(guild.permissions_in(self.bot_user, channel)),
                authorizing_integration_owners={"0": str(guild.id)},
                context=0,
            )
        else:
            payload.update(
                user=user.payload(),
                app_permissions=str(
                    perms.VIEW_CHANNEL
                    | perms.SEND_MESSAGES
                    | perms.EMBED_LINKS
                    | perms.ATTACH_FILES
                    | perms.READ_MESSAGE_HISTORY
                ),
                authorizing_integration_owners={"0": "0"},
                context=1,
            )
        if message is not None:
            payload["message"] = message.payload()
        interaction = FakeInteraction(
            id=iid,
            token=token,
            type=itype,
            user=user,
            channel=channel,
            guild=guild,
            data=data,
            payload=payload,
            notify=self.notify,
            message=message,
        )
        self.interactions[iid] = interaction
        self.interactions_by_token[token] = interaction
        await self.gateway.dispatch(
            "INTERACTION_CREATE", payload, guild_id=guild.id if guild else None, intent=None
        )
        self.changed()
        return interaction


def _is_existing(attachment: JSON) -> bool:
    """Attachment entries in a body refer to existing attachments by snowflake, new uploads by index."""
    try:
        return int(attachment.get("id", -1)) > 10_000
    except (TypeError, ValueError):
        return False


def _walk(components: list[JSON]) -> list[JSON]:
    out: list[JSON] = []
    for comp in components:
        out.append(comp)
        out.extend(_walk(comp.get("components") or []))
        if isinstance(comp.get("component"), dict):
            out.extend(_walk([comp["component"]]))
    return out


__all__ = ["APIError", "FakeDiscord", "FakeDiscordConfig", "errors"]
