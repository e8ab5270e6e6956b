"""Signed tokens and Telegram initData: genuine ones pass, forged, expired and misused ones do not."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer

from adapters.web.app import make_static_app
from adapters.web.telegram_auth import InitDataError, sign_init_data, validate_init_data
from bot.weblinks import Claims, Signer, TokenError

TOKEN = "123456:TEST-token-of-the-tests"


def _claims(**changes: object) -> Claims:
    base: dict[str, object] = {
        "kind": "link",
        "table": "dc:42",
        "user": "dc:7",
        "name": "Ann",
        "lang": "pl",
        "platform": "discord",
        "expires": 2000.0,
    }
    base.update(changes)
    return Claims(**base)  # type: ignore[arg-type]


def test_link_round_trip_and_refusals() -> None:
    signer = Signer(b"k" * 32)
    token = signer.sign(_claims())
    assert signer.read(token, "link", now=1000.0) == _claims()
    with pytest.raises(TokenError, match="expired"):
        signer.read(token, "link", now=2001.0)
    with pytest.raises(TokenError, match="forged"):
        signer.read(token, "session", now=1000.0)  # a link is not a session
    with pytest.raises(TokenError, match="forged"):
        Signer(b"x" * 32).read(token, "link", now=1000.0)
    _body, mac = token.split(".")
    other = Signer(b"k" * 32).sign(_claims(table="dc:43")).split(".")[0]
    with pytest.raises(TokenError):
        signer.read(f"{other}.{mac}", "link", now=1000.0)  # another table under this signature
    with pytest.raises(TokenError):
        signer.read("garbage", "link", now=1000.0)


def test_start_payload_names_one_game_and_cannot_be_forged() -> None:
    signer = Signer(b"k" * 32)
    payload = signer.start_payload("tg:-1001234567890", "0a1b2c3d4e")
    assert len(payload) <= 512 and all(c.isalnum() or c in "_-" for c in payload)
    assert signer.read_start(payload) == ("tg:-1001234567890", "0a1b2c3d4e")
    forged = Signer(b"z" * 32).start_payload("tg:-1009", "0a1b2c3d4e")
    with pytest.raises(TokenError):
        signer.read_start(forged)
    body, serial, mac = payload.rsplit("_", 2)
    with pytest.raises(TokenError):
        signer.read_start(Signer(b"k" * 32).start_payload("tg:-1", serial).rsplit("_", 1)[0] + "_" + mac)
    # The serial is signed: the same table's next game cannot be named by editing an old link.
    with pytest.raises(TokenError, match="forged"):
        signer.read_start(f"{body}_ffffffffff_{mac}")
    with pytest.raises(TokenError):
        signer.read_start(payload + "\n")


def _init_data(**fields: str) -> str:
    base = {
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps({"id": 279058397, "first_name": "Vlad", "language_code": "uk"}),
        "auth_date": str(int(time.time())),
        "chat_instance": "-42",
    }
    base.update(fields)
    return sign_init_data(base, TOKEN)


def test_init_data_validated_as_telegram_says() -> None:
    now = time.time()
    user = validate_init_data(_init_data(start_param="abc"), TOKEN, now=now, max_age=3600)
    assert (user.user_id, user.name, user.language, user.start_param) == ("279058397", "Vlad", "uk", "abc")
    # Signed with another bot's token.
    with pytest.raises(InitDataError):
        validate_init_data(sign_init_data({"auth_date": str(int(now)), "user": '{"id":1}'}, "1:other"),
                           TOKEN, now=now, max_age=3600)  # fmt: skip
    # A field changed after signing: another user id.
    data = _init_data().replace("279058397", "279058398")
    with pytest.raises(InitDataError, match="signed"):
        validate_init_data(data, TOKEN, now=now, max_age=3600)
    # Too old.
    old = _init_data(auth_date=str(int(now) - 7200))
    with pytest.raises(InitDataError, match="old"):
        validate_init_data(old, TOKEN, now=now, max_age=3600)


def test_init_data_matches_an_independent_computation() -> None:
    """The data-check string and key derivation written out once more, step by step from the docs."""
    import hashlib
    import hmac
    from urllib.parse import parse_qsl

    data = _init_data()
    fields = dict(parse_qsl(data))
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()) if k != "hash")
    secret = hmac.new(key=b"WebAppData", msg=TOKEN.encode(), digestmod=hashlib.sha256).digest()
    assert hmac.new(secret, check.encode(), hashlib.sha256).hexdigest() == fields["hash"]


async def test_static_app_sends_csp_and_the_page(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html><title>t</title>")
    (tmp_path / "app.js").write_text("console.log(1)")
    async with TestClient(TestServer(make_static_app(tmp_path))) as client:
        page = await client.get("/")
        assert page.status == 200 and "<title>t</title>" in await page.text()
        csp = page.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        js = await client.get("/static/app.js")
        assert js.status == 200 and "Content-Security-Policy" in js.headers
        missing = await client.get("/static/nope.js")
        assert missing.status == 404 and "Content-Security-Policy" in missing.headers
