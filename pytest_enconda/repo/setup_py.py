"""A ``setup.py`` read as Python, never run: the keywords of its ``setup(...)`` call.

One reader for every field the harness takes from it (name, python_requires, extras_require,
tests_require), so that each resolves names and ``+`` the same way.
"""

from __future__ import annotations

import ast

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
