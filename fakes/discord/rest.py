"""The REST API (``https://discord.com/api/v10``), the attachment CDN and the gateway route, in one app.

Every API response passes through one middleware that applies fault injection, bot-token auth, rate-limit
buckets (``X-RateLimit-*`` headers, 429 with ``retry_after``), Discord's JSON error bodies and the ``Via``
header, and records the request for tests.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import BodyPartReader, web

from . import errors
from . import permissions as perms
from .errors import APIError, FormErrors
from .interactions import (
    ALLOWED_CALLBACKS,
    APPLICATION_COMMAND,
    APPLICATION_COMMAND_AUTOCOMPLETE_RESULT,
    CHANNEL_MESSAGE_WITH_SOURCE,
    DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE,
    DEFERRED_UPDATE_MESSAGE,
    MODAL,
    UPDATE_MESSAGE,
    Callback,
    FakeInteraction,
)
from .models import (
    DM,
    FLAG_EPHEMERAL,
    FLAG_LOADING,
    JSON,
    MSG_CHAT_INPUT_COMMAND,
    MSG_DEFAULT,
    MSG_REPLY,
    FakeChannel,
    FakeMessage,
    FakeUser,
)
from .validation import SENDABLE_FLAGS, validate_message

if TYPE_CHECKING:
    from .server import FakeDiscord, _Upload

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
API_PREFIX = "/api/v{version:(?:9|10)}"
#: Routes that take no bot token: gateway discovery, interaction callbacks and webhook-token routes.
NO_AUTH_ROUTES = ("GET /gateway",)
NO_AUTH_PARTS = ("POST /interactions/", "/webhooks/{webhook_id}/{webhook_token}")


def _json(data: Any, status: int = 200) -> web.Response:
    # Exactly "application/json" (no charset), as Discord sends and as discord.py compares it.
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"}
    )


def _no_content() -> web.Response:
    return web.Response(status=204)


def _int(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise errors.not_found() from None


class RestApi:
    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake

    # Middleware ---------------------------------------------------------------------------------------
    @staticmethod
    def route_key(request: web.Request) -> tuple[str, str]:
        info = request.match_info
        resource = info.route.resource if info.route is not None else None
        template = resource.canonical if resource is not None else request.path
        template = template.replace("/api/v{version}", "", 1)
        major = "+".join(
            info[k] for k in ("channel_id", "guild_id", "webhook_id", "webhook_token") if k in info
        )
        return f"{request.method} {template}", major

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not request.path.startswith("/api/"):
            return await handler(request)
        fake = self.fake
        route, major = self.route_key(request)
        headers: dict[str, str] = {}
        code: int | None = None
        response: web.StreamResponse
        try:
            for fault in fake.faults.take(route):
                if fault.kind == "delay":
                    await asyncio.sleep(fault.seconds)
                elif fault.kind == "fail":
                    if fault.status in (502, 504):
                        raise APIError(fault.status, None, f"{fault.status} Bad Gateway (fake)")
                    raise APIError(fault.status, 0, f"{fault.status}: Internal Server Error")
                else:
                    raise fake.ratelimits.too_many(fault.seconds, is_global=fault.is_global, route=route)
            needs_auth = route not in NO_AUTH_ROUTES and not any(p in route for p in NO_AUTH_PARTS)
            if needs_auth and request.headers.get("Authorization") != f"Bot {fake.token}":
                raise errors.unauthorized()
            if request.match_info.route.resource is not None:
                headers = fake.ratelimits.check(route, major)
            response = await handler(request)
        except APIError as exc:
            response = _json(exc.body(), exc.status)
            headers.update(exc.headers)
            code = exc.code
        except web.HTTPNotFound:
            response = _json(errors.not_found().body(), 404)
            code = errors.not_found().code
        except web.HTTPMethodNotAllowed:
            response = _json(errors.method_not_allowed().body(), 405)
        response.headers.update(headers)
        response.headers["Via"] = "1.1 google"
        fake.requests.append(_record(request.method, route, response.status, major, code, request.path))
        return response

    # Body parsing -------------------------------------------------------------------------------------
    async def read_body(self, request: web.Request) -> tuple[Any, list[_Upload]]:
        from .server import _Upload

        if request.content_type.startswith("multipart/"):
            body: Any = {}
            uploads: list[_Upload] = []
            total = 0
            reader = await request.multipart()
            while True:
                part = await reader.next()
                if part is None:
                    break
                if not isinstance(part, BodyPartReader):  # nested multipart is not a thing here
                    continue
                data = await part.read(decode=False)
                name = part.name or ""
                if name == "payload_json":
                    try:
                        body = json.loads(data)
                    except ValueError:
                        raise errors.invalid_json() from None
                elif name.startswith("files[") and name.endswith("]"):
                    total += len(data)
                    uploads.append(
                        _Upload(
                            index=_int(name[6:-1]),
                            filename=part.filename or "unknown",
                            content_type=part.headers.get("Content-Type"),
                            data=bytes(data),
                        )
                    )
            if total > self.fake.config.attachment_size_limit:
                raise errors.entity_too_large()
            return body, uploads
        raw = await request.read()
        if not raw:
            return {}, []
        try:
            return json.loads(raw), []
        except ValueError:
            raise errors.invalid_json() from None

    async def read_json(self, request: web.Request) -> JSON:
        body, _ = await self.read_body(request)
        if not isinstance(body, dict):
            fe = FormErrors()
            fe.add((), "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType")
            fe.raise_if_any()
        assert isinstance(body, dict)
        return body

    # Lookups ------------------------------------------------------------------------------------------
    def channel(self, request: web.Request) -> FakeChannel:
        channel = self.fake.channels.get(_int(request.match_info["channel_id"]))
        if channel is None:
            raise errors.unknown_channel()
        return channel

    def bot_perms(self, channel: FakeChannel) -> int:
        if channel.guild is None:
            return perms.ALL & ~perms.ADMINISTRATOR
        return channel.guild.permissions_in(self.fake.bot_user, channel)

    def require(self, channel: FakeChannel, needed: int) -> None:
        have = self.bot_perms(channel)
        if not have & perms.VIEW_CHANNEL:
            raise errors.missing_access()
        if have & needed != needed:
            raise errors.missing_permissions()

    def message(self, channel: FakeChannel, message_id: str) -> FakeMessage:
        msg = self.fake.messages_by_id.get(_int(message_id))
        if msg is None or msg.channel is not channel or msg.deleted or msg.ephemeral:
            raise errors.unknown_message()
        return msg

    # Gateway discovery, identity ----------------------------------------------------------------------------
    async def get_gateway(self, request: web.Request) -> web.StreamResponse:
        return _json({"url": self.fake.config.gateway_url})

    async def get_gateway_bot(self, request: web.Request) -> web.StreamResponse:
        cfg = self.fake.config
        return _json(
            {
                "url": cfg.gateway_url,
                "shards": cfg.recommended_shards,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": max(0, 1000 - self.fake.gateway.stats.identifies),
                    "reset_after": 86_400_000,
                    "max_concurrency": 1,
                },
            }
        )

    async def get_me(self, request: web.Request) -> web.StreamResponse:
        me = self.fake.bot_user.payload() | {
            "verified": True,
            "mfa_enabled": False,
            "locale": "en-US",
            "email": None,
        }
        return _json(me)

    async def get_user(self, request: web.Request) -> web.StreamResponse:
        user = self.fake.users.get(_int(request.match_info["user_id"]))
        if user is None:
            raise errors.unknown_user()
        return _json(user.payload())

    async def get_application(self, request: web.Request) -> web.StreamResponse:
        fake = self.fake
        return _json(
            {
                "id": str(fake.application_id),
                "name": fake.bot_user.username,
                "icon": None,
                "description": "",
                "summary": "",
                "type": None,
                "bot": fake.bot_user.payload(),
                "bot_public": True,
                "bot_require_code_grant": False,
                "owner": fake.owner.payload(),
                "team": None,
                "verify_key": "0" * 64,
                "flags": fake.config.application_flags,
                "tags": [],
                "redirect_uris": [],
                "interactions_endpoint_url": None,
                "approximate_guild_count": len(fake.guilds),
                "integration_types_config": {"0": {}},
            }
        )

    # Guilds -------------------------------------------------------------------------------------------
    def guild(self, request: web.Request) -> Any:
        guild = self.fake.guilds.get(_int(request.match_info["guild_id"]))
        if guild is None:
            raise errors.unknown_guild()
        return guild

    async def get_guild(self, request: web.Request) -> web.StreamResponse:
        data = self.guild(request).payload(members=[])
        for key in (
            "members",
            "channels",
            "threads",
            "presences",
            "voice_states",
            "joined_at",
            "large",
            "member_count",
            "unavailable",
            "stage_instances",
            "guild_scheduled_events",
            "soundboard_sounds",
        ):
            data.pop(key, None)
        return _json(data)

    async def get_guild_channels(self, request: web.Request) -> web.StreamResponse:
        return _json([c.payload() for c in self.guild(request).channels.values()])

    async def get_guild_roles(self, request: web.Request) -> web.StreamResponse:
        return _json([r.payload() for r in self.guild(request).roles.values()])

    async def get_member(self, request: web.Request) -> web.StreamResponse:
        member = self.guild(request).members.get(_int(request.match_info["user_id"]))
        if member is None:
            raise errors.unknown_member()
        return _json(member.payload())

    # Channels and messages ----------------------------------------------------------------------------
    async def get_channel(self, request: web.Request) -> web.StreamResponse:
        channel = self.channel(request)
        if channel.guild is not None and not self.bot_perms(channel) & perms.VIEW_CHANNEL:
            raise errors.missing_access()
        return _json(channel.payload())

    async def create_dm(self, request: web.Request) -> web.StreamResponse:
        body = await self.read_json(request)
        try:
            user = self.fake.users.get(int(body.get("recipient_id") or 0))
        except (TypeError, ValueError):
            user = None
        if user is None:
            raise errors.unknown_user()
        return _json(self.fake.dm_channel(user).payload())

    def check_dm_allowed(self, channel: FakeChannel) -> None:
        user = channel.recipient
        assert user is not None
        shares_guild = any(user.id in g.members for g in self.fake.guilds.values())
        if user.bot or not user.dms_open or not shares_guild:
            raise errors.cannot_send_to_user()

    async def list_messages(self, request: web.Request) -> web.StreamResponse:
        channel = self.channel(request)
        self.require(channel, 0)
        if not self.bot_perms(channel) & perms.READ_MESSAGE_HISTORY:
            return _json([])
        q = request.query
        try:
            limit = int(q.get("limit", "50"))
        except ValueError:
            limit = 0
        if not 1 <= limit <= 100:
            fe = FormErrors()
            fe.add(("limit",), "NUMBER_TYPE_MAX", "int value should be less than or equal to 100.")
            fe.raise_if_any()
        msgs = sorted(channel.visible_messages(), key=lambda m: m.id, reverse=True)
        if "before" in q:
            msgs = [m for m in msgs if m.id < _int(q["before"])]
        if "after" in q:
            msgs = sorted((m for m in msgs if m.id > _int(q["after"])), key=lambda m: m.id)
        return _json([m.payload() for m in msgs[:limit]])

    async def create_message(self, request: web.Request) -> web.StreamResponse:
        fake = self.fake
        channel = self.channel(request)
        body, uploads = await self.read_body(request)
        if not isinstance(body, dict):
            raise errors.invalid_json()
        if channel.type == DM:
            self.check_dm_allowed(channel)
        else:
            self.require(channel, perms.SEND_MESSAGES | (perms.ATTACH_FILES if uploads else 0))
        validate_message(body, files=len(uploads), editing=False)
        body["flags"] = int(body.get("flags") or 0) & SENDABLE_FLAGS & ~FLAG_EPHEMERAL
        extra: JSON = {}
        ref = body.get("message_reference")
        if ref:
            target = fake.messages_by_id.get(int(ref.get("message_id") or 0))
            if target is None or target.channel is not channel or target.deleted:
                fe = FormErrors()
                fe.add(("message_reference",), "MESSAGE_REFERENCE_UNKNOWN_MESSAGE", "Unknown message")
                fe.raise_if_any()
            else:
                extra["type"] = MSG_REPLY
                extra["message_reference"] = {
                    "type": 0,
                    "message_id": str(target.id),
                    "channel_id": str(channel.id),
                    **({"guild_id": str(channel.guild.id)} if channel.guild else {}),
                }
        msg = fake.create_message(channel, fake.bot_user, body, uploads, extra=extra)
        return _json(msg.payload())

    async def get_message(self, request: web.Request) -> web.StreamResponse:
        channel = self.channel(request)
        self.require(channel, perms.READ_MESSAGE_HISTORY)
        return _json(self.message(channel, request.match_info["message_id"]).payload())

    async def edit_message(self, request: web.Request) -> web.StreamResponse:
        channel = self.channel(request)
        msg = self.message(channel, request.match_info["message_id"])
        body, uploads = await self.read_body(request)
        if not isinstance(body, dict):
            raise errors.invalid_json()
        if msg.author is not self.fake.bot_user:
            raise errors.cannot_edit_others()
        validate_message(body, files=len(uploads), editing=True)
        self.fake.edit_message(msg, body, uploads, clear_loading=False)
        return _json(msg.payload())

    async def delete_message(self, request: web.Request) -> web.StreamResponse:
        channel = self.channel(request)
        msg = self.message(channel, request.match_info["message_id"])
        if msg.author is not self.fake.bot_user and channel.type != DM:
            self.require(channel, perms.MANAGE_MESSAGES)
        self.fake.delete_message(msg)
        return _no_content()

    async def typing(self, request: web.Request) -> web.StreamResponse:
        channel = self.channel(request)
        if channel.type != DM:
            self.require(channel, perms.SEND_MESSAGES)
        return _no_content()

    async def cdn(self, request: web.Request) -> web.StreamResponse:
        att = self.fake.find_attachment(_int(request.match_info["attachment_id"]))
        if att is None or att.filename != request.match_info["filename"]:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=att.data, content_type=att.content_type or "application/octet-stream")

    # Application commands -----------------------------------------------------------------------------
    def command_scope(self, request: web.Request) -> int | None:
        if _int(request.match_info["application_id"]) != self.fake.application_id:
            raise errors.missing_access()
        if "guild_id" not in request.match_info:
            return None
        guild = self.guild(request)
        if self.fake.bot_user.id not in guild.members:
            raise errors.missing_access()
        return int(guild.id)

    async def list_commands(self, request: web.Request) -> web.StreamResponse:
        return _json(self.fake.commands.list(self.command_scope(request)))

    async def overwrite_commands(self, request: web.Request) -> web.StreamResponse:
        scope = self.command_scope(request)
        body, _ = await self.read_body(request)
        result = self.fake.commands.bulk_overwrite(scope, body)
        self.fake.changed()
        return _json(result)

    async def upsert_command(self, request: web.Request) -> web.StreamResponse:
        scope = self.command_scope(request)
        cmd, created = self.fake.commands.upsert(scope, await self.read_json(request))
        self.fake.changed()
        return _json(cmd, 201 if created else 200)

    async def get_command(self, request: web.Request) -> web.StreamResponse:
        scope = self.command_scope(request)
        return _json(self.fake.commands.get(scope, _int(request.match_info["command_id"])))

    async def edit_command(self, request: web.Request) -> web.StreamResponse:
        scope = self.command_scope(request)
        body = await self.read_json(request)
        return _json(self.fake.commands.edit(scope, _int(request.match_info["command_id"]), body))

    async def delete_command(self, request: web.Request) -> web.StreamResponse:
        scope = self.command_scope(request)
        self.fake.commands.delete(scope, _int(request.match_info["command_id"]))
        return _no_content()

    # Interactions -------------------------------------------------------------------------------------
    def interaction_message_extra(self, interaction: FakeInteraction) -> JSON:
        fake = self.fake
        name = ""
        if interaction.type in (APPLICATION_COMMAND, 4):
            parts = [str(interaction.data.get("name"))]
            opts = interaction.data.get("options") or []
            while opts and opts[0].get("type") in (1, 2):
                parts.append(str(opts[0]["name"]))
                opts = opts[0].get("options") or []
            name = " ".join(parts)
        owners = {"0": str(interaction.guild.id)} if interaction.guild else {"1": str(interaction.user.id)}
        meta: JSON = {
            "id": str(interaction.id),
            "type": interaction.type,
            "user": interaction.user.payload(),
            "authorizing_integration_owners": owners,
        }
        if interaction.type == APPLICATION_COMMAND:
            meta["name"] = name
            meta["command_type"] = 1
        if interaction.message is not None:
            meta["interacted_message_id"] = str(interaction.message.id)
        legacy: JSON = {
            "id": str(interaction.id),
            "type": interaction.type,
            "name": name,
            "user": interaction.user.payload(),
        }
        return {
            "webhook_id": fake.application_id,
            "application_id": fake.application_id,
            "interaction_metadata": meta,
            "interaction_legacy": legacy,
            "type": MSG_CHAT_INPUT_COMMAND if interaction.type == APPLICATION_COMMAND else MSG_DEFAULT,
        }

    def response_message(
        self, interaction: FakeInteraction, data: JSON, uploads: list[_Upload], *, extra_flags: int = 0
    ) -> FakeMessage:
        flags = int(data.get("flags") or 0) & SENDABLE_FLAGS
        body = dict(data, flags=flags | extra_flags)
        ephemeral_for: FakeUser | None = interaction.user if flags & FLAG_EPHEMERAL else None
        return self.fake.create_message(
            interaction.channel,
            self.fake.bot_user,
            body,
            uploads,
            ephemeral_for=ephemeral_for,
            extra=self.interaction_message_extra(interaction),
        )

    async def interaction_callback(self, request: web.Request) -> web.StreamResponse:
        fake = self.fake
        interaction = fake.interactions.get(_int(request.match_info["webhook_id"]))
        if interaction is None:
            raise errors.unknown_interaction()
        try:
            if interaction.token != request.match_info["webhook_token"]:
                raise errors.invalid_webhook_token()
            return await self._callback(request, interaction)
        except APIError as exc:
            interaction.errors.append(exc)
            fake.changed()
            raise

    async def _callback(self, request: web.Request, interaction: FakeInteraction) -> web.StreamResponse:
        fake = self.fake
        body, uploads = await self.read_body(request)
        if interaction.callback is not None:
            raise errors.already_acknowledged()
        if time.monotonic() - interaction.created_at > fake.config.interaction_deadline:
            raise errors.unknown_interaction()
        if not isinstance(body, dict):
            raise errors.invalid_json()
        ctype = body.get("type")
        if not isinstance(ctype, int) or ctype not in ALLOWED_CALLBACKS.get(interaction.type, set()):
            raise errors.form_error(
                ("type",), "INTERACTION_RESPONSE_TYPE_INVALID", "Interaction response type is invalid"
            )
        data = body.get("data") or {}
        if not isinstance(data, dict):
            raise errors.invalid_json()
        resource_message: FakeMessage | None = None
        if ctype == CHANNEL_MESSAGE_WITH_SOURCE:
            validate_message(data, files=len(uploads), editing=False, prefix=("data",))
            msg = self.response_message(interaction, data, uploads)
            interaction.original = resource_message = msg
            interaction.owns_original = True
        elif ctype == DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE:
            msg = self.response_message(
                interaction, {"flags": data.get("flags") or 0}, [], extra_flags=FLAG_LOADING
            )
            interaction.original = resource_message = msg
            interaction.owns_original = True
        elif ctype == DEFERRED_UPDATE_MESSAGE:
            interaction.original = interaction.message
        elif ctype == UPDATE_MESSAGE:
            validate_message(data, files=len(uploads), editing=True, prefix=("data",))
            target = interaction.message
            assert target is not None
            fake.edit_message(target, data, uploads, clear_loading=False)
            interaction.original = resource_message = target
        elif ctype == APPLICATION_COMMAND_AUTOCOMPLETE_RESULT:
            self.validate_choices(data)
        elif ctype == MODAL:
            self.validate_modal(data)
        interaction.callback = Callback(ctype, data, time.monotonic())
        fake.changed()
        if request.query.get("with_response", "").lower() not in ("1", "true"):
            return _no_content()
        info: JSON = {"id": str(interaction.id), "type": interaction.type}
        resource: JSON = {"type": ctype}
        if resource_message is not None:
            info.update(
                response_message_id=str(resource_message.id),
                response_message_loading=resource_message.loading,
                response_message_ephemeral=resource_message.ephemeral,
            )
            resource["message"] = resource_message.payload()
        return _json({"interaction": info, "resource": resource})

    @staticmethod
    def validate_choices(data: JSON) -> None:
        fe = FormErrors(("data",))
        choices = data.get("choices")
        if not isinstance(choices, list):
            fe.required(("choices",))
            fe.raise_if_any()
            return
        if len(choices) > 25:
            fe.max_length(("choices",), 25)
        for i, choice in enumerate(choices):
            name = choice.get("name")
            if not isinstance(name, str) or not 1 <= len(name) <= 100:
                fe.add(("choices", i, "name"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
            value = choice.get("value")
            if value is None:
                fe.required(("choices", i, "value"))
            elif isinstance(value, str) and len(value) > 100:
                fe.max_length(("choices", i, "value"), 100)
        fe.raise_if_any()

    @staticmethod
    def validate_modal(data: JSON) -> None:
        fe = FormErrors(("data",))
        for key, limit in (("custom_id", 100), ("title", 45)):
            value = data.get(key)
            if not value:
                fe.required((key,))
            elif len(value) > limit:
                fe.max_length((key,), limit)
        comps = data.get("components") or []
        if not 1 <= len(comps) <= 5:
            fe.add(("components",), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 5 in length.")
        fe.raise_if_any()

    # Webhooks (interaction followups and original response) -------------------------------------------
    def webhook_interaction(self, request: web.Request) -> FakeInteraction:
        fake = self.fake
        interaction = fake.interactions_by_token.get(request.match_info["webhook_token"])
        if interaction is None or _int(request.match_info["webhook_id"]) != fake.application_id:
            raise errors.unknown_webhook()
        if time.monotonic() - interaction.created_at > fake.config.token_ttl:
            raise errors.invalid_webhook_token()
        return interaction

    def webhook_message(self, interaction: FakeInteraction, message_id: str) -> FakeMessage:
        if message_id == "@original":
            msg = interaction.original
        else:
            wanted = _int(message_id)
            candidates = [*interaction.followups, *([interaction.original] if interaction.original else [])]
            msg = next((m for m in candidates if m.id == wanted), None)
        if msg is None or msg.deleted:
            raise errors.unknown_message()
        return msg

    async def _guard(
        self, interaction: FakeInteraction, work: Callable[[], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        try:
            return await work()
        except APIError as exc:
            interaction.errors.append(exc)
            self.fake.changed()
            raise

    async def execute_webhook(self, request: web.Request) -> web.StreamResponse:
        interaction = self.webhook_interaction(request)

        async def work() -> web.StreamResponse:
            body, uploads = await self.read_body(request)
            if not isinstance(body, dict):
                raise errors.invalid_json()
            if interaction.callback is None:
                raise errors.unknown_webhook()
            validate_message(body, files=len(uploads), editing=False)
            original = interaction.original
            if (
                interaction.callback.type == DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE
                and original is not None
                and original.loading
                and not interaction.followup_replaced_loading
            ):
                # Documented compatibility behaviour: the first followup after a "thinking" defer edits the
                # loading message (keeping its ephemerality) instead of creating a new message.
                interaction.followup_replaced_loading = True
                body.pop("flags", None)
                self.fake.edit_message(original, body, uploads, clear_loading=True)
                msg = original
            else:
                msg = self.response_message(interaction, body, uploads)
                interaction.followups.append(msg)
                self.fake.changed()
            if request.query.get("wait", "").lower() in ("1", "true"):
                return _json(msg.payload())
            return _no_content()

        return await self._guard(interaction, work)

    async def get_webhook_message(self, request: web.Request) -> web.StreamResponse:
        interaction = self.webhook_interaction(request)
        return _json(self.webhook_message(interaction, request.match_info["message_id"]).payload())

    async def edit_webhook_message(self, request: web.Request) -> web.StreamResponse:
        interaction = self.webhook_interaction(request)

        async def work() -> web.StreamResponse:
            msg = self.webhook_message(interaction, request.match_info["message_id"])
            body, uploads = await self.read_body(request)
            if not isinstance(body, dict):
                raise errors.invalid_json()
            validate_message(body, files=len(uploads), editing=True)
            self.fake.edit_message(msg, body, uploads, clear_loading=msg.loading)
            return _json(msg.payload())

        return await self._guard(interaction, work)

    async def delete_webhook_message(self, request: web.Request) -> web.StreamResponse:
        interaction = self.webhook_interaction(request)
        msg = self.webhook_message(interaction, request.match_info["message_id"])
        self.fake.delete_message(msg)
        return _no_content()


def _record(
    method: str, route: str, status: int, major: str = "", code: int | None = None, path: str = ""
) -> Any:
    from .server import RequestRecord

    return RequestRecord(method, route, status, time.monotonic(), major, code, path)


def build_app(fake: FakeDiscord) -> web.Application:
    api = RestApi(fake)
    app = web.Application(middlewares=[api.middleware], client_max_size=64 * 1024 * 1024)
    r = app.router
    p = API_PREFIX
    r.add_get(f"{p}/gateway", api.get_gateway)
    r.add_get(f"{p}/gateway/bot", api.get_gateway_bot)
    r.add_get(f"{p}/users/@me", api.get_me)
    r.add_post(f"{p}/users/@me/channels", api.create_dm)
    r.add_get(f"{p}/users/{{user_id}}", api.get_user)
    r.add_get(f"{p}/oauth2/applications/@me", api.get_application)
    r.add_get(f"{p}/applications/@me", api.get_application)
    r.add_get(f"{p}/guilds/{{guild_id}}", api.get_guild)
    r.add_get(f"{p}/guilds/{{guild_id}}/channels", api.get_guild_channels)
    r.add_get(f"{p}/guilds/{{guild_id}}/roles", api.get_guild_roles)
    r.add_get(f"{p}/guilds/{{guild_id}}/members/{{user_id}}", api.get_member)
    r.add_get(f"{p}/channels/{{channel_id}}", api.get_channel)
    r.add_get(f"{p}/channels/{{channel_id}}/messages", api.list_messages)
    r.add_post(f"{p}/channels/{{channel_id}}/messages", api.create_message)
    r.add_get(f"{p}/channels/{{channel_id}}/messages/{{message_id}}", api.get_message)
    r.add_patch(f"{p}/channels/{{channel_id}}/messages/{{message_id}}", api.edit_message)
    r.add_delete(f"{p}/channels/{{channel_id}}/messages/{{message_id}}", api.delete_message)
    r.add_post(f"{p}/channels/{{channel_id}}/typing", api.typing)
    for scope in ("/applications/{application_id}", "/applications/{application_id}/guilds/{guild_id}"):
        r.add_get(f"{p}{scope}/commands", api.list_commands)
        r.add_put(f"{p}{scope}/commands", api.overwrite_commands)
        r.add_post(f"{p}{scope}/commands", api.upsert_command)
        r.add_get(f"{p}{scope}/commands/{{command_id}}", api.get_command)
        r.add_patch(f"{p}{scope}/commands/{{command_id}}", api.edit_command)
        r.add_delete(f"{p}{scope}/commands/{{command_id}}", api.delete_command)
    r.add_post(f"{p}/interactions/{{webhook_id}}/{{webhook_token}}/callback", api.interaction_callback)
    r.add_post(f"{p}/webhooks/{{webhook_id}}/{{webhook_token}}", api.execute_webhook)
    hook_msg = f"{p}/webhooks/{{webhook_id}}/{{webhook_token}}/messages/{{message_id}}"
    r.add_get(hook_msg, api.get_webhook_message)
    r.add_patch(hook_msg, api.edit_webhook_message)
    r.add_delete(hook_msg, api.delete_webhook_message)
    r.add_get("/attachments/{channel_id}/{attachment_id}/{filename}", api.cdn)
    r.add_get("/", fake.gateway.handle)
    return app
