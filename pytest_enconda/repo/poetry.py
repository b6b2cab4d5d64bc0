"""Poetry's version constraints as PEP 440 specifiers, one translation for every reader.

Test requirements (``repo/test_deps``, ``repo/test_commands``), the heuristic agent's facts and
construct's facts all read ``[tool.poetry]`` tables; they must agree on what ``^1.2`` means, or a
pin the construct rules call contradictory is one the test tools install.
"""

from __future__ import annotations

import re

__all__ = ["poetry_requirement", "poetry_specifier"]

_RELEASE = re.compile(r"\d+(?:\.\d+){0,2}")
_BARE = re.compile(r"\d+(?:\.\d+)*(?:\.\*)?")
_OPERATOR = re.compile(r"(?:[<>]=?|==|!=|~=)\s*\d[0-9A-Za-z.*+!-]*")


def _part(constraint: str, bare: str) -> str | None:
    caret = constraint.startswith("^")
    tilde = constraint.startswith("~") and not constraint.startswith("~=")
    if caret or tilde:
        version = constraint[1:]
        if not _RELEASE.fullmatch(version):
            return None
        parts = [int(p) for p in version.split(".")]
        if caret:
            # The first non-zero part may not change (^0.2.3 -> <0.3, ^1.2 -> <2).
            index = next((i for i, p in enumerate(parts) if p), len(parts) - 1)
        else:
            # ~1.2.3 and ~1.2 -> <1.3, ~1 -> <2.
            index = min(1, len(parts) - 1)
        upper = [*parts[:index], parts[index] + 1]
        return f">={version},<{'.'.join(map(str, upper))}"
    if _BARE.fullmatch(constraint):
        # A wildcard is only meaningful with ==: ">=1.2.*" is no PEP 440.
        return f"{'==' if constraint.endswith('*') else bare}{constraint}"
    if _OPERATOR.fullmatch(constraint):
        return constraint.replace(" ", "")
    return None


def poetry_specifier(constraint: str, *, bare: str = "==") -> str | None:
    """``constraint`` as a PEP 440 specifier: ``^1.2`` -> ``>=1.2,<2``, ``~1.2.3`` ->
    ``>=1.2.3,<1.3``, ``1.2`` -> ``==1.2``, comma-joined parts each translated; ``""`` for no
    constraint (``*``); None for what PEP 440 cannot say (``||``) or this does not read.

    ``bare`` is the operator of a bare version: ``==`` is Poetry's meaning; a reader that only
    wants the lowest version allowed passes ``>=``.
    """
    constraint = constraint.strip()
    if constraint in ("", "*"):
        return ""
    if "||" in constraint or "|" in constraint:
        return None
    # ">= 1.2, < 2" and ">=1.2 <2" are both Poetry's spellings of one range.
    constraint = re.sub(r"([<>=!~^])\s+", r"\1", constraint)
    parts: list[str] = []
    for piece in re.split(r"[,\s]+", constraint):
        piece = piece.strip()
        if not piece:
            continue
        translated = _part(piece, bare)
        if translated is None:
            return None
        parts.append(translated)
    return ",".join(parts)


def poetry_requirement(name: str, constraint: object) -> str:
    """A PEP 508 requirement from a Poetry dependency entry (a constraint string, or a table
    with ``version`` and ``extras``); the bare name where the constraint cannot be translated.
    Extras are kept: `channels = {extras = ["daphne"], ...}` installs daphne, which
    strawberry-django-auth's tests import through channels' testing module."""
    extras = ""
    if isinstance(constraint, dict):
        wanted = constraint.get("extras")
        if isinstance(wanted, list):
            names = [e for e in wanted if isinstance(e, str) and re.fullmatch(r"[\w.-]+", e)]
            extras = f"[{','.join(names)}]" if names else ""
        constraint = constraint.get("version", "*")
    if not isinstance(constraint, str):
        return f"{name}{extras}"
    spec = poetry_specifier(constraint)
    return f"{name}{extras}{spec or ''}"
