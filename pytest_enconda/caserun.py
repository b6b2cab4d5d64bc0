"""What one case's run offers the code that grades it: the ``CaseRun`` protocol, and the two
views over it handed to a stage (``StageContext``) and to an aspect (``AspectContext``).

Low in the layers, so that stages, aspects and a task kind's grading depend on this protocol
and not on the pipeline that implements it (``CasePipeline``): the pipeline imports them, never
the other way round. Standard library only at import, as the registries that use it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from .errors import EncondaError, HarnessError

if TYPE_CHECKING:
    from .agents.base import AgentOutcome
    from .backends.base import Backend
    from .cases.models import Case
    from .grading.verdict import ItemVerdict
    from .probing.execution import ExecutionRecord
    from .probing.pyramid import StageResult
    from .records import CaseDir


class StepMemo:
    """Each case's steps run once per process: a result is kept, and so is a harness failure,
    which every later asker of that step gets too. The live pipeline and a saved run share it,
    so ``--resume`` and ``regrade`` ask their steps exactly as a live run does."""

    def __init__(self) -> None:
        self.done: dict[tuple[str, str], Any] = {}
        self.failures: dict[tuple[str, str], BaseException] = {}

    def once(self, case_id: str, step: str, produce: Callable[[], Any]) -> Any:
        key = (case_id, step)
        if key in self.failures:
            raise self.failures[key]
        if key not in self.done:
            try:
                self.done[key] = produce()
            except EncondaError as exc:
                self.failures[key] = exc
                raise
            except (KeyboardInterrupt, SystemExit, GeneratorExit):
                raise
            except BaseException as exc:
                # pytest-timeout's signal method interrupts the step with pytest's ``Failed``
                # (not an Exception): the case's next item must not start the step over (an
                # agent run twice in one process); it reports the interruption instead.
                if not isinstance(exc, Exception):
                    self.failures[key] = HarnessError(
                        f"{step} of {case_id} was interrupted: {type(exc).__name__}: {exc}"
                    )
                raise
        return self.done[key]

    def forget(self, case_id: str, steps: Sequence[str]) -> None:
        """Drop the case's kept results of ``steps``: the next asker produces them again."""
        for step in steps:
            self.done.pop((case_id, step), None)
            self.failures.pop((case_id, step), None)

    def failures_of(self, case_id: str) -> dict[str, BaseException]:
        """The case's steps that failed, by step name."""
        return {step: exc for (case, step), exc in self.failures.items() if case == case_id}


class GradingSettings(Protocol):
    """What grading reads of a run's settings: ``EncondaSettings`` has these, and a saved run
    (``regrade``) reads them back from its ``run.json``."""

    @property
    def budget_scale(self) -> float: ...

    @property
    def ddp_cpu(self) -> bool: ...

    @property
    def exact_versions(self) -> bool: ...


class CaseRun(Protocol):
    """A run's steps for a case, each computed once and kept (for ``--resume`` too).

    ``CasePipeline`` makes each step (an agent, a box); a saved run (``report.savedrun``) answers
    each from the files the live run saved, so ``regrade`` grades through the same aspects.
    """

    @property
    def settings(self) -> GradingSettings: ...

    @property
    def grades_existing(self) -> bool:
        """The backend is an environment that already exists: no agent ran, nothing is built."""
        ...

    @property
    def regrading(self) -> bool:
        """A grade the run saved (AEC's ``aec.json``) is made again, not read back: ``regrade``
        asks its own judge. ``--resume`` reads it back, so a judge is never asked twice."""
        ...

    @property
    def judge(self) -> Any: ...

    def backend(self) -> Backend: ...

    def case_dir(self, case: Case) -> CaseDir: ...

    def once(self, case: Case, step: str, produce: Callable[[], Any]) -> Any:
        """``produce()`` once per case and ``step``; its result or harness failure is kept."""
        ...

    progress: Callable[[str], None]
    """Where a step says what it is doing (the terminal, a worker's log)."""

    def agent_outcome(self, case: Case) -> AgentOutcome: ...

    def execution_record(self, case: Case) -> ExecutionRecord: ...

    def diagnosis_grade(self, case: Case) -> Any: ...

    def check_setup_budget(self, case: Case) -> None: ...

    def task_image(self, case: Case) -> str: ...

    def environment(self, case: Case) -> Any: ...

    def facts(self, case: Case) -> dict[str, Any] | None: ...

    def stage(self, case: Case, name: str) -> StageResult: ...

    def efficiency(self, case: Case) -> dict[str, Any]: ...

    def self_report(self, case: Case) -> dict[str, Any] | None: ...

    def report_read(self, case: Case) -> Any: ...


