"""The terminal game installs and runs without the bots' libraries; each bot is an extra.

Before (issue 25, "The operator's first hour"): `make play`, documented as installing "the game only",
installed python-telegram-bot, discord.py and matplotlib (about 100 s to the first prompt on a fresh
machine). Now they are the extras `telegram`, `discord`, `web`, `charts` (and `all`); `dev` and the
container image's lock include them all.
"""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from adapters.cli import app
from bot import extras

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
OPTIONAL: dict[str, list[str]] = PROJECT["optional-dependencies"]

BOT_LIBRARIES = ("telegram", "discord", "matplotlib", "aiohttp", "prometheus_client")
"""What a terminal game must not load (nor need installed)."""
MODULE_OF = {
    "python-telegram-bot": "telegram",
    "discord-py": "discord",
    "matplotlib": "matplotlib",
    "aiohttp": "aiohttp",
    "prometheus-client": "prometheus_client",
}


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.split(r"[\[<>=!~; ]", requirement, maxsplit=1)[0]).lower()


def test_the_game_alone_needs_none_of_the_bots_libraries() -> None:
    names = {_name(dep) for dep in PROJECT["dependencies"]}
    assert not names & set(MODULE_OF), names & set(MODULE_OF)


@pytest.mark.parametrize("extra", sorted(extras.EXTRAS))
def test_each_extra_brings_the_modules_its_commands_check_for(extra: str) -> None:
    modules = {MODULE_OF[_name(dep)] for dep in OPTIONAL[extra]}
    assert modules == set(extras.EXTRAS[extra])


def test_all_is_every_extra_and_dev_includes_all() -> None:
    every = {dep for extra in extras.EXTRAS for dep in OPTIONAL[extra]}
    assert sorted(OPTIONAL["all"]) == sorted(every)
    assert "thousand[all]" in OPTIONAL["dev"]


def test_the_terminal_game_loads_no_bot_library() -> None:
    """`thousand play` through the real entry point, to its first prompt and `quit`, in a fresh
    interpreter: not one module of the extras is imported."""
    script = textwrap.dedent(
        f"""
        import io, sys
        sys.stdin = io.StringIO("quit\\n")
        from adapters.cli import app
        try:
            app(["play", "--seed", "1", "--level", "hard"])
        except SystemExit as exc:
            code = exc.code
        loaded = sorted({{m.split(".")[0] for m in sys.modules}} & set({BOT_LIBRARIES!r}))
        print("EXIT", code, "LOADED", ",".join(loaded))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert "You ended the game" in done.stdout, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("EXIT 0 LOADED"), done.stdout[-300:] + done.stderr


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["telegram"], "telegram"),
        (["discord"], "discord"),
        (["web"], "web"),
        (["play", "--web"], "web"),
        (["play", "--chart", "chart.png"], "charts"),
    ],
)
def test_a_command_without_its_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, args: list[str], extra: str
) -> None:
    monkeypatch.setitem(extras.EXTRAS, extra, (*extras.EXTRAS[extra], "thousand_no_such_module"))
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert f"pip install 'thousand[{extra}]'" in result.output
    assert "thousand_no_such_module" in result.output
    assert "Traceback" not in result.output


def test_an_installation_is_checked_by_module() -> None:
    assert extras.main(["all"]) == 0  # the dev environment has every extra
    assert extras.missing("charts") == []


def test_the_image_installs_every_extra() -> None:
    """deploy/lock.sh locks the `all` extra, the lock pins each bot's library, and the image checks
    that every extra imports before it is finished."""
    lock_script = (ROOT / "deploy" / "lock.sh").read_text()
    assert re.search(r"--extra[= ]all", lock_script)
    lock = (ROOT / "deploy" / "requirements.lock").read_text()
    pinned = {_name(m) for m in re.findall(r"^([A-Za-z0-9_.-]+)==", lock, re.M)}
    for extra in ("telegram", "discord", "web", "charts"):
        assert {_name(dep) for dep in OPTIONAL[extra]} <= pinned, extra
    assert "bot.extras all" in (ROOT / "deploy" / "Dockerfile").read_text()
