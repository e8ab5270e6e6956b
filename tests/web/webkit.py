"""The web table's test kit: the service on a real Redis, the web app around it, signed users."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bot"))  # botkit

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient
from botkit import Harness, make_user, quiet_settings

from adapters.web.app import WebTable
from bot.model import ChatRef, Message, UserRef
from bot.service import Service
from bot.settings import Settings
from bot.table import TableDoc
from bot.weblinks import Signer, signer_for

BOT_TOKEN = "123456:TEST-token-of-the-web-tests"
GROUP = ChatRef("tg", "-100777", "Web group")
HUMANS = [make_user(i, platform="tg") for i in range(3)]


@dataclass
class Rig:
    """A service on Redis, the web table around it, a test client, and what the web delivered."""

    service: Service
    harness: Harness
    web: WebTable
    client: TestClient
    delivered: list[Message] = field(default_factory=list)

    @property
    def origin(self) -> str:
        return str(self.client.make_url("/")).rstrip("/")

    def headers(self) -> dict[str, str]:
        return {"Origin": self.origin}

    async def session_by_link(self, user: UserRef, table: str = GROUP.key) -> dict[str, object]:
        link = self.web.link(table, user).split("?t=", 1)[1]
        r = await self.client.post("/api/session", json={"link": link}, headers=self.headers())
        assert r.status == 200, await r.text()
        data: dict[str, object] = await r.json()
        return data

    async def start(self, table: str = GROUP.key) -> str:
        """The start payload of the game now at `table` (as the table message's link carries it)."""
        stored = await self.service.store.load(table)
        assert stored is not None
        return self.web.signer.start_payload(table, TableDoc.model_validate_json(stored.document).serial)

    async def view(self, session: object) -> ClientResponse:
        """`POST /api/view` as the page asks for its view (the session in the body, never in a URL)."""
        return await self.client.post("/api/view", json={"session": session}, headers=self.headers())

    async def ticket(self, session: object) -> str:
        r = await self.client.post("/api/ticket", json={"session": session}, headers=self.headers())
        assert r.status == 200, await r.text()
        ticket = (await r.json())["ticket"]
        assert isinstance(ticket, str)
        return ticket

    async def stream(self, session: object, headers: dict[str, str] | None = None) -> ClientResponse:
        """An event stream opened as the page opens it: a fresh single-use ticket, then the GET."""
        ticket = await self.ticket(session)
        return await self.client.get("/api/events", params={"ticket": ticket}, headers=headers or {})


def web_settings() -> Settings:
    return quiet_settings(public_url="https://example.test", web_secret="test-web-secret-0123456789")


def signer_of(settings: Settings) -> Signer:
    signer = signer_for(settings)
    assert signer is not None
    return signer


def static_dir(tmp: Path) -> Path:
    (tmp / "index.html").write_text("<!doctype html><title>table</title>")
    (tmp / "replay.html").write_text("<!doctype html><title>replay</title>")
    return tmp
