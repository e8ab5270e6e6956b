"""A loopback fake of Discord (REST API + gateway) that the real discord.py client talks to.

See ``server.FakeDiscord`` for the world and user helpers and ``client.connect_client`` for pointing a
discord.py client at it.
"""

from .client import attach, connect_client
from .errors import APIError, FakeUsageError
from .interactions import Callback, FakeInteraction
from .models import FakeAttachment, FakeChannel, FakeGuild, FakeMember, FakeMessage, FakeRole, FakeUser
from .permissions import Overwrite
from .server import FakeDiscord, FakeDiscordConfig

__all__ = [
    "APIError",
    "Callback",
    "FakeAttachment",
    "FakeChannel",
    "FakeDiscord",
    "FakeDiscordConfig",
    "FakeGuild",
    "FakeInteraction",
    "FakeMember",
    "FakeMessage",
    "FakeRole",
    "FakeUsageError",
    "FakeUser",
    "Overwrite",
    "attach",
    "connect_client",
]
