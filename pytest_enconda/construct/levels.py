"""Split and merge: validated errors of one repository composed into READMEs of several levels.

A level counts independent errors: errors on different lines (different steps) of the original
README, each needing its own fix. Edits of one line could be merged word by word (``pip instal .``
and ``PIP_NO_INDEX=1 pip install .`` make ``PIP_NO_INDEX=1 pip instal .``), but one fix of that
line repairs them all: "level 3" on a one-line README was three edits of one command. So a group
of two or more errors never shares a line, and a README with one install line stays at level 1,
with the reason in the notes. Each error's own erroneous text must survive (the label quotes it;
the audit would drop the instance otherwise). ``plan_levels`` groups them, deterministically for a
seed:

- ``<key>_error_readme_N``: up to ``per_readme`` independent errors (distinct types where
  possible), EnConda-Bench's generated README;
- ``<key>_error_readme_N_only_EX``: each of its errors alone (level 1), when level 1 is asked for;
  a second error of the same type is ``..._only_EX_2``;
- ``error_gen_<key>_error_readme_merge_kL``: ``L`` errors from several READMEs, for each asked
  level ``L`` above ``per_readme``.

The same set of errors is never written twice (the same README with the same labels), and an
instance name is never given twice: a collision is an error, never an overwrite.
"""

from __future__ import annotations

import difflib
import itertools
import random
import re
from dataclasses import dataclass

from .models import ErrorLabel, Injection, LineEdit, apply_edits

__all__ = ["Planned", "compatible", "compose", "independent", "labels", "plan_levels"]


@dataclass(frozen=True)
class Planned:
    instance: str
    errors: tuple[Injection, ...]

    @property
    def level(self) -> int:
        return len(self.errors)


_TOKEN = re.compile(r"\s+|[^\s]+")


def _changes(old: list[str], new: list[str]) -> list[tuple[int, int, list[str]]]:
    """The token ranges of ``old`` that ``new`` replaces (an insertion is an empty range)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    return [(i1, i2, new[j1:j2]) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def merge_line(old: str, news: list[str]) -> str | None:
    """``old`` with every edit of ``news`` applied, or None when two of them touch the same words
    (or insert at the same place, or next to a word another one changes)."""
    tokens = _TOKEN.findall(old)
    changes = [change for new in news for change in _changes(tokens, _TOKEN.findall(new))]
    changes.sort(key=lambda c: (c[0], c[1]))
    for (a1, a2, _), (b1, b2, _) in itertools.pairwise(changes):
        if b1 <= a2 and not (a1 < a2 and b1 < b2 and b1 == a2):
            return None
    merged = list(tokens)
    for i1, i2, replacement in reversed(changes):
        merged[i1:i2] = replacement
    return "".join(merged)


def _merged_edits(errors: list[Injection]) -> list[LineEdit] | None:
    by_line: dict[int, list[LineEdit]] = {}
    for error in errors:
        for edit in error.edits:
            by_line.setdefault(edit.line, []).append(edit)
    edits: list[LineEdit] = []
    for line, group in sorted(by_line.items()):
        if len(group) == 1:
            edits.append(group[0])
            continue
        merged = merge_line(group[0].old, [edit.new for edit in group])
        if merged is None:
            return None
        for edit in group:
            # The error's own changed words must still be there for its label to be visible.
            own = [c for c in _changes(_TOKEN.findall(edit.old), _TOKEN.findall(edit.new))]
            if any("".join(words).strip() not in merged for _, _, words in own):
                return None
        edits.append(LineEdit(line=line, old=group[0].old, new=merged))
    return edits


def compatible(errors: list[Injection]) -> bool:
    """Whether the errors compose into one README (``compose``)."""
    return _merged_edits(errors) is not None


def independent(errors: list[Injection]) -> bool:
    """Whether the errors compose and each needs its own fix: no two edit the same line."""
    lines = [line for error in errors for line in error.lines]
    return len(lines) == len(set(lines)) and compatible(errors)


def compose(original: str, errors: list[Injection]) -> str:
    """The README with every error's edit applied, edits of one line merged word by word."""
    edits = _merged_edits(errors)
    if edits is None:
        raise ValueError("errors edit the same words of a line: they cannot be composed")
    return apply_edits(original, edits)


