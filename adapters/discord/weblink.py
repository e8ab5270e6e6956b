"""The web table's **Open table** link on Discord hands (docs/WEB.md).

A Discord hand is an ephemeral message (or a DM) shown to one person, so its link may carry who they
are: a token signed here, bound to that user and that table, short-lived (WEB_LINK_SECONDS). Its expiry
moves in five-minute steps, so a hand redrawn within one step keeps the same link (and the same body).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from bot.model import Message, Private
from bot.settings import Settings
from bot.weblinks import TokenError, link_url, signer_for

__all__ = ["web_link_of"]

STEP: Final = 300.0


def web_link_of(
    settings: Settings, clock: Callable[[], float] = time.time
) -> Callable[[Message], str | None] | None:
    """The link maker for hands, or None when the web table is not configured (PUBLIC_URL)."""
    signer = signer_for(settings)
    base = settings.public_url
    if base is None or signer is None:
        return None
    lifetime = settings.web_link_seconds

    def link(message: Message) -> str | None:
        if message.kind != "hand" or not isinstance(message.audience, Private):
            return None
        if message.key is None or not message.key.startswith("hand:"):
            return None
        expires = (clock() // STEP + 1) * STEP + lifetime
        try:
            return link_url(
                signer,
                base,
                message.key.removeprefix("hand:"),
                message.audience.user,
                message.language,
                expires,
            )
        except TokenError:
            return None

    return link
