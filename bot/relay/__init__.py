"""Delivery across platforms (issue 20): the process that applies a move cannot reach every player.

Telegram and Discord run as separate deployments, and a public table seats people of both (and of the
web page). The process that applies a move delivers the messages of its own platform itself and hands
the others' over through Redis, one stream per platform read by a consumer group of that platform's
processes (`redis_relay`); in one process (the memory store) delivery is direct (`memory`). Each message
is delivered at least once and shown at most once, and never after a newer state of what it shows
(`guard`). See docs/SERVICE.md, "Public tables and delivery across platforms".
"""

from bot.relay.base import Deliver, Relay, platform_of
from bot.relay.codec import decode_message, encode_message

__all__ = ["Deliver", "Relay", "decode_message", "encode_message", "platform_of"]
