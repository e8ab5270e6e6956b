"""Settings: each missing or malformed value stops start-up with one line naming it; no secret is shown."""

from __future__ import annotations

import io
import logging
from pathlib import Path

import pytest

from bot.ops.commands import check_config
from bot.ops.config import (
    ConfigError,
    check_settings,
    disagreements,
    load_settings,
    secrets_of,
    shard_ids,
    startup_settings,
)
from bot.ops.logs import configure_logging

TG = "123456789:AAFakeTelegramTokenForTests_0123456"
DC = "MTIzNDU2Nzg5MDEyMzQ1Njc4.q43u-w.EzbkU18e500Jhp27akERtb7MoiqPtO-CgHAZ"
LINK_SECRET = "d7c1e0a94b5f3a2e8c6d9b1f0e4a7c3b5d2f8e1a9c0b6d4e"
HOOK_SECRET = "hook-secret_0123456789"
REDIS_PASSWORD = "redis-pass-42xyz"


def run_check(platform: str | None = None, env_file: Path | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = check_config(platform, env_file, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def problem_lines(err: str) -> list[str]:
    return [line for line in err.splitlines() if line]


# --- required values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("platform", "variable"), [("telegram", "TELEGRAM_TOKEN"), ("discord", "DISCORD_TOKEN")]
)
def test_a_missing_token_is_named(platform: str, variable: str) -> None:
    code, out, err = run_check(platform)
    assert code == 2
    assert out == ""
    (line,) = problem_lines(err)
    assert line.startswith(f"thousand: {variable}: missing")


def test_webhook_mode_requires_its_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_TOKEN", TG)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.org/tg")
    code, _, err = run_check("telegram")
    assert code == 2
    assert problem_lines(err) == [
        "thousand: TELEGRAM_WEBHOOK_SECRET: missing (required with TELEGRAM_WEBHOOK_URL)"
    ]


def test_shard_ids_need_a_shard_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", DC)
    monkeypatch.setenv("DISCORD_SHARD_IDS", "0,1")
    code, _, err = run_check("discord")
    assert code == 2
    (line,) = problem_lines(err)
    assert line == "thousand: DISCORD_SHARD_IDS: DISCORD_SHARD_COUNT must be set when shard ids are"


# --- malformed values: (variable, value, what the line must say) -------------------------------------------

MALFORMED = [
    ("TURN_SECONDS", "soon", "valid integer"),
    ("TURN_SECONDS", "-5", "greater than or equal to 0"),
    ("WARN_SECONDS", "-1", "greater than or equal to 0"),
    ("MISSED_TURNS_TO_AWAY", "0", "greater than or equal to 1"),
    ("LOBBY_TTL", "0", "greater than 0"),
    ("GAME_TTL", "forever", "valid number"),
    ("FINISHED_TTL", "-3", "greater than 0"),
    ("CAS_RETRIES", "0", "greater than or equal to 1"),
    ("DEFAULT_LANGUAGE", "xx", "unsupported language"),
    ("DEFAULT_AI_LEVEL", "genius", "unknown computer level"),
    ("TABLE_UPDATES", "sometimes", "compact"),
    ("CHARTS", "perhaps", "valid boolean"),
    ("LOG_LEVEL", "LOUD", "must be one of"),
    ("LOG_FORMAT", "xml", "'json' or 'console'"),
    ("METRICS_PORT", "70000", "less than or equal to 65535"),
    ("METRICS_PORT", "http", "valid integer"),
    ("DRAIN_SECONDS", "-1", "greater than or equal to 0"),
    ("REDIS_CLUSTER", "maybe", "valid boolean"),
    ("REDIS_URL", "http://127.0.0.1:6379", "redis://"),
    ("REDIS_PREFIX", "a{b}", "braces"),
    ("TELEGRAM_TOKEN", "not-a-token", "not a bot token"),
    ("DISCORD_TOKEN", "not-a-token", "not a bot token"),
    ("TELEGRAM_WEBHOOK_URL", "http://bot.example.org/tg", "https://"),
    ("TELEGRAM_WEBHOOK_LISTEN", "8443", "HOST:PORT"),
    ("DISCORD_SHARD_COUNT", "0", "greater than or equal to 1"),
    ("DISCORD_SHARD_IDS", "0,x", "not a shard number"),
    ("DISCORD_SHARD_IDS", "2-5", "does not exist"),
]


@pytest.mark.parametrize(("variable", "value", "says"), MALFORMED, ids=[f"{v}={x}" for v, x, _ in MALFORMED])
def test_a_malformed_value_gives_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, says: str
) -> None:
    # A valid environment for a webhook Telegram process, then one value broken.
    monkeypatch.setenv("TELEGRAM_TOKEN", TG)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.org/tg")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", HOOK_SECRET)
    monkeypatch.setenv("DISCORD_SHARD_COUNT", "2")
    monkeypatch.setenv(variable, value)
    code, out, err = run_check("telegram")
    assert code == 2, out
    (line,) = problem_lines(err)
    assert line.startswith(f"thousand: {variable}: "), line
    assert says in line


