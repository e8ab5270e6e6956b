"""The image's lock holds on every Python the image may be built on, not only on the one that made it.

pip-compile evaluates environment markers for its own interpreter: made on Python 3.11.11, it left out
`async-timeout`, which redis needs below 3.11.3, and an image built on Debian bookworm's python3 (3.11.2)
failed at `thousand check-config` with "No module named 'async_timeout'". Here every locked package's
requirements are evaluated for a range of Pythons (and for the extras pyproject asks for), and each one
that applies to any of them must be locked too. The metadata read is that of the packages installed in
this environment (the dev install holds every runtime dependency); a version that differs from the lock's
is close enough for a marker that changes rarely.
"""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"

PYTHONS = ("3.11.0", "3.11.2", "3.11.3", "3.11.11", "3.12.0", "3.12.12")
"""Pythons an image may be built on with this lock: any 3.11 or 3.12 (Debian bookworm's python3 is 3.11.2).
Python 3.13 needs a lock made on 3.13 (discord.py then needs audioop-lts, which requires 3.13 and so cannot
be locked from 3.11): docs/OPERATIONS.md."""


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked() -> set[str]:
    text = (DEPLOY / "requirements.lock").read_text()
    return {_normalize(name) for name in re.findall(r"^([A-Za-z0-9_.-]+)==", text, re.M)}


def requested_extras() -> dict[str, set[str]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras: dict[str, set[str]] = {}
    for dep in project["dependencies"]:
        req = Requirement(dep)
        extras.setdefault(_normalize(req.name), set()).update(req.extras)
    return extras


def applies(marker: Marker | None, python: str, extras: set[str]) -> bool:
    if marker is None:
        return True
    major_minor = ".".join(python.split(".")[:2])
    return any(
        marker.evaluate({"python_version": major_minor, "python_full_version": python, "extra": extra})
        for extra in extras | {""}
    )


def missing_for(pins: set[str]) -> dict[str, list[str]]:
    """Requirements of locked packages that some Python in PYTHONS needs and the lock leaves out."""
    extras = requested_extras()
    missing: dict[str, list[str]] = {}
    for name in sorted(pins):
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for line in requires:
            req = Requirement(line)
            wanted = extras.get(name, set())
            if _normalize(req.name) in pins:
                continue
            pythons = [p for p in PYTHONS if applies(req.marker, p, wanted)]
            if pythons:
                missing.setdefault(f"{name} -> {line}", pythons)
    return missing


def test_the_lock_holds_for_every_python_the_image_may_be_built_on() -> None:
    missing = missing_for(locked())
    assert not missing, (
        "deploy/requirements.lock lacks what these Pythons need; add the package to "
        f"deploy/requirements-any-python.in and run sh deploy/lock.sh: {missing}"
    )


def test_redis_below_3_11_3_is_covered() -> None:
    """The case that broke the image: the check above must see it when async-timeout is not locked."""
    assert "async-timeout" in locked()
    gaps = missing_for(locked() - {"async-timeout"})
    assert any(key.startswith("redis -> async-timeout") for key in gaps), gaps
    assert "3.11.2" in next(v for k, v in gaps.items() if k.startswith("redis ->"))
    assert "3.11.3" not in next(v for k, v in gaps.items() if k.startswith("redis ->"))


def test_lock_sh_compiles_the_any_python_list_into_the_lock() -> None:
    script = (DEPLOY / "lock.sh").read_text()
    assert "--output-file deploy/requirements.lock pyproject.toml deploy/requirements-any-python.in" in script
    listed = [
        _normalize(Requirement(line).name)
        for line in (DEPLOY / "requirements-any-python.in").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert listed and set(listed) <= locked()
