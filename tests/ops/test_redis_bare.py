"""deploy/redis-bare.conf: the Redis configuration the README gives operators without Docker.

Before (issue 25, "The operator's first hour"): "Without Docker" said to configure Redis "as
deploy/redis.conf", which binds 0.0.0.0 with protected mode off and no password: right inside the compose
network, an open Redis on a bare server. The bare-metal file binds loopback, keeps protected mode on and
takes a password; a real redis-server runs it here and the bots' own tools reach it with the password.
"""

from __future__ import annotations

import io
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis_server import find_redis_server, free_port

from bot.ops.commands import check_config
from bot.ops.doctor import run_doctor

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PASSWORD = "bare-metal-test-password-0123456789"


def settings_of(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition(" ")
            out[key] = value.strip()
    return out


BARE = settings_of(DEPLOY / "redis-bare.conf")
COMPOSE = settings_of(DEPLOY / "redis.conf")


def test_the_bare_server_file_listens_on_loopback_only_with_protected_mode_on() -> None:
    assert BARE["bind"].split() == ["127.0.0.1"]
    assert BARE["protected-mode"] == "yes"
    assert "requirepass" not in BARE  # a password is the operator's, appended when installing
    assert "requirepass $(openssl rand -hex 32)" in (DEPLOY / "redis-bare.conf").read_text()


def test_the_compose_file_is_the_open_one_and_says_so() -> None:
    # The compose network's Redis is reached by the bots' containers, so it must listen beyond loopback.
    assert COMPOSE["bind"] == "0.0.0.0" and COMPOSE["protected-mode"] == "no"


def test_persistence_and_memory_are_those_of_the_compose_file() -> None:
    kept = {key: value for key, value in COMPOSE.items() if key not in {"bind", "protected-mode", "dir"}}
    assert {key: BARE.get(key) for key in kept} == kept


def test_the_readme_sends_bare_servers_to_the_safe_file() -> None:
    readme = (ROOT / "README.md").read_text()
    without = readme[readme.index("**Without Docker**") :]
    without = without[: without.index("\n## ")]
    assert "deploy/redis-bare.conf" in without
    assert "as `deploy/redis.conf`" not in without
    assert "redis://:" in without  # REDIS_URL with the password
    guide = (ROOT / "docs" / "OPERATIONS.md").read_text()
    assert "### Redis on a bare server" in guide and "deploy/redis-bare.conf" in guide


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on `port` (/proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == "0A" and int(hex_port, 16) == port:  # 0A: LISTEN
                if len(address) == 8:
                    found.add(socket.inet_ntop(socket.AF_INET, bytes.fromhex(address)[::-1]))
                else:
                    found.add(address)
    return found


@pytest.fixture
def bare_redis(tmp_path: Path) -> Iterator[int]:
    """redis-server run with deploy/redis-bare.conf as installed (password appended). Only the data
    directory, pid file and port differ: the file's bind and protected mode are left as they are."""
    text = "\n".join(line for line in (DEPLOY / "redis-bare.conf").read_text().splitlines())
    # Redis changes to `dir` while reading the file, before command-line options apply: leave it out.
    text = re.sub(r"^dir .*$", "", text, flags=re.M)
    conf = tmp_path / "redis.conf"
    conf.write_text(f"{text}\nrequirepass {PASSWORD}\n")
    port = free_port()
    args = [find_redis_server(), str(conf), "--port", str(port), "--dir", str(tmp_path)]
    args += ["--pidfile", str(tmp_path / "redis.pid"), "--logfile", str(tmp_path / "redis.log")]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    client = redis.Redis(host="127.0.0.1", port=port, password=PASSWORD, socket_timeout=1)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    log = (tmp_path / "redis.log").read_text() if (tmp_path / "redis.log").exists() else ""
                    raise AssertionError(f"redis-server refused the file: {log[-2000:]}") from None
                time.sleep(0.05)
        yield port
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=10)


def test_redis_runs_the_file_on_loopback_and_asks_for_the_password(bare_redis: int) -> None:
    port = bare_redis
    assert _listening_addresses(port) == {"127.0.0.1"}
    anonymous = redis.Redis(host="127.0.0.1", port=port, socket_timeout=1)
    with pytest.raises(redis.AuthenticationError):
        anonymous.ping()
    anonymous.close()
    client = redis.Redis(host="127.0.0.1", port=port, password=PASSWORD, socket_timeout=1)
    config = client.config_get("*")
    client.close()
    assert config["bind"] == "127.0.0.1"
    assert config["protected-mode"] == "yes"
    assert config["appendonly"] == "yes" and config["maxmemory-policy"] == "noeviction"


def test_the_bots_tools_reach_it_with_the_password_in_redis_url(
    bare_redis: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"redis://:{PASSWORD}@127.0.0.1:{bare_redis}/0"
    report = run_doctor(url)
    assert report.exit_code == 0, report.to_text()
    assert PASSWORD not in report.to_text()
    wrong = run_doctor(f"redis://127.0.0.1:{bare_redis}/0")  # no password: refused, and said so
    assert wrong.exit_code == 2, wrong.to_text()
    monkeypatch.setenv("REDIS_URL", url)
    out, err = io.StringIO(), io.StringIO()
    assert check_config(None, None, out=out, err=err) == 0, err.getvalue()
    assert f"REDIS_URL=redis://:***@127.0.0.1:{bare_redis}/0" in out.getvalue()
    assert PASSWORD not in out.getvalue() + err.getvalue()
