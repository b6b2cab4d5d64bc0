"""Split and merge: validated errors of one repository composed into READMEs of several levels.

Errors compose when they edit different lines of the original README. ``plan_levels`` groups
them, deterministically for a seed:

- ``<key>_error_readme_N``: ``per_readme`` errors (distinct types where possible), EnConda-Bench's
  generated README;
- ``<key>_error_readme_N_only_EX``: each of its errors alone (level 1), when level 1 is asked for;
- ``error_gen_<key>_error_readme_merge_kL``: ``L`` errors from several READMEs, for each asked
  level ``L`` above ``per_readme``.

The same set of errors is never written twice (the same README with the same labels).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .models import Injection, LineEdit, apply_edits

__all__ = ["Planned", "compatible", "compose", "plan_levels"]


@dataclass(frozen=True)
class Planned:
    instance: str
    errors: tuple[Injection, ...]

    @property
    def level(self) -> int:
        return len(self.errors)


def compatible(errors: list[Injection]) -> bool:
    lines: set[int] = set()
    for error in errors:
        if lines & error.lines:
            return False
        lines |= error.lines
    return True


def compose(original: str, errors: list[Injection]) -> str:
    """The README with every error's edit applied (they must touch different lines)."""
    if not compatible(errors):
        raise ValueError("errors edit the same line: they cannot be composed")
    edits: list[LineEdit] = [edit for error in errors for edit in error.edits]
    return apply_edits(original, edits)


def _group(pool: list[Injection], size: int, rng: random.Random) -> list[Injection] | None:
    """``size`` compatible errors from ``pool``, preferring distinct types."""
    order = list(pool)
    rng.shuffle(order)
    chosen: list[Injection] = []
    for prefer_new_type in (True, False):
        for error in order:
            if len(chosen) == size:
                break
            if error in chosen:
                continue
            if prefer_new_type and error.error_type in {e.error_type for e in chosen}:
                continue
            if compatible([*chosen, error]):
                chosen.append(error)
    return chosen if len(chosen) == size else None


def plan_levels(
    key: str, errors: list[Injection], per_readme: int, levels: list[int], seed: int
) -> tuple[list[Planned], list[str]]:
    """(instances to write, why some asked-for level could not be made)."""
    rng = random.Random(f"{seed}:{key}:levels")
    remaining = sorted(errors, key=lambda e: (e.error_type, e.key))
    planned: list[Planned] = []
    notes: list[str] = []
    seen: set[frozenset[str]] = set()

    def add(name: str, group: list[Injection]) -> None:
        ident = frozenset(e.key for e in group)
        if ident in seen:
            return
        seen.add(ident)
        planned.append(Planned(instance=name, errors=tuple(group)))

    number = 0
    while remaining:
        group = _group(remaining, min(per_readme, len(remaining)), rng)
        if group is None:
            group = [remaining[0]]
        number += 1
        base = f"{key}_error_readme_{number}"
        add(base, group)
        if len(group) > 1 and 1 in levels:
            for error in group:
                add(f"{base}_only_{error.error_type}", [error])
        remaining = [e for e in remaining if e not in group]
    for level in sorted(set(levels)):
        if level <= per_readme:
            continue
        group = _group(errors, level, rng)
        if group is None:
            notes.append(
                f"level {level}: only {_max_compatible(errors)} of the {len(errors)} kept errors "
                "edit different lines"
            )
            continue
        add(f"error_gen_{key}_error_readme_merge_k{level}", group)
    return planned, notes


def _max_compatible(errors: list[Injection]) -> int:
    best = 0
    for start in range(len(errors)):
        chosen: list[Injection] = []
        for error in errors[start:] + errors[:start]:
            if compatible([*chosen, error]):
                chosen.append(error)
        best = max(best, len(chosen))
    return best
