"""Delivery across processes through Redis: a stream per platform, read by that platform's processes.

- **Hand-over.** `RedisRelay.dispatch` delivers the messages of its own platform itself and appends each
  other message to `<prefix>:{relay:<platform>}:out` (XADD with an approximate MAXLEN; the key's TTL is
  renewed on each append, so the stream of a platform nobody writes to any more goes away).
- **Reading.** Every process of a platform runs a `RelayConsumer` in the consumer group `deliver` of its
  platform's stream (XREADGROUP), acknowledges an entry (XACK) once it was shown or found not to be
  shown, and takes over (XAUTOCLAIM) the entries another consumer left pending longer than `min_idle`:
  a process killed in the middle of a deal leaves its entries to the others. At least once.
- **At most once, never older.** Before it shows a message a consumer asks `Guard.claim` (one Lua script,
  atomic): an entry already shown (its own mark `<p>:{rl:<t>}:done:<id>`) or older than what its slot
  shows (`<p>:{rl:<t>}:shown`: the highest table version shown for that table, reader and message key) is
  not shown; a slot another consumer is showing right now (`<p>:{rl:<t>}:lease`, `lease_ms`) is left
  for later, so two versions of one message never race on the platform. After the platform accepted it,
  `Guard.commit` marks the entry done and the slot's version shown. A process killed between the
  platform's acceptance and the commit lets the message be shown again (edited in place under its key,
  which shows the same thing); that is the one duplicate left, and it is never an older state.
- Entries older than `max_age` are acknowledged without being shown: the next message of their table
  shows it as it is, and their done marks (kept `done_ttl`) may be gone.

Every key of one check carries the same hash tag (`{rl:<t>}`, `t` a hash of the slot), so the scripts
hold on Redis Cluster; a stream is one key. Key lifetimes are in docs/OPERATIONS.md.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import secrets
import time
from collections.abc import Sequence
from typing import Any, Final

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ResponseError

from bot.model import Message
from bot.relay.base import Deliver, Relay, order_of, platform_of, slot_of, tag
from bot.relay.codec import decode_message, encode_message

__all__ = ["GROUP", "Claim", "Guard", "RedisRelay", "RelayConsumer", "stream_key"]

log = logging.getLogger("thousand.relay")

GROUP: Final = "deliver"

_CLAIM = """
if redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local shown = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) < shown then return 3 end
local lease = redis.call('GET', KEYS[2])
if lease and lease ~= ARGV[2] then return 2 end
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
return 1
"""
"""KEYS: shown, lease, done. ARGV: order, holder, lease ms. 0 done, 3 older, 2 busy, 1 go."""

_COMMIT = """
redis.call('SET', KEYS[3], '1', 'EX', ARGV[4])
local shown = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > shown then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
else redis.call('EXPIRE', KEYS[1], ARGV[3]) end
if redis.call('GET', KEYS[2]) == ARGV[2] then redis.call('DEL', KEYS[2]) end
return 1
"""
"""KEYS: shown, lease, done. ARGV: order, holder, shown ttl s, done ttl s."""

_NOTE = """
local shown = tonumber(redis.call('GET', KEYS[1]) or '-1')
if tonumber(ARGV[1]) > shown then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 1
"""
"""KEYS: shown. ARGV: order, shown ttl s. A message this process shows itself (outside the guard)."""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""


def stream_key(platform: str, prefix: str = "thousand") -> str:
    """The stream of `platform`'s messages (`<prefix>:{relay:<platform>}:out`: one slot per platform)."""
    return f"{prefix}:{{relay:{platform}}}:out"


class Claim(enum.IntEnum):
    DONE = 0
    """This entry was shown already (a retry)."""
    GO = 1
    BUSY = 2
    """Another consumer is showing this slot now: try again later."""
    OLDER = 3
    """The slot shows a newer version: never show this one."""


