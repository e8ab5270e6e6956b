"""A consumer process of one platform's relay stream for the kill test: it writes each message it shows
to a file, and kills itself (SIGKILL, no clean-up of any kind) in the middle of showing `--die-at`."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from pathlib import Path

from redis.asyncio import Redis

from bot.model import Message
from bot.relay.redis_relay import Guard, RelayConsumer


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("out", type=Path)
    parser.add_argument("--die-at", default="")
    parser.add_argument("--lease-ms", type=int, default=400)
    args = parser.parse_args()
    client = Redis.from_url(args.url)

    async def deliver(message: Message) -> None:
        if message.text == args.die_at:
            os.kill(os.getpid(), signal.SIGKILL)  # the platform call is in flight: lease held, nothing acked
        with args.out.open("a", encoding="utf-8") as f:
            f.write(message.text + "\n")

    consumer = RelayConsumer(
        client, "dc", deliver, name=f"dc-{os.getpid()}", guard=Guard(client, lease_ms=args.lease_ms)
    )
    await consumer.ensure_group()
    while True:
        await consumer.poll(block_ms=200)


if __name__ == "__main__":
    asyncio.run(main())
