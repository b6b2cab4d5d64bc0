"""What every classification rule is given (``Context``: the repository's facts, the README's
steps, a way to ask the container) and the helpers several rule families share."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from packaging.utils import canonicalize_name

from .repo_view import RepoFacts
from .steps import ReadmeStep, words_of


@dataclass
class Context:
    facts: RepoFacts
    steps: list[ReadmeStep]
    # Indices of steps already run (in the order they ran).
    done: list[int]
    cwd: str
    probe: Callable[[str], tuple[int | None, str]]
    readme_text: str
    attempted: set[int] = field(default_factory=set)
    apt_updated: bool = False
    pythons: list[str] = field(default_factory=list)

    def later(self, index: int) -> list[ReadmeStep]:
        """Steps not run yet (a step that ran and failed is no remedy for another)."""
        return [
            s
            for s in self.steps
            if s.index not in self.attempted and s.index != index and s.kind != "skip"
        ]


def closest(bad: str, candidates: list[str], cutoff: float = 0.4) -> str | None:
    if not candidates:
        return None
    prefixed = [c for c in candidates if bad.startswith(c) or c.startswith(bad)]
    longest = sorted(prefixed, key=len, reverse=True)
    if longest and len(longest[0]) > 2:
        return longest[0]
    matches = difflib.get_close_matches(bad, candidates, n=1, cutoff=cutoff)
    return matches[0] if matches else None


def replace_word(command: str, old: str, new: str) -> str:
    pattern = rf"(?<![\w/.-]){re.escape(old)}(?![\w-])"
    return re.sub(pattern, new.replace("\\", r"\\"), command, count=1)


def project_install(ctx: Context) -> str | None:
    """The README's own command that installs the project, if it has one."""
    for step in ctx.steps:
        if installs(step, ctx.facts, "") and step.final:
            return step.final
    return None


def installs(step: ReadmeStep, facts: RepoFacts, name: str) -> bool:
    """Whether ``step`` installs the project itself (or the distribution ``name``)."""
    if step.kind not in ("install",):
        return False
    words = words_of(step.command)
    if re.search(r"setup\.py\s+(install|develop)|^(poetry|pipenv|pdm|uv)\s", step.command):
        return True
    for word in words[2:]:
        target = re.sub(r"\[.*$", "", word)
        if target in (".", "./") or canonicalize_name(target or "-") in [*facts.names, name]:
            return True
    return False