_QUOTED = re.compile(r"`([^`\n]+)`")


def labels(errors: list[Injection]) -> list[ErrorLabel]:
    """The errors' labels as written with their composed README. A label quotes its erroneous
    command; where errors share a line, that command now reads as the merged line, so the quote
    becomes the merged command (the audit looks for the erroneous text in the README). The golden
    answer stays the original command: fixing every error of the line gives it back."""
    edits = _merged_edits(errors)
    if edits is None:
        raise ValueError("errors edit the same words of a line: they cannot be composed")
    merged = {edit.line: edit.new for edit in edits}
    out: list[ErrorLabel] = []
    for error in errors:
        description = error.label.error_description
        for edit in error.edits:
            line = merged[edit.line]
            if line == edit.new:
                continue
            own = edit.new.rstrip()
            for quoted in dict.fromkeys(_QUOTED.findall(description)):
                if not own.endswith(quoted):
                    continue
                prefix = own[: len(own) - len(quoted)]
                if line.startswith(prefix):
                    description = description.replace(
                        f"`{quoted}`", f"`{line[len(prefix) :].rstrip()}`"
                    )
        out.append(error.label.model_copy(update={"error_description": description}))
    return out


def _group(pool: list[Injection], size: int, rng: random.Random) -> list[Injection] | None:
    """``size`` independent errors from ``pool``, preferring distinct types."""
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
            if independent([*chosen, error]):
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

    names: set[str] = set()

    def add(name: str, group: list[Injection]) -> None:
        ident = frozenset(e.key for e in group)
        if ident in seen:
            return
        if name in names:
            raise ValueError(f"instance name {name} planned twice: one would overwrite the other")
        seen.add(ident)
        names.add(name)
        planned.append(Planned(instance=name, errors=tuple(group)))

    number = 0
    while remaining:
        group = None
        for size in range(min(per_readme, len(remaining)), 1, -1):
            group = _group(remaining, size, rng)
            if group is not None:
                break
        group = group or [remaining[0]]
        number += 1
        base = f"{key}_error_readme_{number}"
        add(base, group)
        if len(group) > 1 and 1 in levels:
            for name, error in _only_names(base, group):
                add(name, [error])
        remaining = [e for e in remaining if e not in group]
    for level in sorted(set(levels)):
        if level <= per_readme:
            continue
        group = _group(errors, level, rng)
        if group is None:
            notes.append(
                f"level {level}: only {_max_independent(errors)} of the {len(errors)} kept "
                "errors are independent (edit different lines of the README)"
            )
            continue
        add(f"error_gen_{key}_error_readme_merge_k{level}", group)
    made = {plan.level for plan in planned}
    for level in sorted(set(levels) - made):
        if 1 < level <= per_readme and len(errors) >= level:
            notes.append(
                f"level {level}: only {_max_independent(errors)} of the {len(errors)} kept "
                "errors are independent (edit different lines of the README)"
            )
    return planned, notes


def _only_names(base: str, group: list[Injection]) -> list[tuple[str, Injection]]:
    """Each error of ``group`` with its level-1 name: ``<base>_only_E2``, and for a second error
    of the same type ``<base>_only_E2_2`` (two E2 errors both became ``..._only_E2``)."""
    counts: dict[str, int] = {}
    out: list[tuple[str, Injection]] = []
    for error in group:
        counts[error.error_type] = counts.get(error.error_type, 0) + 1
        number = counts[error.error_type]
        suffix = f"_{number}" if number > 1 else ""
        out.append((f"{base}_only_{error.error_type}{suffix}", error))
    return out


def _max_independent(errors: list[Injection]) -> int:
    best = 0
    for start in range(len(errors)):
        chosen: list[Injection] = []
        for error in errors[start:] + errors[:start]:
            if independent([*chosen, error]):
                chosen.append(error)
        best = max(best, len(chosen))
    return best