def test_every_problem_is_reported_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TURN_SECONDS", "x")
    monkeypatch.setenv("LOBBY_TTL", "-1")
    with pytest.raises(ConfigError) as caught:
        load_settings(None)
    assert [p.split(":")[0] for p in caught.value.problems] == ["TURN_SECONDS", "LOBBY_TTL"]


def test_dotenv_file_is_read(tmp_path: Path) -> None:
    env = tmp_path / "bot.env"
    env.write_text(f"TELEGRAM_TOKEN={TG}\nTURN_SECONDS=45\n")
    code, out, _ = run_check("telegram", env)
    assert code == 0
    assert "TURN_SECONDS=45" in out.splitlines()
    assert out.splitlines()[-1].startswith("config ok for telegram")


def test_startup_settings_raises_with_every_problem() -> None:
    with pytest.raises(ConfigError) as caught:
        startup_settings("discord", None)
    assert caught.value.problems == ["DISCORD_TOKEN: missing (the bot token from the Developer Portal)"]


def test_shard_id_forms() -> None:
    assert shard_ids("0-2,5", 6) == (0, 1, 2, 5)
    assert shard_ids(" 3 ", 4) == (3,)
    assert shard_ids(None, None) is None
    for bad in ("1,1", "3-1", "-1", "a"):
        with pytest.raises(ValueError):
            shard_ids(bad, 8)


# --- secrets never shown ---------------------------------------------------------------------------------


def secret_env(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("TELEGRAM_TOKEN", TG)
    monkeypatch.setenv("DISCORD_TOKEN", DC)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.org/tg")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", HOOK_SECRET)
    monkeypatch.setenv("REDIS_URL", f"redis://bot:{REDIS_PASSWORD}@127.0.0.1:6379/0")
    monkeypatch.setenv("LINK_SECRET", LINK_SECRET)
    return [TG, DC, HOOK_SECRET, REDIS_PASSWORD, TG.split(":")[1], LINK_SECRET]


def test_check_config_output_never_contains_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = secret_env(monkeypatch)
    code, out, err = run_check("telegram")
    assert code == 0, err
    assert "TELEGRAM_TOKEN=set" in out.splitlines()
    assert "DISCORD_TOKEN=set" in out.splitlines()
    assert "LINK_SECRET=set" in out.splitlines()
    assert "REDIS_URL=redis://bot:***@127.0.0.1:6379/0" in out.splitlines()
    for secret in secrets:
        assert secret not in out + err


def test_failing_check_config_never_contains_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    secrets = secret_env(monkeypatch)
    # Malformed secrets: the messages name them without quoting them.
    bad_token, bad_secret = "12345:" + "x" * 10 + "@" + REDIS_PASSWORD, "has spaces " + REDIS_PASSWORD
    monkeypatch.setenv("TELEGRAM_TOKEN", bad_token)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", bad_secret)
    monkeypatch.setenv("REDIS_URL", f"http://bot:{REDIS_PASSWORD}@127.0.0.1:6379/0")
    code, out, err = run_check("telegram")
    assert code == 2
    names = [line.split(":")[1].strip() for line in problem_lines(err)]
    assert names == ["REDIS_URL", "TELEGRAM_TOKEN", "TELEGRAM_WEBHOOK_SECRET"]
    for secret in [*secrets, bad_token, bad_secret]:
        assert secret not in out + err


def test_a_short_link_secret_is_refused_without_being_quoted(monkeypatch: pytest.MonkeyPatch) -> None:
    """LINK_SECRET signs Telegram's deep links: a short one could be guessed. Unset is fine (the key is then
    derived from the bot token)."""
    secret_env(monkeypatch)
    short = "tooshort" + REDIS_PASSWORD[:4]
    monkeypatch.setenv("LINK_SECRET", short)
    code, out, err = run_check("telegram")
    assert code == 2
    assert [line.split(":")[1].strip() for line in problem_lines(err)] == ["LINK_SECRET"]
    assert short not in out + err
    monkeypatch.delenv("LINK_SECRET")
    code, out, err = run_check("telegram")
    assert code == 0, err
    assert "LINK_SECRET=unset" in out.splitlines()


def test_logs_never_contain_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    secret_env(monkeypatch)
    settings = load_settings(None)
    stream = io.StringIO()
    handler = configure_logging("DEBUG", "json", secrets=secrets_of(settings), stream=stream)
    try:
        log = logging.getLogger("thousand.test")
        log.info("settings: %r", settings)  # SecretStr hides tokens in repr; the redis password is plain
        log.info("connecting to %s", settings.redis_url)
        log.warning("webhook secret is %s", HOOK_SECRET)
        log.warning("deep links signed with %s", LINK_SECRET)
        logging.getLogger("httpx").warning(f"HTTP Request: POST https://api.telegram.org/bot{TG}/getMe")
        try:
            raise RuntimeError(f"bad token {DC}")
        except RuntimeError:
            log.exception("failed")
    finally:
        logging.getLogger().removeHandler(handler)
    text = stream.getvalue()
    assert text.count("\n") == 6
    assert "***" in text
    assert LINK_SECRET in secrets_of(settings)
    for secret in [*secrets_of(settings), TG.split(":")[1]]:
        assert secret not in text


