"""The README's Python examples, read statically: whether each parses (E2), and the names an
example uses that the package exports but no example imports (E8).
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap

from .findings import Finding
from .repo_view import RepoFacts, parse_python
from .steps import python_blocks


def package_exports(facts: RepoFacts, read) -> dict[str, str]:
    """Names each top-level package defines or re-exports in its ``__init__``: name → package."""
    out: dict[str, str] = {}
    for package in facts.packages:
        for prefix in ("", "src/"):
            source = read(f"{prefix}{package}/__init__.py")
            if source is None:
                continue
            try:
                tree = parse_python(source)
            except SyntaxError:
                continue
            for node in tree.body:
                names: list[str] = []
                if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
                    names = [node.name]
                elif isinstance(node, ast.ImportFrom):
                    names = [a.asname or a.name for a in node.names if a.name != "*"]
                elif isinstance(node, ast.Assign):
                    names = [t.id for t in node.targets if isinstance(t, ast.Name)]
                for name in names:
                    if not name.startswith("_"):
                        out.setdefault(name, package)
    return out


def bound_names(code: str) -> set[str]:
    try:
        tree = parse_python(code)
    except SyntaxError:
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            out.add(node.name)
    return out


def undefined_names(code: str) -> list[str]:
    try:
        tree = parse_python(code)
    except SyntaxError:
        return []
    bound: set[str] = set(dir(builtins))
    loaded: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store | ast.Del):
                bound.add(node.id)
            elif node.id not in loaded:
                loaded.append(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return [name for name in loaded if name not in bound]


# What a README's Python example may hold that is no Python but no error either: notebook shell
# escapes and magics (`!pip install x`, `%matplotlib inline`), and placeholders for the
# reader's own values (`api_key=<YOUR API KEY>`).
# The indent within its line: ``\s*`` reached across every blank line below each line start.
_NOTEBOOK_LINE = re.compile(r"^([^\S\n]*)[!%].*$", re.MULTILINE)
# Not after a name or a bracket: `Page<UserOut>` is a (wrong) expression, not a placeholder.
_PLACEHOLDER = re.compile(r"(?<![\w\])])<[A-Za-z_][\w .-]*>")


def _as_python(code: str) -> str:
    code = _NOTEBOOK_LINE.sub(r"\1pass", textwrap.dedent(code))
    return _PLACEHOLDER.sub("placeholder", code)


def python_syntax(text: str, name: str) -> list[Finding]:
    out = []
    for number, code in enumerate(python_blocks(text, name)):
        first = code.strip().split()[0] if code.strip() else ""
        if first in ("pip", "pip3", "python", "python3", "$", "cd", "git", "conda"):
            continue  # shell commands in a block labelled python
        try:
            parse_python(_as_python(code))
        except SyntaxError as exc:
            if exc.msg.startswith("expected an indented block"):
                continue  # a body left out of an excerpt (`for batch in data:` then a comment)
            line = (exc.text or "").strip()
            out.append(
                Finding(
                    "E2",
                    f"The Python example has invalid syntax: `{line[:100]}` (SyntaxError: "
                    f"{exc.msg}, line {exc.lineno} of the example).",
                    f"Correct the syntax of `{line[:100]}`.",
                    key=f"syntax-example:{number}",
                    rule="static: Python example does not parse",
                )
            )
        except (ValueError, RecursionError, MemoryError):
            continue
    return out


def example_findings(text: str, name: str, facts: RepoFacts, read) -> list[Finding]:
    exports = package_exports(facts, read)
    blocks = python_blocks(text, name)
    # READMEs import once and use the names in later examples: a name bound by any example
    # (imported, assigned, defined) is not missing from another.
    bound_anywhere: set[str] = set()
    for code in blocks:
        bound_anywhere |= bound_names(code)
    out = []
    for number, code in enumerate(blocks):
        missing = [n for n in undefined_names(code) if n in exports and n not in bound_anywhere]
        if not missing:
            continue
        package = exports[missing[0]]
        same = [n for n in missing if exports[n] == package]
        first = code.strip().splitlines()[0]
        out.append(
            Finding(
                "E8",
                f"The Python example starting `{first[:80]}` uses "
                f"{', '.join(f'`{n}`' for n in same)} without importing "
                f"{'it' if len(same) == 1 else 'them'}; run as shown it stops "
                f"with `NameError: name '{same[0]}' is not defined`.",
                f"Add `from {package} import {', '.join(same)}` as the first line of the example.",
                key=f"example:{number}",
                rule="static: names used but never imported in a Python example",
                commands=[code],
            )
        )
    return out
