"""The package's import graph (issue 17): no circles, and no module imports a later layer.

Read from the source with ``ast``. Every imported submodule counts (each name of
``from . import a, b``), and so do imports inside functions: a lazy import is still a
dependency. Imports under ``if TYPE_CHECKING:`` never run, so they do not break the layering,
but they count for circles: a type that can only be named by importing back is a circle too.
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
                "efficiency",
                "cache",
                "discovery",
                "textio",
                "lazy",
                "kinds",
                # Free space before an image is written: any backend's check.
                "diskspace",
                # What each language's runners, files and commands are: the case format's
                # language hint reads it, and so do AEC grading, the profile and the agents.
                "ecosystems",
            }
        ),
    ),
    # repo/ reads a checkout's declared facts; the case records name its CI services.
    ("cases", frozenset({"cases", "repo"})),
    ("sandbox", frozenset({"sandbox", "backends"})),
    (
        "domain",
        frozenset(
            {
                "caserun",
                "agents",
                "probing",
                "grading",
                "stages",
                "aspects",
                "memory",
                "embedders",
                "aec",
                # The reference's package cutoff: the agents' task and the replay's box.
                "package_cutoff",
            }
        ),
    ),
    # The pipeline's collaborators: a case's repository and task image, the cost ceiling, the
    # agent's step.
    (
        "pipeline",
        frozenset(
            {"pipeline", "case_repository", "cost_ceiling", "agent_step", "report", "dispatch"}
        ),
    ),
    (
        "pytest",
        frozenset({"options", "inifile", "settings", "session", "items", "scheduling", "state"}),
    ),
    # cli declares the parser; cli_commands holds what each subcommand does.
    ("entry", frozenset({"plugin", "cli", "cli_commands", "bench", "verify", "construct"})),
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


def _imported(node: ast.AST, name: str, package: list[str], modules: dict[str, Path]) -> set[str]:
    """The package's modules one import statement names (all of them, not the first)."""
    found: set[str] = set()
    if isinstance(node, ast.ImportFrom):
        base = package[: len(package) - node.level + 1] if node.level else []
        target = ".".join([*base, node.module] if node.module else base)
        for alias in node.names:
            submodule = f"{target}.{alias.name}"
            # ``from pkg import sub`` imports the submodule; ``from mod import name``, the module.
            found.add(submodule if submodule in modules else target)
    elif isinstance(node, ast.Import):
        found.update(alias.name for alias in node.names)
    return {module for module in found if module in modules and module != name}


@functools.cache
def _graphs() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(imports that run, every import including ``TYPE_CHECKING`` ones)."""
    modules = _modules()
    running: dict[str, set[str]] = {name: set() for name in modules}
    every: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        skipped = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            targets = _imported(node, name, package, modules)
            every[name] |= targets
            if id(node) not in skipped:
                running[name] |= targets
    return running, every


def import_graph() -> dict[str, set[str]]:
    """The imports that run: the layering is checked on these."""
    return _graphs()[0]


def full_import_graph() -> dict[str, set[str]]:
    """Every import, ``TYPE_CHECKING`` ones included: circles are checked on these."""
    return _graphs()[1]


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
    assert _cycles(full_import_graph()) == []


def test_every_name_of_one_import_counts() -> None:
    # ``from . import c0, c1, ...`` in the stages package names six modules, not the first.
    stages = import_graph()["pytest_enconda.stages"]
    assert {f"pytest_enconda.stages.c{n}" for n in range(6)} <= stages


def test_type_checking_imports_count_for_circles_only() -> None:
    # caserun names the pipeline's collaborators' types without importing them at run time.
    assert "pytest_enconda.cases.models" in full_import_graph()["pytest_enconda.caserun"]
    assert "pytest_enconda.cases.models" not in import_graph()["pytest_enconda.caserun"]


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
