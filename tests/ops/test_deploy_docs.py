"""A new operator follows the README and deploy/.env.example alone, from nothing to a bot in a group.

Before: the README's `docker compose -f deploy/compose.yaml up -d` left out copying `.env.example` and
`--build`, `.env.example` said nothing of the web table, BotFather's privacy mode was only in
docs/TELEGRAM.md, and `.env.example` filled in for Telegram alone stopped the Telegram bot (its empty
`DISCORD_TOKEN=` was "not a bot token"). These tests hold the walkthrough's steps and check that the
example, as an operator fills it, passes `check-config --strict`; that no deploy file's environment
warns about look-alike variables; and that the image's health check does not depend on the image format.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.ops.commands import check_config
from bot.ops.config import unknown_variables

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
TG = "123456789:AAFakeTelegramTokenForTests_0123456"
DC = "MTIzNDU2Nzg5MDEyMzQ1Njc4.q43u-w.EzbkU18e500Jhp27akERtb7MoiqPtO-CgHAZ"


def readme_section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else None]


def example_lines() -> list[str]:
    return (DEPLOY / ".env.example").read_text().splitlines()


def filled_example(tmp_path: Path, *, web: bool) -> Path:
    """deploy/.env.example as the README says to fill it: the tokens, and for the web table the lines
    its comments say to uncomment."""
    lines = []
    for line in example_lines():
        if line == "TELEGRAM_TOKEN=":
            line = f"TELEGRAM_TOKEN={TG}"
        elif line == "DISCORD_TOKEN=":
            line = f"DISCORD_TOKEN={DC}"
        elif web and re.fullmatch(r"# [A-Z_]+=.*", line):
            line = line[2:]
        lines.append(line)
    path = tmp_path / ".env"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("web", [False, True])
@pytest.mark.parametrize("platform", ["telegram", "discord"])
def test_the_filled_example_passes_strict_check_config(tmp_path: Path, platform: str, web: bool) -> None:
    out, err = io.StringIO(), io.StringIO()
    code = check_config(platform, filled_example(tmp_path, web=web), strict=True, out=out, err=err)
    assert (code, err.getvalue()) == (0, "")
    shown = set(out.getvalue().splitlines())
    assert ("PUBLIC_URL=https://cards.example.org" in shown) is web
    assert ("TELEGRAM_WEBAPP_NAME=cards" in shown) is web


def test_the_example_with_only_the_telegram_token_starts_telegram(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("\n".join(example_lines()).replace("TELEGRAM_TOKEN=\n", f"TELEGRAM_TOKEN={TG}\n") + "\n")
    out, err = io.StringIO(), io.StringIO()
    assert check_config("telegram", env, strict=True, out=out, err=err) == 0, err.getvalue()
    assert "DISCORD_TOKEN=unset" in out.getvalue().splitlines()


def test_the_example_explains_the_web_table_and_its_profile() -> None:
    text = (DEPLOY / ".env.example").read_text()
    for name in ("PUBLIC_URL", "TELEGRAM_WEBAPP_URL", "TELEGRAM_WEBAPP_NAME", "WEB_SECRET"):
        assert re.search(rf"^# {name}=", text, re.M), name
    assert "COMPOSE_PROFILES=telegram,web" in text
    assert "/newapp" in text
    assert "cp deploy/.env.example deploy/.env" in text
    # No comment after a value: `docker run --env-file` would read it as part of the value.
    assert not [line for line in example_lines() if re.match(r"[A-Z_]+=.*#", line)]


def test_the_readme_walks_from_nothing_to_a_bot_in_a_group() -> None:
    running = readme_section("Running the bots")
    steps = [
        "/newbot",
        "/setprivacy",
        "cp deploy/.env.example deploy/.env",
        "check-config --platform telegram --strict",
        "docker compose -f deploy/compose.yaml up -d --build",
        "add the bot to a group",
        "`/new`",
        "**Join**",
        "**Start**",
    ]
    positions = [running.find(step) for step in steps]
    assert -1 not in positions, [step for step, at in zip(steps, positions, strict=True) if at < 0]
    assert positions == sorted(positions), "the steps are out of order"
    assert "Privacy mode" in running and "remove it and add it again" in running
    assert "applications.commands" in running and "--sync" in running
    for title in ("Running the bots", "Configuration", "Deployment"):
        for line in readme_section(title).splitlines():
            assert not re.search(r"compose\S* .*\bup -d\b(?! --build)", line), line


def test_the_readme_names_the_settings_checks() -> None:
    config = readme_section("Configuration")
    assert "--strict" in config and "did you mean REDIS_URL?" in config
    assert "deploy/.env.example" in config


def test_the_image_health_check_survives_podman() -> None:
    """podman builds OCI images, which have no HEALTHCHECK, unless given --format docker; every place the
    image is run from the deploy files declares its own check."""
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "podman build --format docker" in dockerfile
    assert "podman build --format docker" in readme_section("Deployment")
    compose: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    for name in ("telegram", "discord", "web"):
        assert "/readyz" in " ".join(compose["services"][name]["healthcheck"]["test"])
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") in ("Deployment", "StatefulSet"):
                for container in doc["spec"]["template"]["spec"]["containers"]:
                    if container["name"] != "redis":
                        assert "livenessProbe" in container and "readinessProbe" in container, path


def test_no_deploy_environment_warns_about_look_alikes() -> None:
    """What a container of ours sees: the base image's variables, the Dockerfile's, compose's, the
    example's and the Kubernetes ConfigMap's, Secret's and manifests', with the service links Kubernetes
    adds for the Services of deploy/k8s. None may be taken for a misspelled setting (--strict would fail)."""
    names = {"PATH", "HOME", "HOSTNAME", "LANG", "GPG_KEY", "PYTHON_VERSION", "PYTHON_SHA256"}
    dockerfile = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    for line in dockerfile.splitlines():
        if line.startswith("ENV "):
            names |= set(re.findall(r"([A-Z_]+)=", line))
    compose: dict[str, Any] = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    for service in compose["services"].values():
        names |= set(service.get("environment", {}))
    names |= {
        line.split("=", 1)[0].lstrip("# ") for line in example_lines() if re.match(r"(# )?[A-Z_]+=", line)
    }
    for path in sorted((DEPLOY / "k8s").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc:
                continue
            names |= set(doc.get("data", {})) | set(doc.get("stringData", {}))
            names |= set(re.findall(r"- name: ([A-Z_]+)\n", yaml.safe_dump(doc)))
            if doc.get("kind") == "Service":
                service = doc["metadata"]["name"].upper().replace("-", "_")
                names |= {f"{service}_SERVICE_HOST", f"{service}_SERVICE_PORT", f"{service}_PORT"}
                for port in doc["spec"]["ports"]:
                    tcp = f"{service}_PORT_{port['port']}_TCP"
                    names |= {tcp, f"{tcp}_ADDR", f"{tcp}_PORT", f"{tcp}_PROTO"}
    assert "TELEGRAM_TOKEN" in names and "REDIS_SERVICE_HOST" in names
    assert unknown_variables(dict.fromkeys(names, "x"), None) == []


def test_ci_runs_every_target_a_user_is_told_about() -> None:
    """Nothing caught `make native` failing on a fresh clone because CI ran only `make test`."""
    ci = (ROOT / ".ci" / "run").read_text()
    in_ci = set(re.findall(r"^step \S+ \d+ '(?:[^']*\| )?make ([\w-]+)", ci, re.M))
    in_ci |= set(re.findall(r"^step \S+ \d+ \"make ([\w-]+)", ci, re.M))
    readme = set(re.findall(r"`make ([\w-]+)", (ROOT / "README.md").read_text()))
    (phony,) = re.findall(r"^\.PHONY: (.*)$", (ROOT / "Makefile").read_text(), re.M)
    # browser: a part of make test; redis7: of make test-redis
    offered = readme | set(phony.split()) - {"clean", "browser", "redis7"}
    assert {"play", "test", "lint", "bench", "fuzz", "arena", "native"} <= offered
    assert offered <= in_ci, offered - in_ci
    assert "set -uo pipefail" in ci and 'exit "$failed"' in ci
