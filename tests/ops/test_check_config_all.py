"""`thousand check-config` names every wrong setting in one run, each once, quoting a value at most once.

Before (issue 25, "The operator's first hour"): a value pydantic could not read (DEFAULT_PRESET=german)
stopped the check before the checks of the rest, so a malformed TELEGRAM_TOKEN was reported only by the
second run, after the preset was fixed; and the preset's line quoted the value twice: "unknown preset
'german' (known: ...) (got 'german')".
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest

from bot.ops.commands import check_config
from bot.ops.config import ConfigError, gather_settings, startup_settings, unknown_variables

TG = "123456789:AAFakeTelegramTokenForTests_0123456"

# One value of each kind: unreadable by pydantic (a field validator, a type, a bound, a Literal), and
# wrong only for the checks that run on settings that could be read (tokens, URLs, listeners).
BAD: dict[str, str] = {
    "DEFAULT_PRESET": "german",
    "DEFAULT_LANGUAGE": "de",
    "TURN_SECONDS": "soon",
    "LOBBY_TTL": "-1",
    "LOG_FORMAT": "xml",
    "TELEGRAM_TOKEN": "not-a-token",
    "DISCORD_TOKEN": "not-a-token",
    "LOG_LEVEL": "LOUD",
    "REDIS_URL": "http://redis:6379/0",
    "WEB_LISTEN": "localhost",
    "PUBLIC_URL": "ftp://cards.example.org",
}


@pytest.fixture(autouse=True)
def no_look_alikes(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if unknown_variables({name: ""}, None):
            monkeypatch.delenv(name)


def run_check(platform: str | None = "telegram", env_file: Path | None = None) -> tuple[int, list[str]]:
    out, err = io.StringIO(), io.StringIO()
    code = check_config(platform, env_file, out=out, err=err)
    assert "config ok" not in out.getvalue()
    return code, [line for line in err.getvalue().splitlines() if line]


def named(lines: list[str]) -> list[str]:
    return [line.removeprefix("thousand: ").split(":")[0] for line in lines]


def test_every_wrong_setting_is_named_once_in_one_run(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in BAD.items():
        monkeypatch.setenv(name, value)
    code, lines = run_check()
    assert code == 2
    assert sorted(named(lines)) == sorted(BAD), lines
    assert len(set(lines)) == len(lines)


def test_a_bad_preset_no_longer_hides_a_bad_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_PRESET", "german")
    monkeypatch.setenv("TELEGRAM_TOKEN", "not-a-token")
    code, lines = run_check()
    assert code == 2
    assert lines == [
        "thousand: DEFAULT_PRESET: unknown preset 'german' (known: polish, estonian, russian)",
        "thousand: TELEGRAM_TOKEN: not a bot token (digits, a colon, then the key from @BotFather)",
    ]


def test_a_missing_token_is_named_beside_an_unreadable_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_AI_LEVEL", "expert")
    _code, lines = run_check("discord")
    assert named(lines) == ["DEFAULT_AI_LEVEL", "DISCORD_TOKEN"]


@pytest.mark.parametrize("name", sorted(BAD))
def test_no_line_quotes_its_value_twice(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv("TELEGRAM_TOKEN", TG)
    monkeypatch.setenv(name, BAD[name])
    code, lines = run_check()
    assert code == 2
    (line,) = lines
    assert line.startswith(f"thousand: {name}: ")
    assert len(re.findall(re.escape(BAD[name]), line)) <= 1, line


def test_a_check_that_would_judge_a_replaced_default_is_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # TURN_SECONDS cannot be read, so it is 90 while the rest is checked: WARN_SECONDS=100 would be
    # "not less than TURN_SECONDS (100 >= 90)", a comparison with a value nobody set.
    monkeypatch.setenv("TELEGRAM_TOKEN", TG)
    monkeypatch.setenv("TURN_SECONDS", "soon")
    monkeypatch.setenv("WARN_SECONDS", "100")
    code, lines = run_check()
    assert code == 2
    assert named(lines) == ["TURN_SECONDS"]
    monkeypatch.setenv("TURN_SECONDS", "60")
    _code, lines = run_check()
    assert named(lines) == ["WARN_SECONDS"]


def test_the_env_file_and_the_environment_are_reported_together(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    env = tmp_path / ".env"
    env.write_text("DEFAULT_PRESET=german\nTELEGRAM_TOKEN=not-a-token\n")
    monkeypatch.setenv("TABLE_UPDATES", "sometimes")
    _code, lines = run_check("telegram", env)
    assert sorted(named(lines)) == ["DEFAULT_PRESET", "TABLE_UPDATES", "TELEGRAM_TOKEN"]


def test_a_process_starting_names_every_problem_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_PRESET", "german")
    monkeypatch.setenv("TELEGRAM_TOKEN", "not-a-token")
    with pytest.raises(ConfigError) as caught:
        startup_settings("telegram", None, warn=io.StringIO())
    assert named(caught.value.problems) == ["DEFAULT_PRESET", "TELEGRAM_TOKEN"]


def test_gathered_settings_stand_in_defaults_for_what_could_not_be_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEFAULT_PRESET", "german")
    monkeypatch.setenv("TURN_SECONDS", "45")
    loaded = gather_settings(None)
    assert loaded.replaced == {"default_preset"}
    assert loaded.settings.default_preset == "polish"
    assert loaded.settings.turn_seconds == 45  # the readable values are kept
