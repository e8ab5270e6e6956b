"""Validation of `reply_markup` as the Bot API does it, and a readable view of inline buttons.

Limits come from Telegram's behaviour: callback_data is 1-64 bytes (else BUTTON_DATA_INVALID), an
inline keyboard holds at most 100 buttons and 8 per row (else "reply markup is too long"), a `web_app`
button opens an https URL (else BUTTON_URL_INVALID) and is allowed only in private chats (elsewhere
BUTTON_TYPE_INVALID: groups open Mini Apps with a t.me direct link in a `url` button).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .errors import ApiError

MAX_CALLBACK_DATA_BYTES = 64
MAX_BUTTONS = 100
MAX_BUTTONS_PER_ROW = 8
_ACTIONS = (
    "callback_data",
    "url",
    "login_url",
    "switch_inline_query",
    "switch_inline_query_current_chat",
    "switch_inline_query_chosen_chat",
    "copy_text",
    "callback_game",
    "pay",
    "web_app",
)


@dataclass(frozen=True)
class InlineButton:
    """One inline button as a user sees it."""

    text: str
    callback_data: str | None = None
    url: str | None = None
    web_app: str | None = None
    """The URL a `web_app` button opens."""


def parse_reply_markup(raw: object, chat_type: str | None = None) -> dict[str, Any] | None:
    """The markup to store, or ApiError(400) with Telegram's wording for what it rejects (`chat_type`:
    where it is sent, for the buttons only private chats allow)."""
    if raw is None or raw == "":
        return None
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise ApiError.bad_request("can't parse reply keyboard markup JSON object") from None
    if not isinstance(raw, dict):
        raise ApiError.bad_request("can't parse reply keyboard markup JSON object")
    if "inline_keyboard" in raw:
        rows = _inline_rows(raw["inline_keyboard"])
        if chat_type not in (None, "private") and any("web_app" in b for row in rows for b in row):
            raise ApiError.bad_request("BUTTON_TYPE_INVALID")
        return {"inline_keyboard": rows}
    if "keyboard" in raw or "remove_keyboard" in raw or "force_reply" in raw:
        return dict(raw)
    raise ApiError.bad_request('can\'t find field "inline_keyboard"')


def _inline_rows(rows: object) -> list[list[dict[str, Any]]]:
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise ApiError.bad_request(
            'field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays'
        )
    total = sum(len(row) for row in rows)
    if total > MAX_BUTTONS or any(len(row) > MAX_BUTTONS_PER_ROW for row in rows):
        raise ApiError.bad_request("reply markup is too long")
    checked: list[list[dict[str, Any]]] = []
    for row in rows:
        checked.append([_button(button) for button in row])
    return [row for row in checked if row]


def _button(button: object) -> dict[str, Any]:
    if not isinstance(button, dict):
        raise ApiError.bad_request(
            "can't parse inline keyboard button: InlineKeyboardButton must be an Object"
        )
    text = button.get("text")
    if not isinstance(text, str):
        raise ApiError.bad_request('can\'t parse inline keyboard button: Field "text" must be of type String')
    if not text.strip():
        raise ApiError.bad_request("BUTTON_TEXT_INVALID")
    actions = [key for key in _ACTIONS if key in button]
    if not actions:
        raise ApiError.bad_request(
            "can't parse inline keyboard button: Text buttons are unallowed in the inline keyboard"
        )
    if "callback_data" in button:
        data = button["callback_data"]
        if not isinstance(data, str) or not 1 <= len(data.encode()) <= MAX_CALLBACK_DATA_BYTES:
            raise ApiError.bad_request("BUTTON_DATA_INVALID")
    if "url" in button and not (isinstance(button["url"], str) and button["url"].strip()):
        raise ApiError.bad_request("BUTTON_URL_INVALID")
    if "web_app" in button:
        web_app = button["web_app"]
        url = web_app.get("url") if isinstance(web_app, dict) else None
        if not isinstance(url, str) or not url.startswith("https://"):
            raise ApiError.bad_request("BUTTON_URL_INVALID")
    return dict(button)


def inline_buttons(markup: dict[str, Any] | None) -> list[list[InlineButton]]:
    if not markup or "inline_keyboard" not in markup:
        return []
    return [
        [
            InlineButton(b["text"], b.get("callback_data"), b.get("url"), (b.get("web_app") or {}).get("url"))
            for b in row
        ]
        for row in markup["inline_keyboard"]
    ]
