"""A ``setup.py`` read as Python, never run: the keywords of its ``setup(...)`` call.

One module reads it for every field the harness takes from it (name, python_requires,
extras_require, tests_require). Two readings: ``setup_keywords`` (setup's own call first, names
resolved from any assignment; verify and the Python range) and ``call_keywords`` (every call's
keywords in the order they are written, module-level names resolved in order; the heuristic
agent's view of the project's dependencies, extras and scripts).
"""

from __future__ import annotations

import ast
import warnings

# Keywords so generic that another call's (``Extension(name=...)``) would be taken for setup's.
_SETUP_ONLY = frozenset({"name", "version"})


def literal(node: ast.AST, names: dict[str, ast.AST], depth: int = 0) -> object:
    """A list/dict/str value of ``node`` with names and ``+`` resolved; None when unknowable."""
    if depth > 8:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return literal(names[node.id], names, depth + 1)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        flat: list[str] = []
        for item in (literal(item, names, depth + 1) for item in node.elts):
            if isinstance(item, str):
                flat.append(item)
            elif isinstance(item, list):
                flat += item
        return flat
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = literal(node.left, names, depth + 1)
        right = literal(node.right, names, depth + 1)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        return left if isinstance(left, list) else right if isinstance(right, list) else None
    if isinstance(node, ast.Dict):
        out: dict[str, object] = {}
        for key, value in zip(node.keys, node.values, strict=False):
            key_value = literal(key, names, depth + 1) if key is not None else None
            if isinstance(key_value, str):
                out[key_value] = literal(value, names, depth + 1)
        return out
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return {kw.arg: literal(kw.value, names, depth + 1) for kw in node.keywords if kw.arg}
    return None


def _called(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")


def setup_keywords(text: str) -> dict[str, object]:
    """Each keyword of the ``setup(...)`` call with its value as ``literal`` reads it.

    A keyword that no ``setup`` call passes is taken from any other call (a ``dict(...)`` or
    wrapper that is later splatted into setup), except the generic ones in ``_SETUP_ONLY``.
    """
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    names: dict[str, ast.AST] = {}
    calls: list[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                names[target.id] = node.value
        elif isinstance(node, ast.Call):
            calls.append(node)
    found: dict[str, object] = {}
    for call in sorted(calls, key=lambda call: _called(call) != "setup"):
        is_setup = _called(call) == "setup"
        for keyword in call.keywords:
            arg = keyword.arg
            if arg is None or arg in found or (arg in _SETUP_ONLY and not is_setup):
                continue
            found[arg] = literal(keyword.value, names)
    return found


def _parse(text: str) -> ast.Module:
    """``ast.parse`` without the warnings foreign code may raise (invalid escapes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def evaluate(node: ast.AST, names: dict[str, object], depth: int = 0) -> object:
    """A literal, or one built from names ``setup.py`` assigned (``extras_require=extras``,
    ``{"test": test_deps}``, ``base + ["pytest"]``); ``ValueError`` for anything else."""
    if depth > 20:
        raise ValueError("too deep")
    if isinstance(node, ast.Name):
        if node.id in names:
            return names[node.id]
        raise ValueError(node.id)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [evaluate(e, names, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict):
        out = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if key is None:  # ``**other``
                merged = evaluate(item, names, depth + 1)
                if isinstance(merged, dict):
                    out.update(merged)
                continue
            out[evaluate(key, names, depth + 1)] = evaluate(item, names, depth + 1)
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = evaluate(node.left, names, depth + 1), evaluate(node.right, names, depth + 1)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        raise ValueError("unsupported +")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
        "dict", "list", "sorted", "set", "tuple",
    ):  # fmt: skip
        if node.func.id == "dict" and not node.args:
            return {k.arg: evaluate(k.value, names, depth + 1) for k in node.keywords if k.arg}
        if len(node.args) == 1 and not node.keywords:
            value = evaluate(node.args[0], names, depth + 1)
            return list(value) if isinstance(value, list | tuple | set) else value
        raise ValueError("unsupported call")
    return ast.literal_eval(node)


_UNKNOWABLE = (ValueError, TypeError, SyntaxError, MemoryError, RecursionError)


def _assigned(tree: ast.Module) -> dict[str, object]:
    """Module-level ``NAME = <value>`` (and ``NAME["key"] = <value>``) that ``evaluate`` can
    work out, in order: later assignments see earlier ones."""
    names: dict[str, object] = {}
    for statement in tree.body:
        if not isinstance(statement, ast.Assign | ast.AnnAssign) or statement.value is None:
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        try:
            value = evaluate(statement.value, names)
        except _UNKNOWABLE:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                names[target.id] = value
            elif (
                isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name)
                and isinstance(names.get(target.value.id), dict)
                and isinstance(target.slice, ast.Constant)
            ):
                names[target.value.id][target.slice.value] = value  # type: ignore[index]
    return names


def call_keywords(text: str) -> list[tuple[str, object]]:
    """Every keyword of every call in the file, in ``ast.walk`` order, with its value as
    ``evaluate`` works it out; a keyword whose value cannot be worked out is left out, and a
    file that does not parse gives nothing."""
    try:
        tree = _parse(text)
    except (SyntaxError, ValueError):
        return []
    names = _assigned(tree)
    found: list[tuple[str, object]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for keyword in node.keywords:
            if keyword.arg is None:
                continue
            try:
                found.append((keyword.arg, evaluate(keyword.value, names)))
            except _UNKNOWABLE:
                continue
    return found
