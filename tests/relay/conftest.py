"""The relay's tests drive the service with the service's own test kit (tests/bot/botkit.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bot"))  # botkit
