"""Fixtures of the Telegram tests: a rig (fake Bot API, memory store, virtual clock) with the bot running."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from tgkit import Rig


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    logging.getLogger("thousand").setLevel(logging.INFO)
    rig = Rig()
    await rig.start()
    try:
        yield rig
    finally:
        await rig.close()
