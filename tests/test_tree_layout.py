"""Guards on the test tree itself."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).parent


def test_test_modules_have_unique_names() -> None:
    """pytest's default (prepend) import mode imports test modules by their bare name: two files called
    the same in different folders make the whole run stop at collection."""
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [name for name, n in names.items() if n > 1] == []
