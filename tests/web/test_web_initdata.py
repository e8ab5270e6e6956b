"""Telegram initData signed here independently of `adapters.web.telegram_auth`, step by step as Telegram's
Mini Apps documentation says ("Validating data received via the Mini App"), so a validator that drifts
from the documented check (a field left out of the data-check string, a missing hash let through, a date
in the future taken) fails here even though its own signer would agree with it."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from urllib.parse import quote

import pytest
from webkit import BOT_TOKEN, GROUP, HUMANS, Rig

from adapters.web.telegram_auth import InitDataError, validate_init_data

TOKEN = "7000001:AAF-independent-signing-token"


def telegram_signs(fields: dict[str, str], bot_token: str = TOKEN, *, with_hash: bool = True) -> str:
    """initData as a Telegram client passes it: every field URL-encoded, plus `hash`, the hex
    HMAC-SHA256 of the data-check string (the fields but `hash`, sorted by key, `key=value` joined by
    line feeds) under the secret key HMAC-SHA256("WebAppData", bot token)."""
    check = "\n".join(f"{key}={fields[key]}" for key in sorted(fields))
    secret = hmac.new(key=b"WebAppData", msg=bot_token.encode(), digestmod=hashlib.sha256).digest()
    digest = hmac.new(key=secret, msg=check.encode(), digestmod=hashlib.sha256).hexdigest()
    pairs = [f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in fields.items()]
    if with_hash:
        pairs.append(f"hash={digest}")
    return "&".join(pairs)


def fields(user_id: int = 279058397, *, auth_date: int | None = None, **more: str) -> dict[str, str]:
    data = {
        "query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
        "user": json.dumps({"id": user_id, "first_name": "Vlad", "language_code": "uk"}),
        "auth_date": str(int(time.time()) if auth_date is None else auth_date),
    }
    data.update(more)
    return data


def test_documented_initdata_with_a_start_param_is_accepted() -> None:
    """start_param is one of the signed fields: initData carrying one validates, and says it."""
    now = time.time()
    data = telegram_signs(fields(start_param="tbl_0a1b2c", chat_type="supergroup", chat_instance="-7"))
    user = validate_init_data(data, TOKEN, now=now, max_age=3600)
    assert (user.user_id, user.start_param) == ("279058397", "tbl_0a1b2c")


def test_a_start_param_changed_after_signing_is_refused() -> None:
    now = time.time()
    data = telegram_signs(fields(start_param="tbl_0a1b2c"))
    with pytest.raises(InitDataError):
        validate_init_data(data.replace("tbl_0a1b2c", "tbl_0a1b2d"), TOKEN, now=now, max_age=3600)


def test_initdata_without_a_hash_is_refused() -> None:
    now = time.time()
    for data in (
        telegram_signs(fields(), with_hash=False),
        telegram_signs(fields(), with_hash=False) + "&hash=",
    ):
        with pytest.raises(InitDataError):
            validate_init_data(data, TOKEN, now=now, max_age=3600)


def test_initdata_from_the_future_is_refused() -> None:
    now = time.time()
    validate_init_data(
        telegram_signs(fields(auth_date=int(now) + 30)), TOKEN, now=now, max_age=3600
    )  # clock skew
    for ahead in (120, 3600, 10 * 365 * 86400):
        with pytest.raises(InitDataError, match="future"):
            validate_init_data(
                telegram_signs(fields(auth_date=int(now) + ahead)), TOKEN, now=now, max_age=3600
            )


def test_odd_initdata_is_refused_not_crashed() -> None:
    now = time.time()
    for data in (
        "user=%ED%A0%80&hash=" + "0" * 64,  # a lone surrogate once decoded
        "user=\ud800&hash=" + "0" * 64,
        "user=1&hash=\ud800",
        "a=1&a=2&hash=00",
        "=&=",
        "hash=" + "é" * 64,
        telegram_signs(fields() | {"user": "[" * 3000}),
        telegram_signs(fields() | {"user": '{"id": "1²"}'}),
    ):
        with pytest.raises(InitDataError):
            validate_init_data(data, TOKEN, now=now, max_age=3600)


async def test_the_api_refuses_initdata_without_hash_and_from_the_future(rig: Rig) -> None:
    await rig.harness.open_table(HUMANS)
    start = await rig.start()
    good = fields(100, start_param=start)
    r = await rig.client.post(
        "/api/session", json={"init_data": telegram_signs(good, BOT_TOKEN)}, headers=rig.headers()
    )
    assert r.status == 200, await r.text()
    assert (await r.json())["table"] == GROUP.key
    for bad in (
        telegram_signs(good, BOT_TOKEN, with_hash=False),
        telegram_signs(fields(100, auth_date=int(time.time()) + 3600, start_param=start), BOT_TOKEN),
    ):
        r = await rig.client.post("/api/session", json={"init_data": bad}, headers=rig.headers())
        assert r.status == 401, bad
        assert "session" not in await r.json()
