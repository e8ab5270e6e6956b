"""The same constants for hypothesis to try, however the fuzz was started.

Hypothesis mixes into what it generates (about one draw in twenty) the literals of every "local" module
loaded at the time: `sys.modules`, which in a whole-suite run holds every test module pytest collected,
and in a run of one file only that file's imports. A seed that failed in the suite then drew other
strings alone ('Payload' where the suite had drawn 'bid') and did not replay (issue 26). Here the pool is
the literals of the code under test, `core`, `bot` and `adapters`, every module imported in name order,
whatever else happens to be loaded.

This reaches into `hypothesis.internal`: should a new hypothesis move it, `fixed_local_constants`
fails loudly (the replay promise would be broken silently otherwise).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

from hypothesis.internal.conjecture import providers

PACKAGES = ("core", "bot", "adapters")


@cache
def project_constants() -> Any:
    """The literals of every module of `PACKAGES` (all imported, in name order)."""
    pool = providers.Constants()
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        names = sorted(
            info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}.")
        )
        for name in [package_name, *names]:
            pool |= providers.constants_from_module(importlib.import_module(name))
    return pool


@contextmanager
def fixed_local_constants() -> Iterator[None]:
    """Within: hypothesis draws its local constants from `project_constants()` only."""
    pool = project_constants()
    saved = providers._get_local_constants
    providers._get_local_constants = lambda: pool
    providers.CONSTANTS_CACHE.cache.clear()  # values permitted per strategy, computed from the old pool
    try:
        yield
    finally:
        providers._get_local_constants = saved
        providers.CONSTANTS_CACHE.cache.clear()
