"""The Bot API methods of the fake, with Telegram's validation order, limits and error texts.

Each method reads `Params`, checks what the real server checks (chat reachable, content valid,
flood budget) and only then changes the world, so a rejected call leaves no trace, as on Telegram.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .entities import Entity, detect_entities, strip_text, utf16_len
from .errors import ApiError
from .flood import FloodControl
from .html_markup import parse_html
from .keyboard import parse_reply_markup
from .media import image_size, photo_sizes
from .models import ACTIVE_STATUSES, FakeChat, FakeMessage, JSONDict, StoredFile, UploadedFile
from .params import Params
from .world import DEFAULT_ALLOWED_UPDATES, WebhookConfig, World, member_json

MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_CALLBACK_ANSWER = 200
MAX_UPLOAD = 50 * 1024 * 1024
DELETE_WINDOW = 48 * 3600
MAX_DELETE_MESSAGES = 100
"""Message ids one deleteMessages call takes."""
"""Seconds after which a message can no longer be deleted (in groups and private chats alike)."""
_QUERY_TOO_OLD = "query is too old and response timeout expired or query ID is invalid"
_NOT_MODIFIED = (
    "message is not modified: specified new message content and reply markup are exactly the same "
    "as a current content and reply markup of the message"
)
_CHAT_ACTIONS = frozenset(
    {
        "typing",
        "upload_photo",
        "record_video",
        "upload_video",
        "record_voice",
        "upload_voice",
        "upload_document",
        "choose_sticker",
        "find_location",
        "record_video_note",
        "upload_video_note",
    }
)
_SCOPES = frozenset(
    {
        "default",
        "all_private_chats",
        "all_group_chats",
        "all_chat_administrators",
        "chat",
        "chat_administrators",
        "chat_member",
    }
)
_SECRET_RE = re.compile(r"[A-Za-z0-9_-]{1,256}")
_COMMAND_RE = re.compile(r"[a-z0-9_]{1,32}")


@dataclass(frozen=True)
class Described:
    """A successful result that Telegram accompanies with a `description` (webhook methods)."""

    result: object
    description: str


Handler = Callable[[Params], Awaitable[object]]


class BotApi:
    """Method name (lower-cased) -> implementation, over a shared World."""

    def __init__(
        self,
        world: World,
        flood: FloodControl,
        *,
        privacy_mode: bool,
        callback_answer_timeout: float,
        on_webhook_change: Callable[[], None],
    ) -> None:
        self.world = world
        self.flood = flood
        self.privacy_mode = privacy_mode
        self.callback_answer_timeout = callback_answer_timeout
        self._on_webhook_change = on_webhook_change
        self._poll_generation = 0
        self.closed = False
        named: dict[str, Handler] = {
            "getMe": self.get_me,
            "getUpdates": self.get_updates,
            "setWebhook": self.set_webhook,
            "deleteWebhook": self.delete_webhook,
            "getWebhookInfo": self.get_webhook_info,
            "sendMessage": self.send_message,
            "editMessageText": self.edit_message_text,
            "editMessageCaption": self.edit_message_caption,
            "editMessageReplyMarkup": self.edit_message_reply_markup,
            "deleteMessage": self.delete_message,
            "deleteMessages": self.delete_messages,
            "answerCallbackQuery": self.answer_callback_query,
            "sendDocument": self.send_document,
            "sendPhoto": self.send_photo,
            "sendChatAction": self.send_chat_action,
            "getFile": self.get_file,
            "getChat": self.get_chat,
            "getChatMember": self.get_chat_member,
            "getChatAdministrators": self.get_chat_administrators,
            "getChatMemberCount": self.get_chat_member_count,
            "leaveChat": self.leave_chat,
            "setMyCommands": self.set_my_commands,
            "getMyCommands": self.get_my_commands,
            "deleteMyCommands": self.delete_my_commands,
        }
        self.canonical = {name.lower(): name for name in named}
        self.handlers = {name.lower(): handler for name, handler in named.items()}

    # ----------------------------------------------------------------- shared checks

    def chat(self, p: Params) -> FakeChat:
        raw = p.raw.get("chat_id")
        if raw is None or raw == "":
            raise ApiError.bad_request("chat_id is empty")
        if isinstance(raw, str) and raw.startswith("@"):
            for named in self.world.chats.values():
                if named.username and named.username.lower() == raw[1:].lower():
                    return named
            raise ApiError.bad_request("chat not found")
        chat_id = p.integer("chat_id", error="chat not found")
        assert chat_id is not None
        chat = self.world.chats.get(chat_id)
        if chat is None and chat_id in self.world.users:
            chat = self.world.private_chat(self.world.users[chat_id])
        if chat is None:
            raise ApiError.bad_request("chat not found")
        return chat

    @staticmethod
    def ensure_active(chat: FakeChat) -> None:
        """A basic group upgraded to a supergroup refuses what needs write access (sends, deletions,
        member lists) with the id to use instead, as the Bot API server's `check_chat_access` does."""
        if chat.migrated_to is not None:
            raise ApiError(
                400,
                "Bad Request: group chat was upgraded to a supergroup chat",
                {"migrate_to_chat_id": chat.migrated_to},
            )

    @classmethod
    def ensure_present(cls, chat: FakeChat) -> None:
        """The bot must still be in a group to act in it."""
        if not chat.is_group:
            return
        cls.ensure_active(chat)
        if chat.bot_status == "kicked":
            raise ApiError.forbidden(f"bot was kicked from the {chat.type} chat")
        if chat.bot_status not in ACTIVE_STATUSES:
            raise ApiError.forbidden(f"bot is not a member of the {chat.type} chat")

    def ensure_can_send(self, chat: FakeChat) -> None:
        self.ensure_active(chat)
        if chat.user is not None:
            if chat.user.is_bot:
                raise ApiError.forbidden("bot can't send messages to bots")
            if chat.user.blocked_bot:
                raise ApiError.forbidden("bot was blocked by the user")
            if not chat.user.started_bot:
                raise ApiError.forbidden("bot can't initiate conversation with a user")
        self.ensure_present(chat)

    def formatted(self, p: Params, field: str, entities_field: str) -> tuple[str, list[Entity]]:
        text = p.text(field) or ""
        if p.has(entities_field):
            entities = p.json(entities_field, error=f"can't parse {entities_field} JSON object")
            if not isinstance(entities, list) or not all(
                isinstance(e, dict) and {"type", "offset", "length"} <= e.keys() for e in entities
            ):
                raise ApiError.bad_request(f"can't parse {entities_field} JSON object")
            parsed: tuple[str, list[Entity]] = (text, [dict(e) for e in entities])
        else:
            mode = (p.text("parse_mode") or "").strip()
            if not mode:
                parsed = (text, [])
            elif mode.lower() == "html":
                parsed = parse_html(text)
            elif mode.lower() in ("markdown", "markdownv2"):
                raise ApiError.bad_request(
                    f"the fake Telegram does not implement parse_mode {mode}; use HTML"
                )
            else:
                raise ApiError.bad_request(f"unsupported parse_mode {mode}")
        stripped, entities = strip_text(*parsed)
        return stripped, detect_entities(stripped, entities)

    def message_text(self, p: Params) -> tuple[str, list[Entity]]:
        if not (p.text("text") or "").strip():
            raise ApiError.bad_request("message text is empty")
        text, entities = self.formatted(p, "text", "entities")
        if not text:
            raise ApiError.bad_request("message text is empty")
        if utf16_len(text) > MAX_TEXT:
            raise ApiError.bad_request("message is too long")
        return text, entities

    def caption(self, p: Params) -> tuple[str | None, list[Entity]]:
        if not p.has("caption"):
            return None, []
        text, entities = self.formatted(p, "caption", "caption_entities")
        if utf16_len(text) > MAX_CAPTION:
            raise ApiError.bad_request("message caption is too long")
        return (text or None), entities

    @staticmethod
    def markup(p: Params, chat: FakeChat | None = None) -> JSONDict | None:
        return parse_reply_markup(p.raw.get("reply_markup"), chat.type if chat is not None else None)

    def reply_target(self, chat: FakeChat, p: Params) -> FakeMessage | None:
        target_id = p.integer("reply_to_message_id")
        allow_missing = p.flag("allow_sending_without_reply")
        if p.has("reply_parameters"):
            reply = p.json("reply_parameters", error="can't parse reply parameters JSON object")
            if not isinstance(reply, dict) or not isinstance(reply.get("message_id"), int):
                raise ApiError.bad_request("can't parse reply parameters JSON object")
            if reply.get("chat_id") not in (None, chat.id):
                raise ApiError.bad_request("the fake Telegram does not implement replies to other chats")
            target_id = reply["message_id"]
            allow_missing = bool(reply.get("allow_sending_without_reply"))
        if target_id is None:
            return None
        target = self.world.find_message(chat, target_id)
        if target is None or target.deleted:
            if allow_missing:
                return None
            raise ApiError.bad_request("message to be replied not found")
        return target

    def spend(self, chat: FakeChat, p: Params | None = None) -> None:
        """One message of the flood budgets; a new message sent with `allow_paid_broadcast` is a paid
        one (edits take no such parameter)."""
        paid = p is not None and p.flag("allow_paid_broadcast")
        self.flood.check(chat.id, chat.is_group, paid)
        if paid:
            self.world.paid_broadcasts += 1

    def target(self, p: Params, missing: str) -> FakeMessage:
        if p.has("inline_message_id"):
            raise ApiError.bad_request("MESSAGE_ID_INVALID")
        chat = self.chat(p)
        message_id = p.integer("message_id", error="message identifier is not specified")
        if message_id is None:
            raise ApiError.bad_request("message identifier is not specified")
        if chat.migrated_to is not None:
            # Edit access skips the server's upgrade check and goes to TDLib, which refuses the
            # deactivated group's messages; the fake answers as for a message that cannot be edited.
            raise ApiError.bad_request("message can't be edited")
        self.ensure_can_send(chat)
        message = self.world.find_message(chat, message_id)
        if message is None or message.deleted:
            raise ApiError.bad_request(missing)
        if not message.from_bot:
            raise ApiError.bad_request("message can't be edited")
        return message

    def edited(self, message: FakeMessage, **changes: Any) -> JSONDict:
        if all(getattr(message, name) == value for name, value in changes.items()):
            raise ApiError.bad_request(_NOT_MODIFIED)
        self.spend(message.chat)
        message.history.append(message.snapshot())
        for name, value in changes.items():
            setattr(message, name, value)
        message.edit_date = self.world.date()
        self.world.changed.notify()
        return message.to_api()

    # ----------------------------------------------------------------- bot and updates

    async def get_me(self, p: Params) -> object:
        return {
            **self.world.bot.to_api(),
            "can_join_groups": True,
            "can_read_all_group_messages": not self.privacy_mode,
            "supports_inline_queries": False,
            "can_connect_to_business": False,
            "has_main_web_app": False,
        }

    def _confirm(self, offset: int) -> None:
        updates = self.world.updates
        if offset > 0:
            updates[:] = [u for u in updates if u["update_id"] >= offset]
        elif offset < 0:
            updates[:] = updates[offset:]

    @staticmethod
    def _webhook_conflict() -> ApiError:
        return ApiError(
            409,
            "Conflict: can't use getUpdates method while webhook is active; "
            "use deleteWebhook to delete the webhook first",
        )

    def _allowed_updates(self, p: Params) -> list[str] | None:
        allowed = p.json("allowed_updates", error="can't parse allowed updates JSON object")
        if allowed is None:
            return None
        if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
            raise ApiError.bad_request("can't parse allowed updates JSON object")
        self.world.allowed_updates = frozenset(allowed) if allowed else DEFAULT_ALLOWED_UPDATES
        return list(allowed)

    async def get_updates(self, p: Params) -> object:
        world = self.world
        if world.webhook is not None:
            raise self._webhook_conflict()
        offset = p.integer("offset") or 0
        limit = min(max(p.integer("limit") or 100, 1), 100)
        timeout = max(p.integer("timeout") or 0, 0)
        self._allowed_updates(p)
        self._confirm(offset)
        self._poll_generation += 1
        generation = self._poll_generation
        world.changed.notify()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if generation != self._poll_generation:
                raise ApiError(
                    409,
                    "Conflict: terminated by other getUpdates request; "
                    "make sure that only one bot instance is running",
                )
            if world.webhook is not None:
                raise self._webhook_conflict()
            batch = world.updates[:limit]
            remaining = deadline - loop.time()
            if batch or remaining <= 0 or self.closed:
                return batch
            await world.changed.wait(remaining)

    async def set_webhook(self, p: Params) -> object:
        url = (p.text("url") or "").strip()
        if not url:
            return await self.delete_webhook(p)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ApiError.bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        try:
            loopback = ipaddress.ip_address(parts.hostname).is_loopback
        except ValueError:
            raise ApiError.bad_request(
                "bad webhook: Failed to resolve host: Name or service not known"
            ) from None
        if not loopback:
            raise ApiError.bad_request("bad webhook: the fake Telegram delivers only to loopback addresses")
        secret = p.text("secret_token")
        if secret is not None and not _SECRET_RE.fullmatch(secret):
            raise ApiError.bad_request("secret token contains unallowed characters")
        max_connections = p.integer("max_connections") or 40
        if not 1 <= max_connections <= 100:
            raise ApiError.bad_request("bad webhook: max_connections must be between 1 and 100")
        allowed = self._allowed_updates(p)
        if p.flag("drop_pending_updates"):
            self.world.updates.clear()
        previous = self.world.webhook
        self.world.webhook = WebhookConfig(url, secret, max_connections, p.text("ip_address"), allowed)
        if previous is None or previous.url != url:
            self.world.webhook_last_error = None
        self.world.changed.notify()
        self._on_webhook_change()
        same = previous is not None and previous.url == url
        return Described(True, "Webhook is already set" if same else "Webhook was set")

    async def delete_webhook(self, p: Params) -> object:
        if p.flag("drop_pending_updates"):
            self.world.updates.clear()
        existed = self.world.webhook is not None
        self.world.webhook = None
        self.world.changed.notify()
        self._on_webhook_change()
        return Described(True, "Webhook was deleted" if existed else "Webhook is already deleted")

    async def get_webhook_info(self, p: Params) -> object:
        world = self.world
        info: JSONDict = {
            "url": world.webhook.url if world.webhook else "",
            "has_custom_certificate": False,
            "pending_update_count": len(world.updates),
        }
        if world.webhook is not None:
            info["max_connections"] = world.webhook.max_connections
            if world.webhook.ip_address:
                info["ip_address"] = world.webhook.ip_address
            if world.webhook.allowed_updates is not None:
                info["allowed_updates"] = world.webhook.allowed_updates
        if world.webhook_last_error is not None:
            info["last_error_date"], info["last_error_message"] = world.webhook_last_error
        return info

    # ----------------------------------------------------------------- messages

    async def send_message(self, p: Params) -> object:
        chat = self.chat(p)
        self.ensure_can_send(chat)
        text, entities = self.message_text(p)
        markup = self.markup(p, chat)
        reply_to = self.reply_target(chat, p)
        self.spend(chat, p)
        message = self.world.add_message(
            chat, self.world.bot, text=text, entities=entities, reply_markup=markup, reply_to=reply_to
        )
        message.silent = p.flag("disable_notification")
        return message.to_api()

    async def edit_message_text(self, p: Params) -> object:
        message = self.target(p, "message to edit not found")
        if message.text is None:
            raise ApiError.bad_request("there is no text in the message to edit")
        text, entities = self.message_text(p)
        return self.edited(message, text=text, entities=entities, reply_markup=self.markup(p, message.chat))

    async def edit_message_caption(self, p: Params) -> object:
        message = self.target(p, "message to edit not found")
        if message.text is not None:
            raise ApiError.bad_request("there is no caption in the message to edit")
        caption, entities = self.caption(p)
        markup = self.markup(p, message.chat)
        return self.edited(message, caption=caption, caption_entities=entities, reply_markup=markup)

    async def edit_message_reply_markup(self, p: Params) -> object:
        message = self.target(p, "message to edit not found")
        return self.edited(message, reply_markup=self.markup(p, message.chat))

    async def delete_message(self, p: Params) -> object:
        chat = self.chat(p)
        message_id = p.integer("message_id", error="message identifier is not specified")
        if message_id is None:
            raise ApiError.bad_request("message identifier is not specified")
        self.ensure_present(chat)
        message = self.world.find_message(chat, message_id)
        if message is None or message.deleted:
            raise ApiError.bad_request("message to delete not found")
        if (
            chat.is_group
            and not message.from_bot
            and not (chat.bot_status == "administrator" and chat.bot_can_delete)
        ):
            # Others' messages in a group: only an administrator with can_delete_messages (as Telegram).
            raise ApiError.bad_request("message can't be deleted")
        if self.world.date() - message.date >= DELETE_WINDOW:
            # Telegram's MESSAGE_DELETE_FORBIDDEN, as the Bot API server words it.
            raise ApiError.bad_request("message can't be deleted")
        message.deleted = True
        self.world.changed.notify()
        return True

    async def delete_messages(self, p: Params) -> object:
        """Up to 100 messages of one chat in one call, as the Bot API server does it: ids it cannot find
        (or already deleted) are skipped; a malformed list or more than 100 ids is refused whole; a message
        it finds but may not delete (someone else's in a group without admin rights, older than 48 hours)
        refuses the call and nothing is deleted."""
        if not p.has("message_ids"):
            raise ApiError.bad_request("message identifiers are not specified")
        ids = p.json("message_ids", error="can't parse message_ids JSON object")
        if not isinstance(ids, list):
            raise ApiError.bad_request("expected an Array of message identifiers")
        if len(ids) > MAX_DELETE_MESSAGES:
            raise ApiError.bad_request("too many message identifiers specified")
        numbers: list[int] = []
        for value in ids:
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise ApiError.bad_request("message identifier must be a Number")
            try:
                number = int(value)
            except ValueError:
                raise ApiError.bad_request("can't parse message identifier as a Number") from None
            if number <= 0:
                raise ApiError.bad_request("invalid message identifier specified")
            numbers.append(number)
        chat = self.chat(p)
        self.ensure_present(chat)
        found = [
            m for m in (self.world.find_message(chat, n) for n in numbers) if m is not None and not m.deleted
        ]
        for message in found:
            if chat.is_group and not message.from_bot and chat.bot_status != "administrator":
                raise ApiError.bad_request("message can't be deleted")
            if self.world.date() - message.date >= DELETE_WINDOW:
                raise ApiError.bad_request("message can't be deleted")
        for message in found:
            message.deleted = True
        if found:
            self.world.changed.notify()
        return True

    async def answer_callback_query(self, p: Params) -> object:
        query = self.world.callback_queries.get(p.text("callback_query_id") or "")
        expired = query is None or (self.world.clock() - query.created_at > self.callback_answer_timeout)
        if query is None or query.answered or expired:
            raise ApiError.bad_request(_QUERY_TOO_OLD)
        text = p.text("text")
        if text is not None and len(text) > MAX_CALLBACK_ANSWER:
            raise ApiError.bad_request("MESSAGE_TOO_LONG")
        query.answered = True
        query.text = text or None
        query.show_alert = p.flag("show_alert")
        query.url = p.text("url") or None
        query.cache_time = p.integer("cache_time")
        self.world.changed.notify()
        return True

    async def send_chat_action(self, p: Params) -> object:
        chat = self.chat(p)
        self.ensure_can_send(chat)
        if p.text("action") not in _CHAT_ACTIONS:
            raise ApiError.bad_request("wrong parameter action in request")
        return True

    # ----------------------------------------------------------------- files

    def _existing_file(self, reference: str, kind: str) -> StoredFile:
        if reference.startswith(("http://", "https://")):
            raise ApiError.bad_request("failed to get HTTP URL content")
        stored = self.world.files.get(reference)
        if stored is None:
            raise ApiError.bad_request("wrong file identifier/HTTP URL specified")
        if kind == "photo" and stored.width is None:
            raise ApiError.bad_request("can't use file of type Document as Photo")
        return stored

    def _send_media(self, p: Params, kind: str) -> object:
        chat = self.chat(p)
        self.ensure_can_send(chat)
        item = p.upload(kind)
        if item is None:
            raise ApiError.bad_request(f"there is no {kind} in the request")
        dimensions: tuple[int, int] | None = None
        if isinstance(item, UploadedFile):
            if not item.data:
                raise ApiError.bad_request("file must be non-empty")
            if len(item.data) > MAX_UPLOAD:
                raise ApiError(413, "Request Entity Too Large")
            if kind == "photo":
                dimensions = image_size(item.data)
                if dimensions is None:
                    raise ApiError.bad_request("IMAGE_PROCESS_FAILED")
        caption, caption_entities = self.caption(p)
        markup = self.markup(p, chat)
        reply_to = self.reply_target(chat, p)
        self.spend(chat, p)
        fields: dict[str, Any] = {
            "caption": caption,
            "caption_entities": caption_entities,
            "reply_markup": markup,
            "reply_to": reply_to,
        }
        if kind == "document":
            fields["document"] = (
                self.world.store_file(item.data, file_name=item.filename, mime_type=item.content_type)
                if isinstance(item, UploadedFile)
                else self._existing_file(item, kind)
            )
        else:
            fields.update(self._photo(item, dimensions))
        return self.world.add_message(chat, self.world.bot, **fields).to_api()

    def _photo(self, item: UploadedFile | str, dimensions: tuple[int, int] | None) -> dict[str, Any]:
        if not isinstance(item, UploadedFile):
            stored = self._existing_file(item, "photo")
            sizes = [(stored.width or 1, stored.height or 1, stored.size)]
        else:
            assert dimensions is not None
            width, height = dimensions
            sizes = photo_sizes(width, height, len(item.data))
            stored = self.world.store_file(item.data, mime_type=item.content_type, width=width, height=height)
        variants: list[JSONDict] = []
        for index, (width, height, _size) in enumerate(sizes):
            variant = stored
            if index < len(sizes) - 1:
                variant = self.world.store_file(
                    stored.data, mime_type=stored.mime_type, width=width, height=height
                )
            variants.append(
                {
                    "file_id": variant.file_id,
                    "file_unique_id": variant.file_unique_id,
                    "file_size": variant.size,
                    "width": width,
                    "height": height,
                }
            )
        return {"photo": stored, "photo_sizes": variants}

    async def send_document(self, p: Params) -> object:
        return self._send_media(p, "document")

    async def send_photo(self, p: Params) -> object:
        return self._send_media(p, "photo")

    async def get_file(self, p: Params) -> object:
        stored = self.world.files.get(p.text("file_id") or "")
        if stored is None:
            raise ApiError.bad_request("invalid file_id")
        return stored.to_file()

    # ----------------------------------------------------------------- chats and members

    async def get_chat(self, p: Params) -> object:
        chat = self.chat(p)
        if chat.migrated_to is None:  # read access: the server answers for a deactivated group too
            self.ensure_present(chat)
        return {
            **chat.to_api(),
            "accent_color_id": 0,
            "max_reaction_count": 11,
            "accepted_gift_types": {
                "unlimited_gifts": False,
                "limited_gifts": False,
                "unique_gifts": False,
                "premium_subscription": False,
                "gifts_from_channels": False,
            },
        }

    async def get_chat_member(self, p: Params) -> object:
        chat = self.chat(p)
        self.ensure_present(chat)
        user_id = p.integer("user_id", error="PARTICIPANT_ID_INVALID")
        world = self.world
        if user_id == world.bot.id:
            status = chat.bot_status if chat.is_group else "member"
            member = member_json(world.bot, status)
            if status == "administrator":
                member["can_delete_messages"] = chat.bot_can_delete
            return member
        user = world.users.get(user_id or 0)
        if user is None:
            # An id Telegram knows nobody by (as the Bot API answers it).
            raise ApiError.bad_request("user not found")
        return member_json(user, chat.status_of(user))

    async def get_chat_administrators(self, p: Params) -> object:
        chat = self.chat(p)
        if not chat.is_group:
            raise ApiError.bad_request("there are no administrators in the private chat")
        self.ensure_present(chat)
        admins = [
            member_json(chat.users[user_id], status)
            for user_id, status in chat.members.items()
            if status in ("creator", "administrator")
        ]
        if chat.bot_status == "administrator":
            admins.append(member_json(self.world.bot, "administrator"))
        return admins

    async def get_chat_member_count(self, p: Params) -> object:
        chat = self.chat(p)
        self.ensure_present(chat)
        if not chat.is_group:
            return 2
        return sum(1 for s in chat.members.values() if s in ACTIVE_STATUSES) + 1

    async def leave_chat(self, p: Params) -> object:
        chat = self.chat(p)
        if not chat.is_group:
            raise ApiError.bad_request("chat member status can't be changed in private chats")
        self.ensure_present(chat)
        old = chat.bot_status
        chat.bot_status = "left"
        self.world.enqueue(
            "my_chat_member",
            {
                "chat": chat.to_api(),
                "from": self.world.bot.to_api(),
                "date": self.world.date(),
                "old_chat_member": member_json(self.world.bot, old),
                "new_chat_member": member_json(self.world.bot, "left"),
            },
        )
        return True

    # ----------------------------------------------------------------- commands

    def command_key(self, p: Params) -> tuple[str, str]:
        scope = p.json("scope", error="can't parse BotCommandScope JSON object")
        language = (p.text("language_code") or "").strip()
        if language and not re.fullmatch(r"[a-z]{2}", language):
            raise ApiError.bad_request("invalid language code specified")
        if scope is None:
            return "default", language
        if not isinstance(scope, dict) or scope.get("type") not in _SCOPES:
            raise ApiError.bad_request("can't parse BotCommandScope JSON object")
        key: dict[str, object] = {"type": scope["type"]}
        if scope["type"] in ("chat", "chat_administrators", "chat_member"):
            key["chat_id"] = self.chat(Params({"chat_id": scope.get("chat_id")})).id
        if scope["type"] == "chat_member":
            user_id = scope.get("user_id")
            if user_id not in self.world.users:
                raise ApiError.bad_request("user not found")
            key["user_id"] = user_id
        if scope["type"] == "default":
            return "default", language
        return json.dumps(key, sort_keys=True), language

    async def set_my_commands(self, p: Params) -> object:
        commands = p.json("commands", error="can't parse commands JSON object") or []
        if not isinstance(commands, list):
            raise ApiError.bad_request("can't parse commands JSON object")
        if len(commands) > 100:
            raise ApiError.bad_request("BOT_COMMANDS_TOO_MUCH")
        checked: list[dict[str, str]] = []
        for command in commands:
            if not isinstance(command, dict):
                raise ApiError.bad_request("can't parse BotCommand: BotCommand must be an Object")
            for field in ("command", "description"):
                if not isinstance(command.get(field), str):
                    raise ApiError.bad_request(f"can't parse BotCommand: Can't find field \"{field}\"")
            if not _COMMAND_RE.fullmatch(command["command"]):
                raise ApiError.bad_request("BOT_COMMAND_INVALID")
            description = command["description"].strip()
            if not description:
                raise ApiError.bad_request("command description must be non-empty")
            if len(description) > 256:
                raise ApiError.bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
            checked.append({"command": command["command"], "description": description})
        key = self.command_key(p)
        if checked:
            self.world.commands[key] = checked
        else:
            self.world.commands.pop(key, None)
        return True

    async def get_my_commands(self, p: Params) -> object:
        return [dict(c) for c in self.world.commands.get(self.command_key(p), [])]

    async def delete_my_commands(self, p: Params) -> object:
        self.world.commands.pop(self.command_key(p), None)
        return True
