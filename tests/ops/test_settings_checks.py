"""Settings that say what is wrong: every value with a closed set of choices (or a checked form) is refused
by `check-config` with a line naming it, and a variable that looks like a setting but is none is named
with the setting it was probably meant to be (`REDIS_ULR`: did you mean REDIS_URL?), failing
`check-config --strict`.

Before: DEFAULT_PRESET=german passed check-config ("config ok") and the first table failed with
"Unknown preset"; REDIS_ULR=... was silently ignored and the bot ran on the memory store.
"""

from __future__ import annotations

import io
import os
import types
import typing
from pathlib import Path
from typing import Any, Literal

import pytest

from bot.ops.commands import check_config
from bot.ops.config import known_variables, startup_settings, unknown_variables
from bot.settings import Settings

TG = "123456789:AAFakeTelegramTokenForTests_0123456"


@pytest.fixture(autouse=True)
def no_look_alikes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own environment must not add warnings of its own to these tests."""
    for name in list(os.environ):
        if unknown_variables({name: ""}, None):
            monkeypatch.delenv(name)


def run_check(env_file: Path | None = None, *, strict: bool = False) -> tuple[int, str, list[str]]:
    out, err = io.StringIO(), io.StringIO()
    code = check_config(None, env_file, strict=strict, out=out, err=err)
    return code, out.getvalue(), [line for line in err.getvalue().splitlines() if line]


# --- values with a closed set of choices or a checked form ------------------------------------------

BAD_VALUES: dict[str, str] = {
    "DEFAULT_PRESET": "german",
    "DEFAULT_LANGUAGE": "de",
    "DEFAULT_AI_LEVEL": "expert",
    "TABLE_UPDATES": "sometimes",
    "LOG_LEVEL": "LOUD",
    "LOG_FORMAT": "xml",
    "REDIS_URL": "http://redis:6379/0",
    "REDIS_PREFIX": "thousand{x}",
    "TELEGRAM_WEBHOOK_URL": "http://bot.example.org/tg",
    "TELEGRAM_WEBHOOK_LISTEN": "8443",
    "PUBLIC_URL": "ftp://cards.example.org",
    "TELEGRAM_WEBAPP_URL": "http://cards.example.org/",
    "TELEGRAM_WEBAPP_NAME": "a b",
    "WEB_LISTEN": "localhost",
    "DISCORD_SHARD_IDS": "first",
    "WEB_TRUSTED_PROXIES": "10.0.0.1,proxy.example.org",
    "CHARTS": "maybe",
    "REDIS_CLUSTER": "perhaps",
    "TELEGRAM_PAID_BROADCAST": "perhaps",
}
FREE_TEXT = {"METRICS_HOST"}
"""Text settings with no form to check: any host name or address may be bound."""


def _is_text(annotation: Any) -> bool:
    if annotation is str:
        return True
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_is_text(arg) for arg in typing.get_args(annotation))
    return False


def test_every_text_setting_is_checked_or_declared_free() -> None:
    """A new text setting must come with its check (and a bad value here) or be declared free text."""
    text = {name.upper() for name, field in Settings.model_fields.items() if _is_text(field.annotation)}
    assert text, "no text settings found: the annotation walk is broken"
    assert not text - set(BAD_VALUES) - FREE_TEXT, "add a bad value (and its check) for these"


@pytest.mark.parametrize("name", sorted(BAD_VALUES))
def test_a_bad_value_fails_check_config_naming_the_variable(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, BAD_VALUES[name])
    code, out, err = run_check()
    assert code == 2, out
    assert "config ok" not in out
    assert any(line.startswith(f"thousand: {name}: ") for line in err), err


def test_an_unknown_preset_names_the_known_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_PRESET", "german")
    code, _, err = run_check()
    assert code == 2
    assert err == ["thousand: DEFAULT_PRESET: unknown preset 'german' (known: polish, estonian, russian)"]


@pytest.mark.parametrize("preset", ["polish", "estonian", "russian"])
def test_every_preset_passes(preset: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_PRESET", preset)
    code, out, err = run_check()
    assert (code, err) == (0, [])
    assert f"DEFAULT_PRESET={preset}" in out.splitlines()


def test_the_webhook_listen_address_is_checked_without_a_webhook(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_WEBHOOK_LISTEN", "0.0.0.0:99999")
    code, _, err = run_check()
    assert code == 2
    assert err == [
        "thousand: TELEGRAM_WEBHOOK_LISTEN: expected HOST:PORT with a port from 1 to 65535 "
        "(got '0.0.0.0:99999')"
    ]


# --- variables that look like settings -----------------------------------------------------------------


def test_a_misspelled_setting_is_named_with_the_likely_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_ULR", "redis://localhost:6379/0")
    code, out, err = run_check()
    assert code == 0
    assert err == [
        "thousand: warning: REDIS_ULR: not a setting of thousand, ignored; did you mean REDIS_URL?"
    ]
    assert out.splitlines()[-1].endswith("; 1 unknown variable(s) ignored (see above)")


def test_strict_fails_on_a_misspelled_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_ULR", "redis://localhost:6379/0")
    code, out, err = run_check(strict=True)
    assert code == 2
    assert out == ""
    assert err == [
        "thousand: REDIS_ULR: not a setting of thousand, ignored; did you mean REDIS_URL?",
        "thousand: --strict: 1 unknown variable(s) above",
    ]


def test_strict_passes_a_clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REDIS_URL", "redis://localhost:6379/0")
    monkeypatch.setenv("TELEGRAM_API_URL", "http://127.0.0.1:8081")  # read by the Telegram adapter itself
    code, out, err = run_check(strict=True)
    assert (code, err) == (0, [])
    assert out.splitlines()[-1] == "config ok for any front end; store: redis"


def test_a_misspelling_in_the_env_file_is_named_with_the_file(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("COMPOSE_PROFILES=telegram\nTELEGRAM_TOKNE=x\nturn_seconds=60\n")
    code, _, err = run_check(env, strict=True)
    assert code == 2
    assert err[0] == (
        f"thousand: TELEGRAM_TOKNE (in {env}): not a setting of thousand, ignored; "
        "did you mean TELEGRAM_TOKEN?"
    )
    assert len(err) == 2  # COMPOSE_PROFILES (docker compose's) and turn_seconds (any case) are fine


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("REDIS_ULR", "did you mean REDIS_URL?"),
        ("REIDS_URL", "did you mean REDIS_URL?"),  # no prefix of ours, but spelled almost like a setting
        ("TURN_SECOND", "did you mean TURN_SECONDS?"),
        ("WEB_SECERT", "did you mean WEB_SECRET?"),
        ("DEFAULT_PRESETS", "did you mean DEFAULT_PRESET?"),
        ("THOUSAND_REDIS_URL", "did you mean REDIS_URL? (settings have no prefix"),
        ("THOUSAND_TELEGRAM_TOKN", "did you mean TELEGRAM_TOKEN?"),
        ("TELEGRAM_SOMETHING_ELSE", "the settings are listed in docs/OPERATIONS.md"),
        ("telegram_tokn", "did you mean TELEGRAM_TOKEN?"),
    ],
)
def test_look_alikes_and_their_hints(name: str, hint: str) -> None:
    (line,) = unknown_variables({name: "x"}, None)
    assert line.startswith(f"{name}: not a setting of thousand, ignored; {hint}")


@pytest.mark.parametrize(
    "name",
    [
        # Kubernetes service links for the Services of deploy/k8s (redis, thousand-telegram).
        "REDIS_SERVICE_HOST",
        "REDIS_SERVICE_PORT",
        "REDIS_PORT",
        "REDIS_PORT_6379_TCP",
        "REDIS_PORT_6379_TCP_ADDR",
        "THOUSAND_TELEGRAM_SERVICE_PORT_WEBHOOK",
        "COMPOSE_PROFILES",
        "HOME",
        "PYTHON_VERSION",
        "MPLCONFIGDIR",
        "TELEGRAM_LIMITS",
        "redis_url",
        # The test suite's own; a THOUSAND_ name that is not a setting's with the prefix.
        "THOUSAND_FUZZ_SEED",
        "THOUSAND_FUZZ_TG_CASES",
        "THOUSAND_REDIS_SERVER",
        "THOUSAND_HOME",
    ],
)
def test_variables_of_others_and_our_own_are_not_warned_about(name: str) -> None:
    assert unknown_variables({name: "x"}, None) == []


def test_every_setting_is_known() -> None:
    names = {name.upper(): "x" for name in Settings.model_fields}
    assert unknown_variables(names, None) == []
    assert set(names) <= known_variables()


def test_a_misspelled_secret_is_named_but_never_quoted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_TOKNE", TG)
    monkeypatch.setenv("TELEGRAM_TOKEN", TG)
    out, err = io.StringIO(), io.StringIO()
    code = check_config("telegram", None, strict=True, out=out, err=err)
    assert code == 2
    assert "TELEGRAM_TOKNE" in err.getvalue()
    assert TG not in out.getvalue() + err.getvalue()
    assert TG.split(":")[1] not in out.getvalue() + err.getvalue()


def test_a_process_starting_warns_about_look_alikes_before_its_errors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TELEGRAM_TOKNE", TG)
    warn = io.StringIO()
    with pytest.raises(Exception, match="TELEGRAM_TOKEN: missing"):
        startup_settings("telegram", None, warn=warn)
    assert warn.getvalue() == (
        "thousand: warning: TELEGRAM_TOKNE: not a setting of thousand, ignored; "
        "did you mean TELEGRAM_TOKEN?\n"
    )
    assert TG not in warn.getvalue()
    monkeypatch.setenv("TELEGRAM_TOKEN", TG)
    warn = io.StringIO()
    assert startup_settings("telegram", None, warn=warn).telegram_token is not None  # a warning only
    assert "TELEGRAM_TOKNE" in warn.getvalue()


# --- empty values ----------------------------------------------------------------------------------------


def test_an_empty_value_means_unset(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """deploy/.env.example leaves the token of a bot not run empty (`DISCORD_TOKEN=`); the Telegram process
    reading the same file must start (before: "DISCORD_TOKEN: not a bot token")."""
    env = tmp_path / ".env"
    env.write_text(f"TELEGRAM_TOKEN={TG}\nDISCORD_TOKEN=\nPUBLIC_URL=\n")
    monkeypatch.setenv("TELEGRAM_WEBAPP_URL", "")
    out, err = io.StringIO(), io.StringIO()
    assert check_config("telegram", env, out=out, err=err) == 0, err.getvalue()
    assert {"DISCORD_TOKEN=unset", "PUBLIC_URL=unset", "TELEGRAM_WEBAPP_URL=unset"} <= set(
        out.getvalue().splitlines()
    )
    out, err = io.StringIO(), io.StringIO()
    assert check_config("discord", env, out=out, err=err) == 2
    assert err.getvalue() == "thousand: DISCORD_TOKEN: missing (the bot token from the Developer Portal)\n"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TELEGRAM_LIMITS", "chat=1"),
        ("TELEGRAM_LIMITS", "group=0/60"),
        ("TELEGRAM_API_URL", "127.0.0.1:8081"),
    ],
)
def test_telegrams_own_variables_are_checked_as_the_process_reads_them(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`thousand telegram` refuses to start on these (exit 2): check-config says so first."""
    from adapters.telegram.limits import env_problems

    monkeypatch.setenv(name, value)
    out, err = io.StringIO(), io.StringIO()
    assert check_config(None, None, out=out, err=err, env_checks=env_problems) == 2
    assert any(line.startswith(f"thousand: {name}: ") for line in err.getvalue().splitlines()), err.getvalue()
    monkeypatch.setenv("TELEGRAM_LIMITS", "chat=1/1,group=20/60,global=30/1")
    monkeypatch.setenv("TELEGRAM_API_URL", "http://127.0.0.1:8081/bot")
    assert check_config(None, None, out=io.StringIO(), err=io.StringIO(), env_checks=env_problems) == 0
