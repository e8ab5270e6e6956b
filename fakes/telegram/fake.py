"""`FakeTelegram`: the Bot API server's behaviour plus the users and groups around the bot.

Tests play the people (a user sends a command, presses a button, blocks the bot, an admin removes
the bot) and read back what those people would see; the bot talks to this object through one of
the transports (in-process `BaseRequest` or loopback HTTP) with the real python-telegram-bot.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .entities import detect_entities
from .errors import ApiError, FakeUsageError
from .faults import Fault, FaultInjector, FaultKind, server_error_body
from .flood import FloodControl, FloodLimits
from .methods import BotApi, Described
from .models import (
    ACTIVE_STATUSES,
    ApiCall,
    CallbackQueryRecord,
    FakeChat,
    FakeMessage,
    FakeStats,
    FakeUser,
    JSONDict,
    UploadedFile,
)
from .params import Params
from .webhook import Poster, WebhookDelivery, WebhookPolicy
from .world import WebhookAttempt, World, member_json

DEFAULT_TOKEN = "123456789:AAFakeTelegramTokenForTests_0123456"
_TOKEN_RE = re.compile(r"(\d{1,20}):[A-Za-z0-9_-]{30,64}")
_PAYLOAD_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_HANG_FOREVER = 24 * 3600.0

T = TypeVar("T")


@dataclass(frozen=True)
class ApiResponse:
    """An HTTP answer of the fake: status, body bytes and content type."""

    status: int
    body: bytes
    content_type: str = "application/json"

    def json(self) -> Any:
        return json.loads(self.body)


def _json_response(status: int, payload: JSONDict) -> ApiResponse:
    return ApiResponse(status, json.dumps(payload, ensure_ascii=False).encode())


ChatRef = FakeChat | FakeUser


class FakeTelegram:
    """The fake Bot API server for one bot token.

    Args:
        token: the bot token the server accepts (`<bot id>:<secret>`); others get 401.
        bot_username / bot_first_name: the bot's identity returned by getMe.
        privacy_mode: as set in BotFather; in groups the bot then only sees commands, replies to
            it and mentions of it (unless it is an admin).
        limits: flood control; `FloodLimits()` are Telegram-like defaults,
            `FloodLimits.disabled()` turns it off.
        callback_answer_timeout: seconds after a button press within which answerCallbackQuery
            is accepted (Telegram: about 15).
        webhook_policy / webhook_poster: retry bounds for webhook delivery, and a replacement for
            the HTTP POST (mainly for tests of the fake itself).
        clock: monotonic clock used by flood control and callback expiry (injectable).
        wall_clock: source of message dates, and of the 48 hours after which deleteMessage refuses a
            message (pass a clock the test can move to age messages).
    """

    def __init__(
        self,
        token: str = DEFAULT_TOKEN,
        *,
        bot_username: str = "thousand_test_bot",
        bot_first_name: str = "Thousand",
        privacy_mode: bool = True,
        limits: FloodLimits | None = None,
        callback_answer_timeout: float = 15.0,
        webhook_policy: WebhookPolicy | None = None,
        webhook_poster: Poster | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        match = _TOKEN_RE.fullmatch(token)
        if match is None:
            raise ValueError("a bot token looks like '<digits>:<30+ characters of [A-Za-z0-9_-]>'")
        self.token = token
        self.bot = FakeUser(
            id=int(match.group(1)), first_name=bot_first_name, username=bot_username, is_bot=True
        )
        self._world = World(self.bot, clock=clock, wall_clock=wall_clock)
        self._flood = FloodControl(limits or FloodLimits(), clock)
        self._webhook = WebhookDelivery(self._world, webhook_policy or WebhookPolicy(), webhook_poster)
        self._api = BotApi(
            self._world,
            self._flood,
            privacy_mode=privacy_mode,
            callback_answer_timeout=callback_answer_timeout,
            on_webhook_change=self._webhook.ensure_running,
        )
        self.privacy_mode = privacy_mode
        self.faults = FaultInjector()
        self.stats = FakeStats()
        self.calls: list[ApiCall] = []

    # ----------------------------------------------------------------- lifecycle

    async def close(self) -> None:
        """Stop webhook delivery and release pending long polls."""
        self._api.closed = True
        self._world.changed.notify()
        await self._webhook.stop()

    async def __aenter__(self) -> FakeTelegram:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----------------------------------------------------------------- server side

    async def handle(
        self,
        token: str,
        method: str,
        params: Mapping[str, object],
        files: Mapping[str, UploadedFile] | None = None,
    ) -> ApiResponse:
        """Serve one Bot API request, exactly as both transports hand it over."""
        name = method.lower()
        canonical = self._api.canonical.get(name, method)
        call = ApiCall(canonical, dict(params), dict(files or {}))
        self.calls.append(call)
        self.stats.calls[canonical] += 1
        if token != self.token:
            response = _json_response(401, ApiError(401, "Unauthorized").payload())
        elif name not in self._api.handlers:
            response = _json_response(404, ApiError(404, "Not Found").payload())
        else:
            fault = self.faults.take(name)
            if fault is None:
                response = await self._invoke(name, params, files)
            else:
                self.stats.injected_faults += 1
                response = await self._faulty(fault, name, params, files)
        call.status = response.status
        if response.status != 200 and response.content_type == "application/json":
            call.description = response.json().get("description")
        self.stats.statuses[response.status] += 1
        self.stats.flood_rejections = self._flood.rejected
        return response

    async def _invoke(
        self, name: str, params: Mapping[str, object], files: Mapping[str, UploadedFile] | None
    ) -> ApiResponse:
        try:
            result = await self._api.handlers[name](Params(params, files))
        except ApiError as error:
            return _json_response(error.code, error.payload())
        if isinstance(result, Described):
            return _json_response(
                200, {"ok": True, "result": result.result, "description": result.description}
            )
        return _json_response(200, {"ok": True, "result": result})

    async def _faulty(
        self, fault: Fault, name: str, params: Mapping[str, object], files: Mapping[str, UploadedFile] | None
    ) -> ApiResponse:
        if fault.kind is FaultKind.SERVER_ERROR:
            body, content_type = server_error_body(fault.status)
            return ApiResponse(fault.status, body, content_type)
        if fault.kind is FaultKind.FLOOD:
            return _json_response(429, ApiError.too_many_requests(fault.retry_after).payload())
        stall = _HANG_FOREVER if fault.seconds is None else fault.seconds
        if fault.apply:
            response = await self._invoke(name, params, files)
            await asyncio.sleep(stall)
            return response
        await asyncio.sleep(stall)
        return await self._invoke(name, params, files)

    def download(self, token: str, file_path: str) -> ApiResponse:
        """Serve `/file/bot<token>/<file_path>`."""
        if token != self.token:
            return _json_response(401, ApiError(401, "Unauthorized").payload())
        stored = self._world.files_by_path.get(file_path)
        if stored is None:
            return _json_response(404, ApiError(404, "Not Found").payload())
        return ApiResponse(200, stored.data, stored.mime_type or "application/octet-stream")

    async def call(self, method: str, **params: object) -> Any:
        """Call a method as the bot would, without any client library; raises ApiError."""
        response = await self.handle(self.token, method, params)
        if response.content_type != "application/json":
            raise ApiError(response.status, response.body.decode(errors="replace"))
        payload = response.json()
        if not payload["ok"]:
            raise ApiError(payload["error_code"], payload["description"], payload.get("parameters"))
        return payload["result"]

    # ----------------------------------------------------------------- setting the scene

    def add_user(
        self,
        first_name: str,
        *,
        username: str | None = None,
        last_name: str | None = None,
        language_code: str | None = "en",
        user_id: int | None = None,
    ) -> FakeUser:
        """A person; they have not started the bot yet (see `user_starts_bot`)."""
        user = FakeUser(
            id=user_id if user_id is not None else self._world.new_user_id(),
            first_name=first_name,
            last_name=last_name,
            username=username,
            language_code=language_code,
        )
        if user.id in self._world.users or user.id == self.bot.id:
            raise FakeUsageError(f"user id {user.id} is taken")
        self._world.users[user.id] = user
        return user

    def add_group(
        self,
        title: str,
        *,
        members: tuple[FakeUser, ...] | list[FakeUser] = (),
        admins: tuple[FakeUser, ...] | list[FakeUser] = (),
        creator: FakeUser | None = None,
        supergroup: bool = True,
        username: str | None = None,
        bot_status: str = "member",
        bot_can_delete: bool = True,
    ) -> FakeChat:
        """A group the bot is already in (`bot_status` "member", "administrator" or "left"); an
        administrator bot without `bot_can_delete` lacks can_delete_messages."""
        if bot_status not in ("member", "administrator", "left"):
            raise FakeUsageError(f"unsupported bot status {bot_status!r}")
        chat = FakeChat(
            id=self._world.new_chat_id(supergroup),
            type="supergroup" if supergroup else "group",
            title=title,
            username=username,
            bot_status=bot_status,
            bot_can_delete=bot_can_delete,
        )
        owner = creator or (admins[0] if admins else (members[0] if members else None))
        for user in members:
            chat.set_member(user, "member")
        for user in admins:
            chat.set_member(user, "administrator")
        if owner is not None:
            chat.set_member(owner, "creator")
        self._world.chats[chat.id] = chat
        return chat

    def private_chat(self, user: FakeUser) -> FakeChat:
        return self._world.private_chat(user)

    def set_member_status(self, chat: FakeChat, user: FakeUser, status: str) -> None:
        """Silently change someone's status (no update), e.g. to promote a player to admin."""
        if status not in ("creator", "administrator", "member", "left", "kicked"):
            raise FakeUsageError(f"unknown member status {status!r}")
        chat.set_member(user, status)

    # ----------------------------------------------------------------- people acting

    def _chat_of(self, where: ChatRef) -> FakeChat:
        return self._world.private_chat(where) if isinstance(where, FakeUser) else where

    def _bot_sees(self, chat: FakeChat, message: FakeMessage) -> bool:
        if not chat.is_group:
            return True
        if chat.bot_status not in ACTIVE_STATUSES:
            return False
        if not self.privacy_mode or chat.bot_status == "administrator" or message.service:
            return True
        text = message.text or ""
        if message.reply_to is not None and message.reply_to.from_bot:
            return True
        username = (self.bot.username or "").lower()
        match = re.match(r"/[A-Za-z0-9_]+(?:@([A-Za-z0-9_]+))?", text)
        if match is not None and (match.group(1) is None or match.group(1).lower() == username):
            return True
        return f"@{username}" in text.lower()

    def _deliver_message(self, chat: FakeChat, message: FakeMessage) -> None:
        if self._bot_sees(chat, message):
            self._world.enqueue("message", message.to_api())

    def user_sends(
        self, where: ChatRef, user: FakeUser, text: str, *, reply_to: FakeMessage | int | None = None
    ) -> FakeMessage:
        """`user` writes `text` in a group or in their private chat with the bot (`where=user`).

        Commands get `bot_command` entities (also `/cmd@botname`); in groups with privacy mode
        the bot only receives what Telegram would deliver to it.
        """
        chat = self._chat_of(where)
        if chat.user is not None:
            if chat.user is not user:
                raise FakeUsageError("only the chat's own user writes in a private chat with the bot")
            if user.blocked_bot or not user.started_bot:
                raise FakeUsageError("the user has to start the bot first (user_starts_bot)")
        elif not chat.is_member(user):
            raise FakeUsageError(f"{user.full_name} is not a member of {chat.title!r}")
        elif chat.migrated_to is not None:
            raise FakeUsageError(f"{chat.title!r} was upgraded: people write in the supergroup")
        if not text.strip():
            raise FakeUsageError("Telegram apps do not send empty messages")
        target: FakeMessage | None
        if isinstance(reply_to, int):
            target = self._world.find_message(chat, reply_to)
            if target is None or target.deleted:
                raise FakeUsageError(f"no message {reply_to} to reply to")
        else:
            target = reply_to
        message = self._world.add_message(
            chat, user, text=text, entities=detect_entities(text), reply_to=target
        )
        self._deliver_message(chat, message)
        return message

    def user_starts_bot(self, user: FakeUser, payload: str | None = None) -> FakeMessage:
        """The user presses START (optionally via a `t.me/<bot>?start=<payload>` link)."""
        if payload is not None and not _PAYLOAD_RE.fullmatch(payload):
            raise FakeUsageError("a start payload is 1-64 characters of A-Z, a-z, 0-9, _ and -")
        chat = self._world.private_chat(user)
        if user.blocked_bot:
            self._my_chat_member(chat, user, "kicked", "member")
        user.blocked_bot = False
        user.started_bot = True
        text = "/start" if payload is None else f"/start {payload}"
        message = self._world.add_message(chat, user, text=text, entities=detect_entities(text))
        self._deliver_message(chat, message)
        return message

    def user_blocks_bot(self, user: FakeUser) -> None:
        """The user blocks the bot: my_chat_member update, later sends answer 403."""
        chat = self._world.private_chat(user)
        if user.blocked_bot:
            raise FakeUsageError("the user already blocked the bot")
        user.blocked_bot = True
        self._my_chat_member(chat, user, "member", "kicked")

    def user_presses(self, where: ChatRef, user: FakeUser, message_id: int, callback_data: str) -> str:
        """`user` presses the inline button carrying `callback_data`; returns the query id."""
        chat = self._chat_of(where)
        if chat.user is not None and chat.user is not user:
            raise FakeUsageError("only the chat's own user sees a private chat with the bot")
        if chat.is_group and not chat.is_member(user):
            raise FakeUsageError(f"{user.full_name} is not a member of {chat.title!r}")
        message = self._world.find_message(chat, message_id)
        if message is None or message.deleted:
            raise FakeUsageError(f"message {message_id} is not in the chat")
        if callback_data not in message.callback_data:
            raise FakeUsageError(f"message {message_id} has no button with callback_data {callback_data!r}")
        query = CallbackQueryRecord(
            id=self._world.new_query_id(),
            user=user,
            chat=chat,
            message=message,
            data=callback_data,
            created_at=self._world.clock(),
        )
        self._world.callback_queries[query.id] = query
        if not chat.is_group or chat.bot_status in ACTIVE_STATUSES:
            self._world.enqueue(
                "callback_query",
                {
                    "id": query.id,
                    "from": user.to_api(),
                    "message": message.to_api(),
                    "chat_instance": self._world.chat_instance(chat),
                    "data": callback_data,
                },
            )
        return query.id

    def user_joins(self, chat: FakeChat, user: FakeUser) -> FakeMessage:
        if chat.is_member(user):
            raise FakeUsageError(f"{user.full_name} is already in {chat.title!r}")
        chat.set_member(user, "member")
        message = self._world.add_message(chat, user, service={"new_chat_members": [user.to_api()]})
        self._deliver_message(chat, message)
        return message

    def user_leaves(self, chat: FakeChat, user: FakeUser) -> FakeMessage:
        if not chat.is_member(user):
            raise FakeUsageError(f"{user.full_name} is not in {chat.title!r}")
        chat.set_member(user, "left")
        message = self._world.add_message(chat, user, service={"left_chat_member": user.to_api()})
        self._deliver_message(chat, message)
        return message

    def _group_admin(self, chat: FakeChat, by: FakeUser | None) -> FakeUser:
        if by is not None:
            return by
        for user_id, status in chat.members.items():
            if status in ("creator", "administrator"):
                return chat.users[user_id]
        raise FakeUsageError("the group has no admin to do that; pass by=")

    def _my_chat_member(self, chat: FakeChat, actor: FakeUser, old: str, new: str) -> None:
        self._world.enqueue(
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": actor.to_api(),
                "date": self._world.date(),
                "old_chat_member": member_json(self.bot, old),
                "new_chat_member": member_json(self.bot, new),
            },
        )

    def bot_added_to_group(
        self, chat: FakeChat, *, by: FakeUser | None = None, as_admin: bool = False
    ) -> None:
        """Someone adds the bot: my_chat_member and a new_chat_members service message."""
        if chat.bot_status in ACTIVE_STATUSES:
            raise FakeUsageError("the bot is already in the group")
        actor = self._group_admin(chat, by)
        old = chat.bot_status
        chat.bot_status = "administrator" if as_admin else "member"
        self._my_chat_member(chat, actor, old, chat.bot_status)
        message = self._world.add_message(chat, actor, service={"new_chat_members": [self.bot.to_api()]})
        self._world.enqueue("message", message.to_api())

    def bot_removed_from_group(self, chat: FakeChat, *, by: FakeUser | None = None) -> None:
        """An admin removes the bot: my_chat_member update; later sends answer 403 (kicked)."""
        if not chat.is_group or chat.bot_status not in ACTIVE_STATUSES:
            raise FakeUsageError("the bot is not in that group")
        actor = self._group_admin(chat, by)
        old = chat.bot_status
        chat.bot_status = "kicked"
        self._my_chat_member(chat, actor, old, "kicked")

    def upgrade_to_supergroup(self, chat: FakeChat, *, by: FakeUser | None = None) -> FakeChat:
        """An admin upgrades a basic group to a supergroup (Telegram also does it when the group grows or
        an admin turns on a supergroup-only setting): a new chat with a new id and the same people and
        bot status; the old chat is deactivated and answers sends, deletions and member queries with 400
        "group chat was upgraded to a supergroup chat" and `migrate_to_chat_id`. Both chats get their
        service message, delivered whatever the privacy mode: `migrate_to_chat_id` in the old chat, then
        `migrate_from_chat_id` in the new one. Returns the supergroup."""
        if chat.type != "group" or chat.migrated_to is not None:
            raise FakeUsageError("only a basic group that was not upgraded yet can be upgraded")
        actor = self._group_admin(chat, by)
        new = FakeChat(
            id=self._world.new_chat_id(True),
            type="supergroup",
            title=chat.title,
            members=dict(chat.members),
            users=dict(chat.users),
            bot_status=chat.bot_status,
        )
        self._world.chats[new.id] = new
        chat.migrated_to = new.id
        gone = self._world.add_message(chat, actor, service={"migrate_to_chat_id": new.id})
        came = self._world.add_message(new, actor, service={"migrate_from_chat_id": chat.id})
        if chat.bot_status in ACTIVE_STATUSES:
            self._world.enqueue("message", gone.to_api())
            self._world.enqueue("message", came.to_api())
        return new

    # ----------------------------------------------------------------- what people see

    def messages(self, where: ChatRef) -> list[FakeMessage]:
        """Messages currently visible in the chat (deleted ones excluded), oldest first."""
        return [m for m in self._chat_of(where).messages if not m.deleted]

    def all_messages(self, where: ChatRef) -> list[FakeMessage]:
        """Every message ever posted in the chat, deleted ones included."""
        return list(self._chat_of(where).messages)

    def bot_messages(self, where: ChatRef) -> list[FakeMessage]:
        return [m for m in self.messages(where) if m.from_bot]

    def last_bot_message(self, where: ChatRef) -> FakeMessage:
        sent = self.bot_messages(where)
        if not sent:
            raise FakeUsageError("the bot has not posted in that chat")
        return sent[-1]

    def message(self, where: ChatRef, message_id: int) -> FakeMessage:
        found = self._world.find_message(self._chat_of(where), message_id)
        if found is None:
            raise FakeUsageError(f"no message {message_id} in that chat")
        return found

    def chats_of(self, user: FakeUser) -> list[FakeChat]:
        """Chats the user is in and that involve the bot: their private chat and shared groups."""
        return [
            c for c in self._world.chats.values() if (c.user is user) or (c.is_group and c.is_member(user))
        ]

    def callback_query(self, query_id: str) -> CallbackQueryRecord:
        return self._world.callback_queries[query_id]

    @property
    def callback_queries(self) -> list[CallbackQueryRecord]:
        """Every button press so far, answered or not, oldest first."""
        return list(self._world.callback_queries.values())

    @property
    def callback_answers(self) -> list[CallbackQueryRecord]:
        """The presses the bot answered (text, show_alert, url are what the user saw)."""
        return [q for q in self._world.callback_queries.values() if q.answered]

    def commands(self, *, scope: JSONDict | None = None, language_code: str = "") -> list[tuple[str, str]]:
        """The command menu the bot set for that scope and language, as (command, description)."""
        params: dict[str, object] = {"language_code": language_code}
        if scope is not None:
            params["scope"] = scope
        key = self._api.command_key(Params(params))
        return [(c["command"], c["description"]) for c in self._world.commands.get(key, [])]

    @property
    def webhook_url(self) -> str | None:
        return self._world.webhook.url if self._world.webhook else None

    @property
    def webhook_attempts(self) -> list[WebhookAttempt]:
        return list(self._world.webhook_attempts)

    @property
    def pending_updates(self) -> list[JSONDict]:
        return list(self._world.updates)

    @property
    def flood_limits(self) -> FloodLimits:
        return self._flood.limits

    def calls_to(self, method: str) -> list[ApiCall]:
        return [c for c in self.calls if c.method.lower() == method.lower()]

    # ----------------------------------------------------------------- waiting for the bot

    async def wait_until(
        self, condition: Callable[[], T | None], *, timeout: float = 5.0, what: str = ""
    ) -> T:
        """Wait until `condition()` returns something truthy (re-checked on every change)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            value = condition()
            if value:
                return value
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"timed out after {timeout}s waiting for {what or 'a condition'}")
            await self._world.changed.wait(min(remaining, 0.02))

    async def wait_for_bot_message(
        self,
        where: ChatRef,
        predicate: Callable[[FakeMessage], bool] | None = None,
        *,
        count: int = 1,
        timeout: float = 5.0,
    ) -> FakeMessage:
        """The latest bot message matching `predicate`, once at least `count` such ones exist."""

        def found() -> FakeMessage | None:
            matching = [m for m in self.bot_messages(where) if predicate is None or predicate(m)]
            return matching[-1] if len(matching) >= count else None

        return await self.wait_until(found, timeout=timeout, what="a bot message")

    async def wait_for_answer(self, query_id: str, *, timeout: float = 5.0) -> CallbackQueryRecord:
        """The callback query once the bot answered it."""
        query = self._world.callback_queries[query_id]
        return await self.wait_until(
            lambda: query if query.answered else None, timeout=timeout, what="an answer"
        )
