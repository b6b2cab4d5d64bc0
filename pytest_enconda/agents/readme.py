"""The ``readme`` agent: follows the README literally, fixing nothing and diagnosing nothing.

Its setup script is the README's own commands in order. Graded like any agent, it shows whether
the injected errors really break setup (EnConda-Bench's automatic check, made deterministic).

For a task kind whose agents also name a test command (AEC's ``test_command``), the README's last
command that runs a test runner is that command, and it and the README's other test commands are
left out of the setup script: a literal reader runs the tests it is told to run, once, at the end.
"""

from __future__ import annotations

import re
import time
from pathlib import PurePath
from typing import Any

from ..ecosystems import ECOSYSTEMS, any_of
from .base import AgentOutcome, AgentTask, Step
from .readme_commands import build_script, extract_commands


def _test_runner() -> re.Pattern[str]:
    """A test runner's command (``Ecosystem.test_commands``, every registered ecosystem's) at
    the start of a simple command, by path or not (``vendor/bin/phpunit``); re's cache compiles
    it once while the registry stays as it is."""
    runners = any_of(pattern for eco in ECOSYSTEMS.values() for pattern in eco.test_commands)
    return re.compile(rf"(?:[^\s/]*/)*{runners}(?:$|[\s;&|)])")


# Where a simple command ends: a runner is one only as a command, never as an argument
# (`apt-get install phpunit`, `pip install pytest`).
_SEGMENT_END = re.compile(r"&&|\|\||[;|&()\n]")
# What may stand before the runner in its own simple command.
_LEAD = re.compile(
    r"(?:(?:sudo|env|time|nice|command|exec)\s+|timeout\s+(?:-\S+\s+)*\S+\s+"
    r"|xvfb-run\s+(?:-\S+\s+)*|[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*"
)


def is_test_command(command: str) -> bool:
    """Whether ``command`` runs a test runner (``pytest``, ``cargo test``, ``ctest``, ...) as one
    of its simple commands."""
    runner = _test_runner()
    for segment in _SEGMENT_END.split(command):
        text = segment.strip()
        lead = _LEAD.match(text)
        if runner.match(text, lead.end() if lead else 0):
            return True
    return False


def split_test_command(commands: list[str]) -> tuple[list[str], str]:
    """(the setup commands, the test command): the last test-runner command, the others out."""
    tests = [command for command in commands if is_test_command(command)]
    if not tests:
        return commands, ""
    return [command for command in commands if not is_test_command(command)], tests[-1]


def asks_test_command(suite: str) -> bool:
    """Whether the case's task kind asks its agents for a test command (AEC does)."""
    from ..kinds import TASK_KINDS

    return TASK_KINDS.get(suite).asks_test_command


class ReadmeAgent:
    name = "readme"

    def __init__(self, **_: Any) -> None:
        pass

    def run(self, task: AgentTask) -> AgentOutcome:
        start = time.monotonic()
        name = task.readme_name or PurePath(task.case.spec.readme_target).name
        commands = extract_commands(task.readme_text, name)
        setup, test_command = commands, ""
        if asks_test_command(task.case.spec.suite):
            setup, test_command = split_test_command(commands)
        return AgentOutcome(
            case_id=task.case.id,
            agent=self.name,
            setup_script=build_script(setup),
            test_command=test_command,
            # The commands as steps without output: nothing ran, so there is nothing to show.
            trajectory=[Step(command=command) for command in commands],
            wall_time=time.monotonic() - start,
            status="completed",
            message="" if commands else f"no shell commands found in {name}",
        )
