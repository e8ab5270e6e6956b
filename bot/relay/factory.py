"""The relay of a bot process, from its settings: a Redis client of its own, the producer and the consumer
of its platform's stream (None without Redis: one process, nothing to hand over)."""

from __future__ import annotations

from dataclasses import dataclass

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from bot.relay.base import Deliver
from bot.relay.redis_relay import Guard, RedisRelay, RelayConsumer
from bot.settings import Settings

__all__ = ["ProcessRelay", "process_relay"]


@dataclass
class ProcessRelay:
    client: Redis | RedisCluster
    guard: Guard
    relay: RedisRelay
    consumer: RelayConsumer

    async def close(self) -> None:
        await self.client.aclose()


def process_relay(settings: Settings, platform: str, deliver: Deliver) -> ProcessRelay | None:
    url = settings.redis_url
    if not url:
        return None
    client: Redis | RedisCluster = (
        RedisCluster.from_url(url, socket_timeout=5.0) if settings.redis_cluster else Redis.from_url(url)
    )
    prefix = settings.redis_prefix
    guard = Guard(client, prefix=prefix)
    relay = RedisRelay(client, platform, deliver, guard=guard, prefix=prefix)
    consumer = RelayConsumer(client, platform, deliver, guard=guard, prefix=prefix)
    return ProcessRelay(client, guard, relay, consumer)