class AspectFacts(Protocol):
    """What a context reads of the aspect it grades (``aspects.Aspect`` has these)."""

    @property
    def name(self) -> str: ...

    @property
    def contract_file(self) -> str | None: ...

    @property
    def needs_errors(self) -> bool: ...


class StageContext:
    """One case's view of the run, handed to ``Stage.run``.

    Everything is computed once per case by the run (and kept for ``--resume``): a stage
    asking for ``facts()`` or another stage's result does not run them again.
    """

    def __init__(self, run: CaseRun, case: Case, *, budget: float | None = None) -> None:
        self._run = run
        self.case = case
        self.budget = budget
        """The stage's budget for this case in seconds (``Stage.budget``: the case's value, else
        the stage's default); None for a stage that declares none."""

    @property
    def environment(self) -> Any:
        """The agent's final state: ``run(command, gpus=..., timeout=..., env=..., mounts=...)``."""
        return self._run.environment(self.case)

    @property
    def ddp_cpu(self) -> bool:
        return bool(self._run.settings.ddp_cpu)

    @property
    def exact_versions(self) -> bool:
        return bool(self._run.settings.exact_versions)

    def facts(self) -> dict[str, Any] | None:
        """``python_facts.py`` under the reported interpreter; ``None`` when it does not run."""
        return self._run.facts(self.case)

    def stage(self, name: str) -> StageResult:
        """Another stage's result (run now if it has not run for this case)."""
        return self._run.stage(self.case, name)

    def efficiency(self) -> dict[str, Any]:
        """Time to ready, tokens, cost and sizes of the agent's run on this case."""
        return self._run.efficiency(self.case)

    def self_report(self) -> dict[str, Any] | None:
        return self._run.self_report(self.case)

    def report_read(self) -> Any:
        """The self-report checked against ResearchEnvBench's schema (``ReportRead``)."""
        return self._run.report_read(self.case)

    def progress(self, message: str) -> None:
        self._run.progress(f"{self.case.id}: {message}")


class AspectContext:
    """One case and aspect's view of the run, handed to ``Aspect.grade``."""

    def __init__(self, run: CaseRun, case: Case, aspect: AspectFacts) -> None:
        self._run = run
        self.case = case
        self.aspect = aspect

    @property
    def existing_environment(self) -> bool:
        """The host backend (``--python``): an environment that exists, no agent output."""
        return self._run.grades_existing

    @property
    def case_root(self) -> Any:
        return self._run.case_dir(self.case).root

    def agent_outcome(self) -> AgentOutcome:
        return self._run.agent_outcome(self.case)

    def execution_record(self) -> ExecutionRecord:
        return self._run.execution_record(self.case)

    def diagnosis_grade(self) -> Any:
        return self._run.diagnosis_grade(self.case)

    def check_setup_budget(self) -> None:
        """A setup budget the golden setup cannot meet is a harness error (the case's)."""
        self._run.check_setup_budget(self.case)

    # A task kind's own steps (``aec.grading``) run through these: once per case and process,
    # saved in the case's folder, on whichever backend the run uses.

    def once(self, step: str, produce: Callable[[], Any]) -> Any:
        """``produce()`` once per case and ``step`` (its harness failure kept, as any step's)."""
        return self._run.once(self.case, step, produce)

    @property
    def case_dir(self) -> CaseDir:
        return self._run.case_dir(self.case)

    @property
    def settings(self) -> GradingSettings:
        return self._run.settings

    @property
    def regrading(self) -> bool:
        return self._run.regrading

    def backend(self) -> Backend:
        return self._run.backend()

    def task_image(self) -> str:
        return self._run.task_image(self.case)

    @property
    def judge(self) -> Any:
        return self._run.judge

    def progress(self, message: str) -> None:
        self._run.progress(message)

    def missing_output(self) -> ItemVerdict | None:
        """A contract file the agent did not leave (or left malformed) fails what it feeds."""
        from .grading.verdict import ItemVerdict

        name = self.aspect.contract_file
        if self.existing_environment or name is None:
            return None
        if self.aspect.needs_errors and not self.case.golden.errors:
            return None
        problem = self.agent_outcome().output_problems.get(name)
        if problem is None:
            return None
        return ItemVerdict(outcome="failed", message=problem, numbers={"output_problem": name})

    def not_graded_here(self) -> ItemVerdict:
        from .grading.verdict import ItemVerdict

        return ItemVerdict(
            outcome="skipped",
            message="--python grades an existing environment: no agent ran to grade "
            f"for {self.aspect.name}",
        )
