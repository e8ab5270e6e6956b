"""A fake Telegram Bot API server for tests, driven by the real python-telegram-bot.

Wiring PTB to it, in process (no sockets)::

    fake = FakeTelegram()
    app = (
        Application.builder()
        .token(fake.token)
        .request(InProcessRequest(fake))
        .get_updates_request(InProcessRequest(fake))
        .build()
    )

or over loopback HTTP::

    async with FakeTelegramServer(fake) as server:
        app = Application.builder().token(fake.token).base_url(server.base_url)
                .base_file_url(server.base_file_url).build()

Then play the people (`user_starts_bot`, `user_sends`, `user_presses`, ...) and read what they
see (`messages`, `last_bot_message`, `callback_query`, ...).
"""

from .errors import ApiError, FakeUsageError
from .fake import DEFAULT_TOKEN, ApiResponse, FakeTelegram
from .faults import FaultInjector
from .flood import FloodLimits
from .http_server import FakeTelegramServer
from .keyboard import InlineButton
from .models import (
    ApiCall,
    CallbackQueryRecord,
    FakeChat,
    FakeMessage,
    FakeStats,
    FakeUser,
    MessageVersion,
    StoredFile,
    UploadedFile,
)
from .transport import InProcessRequest
from .webhook import WebhookPolicy
from .world import WebhookAttempt

__all__ = [
    "DEFAULT_TOKEN",
    "ApiCall",
    "ApiError",
    "ApiResponse",
    "CallbackQueryRecord",
    "FakeChat",
    "FakeMessage",
    "FakeStats",
    "FakeTelegram",
    "FakeTelegramServer",
    "FakeUsageError",
    "FakeUser",
    "FaultInjector",
    "FloodLimits",
    "InProcessRequest",
    "InlineButton",
    "MessageVersion",
    "StoredFile",
    "UploadedFile",
    "WebhookAttempt",
    "WebhookPolicy",
]
