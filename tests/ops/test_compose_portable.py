"""deploy/compose.yaml runs under Compose v2 (any 2.x) and Debian 12's podman-compose 1.0.3.

Before (issue 25, "The operator's first hour"): `env_file: [{path: .env, required: false}]`, a form
Compose reads from 2.24 on, crashed podman-compose 1.0.3 (TypeError: join() argument must be str ... not
'dict') and is refused by Compose 2.20 ("services.discord.env_file.0 must be a string"); and the bots'
health check, a CMD list, became a shell syntax error under podman-compose 1.0.3, which joins a CMD list
into one string with broken quoting, so the bots would never have been healthy there.
What was run with the real tools is in docs/OPERATIONS.md ("Compose versions"); this file holds the
forms that made it work.
"""

from __future__ import annotations

import http.server
import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def load() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    return data


SERVICES = load()["services"]
BOTS = [name for name, service in SERVICES.items() if "build" in service]


def test_there_are_bots_to_check() -> None:
    assert sorted(BOTS) == ["discord", "telegram", "web"]


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_env_file_is_the_short_form(name: str) -> None:
    env_file = SERVICES[name].get("env_file", [])
    files = [env_file] if isinstance(env_file, str) else env_file
    assert all(isinstance(item, str) for item in files), f"{name}: env_file {env_file!r} needs Compose 2.24"
    for item in files:
        # The file the README has the operator copy: deploy/.env from deploy/.env.example.
        assert item == ".env"
        assert (DEPLOY / ".env.example").is_file()


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_depends_on_uses_only_conditions(name: str) -> None:
    # `required:` and `restart:` under depends_on came with Compose 2.17-2.20; podman-compose 1.0.3
    # reads only the names.
    for dependency, spec in (SERVICES[name].get("depends_on") or {}).items():
        assert set(spec) <= {"condition"}, (name, dependency, spec)


def _health_command(name: str) -> str:
    test = SERVICES[name]["healthcheck"]["test"]
    assert isinstance(test, list), name
    assert test[0] == "CMD-SHELL" and len(test) == 2, f"{name}: {test!r} breaks podman-compose 1.0.3"
    command: str = test[1]
    return command


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_health_checks_are_one_shell_string(name: str) -> None:
    _health_command(name)


class _Ready(http.server.BaseHTTPRequestHandler):
    ready = True

    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/readyz" and _Ready.ready else 503)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def readyz() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ready)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Ready.ready = True
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def _run_check(shell_command: str, tmp_path: Path) -> int:
    shim = tmp_path / "bin"
    shim.mkdir(exist_ok=True)
    if not (shim / "python").exists():
        (shim / "python").symlink_to(sys.executable)  # the image's `python`
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["/bin/sh", "-c", shell_command], env=env, timeout=30, check=False).returncode


@pytest.mark.parametrize("engine", ["compose-v2", "podman-compose-1.0.3"])
@pytest.mark.parametrize("name", BOTS)
def test_the_bots_health_check_runs_as_each_engine_runs_it(
    name: str, engine: str, readyz: int, tmp_path: Path
) -> None:
    """Compose v2 runs a CMD-SHELL string as `/bin/sh -c STRING`; podman-compose 1.0.3 passes podman
    `--healthcheck-command "/bin/sh -c $(quote STRING)"` (podman_compose.py, container_to_args), which
    podman runs with /bin/sh -c again. Both answer 0 while /readyz does, and 1 when it does not."""
    command = _health_command(name)
    assert ":9100/readyz" in command
    command = command.replace(":9100/", f":{readyz}/")
    if engine == "podman-compose-1.0.3":
        command = f"/bin/sh -c {shlex.quote(command)}"
    assert _run_check(command, tmp_path) == 0
    _Ready.ready = False
    assert _run_check(command, tmp_path) != 0


def test_the_redis_health_check_is_one_shell_string() -> None:
    assert "redis-cli ping" in _health_command("redis")


def test_podman_compose_is_told_which_bots_to_start() -> None:
    """podman-compose 1.0.3 ignores `profiles` (it would start every bot, and those without a token
    would restart for ever): the compose file and the guide name the services on its command line."""
    text = (DEPLOY / "compose.yaml").read_text()
    assert "podman-compose -p thousand -f deploy/compose.yaml up -d --build telegram" in text
    guide = (DEPLOY.parent / "docs" / "OPERATIONS.md").read_text()
    assert "podman-compose -p thousand -f deploy/compose.yaml up -d --build telegram" in guide
    assert "down -t 30" in guide  # 1.0.3 stops with 10 s by default; a bot drains for up to 25 s
