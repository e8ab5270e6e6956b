"""Guards on the test tree itself."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).parent
ROOT = TESTS.parent


def test_test_modules_have_unique_names() -> None:
    """pytest's default (prepend) import mode imports test modules by their bare name: two files called
    the same in different folders make the whole run stop at collection."""
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [name for name, n in names.items() if n > 1] == []


def test_helper_modules_imported_by_bare_name_are_unique() -> None:
    """A helper beside the tests (a folder without `__init__.py`) is imported by its bare name too: two
    `dealkit.py` in two folders make whichever is imported first stand for both, and the other folder's
    tests fail to import."""
    bare = [
        p.name
        for p in TESTS.rglob("*.py")
        if p.name not in {"__init__.py", "conftest.py"} and not (p.parent / "__init__.py").exists()
    ]
    assert [name for name, n in Counter(bare).items() if n > 1] == []


def _imported_modules(path: Path) -> set[str]:
    """Every module a file imports, wherever the import stands (also under `if TYPE_CHECKING:`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _reaches(modules: set[str], package: str) -> bool:
    return any(m == package or m.startswith(package + ".") for m in modules)


def test_service_and_handlers_do_not_import_each_other() -> None:
    """The service and the command handlers meet only through `bot.ports`; the handlers are handed to
    the service where it is built."""
    handler_files = sorted((ROOT / "bot" / "handlers").glob("*.py"))
    assert handler_files, "bot/handlers/ holds the handlers"
    assert [p.name for p in handler_files if _reaches(_imported_modules(p), "bot.service")] == []
    assert not _reaches(_imported_modules(ROOT / "bot" / "service.py"), "bot.handlers")
