"""A diagnosed error and the repair that goes with it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Action = Literal["replace", "move_before", "drop", "prepend", "defer", "none", "append"]


@dataclass
class Finding:
    """One README error: its type, what shows it (evidence), and how the agent repairs it.

    ``error_type`` is ``None`` for a repair of the environment that is not the README's fault
    (an ``apt-get update`` a fresh container needs); such repairs are not diagnosed.
    """

    error_type: str | None
    description: str
    fix: str
    action: Action = "none"
    commands: list[str] = field(default_factory=list)
    # For ``move_before``: the step (by README index) to run before the failing one.
    move: int | None = None
    key: str = ""
    rule: str = ""

    def diagnosis(self) -> dict[str, str]:
        return {
            "error_type": self.error_type or "",
            "error_description": self.description,
            "fix_suggestion": self.fix,
        }


def missing_path(subject: str, path: str, closest: str | None, fix: str, rule: str) -> Finding:
    """E4 for a file the README names that the repository does not have; ``subject`` says
    where it is named (ends before "which is not in the repository")."""
    return Finding(
        "E4",
        f"{subject}, which is not in the repository"
        + (f"; the closest path there is `{closest}`." if closest else "."),
        fix,
        key=f"path:{path}",
        rule=rule,
    )
