"""Ops tests read settings from the environment: start each from an environment without any of them."""

from __future__ import annotations

import pytest

from bot.settings import Settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    for name in Settings.model_fields:
        monkeypatch.delenv(name.upper(), raising=False)
        monkeypatch.delenv(name, raising=False)
    # No stray .env from the working directory.
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