class Guard:
    """The at-most-once, never-older check of one message (see the module's docstring)."""

    def __init__(
        self,
        client: Redis | RedisCluster,
        *,
        lease_ms: int = 30_000,
        shown_ttl: int = 86_400,
        done_ttl: int = 3_600,
        prefix: str = "thousand",
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.lease_ms = lease_ms
        self.shown_ttl = shown_ttl
        self.done_ttl = done_ttl
        self._claim = client.register_script(_CLAIM)
        self._commit = client.register_script(_COMMIT)
        self._release = client.register_script(_RELEASE)
        self._note = client.register_script(_NOTE)

    def keys(self, message: Message, entry: str) -> list[str]:
        """`<p>:{rl:<hash of the slot>}:shown|lease|done:<entry>`: one hash slot per check."""
        slot = slot_of(message) if message.key is not None else f"once|{entry}"
        head = f"{self.prefix}:{{rl:{tag(slot)}}}"
        return [f"{head}:shown", f"{head}:lease", f"{head}:done:{entry}"]

    async def claim(self, message: Message, entry: str, holder: str) -> Claim:
        keys = self.keys(message, entry)
        result = await self._claim(keys=keys, args=[order_of(message), f"{holder}|{entry}", self.lease_ms])
        return Claim(int(result))

    async def commit(self, message: Message, entry: str, holder: str) -> None:
        keys = self.keys(message, entry)
        args: list[str | int] = [order_of(message), f"{holder}|{entry}", self.shown_ttl, self.done_ttl]
        await self._commit(keys=keys, args=args)

    async def note(self, message: Message) -> None:
        """`message` is being shown by its adapter directly (not through `show`): a relayed older
        version of its slot arriving later is then dropped."""
        if message.key is None or message.version is None:
            return
        await self._note(keys=[self.keys(message, "-")[0]], args=[order_of(message), self.shown_ttl])

    async def release(self, message: Message, entry: str, holder: str) -> None:
        await self._release(keys=[self.keys(message, entry)[1]], args=[f"{holder}|{entry}"])

    async def show(self, message: Message, entry: str, holder: str, deliver: Deliver) -> Claim:
        """Claim, deliver, commit (or release when the delivery failed, and raise)."""
        claim = await self.claim(message, entry, holder)
        if claim is not Claim.GO:
            return claim
        try:
            await deliver(message)
        except BaseException:
            await asyncio.shield(self.release(message, entry, holder))
            raise
        await self.commit(message, entry, holder)
        return claim


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisRelay(Relay):
    """The producer side in one process of `platform`: its own messages shown here, through the guard
    (another process of this platform may be showing the same table); the others' appended to their
    platform's stream."""

    def __init__(
        self,
        client: Redis | RedisCluster,
        platform: str,
        deliver: Deliver,
        *,
        guard: Guard | None = None,
        maxlen: int = 100_000,
        stream_ttl: int = 86_400,
        holder: str | None = None,
        prefix: str = "thousand",
    ) -> None:
        self.client = client
        self.platform = platform
        self.prefix = prefix
        self.deliver = deliver
        self.guard = guard or Guard(client, prefix=prefix)
        self.maxlen = maxlen
        self.stream_ttl = stream_ttl
        self.holder = holder or f"{platform}-{secrets.token_hex(4)}"
        self.handed_over = 0

    async def dispatch(self, messages: Sequence[Message]) -> None:
        others = [m for m in messages if platform_of(m) != self.platform]
        if others:
            await self.hand_over(others)
        for message in messages:
            if platform_of(message) == self.platform:
                await self.guard.show(message, secrets.token_hex(8), self.holder, self.deliver)

    async def hand_over(self, messages: Sequence[Message]) -> None:
        """Append to the streams (one pipeline, one round trip however many messages)."""
        async with self.client.pipeline(transaction=False) as pipe:
            streams: set[str] = set()
            for message in messages:
                key = stream_key(platform_of(message), self.prefix)
                streams.add(key)
                fields: dict[bytes | bytearray | memoryview[int] | str | int | float, Any] = {
                    "id": secrets.token_hex(8),
                    "m": encode_message(message),
                }
                pipe.xadd(key, fields, maxlen=self.maxlen, approximate=True)
            for key in sorted(streams):
                pipe.expire(key, self.stream_ttl)
            await pipe.execute()
        self.handed_over += len(messages)


class RelayConsumer:
    """One process's reader of its platform's stream in the group `deliver` (see the module docstring)."""

    def __init__(
        self,
        client: Redis | RedisCluster,
        platform: str,
        deliver: Deliver,
        *,
        name: str | None = None,
        guard: Guard | None = None,
        min_idle_ms: int = 60_000,
        batch: int = 50,
        max_age: float = 3_000.0,
        clock: Any = time.time,
        prefix: str = "thousand",
        stream_ttl: int = 86_400,
    ) -> None:
        self.client = client
        self.platform = platform
        self.stream = stream_key(platform, prefix)
        self.stream_ttl = stream_ttl
        self.deliver = deliver
        self.name = name or f"{platform}-{secrets.token_hex(4)}"
        self.guard = guard or Guard(client, prefix=prefix)
        self.min_idle_ms = min_idle_ms
        self.batch = batch
        self.max_age = max_age
        self.clock = clock
        self.shown = 0
        self.skipped = 0
        self.failed = 0

    async def ensure_group(self) -> None:
        """The consumer group (and the stream, empty, when nobody handed anything over yet: it gets the
        streams' lifetime, as every key must have one)."""
        try:
            await self.client.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
        except ResponseError as e:
            if "BUSYGROUP" not in str(e):
                raise
        if await self.client.ttl(self.stream) == -1:
            await self.client.expire(self.stream, self.stream_ttl)

    async def poll(self, block_ms: int | None = None) -> int:
        """Take over what dead consumers left, then read new entries (waiting up to `block_ms`); handle
        each in stream order. How many entries were handled (shown, skipped or left for later)."""
        try:
            entries = await self._claimed() + await self._new(block_ms)
        except ResponseError as e:
            if "NOGROUP" not in str(e):
                raise
            await self.ensure_group()  # the stream expired with its group: a fresh one
            return 0
        for entry_id, fields in entries:
            await self._handle(entry_id, fields)
        return len(entries)

    async def _claimed(self) -> list[tuple[Any, dict[Any, Any]]]:
        result = await self.client.xautoclaim(
            self.stream, GROUP, self.name, self.min_idle_ms, start_id="0-0", count=self.batch
        )
        return [(i, f) for i, f in result[1] if f is not None]

    async def _new(self, block_ms: int | None) -> list[tuple[Any, dict[Any, Any]]]:
        result: Any = await self.client.xreadgroup(
            GROUP, self.name, {self.stream: ">"}, count=self.batch, block=block_ms
        )
        return [(i, f) for _, items in result or [] for i, f in items]

    async def _handle(self, entry_id: Any, fields: dict[Any, Any]) -> None:
        values = {_text(k): v for k, v in fields.items()}
        millis = int(_text(entry_id).split("-")[0])
        if self.clock() - millis / 1000 > self.max_age:
            self.skipped += 1
            await self.client.xack(self.stream, GROUP, entry_id)
            return
        try:
            message = decode_message(values["m"])
            entry = _text(values["id"])
        except (KeyError, ValueError, TypeError):
            log.warning("relay entry %s of %s is unreadable: dropped", _text(entry_id), self.stream)
            await self.client.xack(self.stream, GROUP, entry_id)
            return
        try:
            claim = await self.guard.show(message, entry, self.name, self.deliver)
        except Exception:
            # Left pending: this or another consumer takes it again after `min_idle_ms`.
            self.failed += 1
            log.exception("delivery of relay entry %s failed", _text(entry_id))
            return
        if claim is Claim.BUSY:
            return  # another consumer shows this slot now: pending, taken again later
        if claim is Claim.GO:
            self.shown += 1
        else:
            self.skipped += 1
        await self.client.xack(self.stream, GROUP, entry_id)

    async def run(self, stop: asyncio.Event, block_ms: int = 1_000) -> None:
        """Poll until `stop` is set (an adapter's background task); trouble with Redis is logged and
        retried after a pause, never fatal."""
        await self.ensure_group()
        while not stop.is_set():
            try:
                await self.poll(block_ms)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("relay consumer %s: poll failed", self.name)
                await asyncio.sleep(1.0)
