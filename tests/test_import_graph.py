"""The package's import graph (issue 17): no circles, and no module imports a later layer.

Read from the source with ``ast`` (imports inside functions count: a lazy import is still a
dependency; ``if TYPE_CHECKING:`` blocks do not, they never run).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_enconda"

# Data flows forward: a module may import its own layer or an earlier one, never a later one.
LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "base",
        frozenset(
            {
                "",  # the package itself
                "errors",
                "registry",
                "error_types",
                "artifacts",
                "records",
                "cache",
                "discovery",
                "textio",
                "lazy",
                "kinds",
            }
        ),
    ),
    ("cases", frozenset({"cases"})),
    ("sandbox", frozenset({"sandbox", "backends"})),
    ("domain", frozenset({"agents", "probing", "grading", "stages", "aspects", "memory", "aec"})),
    ("pipeline", frozenset({"pipeline", "report", "dispatch"})),
    (
        "pytest",
        frozenset({"options", "inifile", "settings", "session", "items", "scheduling", "state"}),
    ),
    ("entry", frozenset({"plugin", "cli", "bench", "verify", "construct"})),
)


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(child) for child in ast.walk(node))
    return skipped


@functools.cache
def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                target = ".".join([*base, node.module] if node.module else base)
                candidates = [f"{target}.{alias.name}" for alias in node.names] + [target]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            for candidate in candidates:
                if candidate in modules and candidate != name:
                    graph[name].add(candidate)
                    break
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _layer(module: str) -> int | None:
    head = module.split(".")[1] if "." in module else ""
    for number, (_name, heads) in enumerate(LAYERS):
        if head in heads:
            return number
    return None


def test_the_graph_is_read() -> None:
    graph = import_graph()
    assert "pytest_enconda.state" in graph["pytest_enconda.plugin"]
    assert "pytest_enconda.state" in graph["pytest_enconda.items"]
    assert "pytest_enconda.errors" in graph["pytest_enconda.cases.loader"]


def test_no_module_imports_itself_through_others() -> None:
    assert _cycles(import_graph()) == []


def test_cycles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_every_module_has_a_layer() -> None:
    # probes/ is shipped container code (standard library only), not part of the harness.
    unplaced = [
        name
        for name in import_graph()
        if _layer(name) is None and not name.startswith("pytest_enconda.probes")
    ]
    assert unplaced == []


@pytest.mark.parametrize("module", sorted(import_graph()))
def test_no_import_of_a_later_layer(module: str) -> None:
    own = _layer(module)
    if own is None:
        pytest.skip("not a harness module")
    later = sorted(
        f"{target} ({LAYERS[layer][0]})"
        for target in import_graph()[module]
        if (layer := _layer(target)) is not None and layer > own
    )
    assert later == [], f"{module} ({LAYERS[own][0]}) imports later layers"
