"""The gateway websocket: HELLO, IDENTIFY/READY, heartbeats, RESUME with replay, sharded dispatch.

Opcodes, close codes, intents and the zlib-stream transport compression follow Discord's gateway v10 docs.
Sessions outlive their websocket (unless the client closes with 1000/1001), so a client that reconnects can
RESUME and receive the events it missed; a RESUME of an unknown session gets INVALID_SESSION(false).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from .snowflake import shard_for_guild

if TYPE_CHECKING:
    from .server import FakeDiscord

JSON = dict[str, Any]

# Opcodes.
DISPATCH, HEARTBEAT, IDENTIFY, PRESENCE_UPDATE, VOICE_STATE_UPDATE = 0, 1, 2, 3, 4
RESUME, RECONNECT, REQUEST_GUILD_MEMBERS, INVALID_SESSION, HELLO, HEARTBEAT_ACK = 6, 7, 8, 9, 10, 11

# Close codes.
UNKNOWN_ERROR, UNKNOWN_OPCODE, DECODE_ERROR, NOT_AUTHENTICATED = 4000, 4001, 4002, 4003
AUTHENTICATION_FAILED, ALREADY_AUTHENTICATED, INVALID_SEQ, RATE_LIMITED, SESSION_TIMED_OUT = (
    4004,
    4005,
    4007,
    4008,
    4009,
)
INVALID_SHARD, SHARDING_REQUIRED, INVALID_API_VERSION, INVALID_INTENTS, DISALLOWED_INTENTS = (
    4010,
    4011,
    4012,
    4013,
    4014,
)

# Intents.
GUILDS = 1 << 0
GUILD_MEMBERS = 1 << 1
GUILD_PRESENCES = 1 << 8
GUILD_MESSAGES = 1 << 9
DIRECT_MESSAGES = 1 << 12
MESSAGE_CONTENT = 1 << 15
PRIVILEGED_INTENTS = GUILD_MEMBERS | GUILD_PRESENCES | MESSAGE_CONTENT
ALL_INTENTS = (1 << 26) - 1

EventData = JSON | Callable[["GatewaySession"], JSON | None]


class Connection:
    """One websocket; serialises sends so sequence numbers go out in order."""

    def __init__(self, ws: web.WebSocketResponse, *, compress: str | None, host: str) -> None:
        self.ws = ws
        self.host = host
        self.compress = compress
        self._zlib = zlib.compressobj() if compress == "zlib-stream" else None
        self.lock = asyncio.Lock()
        self.session: GatewaySession | None = None
        self.server_closed = False

    async def close(self, code: int, reason: str) -> None:
        self.server_closed = True
        await self.ws.close(code=code, message=reason.encode())

    async def send_locked(self, payload: JSON) -> None:
        raw = json.dumps(payload, separators=(",", ":"))
        if self.ws.closed:
            return
        try:
            if self._zlib is not None:
                data = self._zlib.compress(raw.encode()) + self._zlib.flush(zlib.Z_SYNC_FLUSH)
                await self.ws.send_bytes(data)
            else:
                await self.ws.send_str(raw)
        except (ConnectionError, RuntimeError):
            pass  # The event stays buffered in its session for a RESUME.

    async def send(self, payload: JSON) -> None:
        async with self.lock:
            await self.send_locked(payload)


@dataclass(eq=False)
class GatewaySession:
    id: str
    shard_id: int
    shard_count: int
    intents: int
    seq: int = 0
    connection: Connection | None = None
    buffer: deque[JSON] = field(default_factory=lambda: deque(maxlen=2000))
    presence: JSON | None = None

    def covers(self, guild_id: int | None) -> bool:
        if guild_id is None:
            return self.shard_id == 0
        return shard_for_guild(guild_id, self.shard_count) == self.shard_id

    @property
    def connected(self) -> bool:
        return self.connection is not None and not self.connection.ws.closed

    async def emit_locked(self, event: str, data: JSON) -> None:
        self.seq += 1
        payload = {"op": DISPATCH, "t": event, "s": self.seq, "d": data}
        self.buffer.append(payload)
        if self.connection is not None:
            await self.connection.send_locked(payload)


@dataclass
class GatewayStats:
    connections: int = 0
    identifies: int = 0
    resumes: int = 0
    invalid_sessions: int = 0
    heartbeats: int = 0
    hosts: list[str] = field(default_factory=list)
    #: The ``compress`` query of each connection ("zlib-stream" is implemented; others get plain text).
    compressions: list[str | None] = field(default_factory=list)
    close_codes: list[int] = field(default_factory=list)


class Gateway:
    def __init__(self, fake: FakeDiscord) -> None:
        self.fake = fake
        self.sessions: dict[str, GatewaySession] = {}
        self.connections: set[Connection] = set()
        self.stats = GatewayStats()

    # Routing ------------------------------------------------------------------------------------------
    def sessions_for(self, guild_id: int | None, *, connected_only: bool = False) -> list[GatewaySession]:
        return [
            s for s in self.sessions.values() if s.covers(guild_id) and (s.connected or not connected_only)
        ]

    async def dispatch(self, event: str, data: EventData, *, guild_id: int | None, intent: int | None) -> int:
        """Send an event to every session of the guild's shard; returns how many were live."""
        live = 0
        for session in self.sessions_for(guild_id):
            if intent is not None and not session.intents & intent:
                continue
            payload = data(session) if callable(data) else data
            if payload is None:
                continue
            conn = session.connection
            if conn is not None:
                async with conn.lock:
                    await session.emit_locked(event, payload)
                live += 1
            else:
                await session.emit_locked(event, payload)
        return live

    # Fault injection ----------------------------------------------------------------------------------
    async def disconnect_all(self, code: int = UNKNOWN_ERROR) -> None:
        """Drop every websocket as a Discord-side failure; sessions stay resumable."""
        for conn in list(self.connections):
            await conn.close(code, "fake: disconnect")

    async def request_reconnect(self) -> None:
        """Send opcode 7 RECONNECT to every connection (the client should RESUME)."""
        for conn in list(self.connections):
            await conn.send({"op": RECONNECT, "d": None, "s": None, "t": None})

    async def invalidate_sessions(self, *, resumable: bool = False) -> None:
        for conn in list(self.connections):
            if not resumable and conn.session is not None:
                self.sessions.pop(conn.session.id, None)
            await conn.send({"op": INVALID_SESSION, "d": resumable, "s": None, "t": None})

    # Websocket handler --------------------------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(autoping=True, max_msg_size=4096 * 1024)
        await ws.prepare(request)
        cfg = self.fake.config
        self.stats.connections += 1
        self.stats.hosts.append(request.host)
        self.stats.compressions.append(request.query.get("compress"))
        version = request.query.get("v", "10")
        encoding = request.query.get("encoding", "json")
        compress = request.query.get("compress")
        conn = Connection(ws, compress=compress if compress == "zlib-stream" else None, host=request.host)
        self.connections.add(conn)
        try:
            if version not in ("9", "10"):
                await conn.close(INVALID_API_VERSION, "Invalid API version.")
                return ws
            if encoding != "json":
                await conn.close(DECODE_ERROR, "Only json encoding is faked.")
                return ws
            await conn.send(
                {
                    "op": HELLO,
                    "d": {"heartbeat_interval": cfg.heartbeat_interval_ms, "_trace": ['["fake-gateway",{}]']},
                    "s": None,
                    "t": None,
                }
            )
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    try:
                        payload = json.loads(msg.data)
                        op = payload["op"]
                    except (ValueError, KeyError, TypeError):
                        await conn.close(DECODE_ERROR, "Error while decoding payload.")
                        break
                    if not await self._on_payload(conn, op, payload.get("d")):
                        break
                elif msg.type == WSMsgType.BINARY:
                    await conn.close(DECODE_ERROR, "Error while decoding payload.")
                    break
                else:
                    break
        finally:
            self.connections.discard(conn)
            code = ws.close_code
            if code is not None:
                self.stats.close_codes.append(code)
            session = conn.session
            if session is not None and session.connection is conn:
                session.connection = None
                # A client closing normally ends its session; anything else leaves it resumable.
                if code in (1000, 1001) and not conn.server_closed:
                    self.sessions.pop(session.id, None)
        return ws

    async def _close(self, conn: Connection, code: int, reason: str) -> bool:
        await conn.close(code, reason)
        return False

    async def _on_payload(self, conn: Connection, op: int, data: Any) -> bool:
        if op == HEARTBEAT:
            self.stats.heartbeats += 1
            await conn.send({"op": HEARTBEAT_ACK, "d": None, "s": None, "t": None})
            return True
        if op == IDENTIFY:
            return await self._identify(conn, data)
        if op == RESUME:
            return await self._resume(conn, data)
        if conn.session is None:
            return await self._close(conn, NOT_AUTHENTICATED, "Not authenticated.")
        if op == PRESENCE_UPDATE:
            conn.session.presence = data
            return True
        if op == VOICE_STATE_UPDATE:
            return True
        if op == REQUEST_GUILD_MEMBERS:
            await self._request_members(conn.session, data or {})
            return True
        return await self._close(conn, UNKNOWN_OPCODE, "Unknown opcode.")

    async def _identify(self, conn: Connection, data: Any) -> bool:
        fake = self.fake
        if conn.session is not None:
            return await self._close(conn, ALREADY_AUTHENTICATED, "Already authenticated.")
        if not isinstance(data, dict) or data.get("token") != fake.token:
            return await self._close(conn, AUTHENTICATION_FAILED, "Authentication failed.")
        intents = data.get("intents")
        if not isinstance(intents, int) or intents < 0 or intents > ALL_INTENTS:
            return await self._close(conn, INVALID_INTENTS, "Invalid intent(s).")
        if intents & PRIVILEGED_INTENTS & ~fake.config.privileged_intents:
            return await self._close(conn, DISALLOWED_INTENTS, "Disallowed intent(s).")
        shard = data.get("shard") or [0, 1]
        if (
            not isinstance(shard, list)
            or len(shard) != 2
            or not all(isinstance(x, int) for x in shard)
            or shard[1] < 1
            or not 0 <= shard[0] < shard[1]
        ):
            return await self._close(conn, INVALID_SHARD, "Invalid shard.")
        self.stats.identifies += 1
        session = GatewaySession(
            id=secrets.token_hex(16), shard_id=shard[0], shard_count=shard[1], intents=intents
        )
        session.presence = data.get("presence")
        guilds = [g for g in fake.guilds.values() if session.covers(g.id)]
        ready: JSON = {
            "v": 10,
            "user": fake.bot_user.payload() | {"verified": True, "mfa_enabled": False, "email": None},
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": fake.config.resume_gateway_url,
            "application": {"id": str(fake.application_id), "flags": fake.config.application_flags},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "user_settings": {},
            "auth": {},
            "geo_ordered_rtc_regions": ["fake-region"],
            "_trace": ['["fake-gateway",{}]'],
        }
        if data.get("shard") is not None:
            ready["shard"] = list(shard)
        async with conn.lock:
            conn.session = session
            session.connection = conn
            self.sessions[session.id] = session
            await session.emit_locked("READY", ready)
            if intents & GUILDS:
                for guild in guilds:
                    await session.emit_locked("GUILD_CREATE", fake.guild_create_payload(guild, session))
        return True

    async def _resume(self, conn: Connection, data: Any) -> bool:
        fake = self.fake
        if not isinstance(data, dict) or data.get("token") != fake.token:
            return await self._close(conn, AUTHENTICATION_FAILED, "Authentication failed.")
        session = self.sessions.get(str(data.get("session_id")))
        seq = data.get("seq")
        if session is None or not isinstance(seq, int) or seq > session.seq:
            self.stats.invalid_sessions += 1
            await conn.send({"op": INVALID_SESSION, "d": False, "s": None, "t": None})
            return True
        self.stats.resumes += 1
        old = session.connection
        async with conn.lock:
            session.connection = conn
            conn.session = session
            for payload in list(session.buffer):
                if payload["s"] > seq:
                    await conn.send_locked(payload)
            await session.emit_locked("RESUMED", {"_trace": ['["fake-gateway",{}]']})
        if old is not None and old is not conn and not old.ws.closed:
            await old.close(UNKNOWN_ERROR, "Session resumed elsewhere.")
        return True

    async def _request_members(self, session: GatewaySession, data: JSON) -> None:
        guild_id = int(data.get("guild_id") or 0)
        guild = self.fake.guilds.get(guild_id)
        if guild is None or not session.covers(guild_id):
            return
        query = str(data.get("query") or "")
        limit = int(data.get("limit") or 0)
        wanted = {int(u) for u in data.get("user_ids") or []}
        members = [
            m
            for m in guild.members.values()
            if (not wanted or m.user.id in wanted) and m.user.username.lower().startswith(query.lower())
        ]
        if limit:
            members = members[:limit]
        chunk: JSON = {
            "guild_id": str(guild_id),
            "members": [m.payload() for m in members],
            "chunk_index": 0,
            "chunk_count": 1,
            "not_found": [str(u) for u in wanted - {m.user.id for m in members}],
        }
        if data.get("nonce") is not None:
            chunk["nonce"] = data["nonce"]
        conn = session.connection
        if conn is not None:
            async with conn.lock:
                await session.emit_locked("GUILD_MEMBERS_CHUNK", chunk)
