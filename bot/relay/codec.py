"""A neutral `Message` as JSON, for the hand-over between processes (and back, field for field).

Binary parts (a chart's PNG, an exported record) travel as base64. Names and titles were cleaned when
they entered the bot (`bot.names`); they are cleaned again on the way in, which leaves them as they are.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from bot.model import Audience, Button, ChatRef, Group, Message, Private, Sender, UserRef

__all__ = ["decode_message", "encode_message"]


def _chat(c: ChatRef) -> dict[str, Any]:
    return {"p": c.platform, "c": c.chat_id, "t": c.title, "v": c.private}


def _user(u: UserRef) -> dict[str, Any]:
    return {"p": u.platform, "u": u.user_id, "n": u.name, "l": u.language, "a": u.is_admin}


def _audience(a: Audience) -> dict[str, Any]:
    if isinstance(a, Group):
        return {"g": _chat(a.chat)}
    if isinstance(a, Private):
        return {"u": _user(a.user)}
    return {"u": _user(a.user), "s": _chat(a.chat)}


def encode_message(m: Message) -> str:
    data: dict[str, Any] = {
        "a": _audience(m.audience),
        "t": m.text,
        "k": m.key,
        "b": [[[b.label, b.payload] for b in row] for row in m.buttons],
        "n": m.notify,
        "l": m.language,
        "kind": m.kind,
        "h": m.heading,
        "v": m.version,
        "ser": m.series,
        "o": m.optional,
        "al": m.alert,
        "r": m.replaceable,
        "sl": m.serial,
        "tb": m.table,
    }
    if m.image is not None:
        data["img"] = base64.b64encode(m.image).decode("ascii")
    if m.document is not None:
        data["doc"] = [m.document[0], base64.b64encode(m.document[1]).decode("ascii")]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def _chat_of(d: dict[str, Any]) -> ChatRef:
    return ChatRef(str(d["p"]), str(d["c"]), str(d.get("t") or ""), bool(d.get("v")))


def _user_of(d: dict[str, Any]) -> UserRef:
    return UserRef(str(d["p"]), str(d["u"]), str(d["n"]), d.get("l"), d.get("a"))


def decode_message(raw: str | bytes) -> Message:
    """The message `encode_message` wrote. Raises `ValueError` (or `KeyError`) on anything else."""
    data: dict[str, Any] = json.loads(raw)
    a = data["a"]
    audience: Audience
    if "g" in a:
        audience = Group(_chat_of(a["g"]))
    elif "s" in a:
        audience = Sender(_user_of(a["u"]), _chat_of(a["s"]))
    else:
        audience = Private(_user_of(a["u"]))
    buttons = tuple(tuple(Button(str(label), str(payload)) for label, payload in row) for row in data["b"])
    image = base64.b64decode(data["img"]) if "img" in data else None
    document = (str(data["doc"][0]), base64.b64decode(data["doc"][1])) if "doc" in data else None
    return Message(
        audience,
        str(data["t"]),
        data.get("k"),
        buttons,
        image,
        document,
        bool(data.get("n")),
        str(data.get("l") or "en"),
        str(data.get("kind") or "info"),
        str(data.get("h") or ""),
        data.get("v"),
        data.get("ser"),
        bool(data.get("o")),
        str(data.get("al") or ""),
        bool(data.get("r")),
        data.get("sl"),
        data.get("tb"),
    )