def test_check_settings_is_empty_for_a_complete_discord_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", DC)
    monkeypatch.setenv("DISCORD_SHARD_COUNT", "4")
    monkeypatch.setenv("DISCORD_SHARD_IDS", "2,3")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")
    assert check_settings(load_settings(None), "discord") == []


# --- values that must agree with each other --------------------------------------------------------------

# (values that disagree, the setting the line starts with, the other setting it names, values that agree)
DISAGREEING = [
    ({"WARN_SECONDS": "200", "TURN_SECONDS": "90"}, "WARN_SECONDS", "TURN_SECONDS", {"WARN_SECONDS": "89"}),
    ({"WARN_SECONDS": "90", "TURN_SECONDS": "90"}, "WARN_SECONDS", "TURN_SECONDS", {"WARN_SECONDS": "0"}),
    ({"TURN_SECONDS": "600", "GAME_TTL": "600"}, "GAME_TTL", "TURN_SECONDS", {"GAME_TTL": "601"}),
    (
        {"LOBBY_IDLE_SECONDS": "3600", "LOBBY_TTL": "1800"},
        "LOBBY_IDLE_SECONDS",
        "LOBBY_TTL",
        {"LOBBY_TTL": "3601"},
    ),
    (
        {"AI_BUDGET_SECONDS": "30", "DEADLINE_LEASE_SECONDS": "30"},
        "AI_BUDGET_SECONDS",
        "DEADLINE_LEASE_SECONDS",
        {"AI_BUDGET_SECONDS": "29.5"},
    ),
    (
        {"REDIS_CLUSTER": "true", "REDIS_URL": "unix:///run/redis.sock"},
        "REDIS_CLUSTER",
        "REDIS_URL",
        {"REDIS_URL": "redis://127.0.0.1:7000/0"},
    ),
    (
        {"TELEGRAM_WEBHOOK_LISTEN": "0.0.0.0:9100", "METRICS_PORT": "9100", "METRICS_HOST": "127.0.0.1"},
        "METRICS_PORT",
        "TELEGRAM_WEBHOOK_LISTEN",
        {"METRICS_PORT": "9101"},
    ),
    (
        {"TELEGRAM_WEBHOOK_LISTEN": "127.0.0.1:8443", "METRICS_PORT": "8443", "METRICS_HOST": "0.0.0.0"},
        "METRICS_PORT",
        "TELEGRAM_WEBHOOK_LISTEN",
        {"METRICS_PORT": "0"},
    ),
]


def webhook_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_TOKEN", TG)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.org/tg")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", HOOK_SECRET)


@pytest.mark.parametrize(
    ("values", "first", "other", "fixed"), DISAGREEING, ids=[",".join(d[0]) for d in DISAGREEING]
)
def test_settings_that_disagree_are_refused_naming_both(
    monkeypatch: pytest.MonkeyPatch, values: dict[str, str], first: str, other: str, fixed: dict[str, str]
) -> None:
    webhook_env(monkeypatch)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    code, out, err = run_check("telegram")
    assert code == 2, out
    (line,) = problem_lines(err)
    assert line.startswith(f"thousand: {first}: "), line
    assert other in line
    assert "config ok" not in out
    # The same start-up refuses too, and changing one of the two values makes them agree.
    with pytest.raises(ConfigError):
        startup_settings("telegram", None)
    for name, value in fixed.items():
        monkeypatch.setenv(name, value)
    code, out, err = run_check("telegram")
    assert (code, err) == (0, ""), err
    assert out.splitlines()[-1].startswith("config ok for telegram")


def test_a_short_turn_is_fine_without_a_warning_and_timers_off_ignore_the_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TURN_SECONDS", "15")
    monkeypatch.setenv("WARN_SECONDS", "0")
    assert check_settings(load_settings(None)) == []
    monkeypatch.setenv("TURN_SECONDS", "0")  # no timers: neither the warning nor GAME_TTL matter
    monkeypatch.setenv("WARN_SECONDS", "500")
    monkeypatch.setenv("GAME_TTL", "10")
    assert check_settings(load_settings(None)) == []


def test_the_metrics_port_may_equal_the_webhook_port_when_no_webhook_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TELEGRAM_WEBHOOK_LISTEN", "0.0.0.0:9100")
    monkeypatch.setenv("METRICS_PORT", "9100")
    assert check_settings(load_settings(None)) == []
    monkeypatch.setenv("TELEGRAM_WEBHOOK_LISTEN", "10.0.0.5:9100")  # two addresses: both bind
    monkeypatch.setenv("METRICS_HOST", "10.0.0.6")
    webhook_env(monkeypatch)
    assert check_settings(load_settings(None), "telegram") == []


def test_the_defaults_agree() -> None:
    """(The shipped Kubernetes configuration is checked whole in test_ops_deploy.py.)"""
    assert disagreements(load_settings(None)) == []
