"""The replay link of `/export` reaches the player whole: the URL is literal text in the message's markup.
(It went in unescaped: the `_` of a base64 token, or a `*` in the public URL, styled the text, Telegram
showed the link cut where the italics began, and the cut link answered 401.)"""

from __future__ import annotations

import random
import re

import pytest
from botkit import Clock, Harness, make_user, quiet_settings

from adapters.telegram.content import render
from bot.handlers import Handlers
from bot.markup import parse, to_html, to_plain
from bot.model import Message
from bot.service import Service
from bot.storage import MemoryStore
from bot.weblinks import Signer

ALA, BARTEK = make_user(0), make_user(1)
PUBLIC = "https://cards.example/t*1_x"
TOKEN = "eyJr_IjoicmVw*bGF5_In0__x.sig_*Ab*_c"


async def _exported(monkeypatch: pytest.MonkeyPatch, lang: str) -> tuple[Message, str]:
    """The /export answer after one finished deal, with a replay token full of `_` and `*`."""
    monkeypatch.setattr(Signer, "replay_token", lambda self, table_id, serial, expires: TOKEN)
    clock = Clock()
    store = MemoryStore(clock=clock)
    settings = quiet_settings(public_url=PUBLIC, web_secret="s" * 32)
    service = Service(store, settings, handlers=Handlers, clock=clock)
    try:
        h = Harness(service, store, clock)
        await h.open_table([ALA, BARTEK], computers=1)
        rng = random.Random(5)
        while (await h.state()).deal_number < 2:
            assert await h.play_turn(rng, {0: ALA, 1: BARTEK}, sensible=True)
        asker = make_user(0, lang)
        out = await h.text(asker, "/export")
    finally:
        await service.close()
    exported = [m for m in out if m.kind == "export"]
    assert len(exported) == 1
    return exported[0], f"{PUBLIC}/replay/{TOKEN}"


@pytest.mark.parametrize("lang", ["en", "pl", "ru", "uk", "et", "tr"])
async def test_the_replay_link_is_literal_text(monkeypatch: pytest.MonkeyPatch, lang: str) -> None:
    message, url = await _exported(monkeypatch, lang)
    assert url in to_plain(message.text)
    # No styling anywhere in the message: the link is one unstyled run of text.
    assert all(not (s.bold or s.italic or s.code) for s in parse(message.text) if "replay" in s.text)
    html = to_html(message.text)
    assert url in html and "<i>" not in html and "<b>" not in html
    # What the Telegram adapter sends (HTML mode) holds the whole link as one word.
    sent = render(message).text
    words = re.findall(r"\S+", sent)
    assert url in words, sent
