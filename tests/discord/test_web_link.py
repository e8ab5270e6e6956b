"""The web table's Open table link on Discord: the ephemeral hand carries a link button (accepted by the
fake, which checks link buttons as Discord does), signed for that user and that table; the page opened
with it gives that player their seat, and the same link cannot be turned into another player's."""

from __future__ import annotations

import base64
import json
import random
import time
from urllib.parse import parse_qs, urlsplit

from aiohttp.test_utils import TestClient, TestServer
from dckit import E2E, Driver, World, running_bot, settings, speed_up

from adapters.web.app import WebOptions, WebTable, make_app
from bot.storage import MemoryStore
from bot.weblinks import signer_for
from fakes.discord import FakeDiscord


def _link_buttons(message: object) -> list[dict[str, object]]:
    out = []
    for c in message.iter_components():  # type: ignore[attr-defined]
        if c.get("type") == 2 and c.get("style") == 5:
            out.append(c)
    return out


async def test_the_ephemeral_hand_has_an_open_table_link(fake: FakeDiscord, world: World) -> None:
    speed_up(fake)
    alice, bob = world.users[:2]
    conf = settings(public_url="https://cards.example", web_secret="discord-web-secret-0123")
    async with running_bot(fake, MemoryStore(), conf, config=E2E, seed=3) as bot:
        driver = Driver(fake, world.channel, [alice, bob], [bot], random.Random(3))
        await driver.open("polish", computers=1)
        table = driver.table_message()
        assert table is not None
        it = await fake.press(bob, table, f"h|dc:{world.channel.id}")
        hand = await it.original_message()
        await driver.settle(it)
        links = _link_buttons(hand)
        assert len(links) == 1 and links[0]["label"] == "Open table"
        url = str(links[0]["url"])
        assert url.startswith("https://cards.example/?t=")
        signer = signer_for(conf)
        assert signer is not None
        claims = signer.read(parse_qs(urlsplit(url).query)["t"][0], "link", time.time())
        assert (claims.table, claims.user, claims.platform) == (f"dc:{world.channel.id}", str(bob.id), "dc")

        web = WebTable(bot.runtime.service, signer, WebOptions(rate=1000, burst=1000))
        async with TestClient(TestServer(make_app(web))) as client:
            origin = str(client.make_url("/")).rstrip("/")
            token = parse_qs(urlsplit(url).query)["t"][0]
            r = await client.post("/api/session", json={"link": token}, headers={"Origin": origin})
            assert r.status == 200, await r.text()
            session = await r.json()
            _, doc, _ = await driver.peek()
            assert doc is not None
            assert session["seat"] == doc.seat_of(f"dc:{bob.id}") and session["seat"] is not None
            # The link's user cannot be changed without breaking its signature.
            body, mac = token.split(".")
            data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
            data["u"] = str(alice.id)
            forged = base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()
            r = await client.post(
                "/api/session", json={"link": f"{forged}.{mac}"}, headers={"Origin": origin}
            )
            assert r.status == 401
