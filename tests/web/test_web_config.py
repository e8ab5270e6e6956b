"""The web table's settings as `thousand check-config` checks them."""

from __future__ import annotations

from bot.ops.config import check_settings, describe, load_settings


def problems(**values: object) -> list[str]:
    return check_settings(load_settings(None, **values))


def test_web_urls_must_be_https_except_a_local_public_url() -> None:
    assert problems(public_url="https://cards.example/", telegram_webapp_url="https://cards.example/") == []
    assert problems(public_url="http://127.0.0.1:8080") == []
    assert any(p.startswith("PUBLIC_URL: must be https") for p in problems(public_url="http://cards.example"))
    bad = problems(telegram_webapp_url="http://127.0.0.1:8080/")
    assert any(p.startswith("TELEGRAM_WEBAPP_URL: must be https") for p in bad)
    assert any(p.startswith("PUBLIC_URL: must be an absolute") for p in problems(public_url="cards.example"))
    assert any(p.startswith("PUBLIC_URL") for p in problems(public_url="https://x.example/?a=1"))
    assert any(p.startswith("TELEGRAM_WEBAPP_NAME") for p in problems(telegram_webapp_name="table"))
    assert problems(telegram_webapp_name="table", telegram_webapp_url="https://x.example/") == []
    assert any(p.startswith("WEB_SECRET") for p in problems(web_secret="short"))
    assert any(p.startswith("WEB_LISTEN") for p in problems(web_listen="nowhere"))


def test_the_web_secret_is_never_shown() -> None:
    settings = load_settings(None, web_secret="a-very-secret-web-key-1234")
    lines = describe(settings)
    assert "WEB_SECRET=set" in lines
    assert not any("a-very-secret" in line for line in lines)
