"""Module and function sizes (issue 44): a module holds one job, a function one step.

A module over ``MODULE_LINES`` is split along its seams unless it is a rule table: a module whose
bulk is rules or word lists read top to bottom, where a split would scatter one table over files.
Those are named in ``RULE_TABLES`` with the reason, and still stop at ``RULE_TABLE_LINES``. No
function or method, nested ones included, is over ``FUNCTION_LINES``: the option table and the
CLI parser are built from data, the long procedures are named steps. ``pytest_enconda/cases/``
stops at ``CASES_LINES`` in all.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("pytest_enconda", "probes")

MODULE_LINES = 600
RULE_TABLE_LINES = 1000
FUNCTION_LINES = 120
# cases/ holds the case formats, their loaders, the importers and the label audit; a second
# product growing inside it (ground-truth making did, to 5.3k lines) shows here first.
CASES_PACKAGE = "pytest_enconda/cases"
CASES_LINES = 2800

# Path (from the repository root) -> why its length is a table's, not a module doing two jobs,
# e.g. "pytest_enconda/agents/heuristic/rules_packages.py": "the classifier's pip rules, one
# function per failure message". None is declared today: every module was split by its jobs.
RULE_TABLES: dict[str, str] = {}


def _modules() -> list[Path]:
    return sorted(path for source in SOURCES for path in (ROOT / source).rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_modules_are_at_most_600_lines_unless_declared_rule_tables() -> None:
    offenders = []
    for path in _modules():
        lines, name = _lines(path), _name(path)
        limit = RULE_TABLE_LINES if name in RULE_TABLES else MODULE_LINES
        if lines > limit:
            kind = "rule table" if name in RULE_TABLES else "module"
            offenders.append(f"{name}: {lines} lines (a {kind}: at most {limit})")
    assert not offenders, "split along its seams:\n" + "\n".join(offenders)


def test_declared_rule_tables_exist_and_need_declaring() -> None:
    # A stale entry would let a new module of that name grow unnoticed.
    stale = [
        f"{name}: {'missing' if not (ROOT / name).is_file() else 'at most 600 lines now'}"
        for name in RULE_TABLES
        if not (ROOT / name).is_file() or _lines(ROOT / name) <= MODULE_LINES
    ]
    assert not stale, "drop from RULE_TABLES:\n" + "\n".join(stale)


def test_the_cases_package_is_at_most_2800_lines() -> None:
    sizes = {_name(path): _lines(path) for path in sorted((ROOT / CASES_PACKAGE).rglob("*.py"))}
    assert sizes, f"{CASES_PACKAGE} has no modules: the check reads nothing"
    total = sum(sizes.values())
    listed = "\n".join(f"{name}: {lines}" for name, lines in sizes.items())
    assert total <= CASES_LINES, (
        f"{CASES_PACKAGE}: {total} lines, at most {CASES_LINES} (move what is not a case "
        f"format, loader, importer or the audit to the package whose job it is):\n{listed}"
    )


def _functions(tree: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [
        node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    ]


def test_functions_are_at_most_120_lines() -> None:
    offenders = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for function in _functions(tree):
            assert function.end_lineno is not None
            length = function.end_lineno - function.lineno + 1
            if length > FUNCTION_LINES:
                offenders.append(f"{_name(path)}:{function.lineno} {function.name}: {length} lines")
    assert not offenders, (
        f"functions over {FUNCTION_LINES} lines (split into named steps):\n" + "\n".join(offenders)
    )
