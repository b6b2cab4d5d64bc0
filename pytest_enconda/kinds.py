"""Task kinds: what a case's ``suite`` names, and what a case of that kind asks of its file and
of its agents. Graded items (``aspects.ASPECTS``) and pyramid stages (``stages.STAGES``) name the
kind they belong to; ``aspects.aspect_names(kind)`` and ``aspects.stage_names(kind)`` list them.

In the base layer, standard library only: the case format (``cases.models``) validates a case
against its kind, and the agents read which output files their kind asks for.
"""

from __future__ import annotations

from dataclasses import dataclass

from .registry import Registry


@dataclass(frozen=True)
class TaskKind:
    """A kind of case (``suite`` in ``case.toml``)."""

    name: str
    description: str = ""
    table: str | None = None
    """The ``case.toml`` table the kind needs (``[research]``, ``[aec]``), if any."""
    needs_readme: bool = True
    """Whether a case names a README file; without one the agent reads the repository's own."""
    needs_test_command: bool = False
    outputs: tuple[str, ...] = ("setup.sh",)
    """The agent's output-contract files in ``/enconda/output`` (agents/output.py)."""
    graded_by_environment: bool = False
    """Graded on the environment the setup builds: the oracle needs a golden setup."""
    setup_seconds: float | None = None
    """The kind's default setup budget, where the case does not give one."""


TASK_KINDS: Registry[TaskKind] = Registry("task kind", "pytest_enconda.task_kinds")

TASK_KINDS.register(
    TaskKind(
        "diagnosis",
        "EnConda-Bench: find the README's injected errors",
        needs_test_command=True,
        outputs=("setup.sh", "diagnosis.json"),
    )
)
TASK_KINDS.register(
    TaskKind(
        "research",
        "ResearchEnvBench: the runtime pyramid, as probes",
        table="research",
        outputs=("setup.sh", "report.json"),
        graded_by_environment=True,
        # A research setup installs torch and friends: 1,154 s was seen for one install.
        setup_seconds=2400.0,
    )
)
TASK_KINDS.register(
    TaskKind(
        "aec",
        "automated environment configuration: set up any repository and run its tests",
        table="aec",
        needs_readme=False,
        outputs=("setup.sh", "test_command"),
        graded_by_environment=True,
    )
)
