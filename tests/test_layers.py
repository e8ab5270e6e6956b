"""The layers run one way, `adapters → bot → core`, with no circle of imports and no private name taken
from another folder (docs/ARCHITECTURE.md).

Read from the sources with `ast`: every import counts, wherever it stands (inside a function, under
`if TYPE_CHECKING:`), since an import inside a function that dodges a circle at run time is still the
circle in the design. A module `a.b.c` imported as `from a.b import c` counts as an import of `a.b.c`.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).parent.parent
LAYERS: Final = ("core", "bot", "adapters")
"""From the ground up: a layer imports only the layers before it (and itself)."""
CHAT_LIBRARIES: Final = ("telegram", "discord")
"""Libraries of the chat platforms: only `adapters` import them."""

ALLOWED_CIRCLES: Final[tuple[frozenset[str], ...]] = ()
"""Circles known and not yet broken, each with its reason. Nothing else may be added here: break it."""

ALLOWED_PRIVATE: Final[frozenset[tuple[str, str, str]]] = frozenset()
"""(importer, module, private name) known and not yet mended, each with its reason."""


def _module_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_of(p): p for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))}


def _is_package(module: str) -> bool:
    return _modules()[module].name == "__init__.py"


def _imports(module: str) -> Iterator[tuple[str, str | None, int]]:
    """(module imported, name taken from it or None, line) for every import of `module`'s file."""
    path = _modules()[module]
    package = module if _is_package(module) else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                yield base, alias.name, node.lineno


def _internal(target: str, name: str | None) -> str | None:
    """The module of this tree an import reaches (`from a.b import c` of the module a.b.c: a.b.c)."""
    modules = _modules()
    if name is not None and f"{target}.{name}" in modules:
        return f"{target}.{name}"
    while target and target not in modules:
        target = target.rpartition(".")[0]
    return target or None


@cache
def _graph() -> dict[str, dict[str, int]]:
    """module -> {module of this tree it imports: the line of the first such import}."""
    graph: dict[str, dict[str, int]] = {}
    for module in _modules():
        edges: dict[str, int] = {}
        for target, name, line in _imports(module):
            reached = _internal(target, name)
            if reached is not None and reached != module:
                edges.setdefault(reached, line)
        graph[module] = edges
    return graph


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def _where(module: str, line: int) -> str:
    return f"{_modules()[module].relative_to(ROOT)}:{line}"


def _circles(graph: dict[str, dict[str, int]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative so that a
    deep chain of imports cannot reach the recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def enter(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)

    for start in sorted(graph):
        if start in index:
            continue
        enter(start)
        work = [(start, iter(sorted(graph[start])))]
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    enter(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
    return found


def _cycle_in(graph: dict[str, dict[str, int]], component: frozenset[str]) -> list[str]:
    """One cycle through the component, from its first module back to it (a breadth-first shortest)."""
    start = min(component)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node]):
                if target == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if target in component and target not in came_from:
                    came_from[target] = node
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {sorted(component)}")


def _describe(graph: dict[str, dict[str, int]], component: frozenset[str]) -> str:
    """The circle's modules, and one cycle through them with the line of each import."""
    cycle = _cycle_in(graph, component)
    steps = [f"{a} ({_where(a, graph[a][b])})" for a, b in itertools.pairwise(cycle)]
    return f"{len(component)} modules {sorted(component)}: " + " -> ".join([*steps, cycle[-1]])


def test_every_layer_is_read() -> None:
    """The guards below read something: each layer has modules, and imports are found."""
    assert all(any(m.split(".")[0] == layer for m in _modules()) for layer in LAYERS)
    assert _graph()["bot.service"], "bot.service imports modules of this tree"


def test_no_import_runs_back_up() -> None:
    """core imports neither bot nor adapters; bot imports no adapter (the entry point, adapters/cli.py,
    stands on top and starts them)."""
    wrong = [
        f"{_where(module, line)}: {module} imports {target}"
        for module, edges in _graph().items()
        for target, line in edges.items()
        if _layer(target) > _layer(module)
    ]
    assert not wrong, "\n".join(wrong)


def test_only_adapters_import_the_chat_libraries() -> None:
    wrong = [
        f"{_where(module, line)}: {module} imports {target}"
        for module in _modules()
        if not module.startswith("adapters.")
        for target, _, line in _imports(module)
        if target.split(".")[0] in CHAT_LIBRARIES
    ]
    assert not wrong, "\n".join(wrong)


def test_no_circle_of_imports() -> None:
    graph = _graph()
    circles = [c for c in _circles(graph) if c not in ALLOWED_CIRCLES]
    assert not circles, "\n".join(_describe(graph, c) for c in circles)


def test_the_allowed_circles_are_still_there() -> None:
    """An allowed circle that was broken leaves the list (so that it cannot come back unseen)."""
    present = set(_circles(_graph()))
    assert [sorted(c) for c in ALLOWED_CIRCLES if c not in present] == []


def _folder(module: str) -> str:
    return module if _is_package(module) else module.rpartition(".")[0]


def test_no_private_name_crosses_a_folder() -> None:
    """`from x import _y` only inside one folder: a name with a leading underscore is its module's own,
    and one another folder needs is made public (without the underscore) where it is defined."""
    wrong = []
    for module in _modules():
        for target, name, line in _imports(module):
            reached = _internal(target, name)
            if reached is None or name is None or not name.startswith("_") or name == "__version__":
                continue
            if reached == f"{target}.{name}":  # a module imported by name: its own rule is its folder's
                continue
            if _folder(reached) != _folder(module) and (module, reached, name) not in ALLOWED_PRIVATE:
                wrong.append(f"{_where(module, line)}: {module} takes {name} from {reached}")
    assert not wrong, "\n".join(wrong)


def test_the_allowed_private_names_are_still_taken() -> None:
    taken = {
        (module, _internal(target, name), name)
        for module in _modules()
        for target, name, _ in _imports(module)
        if name is not None
    }
    assert sorted(ALLOWED_PRIVATE - taken) == []
