"""The ``readme`` agent: follows the README literally, fixing nothing and diagnosing nothing.

Its setup script is the README's own commands in order. Graded like any agent, it shows whether
the injected errors really break setup (EnConda-Bench's automatic check, made deterministic).
"""

from __future__ import annotations

import time
from pathlib import PurePath
from typing import Any

from .base import AgentOutcome, AgentTask, Step
from .readme_commands import build_script, extract_commands


class ReadmeAgent:
    name = "readme"

    def __init__(self, **_: Any) -> None:
        pass

    def run(self, task: AgentTask) -> AgentOutcome:
        start = time.monotonic()
        name = task.readme_name or PurePath(task.case.spec.readme_target).name
        commands = extract_commands(task.readme_text, name)
        return AgentOutcome(
            case_id=task.case.id,
            agent=self.name,
            setup_script=build_script(commands),
            # The commands as steps without output: nothing ran, so there is nothing to show.
            trajectory=[Step(command=command) for command in commands],
            wall_time=time.monotonic() - start,
            status="completed",
            message="" if commands else f"no shell commands found in {name}",
        )
