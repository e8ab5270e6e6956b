"""The web table's buttons on Telegram (docs/WEB.md): an **Open table** `web_app` button under a
player's private hand, and a direct Mini App link under the group's table message (Telegram allows
`web_app` buttons only in private chats; groups open a Mini App with `t.me/<bot>/<app>?startapp=...`).

Both carry only a signed start payload naming the table and its game (serial; the chat's next game needs
a new link): who opens it is told by Telegram's initData, checked by the web table, so a forwarded button
shows a stranger no more than a spectator sees, and only of that one game.
"""

from __future__ import annotations

from dataclasses import dataclass

from telegram import InlineKeyboardButton, WebAppInfo

from adapters.telegram.i18n import text_in
from bot.i18n import N_
from bot.model import Group, Message, Private
from bot.settings import Settings
from bot.weblinks import Signer, TokenError, signer_for

__all__ = ["WebAppButtons"]

OPEN_TABLE = N_("Open table")


@dataclass(frozen=True, slots=True)
class WebAppButtons:
    signer: Signer
    webapp_url: str
    app_name: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> WebAppButtons | None:
        """The buttons when TELEGRAM_WEBAPP_URL is set (and links can be signed), else None."""
        signer = signer_for(settings)
        if settings.telegram_webapp_url is None or signer is None:
            return None
        return cls(signer, settings.telegram_webapp_url, settings.telegram_webapp_name)

    def rows(self, message: Message, bot_username: str) -> list[list[InlineKeyboardButton]]:
        """The rows to add under `message` (none for other messages)."""
        label = text_in(message.language, OPEN_TABLE)
        try:
            if (
                message.kind == "hand"
                and isinstance(message.audience, Private)
                and message.key is not None
                and message.key.startswith("hand:")
                and message.serial is not None
            ):
                start = self.signer.start_payload(message.key.removeprefix("hand:"), message.serial)
                joiner = "&" if "?" in self.webapp_url else "?"
                url = f"{self.webapp_url}{joiner}t={start}"
                return [[InlineKeyboardButton(label, web_app=WebAppInfo(url))]]
            if (
                message.kind == "table"
                and isinstance(message.audience, Group)
                and self.app_name
                and bot_username
                and message.serial is not None
            ):
                start = self.signer.start_payload(message.audience.chat.key, message.serial)
                link = f"https://t.me/{bot_username}/{self.app_name}?startapp={start}"
                return [[InlineKeyboardButton(label, url=link)]]
        except TokenError:
            return []
        return []
