"""Values from cases, datasets and agents that end up as a program's operands.

git, pip, pytest and most other tools parse any argument beginning with ``-`` as an option, and
quoting for a shell does not change that: ``git fetch --upload-pack=CMD`` runs CMD. Such values
are refused where they are read and again where they are passed (``docs/security.md``).
"""

from __future__ import annotations

__all__ = ["OptionShapedError", "operand", "option_shaped"]


class OptionShapedError(ValueError):
    """A value that would have reached a program as an option."""


def option_shaped(value: str) -> bool:
    """Whether a program would read ``value`` as an option rather than as an operand."""
    return value.startswith("-")


def operand(value: str, what: str) -> str:
    """``value`` itself, or ``OptionShapedError`` naming ``what`` when it begins with ``-``."""
    if option_shaped(value):
        raise OptionShapedError(f"{what} {value!r} begins with '-': it would be read as an option")
    return value
