"""The optional parts of the package (pyproject.toml's extras) and the modules each brings.

`pip install thousand` (and `make play`) installs the terminal game only: a fresh machine reaches the
first prompt without downloading python-telegram-bot, discord.py or matplotlib. A subcommand that needs
an extra checks for it before importing anything from it, so a missing one is a sentence saying what to
install instead of a traceback ending in "No module named 'telegram'". `python -m bot.extras all`
checks an installation (the container image runs it).
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Final

__all__ = ["EXTRAS", "missing", "require"]

EXTRAS: Final[dict[str, tuple[str, ...]]] = {
    # Each bot process serves /livez, /readyz and /metrics (aiohttp, prometheus-client) and attaches a
    # score chart at the end of a game (matplotlib; CHARTS=false turns it off, but the extra keeps it).
    "telegram": ("telegram", "aiohttp", "prometheus_client", "matplotlib"),
    "discord": ("discord", "aiohttp", "prometheus_client", "matplotlib"),
    "web": ("aiohttp", "prometheus_client"),
    "charts": ("matplotlib",),
}
"""Extra -> the top-level modules it must make importable (tests/ops/test_extras.py holds this list
against pyproject.toml)."""


def missing(extra: str) -> list[str]:
    """The modules of `extra` ('all': every extra) that cannot be imported here; nothing is imported."""
    names = EXTRAS[extra] if extra != "all" else tuple(dict.fromkeys(m for ms in EXTRAS.values() for m in ms))
    return [name for name in names if importlib.util.find_spec(name) is None]


def require(extra: str, what: str) -> str | None:
    """None when `extra` is installed, else the sentence telling the person what to install for `what`."""
    absent = missing(extra)
    if not absent:
        return None
    return (
        f"{what} needs the '{extra}' extra, which is not installed (no module {', '.join(absent)}): "
        f"pip install 'thousand[{extra}]', or in a clone of the repository "
        f".venv/bin/pip install -e '.[{extra}]' ('all' installs every bot and the web table; the container "
        "image has them all)"
    )


def main(argv: list[str]) -> int:
    """`python -m bot.extras EXTRA...`: exit 1, naming what is missing, unless every extra is there."""
    problems = [(extra, absent) for extra in argv or ["all"] if (absent := missing(extra))]
    for extra, absent in problems:
        print(f"thousand[{extra}] is not installed: no module {', '.join(absent)}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
