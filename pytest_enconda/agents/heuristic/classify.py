"""The failure classifier: a command's output (and the README around it) → an error type and a
repair, by evidence. Each rule names what it saw in the finding it returns.

Rules look at the command as run, its exit status and output; ``Context`` gives them the
repository's facts, the README's steps and a way to ask the container (``--help``, ``apt-cache``).
"""

from __future__ import annotations

from .classify_context import Context
from .rules_commands import bad_usage, interactive, missing_path
from .rules_environment import (
    activate_missing,
    after_success,
    command_not_found,
    interpreter_missing,
    own_repository_by_url,
    vcs_version,
)
from .rules_packages import (
    apt_locate,
    broken_distribution,
    invalid_requirement,
    missing_distribution,
    missing_library,
    missing_module,
    no_distribution,
    not_a_project,
    python_requirement,
    requirements_file,
    resolution,
)
from .steps import ReadmeStep

__all__ = ["Context", "classify", "missing_distribution"]


def classify(step: ReadmeStep, command: str, code: int | None, output: str, ctx: Context):
    """The finding that explains this result, or ``None`` (success, or nothing recognised)."""
    if code == 0:
        return after_success(step, command, output, ctx)
    for rule in (
        vcs_version,
        own_repository_by_url,
        activate_missing,
        interpreter_missing,
        command_not_found,
        invalid_requirement,
        requirements_file,
        not_a_project,
        no_distribution,
        python_requirement,
        broken_distribution,
        resolution,
        apt_locate,
        missing_library,
        bad_usage,
        missing_module,
        missing_path,
        interactive,
    ):
        finding = rule(step, command, output, ctx)
        if finding is not None:
            return finding
    return None
