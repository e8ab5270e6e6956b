"""The cross-platform tests drive the kits of each platform's tests: Telegram's rig (tests/telegram),
Discord's (tests/discord), the browser's (tests/web/browser) and the service's (tests/bot).

Skipped, with the reason, only when the system's chromium or Playwright for Python is missing (as the
browser tests are)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for folder in ("bot", "web/browser", "discord", "telegram"):
    sys.path.insert(0, str(TESTS / folder))

try:
    import playwright.async_api  # noqa: F401
except ImportError:  # pragma: no cover - the dev extra installs it
    pytest.skip("Playwright for Python is not installed (pip install -e '.[dev]')", allow_module_level=True)

from browserkit import CHROMIUM  # noqa: E402  (found once the paths above are in)

if CHROMIUM is None:
    pytest.skip("chromium is not installed (as root: apt-get install -y chromium)", allow_module_level=True)
