"""The web table's test kit: the service on a real Redis, the web app around it, signed users."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bot"))  # botkit

from aiohttp.test_utils import TestClient
from botkit import Harness, make_user, quiet_settings

from adapters.web.app import WebTable
from bot.model import ChatRef, Message, UserRef
from bot.service import Service
from bot.settings import Settings
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
