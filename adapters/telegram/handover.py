"""The hand-over codec: a queued send (`Op`, drawn for Telegram) as the store keeps it for another process
(`handed_over`), and back (`op_of`). The poller that takes them is `bot.relay.handover`'s."""

from __future__ import annotations

import base64
import json
from typing import Final

from telegram import InlineKeyboardMarkup

from adapters.telegram.content import Content
from adapters.telegram.queue import Op
from adapters.telegram.refs import chat_scope
from bot.storage import HandedOver

__all__ = ["HANDOVER_PLATFORM", "handed_over", "op_of", "table_of"]

HANDOVER_PLATFORM: Final = "tg"
"""`HandedOver.platform` of this adapter's messages."""


def table_of(op: Op) -> str:
    """The table a message is about, as far as the outbox knows: a hand's key names it; a group's
    messages are about the group's table (its id is the chat's scope); anything else is filed under its
    chat."""
    if op.key is not None and op.key.startswith("hand:") and len(op.key) > len("hand:"):
        return op.key[len("hand:") :]
    return chat_scope(op.chat_id)


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def handed_over(op: Op) -> HandedOver:
    """`op` as the store keeps it for another process (`op_of` reads it back)."""
    c = op.content
    payload = {
        "chat": op.chat_id,
        "kind": c.kind,
        "text": c.text,
        "markup": c.markup.to_dict() if c.markup is not None else None,
        "lead": list(c.lead),
        "image": _b64(c.image),
        "document": [c.document[0], _b64(c.document[1])] if c.document is not None else None,
        "fingerprint": c.fingerprint,
        "fresh": op.fresh,
        "replace_old": op.replace_old,
        "silent": op.silent,
        "reply_to": op.reply_to,
        "priority": op.rank,
        "optional": op.optional,
        "series": op.series,
    }
    return HandedOver(
        HANDOVER_PLATFORM,
        table_of(op),
        str(op.chat_id),
        op.key,
        op.version,
        op.seq,
        json.dumps(payload, separators=(",", ":"), ensure_ascii=False),
    )


def op_of(message: HandedOver) -> Op | None:
    """The message another process handed over, ready to queue here (None if it does not parse)."""
    if message.platform != HANDOVER_PLATFORM:
        return None
    try:
        data = json.loads(message.payload)
        markup = InlineKeyboardMarkup.de_json(data["markup"], None) if data["markup"] else None
        document = data["document"]
        content = Content(
            data["kind"],
            data["text"],
            markup,
            tuple(data["lead"]),
            base64.b64decode(data["image"]) if data["image"] is not None else None,
            (document[0], base64.b64decode(document[1])) if document is not None else None,
            data["fingerprint"],
        )
        return Op(
            int(data["chat"]),
            content,
            key=message.key,
            fresh=bool(data["fresh"]),
            replace_old=bool(data["replace_old"]),
            silent=bool(data["silent"]),
            reply_to=data["reply_to"],
            version=message.version,
            priority=int(data["priority"]),
            optional=bool(data["optional"]),
            series=data["series"],
            handed_over=True,
        )
    except (ValueError, KeyError, TypeError, IndexError):
        return None
