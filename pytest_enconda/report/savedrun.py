"""A run as its files left it: the ``CaseRun`` that ``regrade`` grades through.

``SavedRun`` answers each step a grade asks for (the agent's outcome, the execution record, a
pyramid stage, the self-report) from what the live run saved in the case's folder, and its judge
is the one ``regrade --judge`` names. So ``regrade`` calls the same ``Aspect.grade`` as the live
run and ``--resume``: AEC's trajectory judge is asked again, the saved test logs are read again.
A step whose file is not there raises ``NotSaved`` naming it: nothing here starts an agent,
builds an image or runs a box.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from pydantic import BaseModel, ValidationError

from ..artifacts import ArtifactError, read_model, write_model
from ..caserun import StepMemo
from ..efficiency import efficiency, recorded_facts
from ..errors import HarnessError
from ..records import CaseDir, read_case_facts

if TYPE_CHECKING:
    from ..agents.base import AgentOutcome
    from ..backends.base import Backend
    from ..cases.models import Case
    from ..grading.diagnosis import DiagnosisGrade
    from ..probing.execution import ExecutionRecord
    from ..probing.pyramid import StageResult

M = TypeVar("M", bound=BaseModel)


class NotSaved(HarnessError):
    """A step ``regrade`` cannot answer from the run's files: the file is missing or cannot be
    read, or the step would run something (an agent, a box)."""


@dataclass(frozen=True)
class SavedSettings:
    """The settings grading reads (``caserun.GradingSettings``), as the run's ``run.json`` saved
    them; a value of the wrong type there counts as its default."""

    budget_scale: float = 1.0
    ddp_cpu: bool = False
    exact_versions: bool = False
    python: str | None = None

    @classmethod
    def of(cls, saved: Mapping[str, Any]) -> SavedSettings:
        scale = saved.get("budget_scale")
        python = saved.get("python")
        return cls(
            budget_scale=float(scale)
            if isinstance(scale, int | float) and not isinstance(scale, bool) and scale > 0
            else 1.0,
            ddp_cpu=saved.get("ddp_cpu") is True,
            exact_versions=saved.get("exact_versions") is True,
            python=python if isinstance(python, str) else None,
        )


class SavedRun:
    """``CaseRun`` over a run directory's saved files, with the judge ``regrade`` was given."""

    regrading = True

    def __init__(
        self,
        run_dir: Path,
        settings: SavedSettings,
        judge: Any,
        progress: Callable[[str], None] = lambda _message: None,
    ) -> None:
        self.run_dir = Path(run_dir)
        self._settings = settings
        self._judge = judge
        self.progress = progress
        self._steps = StepMemo()
        # Cases whose case.json kept no spec (runs from before it did): their budgets are unknown.
        self._without_spec: set[str] = set()

    # ----------------------------------------------------------------- the case

    def case(self, case_id: str) -> Case:
        """The case as the run graded it, from its ``case.json``: the spec it was loaded with,
        its golden answer and its execution reference."""
        from ..cases.models import Case, CaseSpec, ExecutionReference, GoldenAnswer, RepoSource

        paths = CaseDir(self.run_dir, case_id)
        try:
            facts = read_case_facts(paths)
        except ArtifactError as exc:
            raise NotSaved(str(exc)) from None
        if facts is None:
            raise NotSaved(f"{paths.facts} is missing")
        try:
            golden = GoldenAnswer.model_validate(facts.golden)
            reference = (
                ExecutionReference.model_validate(facts.reference) if facts.reference else None
            )
            if facts.spec is not None:
                spec = CaseSpec.model_validate(facts.spec)
            else:
                # A diagnosis case of a run from before case.json kept the spec: its golden
                # answer and reference are all the diagnosis and execution aspects read.
                self._without_spec.add(case_id)
                spec = CaseSpec.model_construct(
                    id=case_id,
                    suite="diagnosis",
                    repository=RepoSource.model_construct(
                        kind="folder", path=facts.repository or "."
                    ),
                )
        except ValidationError as exc:
            raise NotSaved(f"{paths.facts}: not as the harness writes it: {exc}") from None
        if spec.id != case_id:
            raise NotSaved(f"{paths.facts}: its spec is case {spec.id!r}, not {case_id!r}")
        fields: dict[str, Any] = {
            "spec": spec,
            "case_dir": paths.root,
            "readme_text": "",
            "golden": golden,
            "reference": reference,
            "variant": facts.variant,
        }
        # The stand-in spec is not a case file's (no test command): built, not validated.
        return Case(**fields) if self.has_spec_of(case_id) else Case.model_construct(**fields)

    def has_spec(self, case: Case) -> bool:
        """Whether the case's ``case.json`` kept its spec (task kind, budgets, AEC task)."""
        return self.has_spec_of(case.id)

    def has_spec_of(self, case_id: str) -> bool:
        return case_id not in self._without_spec

    # ----------------------------------------------------------------- CaseRun

    @property
    def settings(self) -> SavedSettings:
        return self._settings

    @property
    def grades_existing(self) -> bool:
        # The rule the live run chose its backend by: --python grades an existing environment.
        return self._settings.python is not None

    @property
    def judge(self) -> Any:
        return self._judge

    def backend(self) -> Backend:
        self._refuse("a box to run in")

    def case_dir(self, case: Case) -> CaseDir:
        return CaseDir(self.run_dir, case.id)

    def once(self, case: Case, step: str, produce: Callable[[], Any]) -> Any:
        """``produce()`` once per case and step; its failure is every later asker's too."""
        return self._steps.once(case.id, step, produce)

    def agent_outcome(self, case: Case) -> AgentOutcome:
        from ..agents.base import AgentOutcome

        if self.grades_existing:
            # What the live run graded with: no agent ran (its items were skipped).
            return AgentOutcome(case_id=case.id, agent="existing-environment")
        path = self.case_dir(case).agent_outcome
        return self.once(case, "agent", lambda: self._read(path, AgentOutcome, "agent's outcome"))  # type: ignore[no-any-return]

    def execution_record(self, case: Case) -> ExecutionRecord:
        from ..probing.execution import ExecutionRecord

        path = self.case_dir(case).execution_record
        return self.once(  # type: ignore[no-any-return]
            case, "execution", lambda: self._read(path, ExecutionRecord, "execution record")
        )

    def diagnosis_grade(self, case: Case) -> DiagnosisGrade:
        def produce() -> DiagnosisGrade:
            from ..grading.diagnosis import grade_diagnosis

            grade = grade_diagnosis(case.golden, self.agent_outcome(case).diagnosis, self._judge)
            write_model(self.case_dir(case).diagnosis, grade)
            return grade

        return self.once(case, "diagnosis", produce)  # type: ignore[no-any-return]

    def check_setup_budget(self, case: Case) -> None:
        from ..probing.execution import setup_budget_problem

        if not self.has_spec(case):
            return  # its budget was not saved: the live run checked it
        problem = setup_budget_problem(case, self._settings.budget_scale)
        if problem is not None:
            raise HarnessError(problem)

    def task_image(self, case: Case) -> str:
        self._refuse(f"the task image of {case.id} (its step's record is not saved)")

    def environment(self, case: Case) -> Any:
        self._refuse(f"the final state of {case.id} to run probes in")

    def facts(self, case: Case) -> dict[str, Any] | None:
        self._refuse(f"python_facts.py run in the final state of {case.id}")

    def stage(self, case: Case, name: str) -> StageResult:
        from ..probing.pyramid import StageResult

        path = self.case_dir(case).pyramid(name)
        return self.once(  # type: ignore[no-any-return]
            case, f"stage-{name}", lambda: self._read(path, StageResult, f"stage {name}'s result")
        )

    def efficiency(self, case: Case) -> dict[str, Any]:
        paths = self.case_dir(case)
        stages = [
            self._read(path, _AnyRecord, "stage result").model_dump()
            for path in paths.pyramid_files()
        ]
        state = self._optional(paths.final_state)
        execution = self._optional(paths.execution_record)
        numbers = efficiency(
            self.agent_outcome(case).model_dump(mode="json"),
            state=state,
            execution=execution,
            facts=recorded_facts(stages),
        )
        return {name: value for name, value in numbers.items() if value is not None}

    def self_report(self, case: Case) -> dict[str, Any] | None:
        from ..pipeline import read_report
        from ..probing.final_state import FinalState

        def produce() -> dict[str, Any] | None:
            if self.grades_existing:
                self._refuse("the self-report --report named (not kept in the run)")
            outcome = self.agent_outcome(case)
            if outcome.self_report is not None:
                return outcome.self_report
            paths = self.case_dir(case)
            state = self._read(paths.final_state, FinalState, "final state")
            if state.report_file is None:
                return None
            return read_report(paths.root / state.report_file)

        return self.once(case, "self_report", produce)  # type: ignore[no-any-return]

    def report_read(self, case: Case) -> Any:
        from ..stages.c5 import report_read

        return report_read(self.self_report(case))

    # ----------------------------------------------------------------- reading

    def _read(self, path: Path, model: type[M], what: str) -> M:
        if not (path.is_symlink() or path.exists()):
            raise NotSaved(f"{path} is missing: the run saved no {what} to grade from")
        try:
            return read_model(path, model)
        except (OSError, ValueError) as exc:  # ArtifactError is a ValueError
            raise NotSaved(f"{what} cannot be read: {exc}") from None

    def _optional(self, path: Path) -> dict[str, Any] | None:
        if not path.is_file():
            return None
        return self._read(path, _AnyRecord, path.name).model_dump()

    def _refuse(self, what: str) -> NoReturn:
        raise NotSaved(f"regrade runs nothing: {what} would need the live run")


class _AnyRecord(BaseModel, extra="allow"):
    """A saved JSON object read as it is (``efficiency.efficiency`` takes what it finds)."""
