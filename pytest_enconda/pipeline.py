"""One case's way through the harness: agent -> final state -> checks -> grading -> record.

Each step runs once per case (its result, or its harness failure, is kept) and saves what it
made in the case's folder, so ``--resume`` picks up from disk and ``regrade`` grades the same
files. Everything here runs on a ``Backend`` (Docker, an existing environment on this host, or
the fake one tests use): no step asks which. The pytest session (``session.py``) only decides
which case to advance and records the items' outcomes.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import textio
from .agent_step import AgentStep
from .agents.base import AgentOutcome
from .artifacts import atomic_write_text, read_model, write_model
from .case_repository import TaskImages
from .caserun import StepMemo
from .cases.sidecar import ABSENT_FILES_KEPT
from .cost_ceiling import CostCeiling
from .efficiency import efficiency
from .errors import HarnessError, RunStopped, harness_step
from .grading.verdict import ItemVerdict
from .records import CaseDir, RunDir
from .textio import read_json

if TYPE_CHECKING:
    from .backends.base import Backend
    from .cases.models import Case
    from .probing.execution import ExecutionRecord
    from .probing.final_state import FinalState
    from .settings import EncondaSettings

Progress = Callable[[str], None]
# A self-report is a small JSON object: far larger is not one.
MAX_REPORT_BYTES = 1 << 20


def read_report(path: Path) -> dict[str, Any] | None:
    """A self-report file's JSON object; its problems are graded by C5, not raised here."""
    try:
        # --report may name a FIFO or /dev/zero: bounded, regular files only.
        data = read_json(path, MAX_REPORT_BYTES)
    except (OSError, ValueError) as exc:
        return {"__invalid__": f"{path}: {exc}"}
    if not isinstance(data, dict):
        return {"__invalid__": f"{path}: expected a JSON object, got {type(data).__name__}"}
    return data


def backend_for(settings: EncondaSettings, progress: Progress, run_id: str) -> Backend:
    """The run's backend, built by its record from the run's settings: ``--backend``, else the
    existing environment (``--python``/``--repo``) on the host, else Docker."""
    from .backends import BACKENDS

    return BACKENDS.get(settings.backend_name).from_settings(settings, progress, run_id)


class CasePipeline:
    """The steps of every case of a run, each made once per case and process."""

    def __init__(
        self,
        settings: EncondaSettings,
        *,
        progress: Progress,
        build_progress: Progress | None = None,
        worker_id: str | None = None,
        backend: Backend | None = None,
        dispatcher: Any = None,
    ) -> None:
        self.settings = settings
        # ``--dispatch``: cases run elsewhere (``dispatch.ray``); each step then reads the files
        # the case's node sent back, as ``--resume`` reads a run's.
        self.dispatcher = dispatcher
        self.progress = progress
        self.build_progress = build_progress or progress
        self.worker_id = worker_id
        self.run = RunDir(settings.run_dir)
        self._backend = backend
        self._judge: Any = None
        self._steps = StepMemo()
        self.images = TaskImages(
            settings,
            backend=self.backend,
            once=self.once,
            progress=progress,
            build_progress=self.build_progress,
        )
        self.cost = CostCeiling(
            settings, self.run.root, agent=lambda: self.agent, progress=progress
        )
        self.agents = AgentStep(
            settings,
            self.run,
            worker_id=worker_id,
            backend=self.backend,
            images=self.images,
            cost=self.cost,
            progress=progress,
        )

    # ----------------------------------------------------------------- strategies, made lazily

    def backend(self) -> Backend:
        if self._backend is None and self.dispatcher is not None:
            self._backend = self.dispatcher.driver_backend()
        if self._backend is None:
            self._backend = backend_for(self.settings, self.progress, self.run.run_id)
        return self._backend

    @property
    def grades_existing(self) -> bool:
        """The backend is an environment that already exists: no agent runs, nothing is built."""
        return self.backend().existing is not None

    # A live run (and its ``--resume``) reads back the grades it saved; only ``regrade`` remakes.
    regrading = False

    @property
    def judge(self) -> Any:
        if self._judge is None:
            from .agents.llm import CostLedger
            from .cache import default_cache_dir
            from .grading.judges import create_judge

            self._judge = create_judge(
                self.settings.judge,
                api_base=self.settings.judge_api_base,
                cache_dir=default_cache_dir() / "judge",
                concurrency=self.settings.judge_concurrency,
                price=self.cost.judge_price(),
                ledger=CostLedger(self.run.root, self.settings.max_cost),
            )
        return self._judge

    def case_dir(self, case: Case) -> CaseDir:
        return CaseDir(self.run.root, case.id)

    def gpu_count(self) -> int:
        """GPUs a box may use: what ``--gpus`` gives and the host has (the backend decides)."""
        return self.backend().gpu_count()

    def close(self) -> None:
        """Remove this process's boxes and keep its judge's statistics for the summary."""
        if self._backend is not None:
            self._backend.close()
        if self.dispatcher is not None:
            self.dispatcher.close()
        if self._judge is not None:
            name = f"{self.worker_id or 'main'}-{os.getpid()}"
            write_model(self.run.judge_stats(name), self._judge.stats())

    def once(self, case: Case, step: str, produce: Callable[[], Any]) -> Any:
        """Run ``produce`` once per case and step; its result or harness failure is kept."""
        if self.dispatcher is not None:
            self._dispatched(case)
        return self._steps.once(case.id, step, produce)

    def _dispatched(self, case: Case) -> None:
        """Wait for the case's remote run once; its failure is every step's."""
        dispatcher = self.dispatcher
        assert dispatcher is not None
        self._steps.once(case.id, "dispatch", lambda: dispatcher.fetch(self, case) or True)

    def adopt_failure(self, case: Case, step: str, error: BaseException) -> None:
        """A step's harness failure from where the case ran (another node): raised as if here."""
        self._steps.failures[(case.id, step)] = error

    def failures_of(self, case: Case) -> dict[str, BaseException]:
        """The case's steps that failed, by step name."""
        return self._steps.failures_of(case.id)

    # ----------------------------------------------------------------- the agent

    def judge_price(self) -> tuple[float, float] | None:
        return self.cost.judge_price()

    def judge_pricing_warning(self) -> str | None:
        return self.cost.judge_pricing_warning()

    def pricing_warning(self) -> str | None:
        return self.cost.pricing_warning()

    @property
    def agent(self) -> Any:
        return self.agents.agent

    def agent_outcome(self, case: Case) -> AgentOutcome:
        return self.once(case, "agent", lambda: self.agents.outcome(case))  # type: ignore[no-any-return]

    def task_image(self, case: Case) -> str:
        return self.images.task_image(case)

    # ----------------------------------------------------------------- replay and final state

    def golden_timing(self, case: Case, ceilings: dict[str, float]) -> Any:
        """The case's golden setup timed on this machine in this run (``GoldenTiming``), once
        per case and kept in its folder (``--resume`` reuses it); None without a golden setup."""
        from .probing.execution import GoldenTiming, measure_golden

        paths = self.case_dir(case)

        def produce() -> GoldenTiming | None:
            if paths.golden_record.is_file():
                return read_model(paths.golden_record, GoldenTiming)
            if not (case.golden_setup_text or "").strip():
                return None
            image = self.task_image(case)
            self.progress(f"{case.id}: timing the golden setup to calibrate the budgets")
            budget = ceilings.get("setup", 0.0)
            with (
                harness_step(f"timing the golden setup of {case.id}"),
                heartbeat(self.progress, f"{case.id}: running the golden setup", budget),
            ):
                timing = measure_golden(
                    self.backend(),
                    image,
                    case,
                    paths,
                    ceilings,
                    self.images.own_readmes.get(case.id),
                )
            if timing is not None:
                write_model(paths.golden_record, timing)
            return timing

        return self.once(case, "golden-timing", produce)

    def check_setup_budget(self, case: Case) -> None:
        """``HarnessError`` when the golden setup is known to take longer than the case's setup
        budget: the case's fault, said before the agent runs or an image is built for it."""
        from .probing.execution import setup_budget_problem

        problem = setup_budget_problem(case, self.settings.budget_scale)
        if problem is not None:
            raise HarnessError(problem)

    def execution_record(self, case: Case) -> ExecutionRecord:
        from .probing.execution import ExecutionRecord, run_execution

        paths = self.case_dir(case)

        def produce() -> ExecutionRecord:
            if paths.execution_record.is_file():
                return read_model(paths.execution_record, ExecutionRecord)
            self.check_setup_budget(case)
            outcome = self.agent_outcome(case)
            image = self.task_image(case)
            with harness_step(f"execution of {case.id}"):
                record = run_execution(
                    self.backend(),
                    image,
                    case,
                    outcome.setup_script,
                    paths,
                    scale=self.settings.budget_scale,
                    golden=lambda ceilings: self.golden_timing(case, ceilings),
                    restore=self.images.own_readmes.get(case.id),
                )
            write_model(paths.execution_record, record)
            return record

        return self.once(case, "execution", produce)  # type: ignore[no-any-return]

    def final_state(self, case: Case) -> FinalState:
        """The snapshot probes start from (made once per case, kept for ``--resume``)."""
        from .probing.final_state import FinalState, build_final_state

        path = self.case_dir(case).final_state

        def produce() -> FinalState:
            # The agent first: one that acts in its container leaves that container, frozen,
            # as the final state (state.json) when it ends.
            outcome = self.agent_outcome(case)
            if path.is_file():
                state = read_model(path, FinalState)
                if self.backend().image_exists(state.image):
                    return state
                self.progress(f"{case.id}: snapshot {state.image} is gone; rebuilding it")
            image = self.task_image(case)
            self.progress(f"{case.id}: building the agent's final state")
            budget = case.spec.budgets.setup_seconds * self.settings.budget_scale
            with (
                harness_step(f"final state of {case.id}"),
                heartbeat(self.progress, f"{case.id}: running the setup script", budget),
            ):
                state = build_final_state(
                    self.backend(),
                    image,
                    case,
                    outcome.setup_script,
                    self.case_dir(case),
                    scale=self.settings.budget_scale,
                )
            write_model(path, state)
            return state

        return self.once(case, "final_state", produce)  # type: ignore[no-any-return]

    def release_snapshot(self, case: Case) -> None:
        """The case's items are graded here: its final-state snapshot goes (a research
        environment is gigabytes), unless ``--keep-snapshots`` or ``--keep-containers`` keeps
        it. A later asker (``--resume``, an item run out of order) rebuilds it from the saved
        setup, as for any snapshot that is gone."""
        from .probing.final_state import FinalState

        backend = self._backend
        path = self.case_dir(case).final_state
        if self.settings.keep_snapshots or backend is None or backend.keep or not path.is_file():
            return
        try:
            state = read_model(path, FinalState)
            removed = backend.remove_snapshot(state.image)
        except (HarnessError, ValueError, OSError) as exc:
            # The run's results stand; a snapshot left behind is for `pytest-enconda prune`.
            self.progress(f"{case.id}: its snapshot is left: {exc}")
            return
        self._steps.forget(case.id, ("final_state", "environment", "interpreter"))
        if removed:
            self.progress(f"{case.id}: removed its snapshot {state.image} (--keep-snapshots)")

    def self_report(self, case: Case) -> dict[str, Any] | None:
        """The agent's self-report as it wrote it (``None`` when there is none)."""

        def produce() -> dict[str, Any] | None:
            if self.grades_existing:
                return None if self.settings.report is None else read_report(self.settings.report)
            outcome = self.agent_outcome(case)
            if outcome.self_report is not None:
                return outcome.self_report
            state = self.final_state(case)
            if state.report_file is None:
                return None
            return read_report(self.case_dir(case).root / state.report_file)

        return self.once(case, "self_report", produce)  # type: ignore[no-any-return]

    def environment(self, case: Case) -> Any:
        """The handle probes run commands with: fresh boxes of the final state, whose ``python``
        is the interpreter the agent built its environment in (``interpreter``)."""

        def produce() -> Any:
            from .probing.environment import BoxEnvironment

            backend = self.backend()
            if backend.existing is not None:
                return BoxEnvironment(
                    backend,
                    backend.existing,
                    case.id,
                    python=str(self.settings.python),
                    repo_dir=str(self.settings.repo),
                    gpu_count=backend.gpu_count(),
                )
            environment = BoxEnvironment(
                backend,
                self.final_state(case).image,
                case.id,
                python="python3",
                gpu_count=backend.gpu_count(),
                log_dir=self.case_dir(case).probes_dir,
            )
            environment.python = self.interpreter(case, environment).path
            return environment

        return self.once(case, "environment", produce)

    def interpreter(self, case: Case, environment: Any = None) -> Any:
        """Which Python is graded and how it was found (``GradedInterpreter``), saved as
        ``environment/interpreter.json`` so the report and re-grading can say it."""
        from .probing.interpreter import GradedInterpreter, candidates, resolve

        path = self.case_dir(case).interpreter

        def produce() -> GradedInterpreter:
            if self.grades_existing:
                return GradedInterpreter(
                    path=str(self.settings.python), found_by="given", detail="given by --python"
                )
            if path.is_file():
                return read_model(path, GradedInterpreter)
            paths = self.case_dir(case)
            setup = self.agent_outcome(case).setup_script
            trajectory = ""
            if paths.trajectory.is_file():
                # The trajectory's tail holds the commands the agent ended with; read as a
                # tail, so a trajectory of gigabytes costs 2 MB.
                try:
                    tail = textio.read_tail(paths.trajectory, 2_000_000)
                except (OSError, ValueError):
                    tail = b""
                trajectory = tail.decode("utf-8", errors="replace")
            found = candidates(self.self_report(case), setup, trajectory)
            with harness_step(f"finding the graded interpreter of {case.id}"):
                graded = resolve(environment or self.environment(case), found)
            write_model(path, graded)
            self.progress(f"{case.id}: {graded.describe()}")
            return graded

        return self.once(case, "interpreter", produce)

    # ----------------------------------------------------------------- checks

    def stage(self, case: Case, name: str) -> Any:
        """One pyramid stage's result, run once per case and saved for resume and re-grading."""
        from .probing.pyramid import StageResult

        path = self.case_dir(case).pyramid(name)

        def produce() -> StageResult:
            if path.is_file():
                return read_model(path, StageResult)
            with harness_step(f"stage {name} of {case.id}"):
                result = self._run_stage(case, name)
                result = self._with_interpreter(case, result)
            write_model(path, result)
            return result

        return self.once(case, f"stage-{name}", produce)

    def _with_interpreter(self, case: Case, result: Any) -> Any:
        """``result`` naming the interpreter it graded: a stage that failed in the wrong Python
        would otherwise read as the agent's failure. A skipped stage graded nothing."""
        if result.outcome == "skipped":
            return result
        graded = self.interpreter(case)
        numbers = {
            **result.numbers,
            "interpreter": graded.path,
            "interpreter_found_by": graded.found_by,
        }
        message = f"{result.message} [{graded.describe()}]"
        timed_out = self.setup_timeout(case)
        if timed_out is not None:
            # What the stage saw is what an unfinished setup left: that leads the message.
            numbers["setup_timed_out"] = True
            message = f"{timed_out}; {message}"
        return result.model_copy(update={"message": message, "numbers": numbers})

    def setup_timeout(self, case: Case) -> str | None:
        """ "setup timed out after N s" when the agent's setup ran out of its budget, else None."""
        if self.grades_existing:
            return None
        state = self.final_state(case)
        if state.setup_timed_out:
            return f"setup timed out after {state.setup_seconds:.0f} s"
        outcome = self.agent_outcome(case)
        if outcome.status == "timeout":
            return f"setup timed out after {outcome.wall_time or 0:.0f} s"
        return None

    def _run_stage(self, case: Case, name: str) -> Any:
        from .stages import STAGES

        # First: a harness failure here is the environment's, whichever stage asked.
        self.environment(case)
        try:
            stage = STAGES.get(name)
        except KeyError as exc:
            raise HarnessError(f"unknown pyramid stage {name!r}: {exc.args[0]}") from None
        return stage.run_for(self, case)

    def facts(self, case: Case) -> dict[str, Any] | None:
        """``python_facts.py`` run by the reported interpreter (GPUs visible if any); ``None``
        when that interpreter does not run."""
        from .stages.python_facts import python_facts

        return self.once(  # type: ignore[no-any-return]
            case, "facts", lambda: python_facts(self.environment(case), case, self.progress)
        )

    def report_read(self, case: Case) -> Any:
        """The self-report checked against ResearchEnvBench's schema (ok, missing or invalid)."""
        from .stages.c5 import report_read

        return report_read(self.self_report(case))

    def efficiency(self, case: Case) -> dict[str, Any]:
        """The case's efficiency numbers for a stage's record (``efficiency.efficiency``)."""
        outcome = self.agent_outcome(case)
        facts = self.facts(case)
        # An existing environment has no final state of the agent's to size.
        state = None if self.grades_existing else self.final_state(case)
        numbers = efficiency(
            outcome.model_dump(mode="json"),
            state=state.model_dump(mode="json") if state is not None else None,
            facts=facts,
        )
        return {name: value for name, value in numbers.items() if value is not None}

    # ----------------------------------------------------------------- grading

    def diagnosis_grade(self, case: Case) -> Any:
        def produce() -> Any:
            from .grading.diagnosis import grade_diagnosis

            outcome = self.agent_outcome(case)
            try:
                grade = grade_diagnosis(case.golden, outcome.diagnosis, self.judge)
            except RunStopped as exc:  # the llm judge reached --max-cost
                self.cost.say(str(exc))
                raise
            write_model(self.case_dir(case).diagnosis, grade)
            return grade

        return self.once(case, "diagnosis", produce)

    def verdict(self, case: Case, aspect: str) -> ItemVerdict:
        """Prepare what ``aspect`` needs and grade it; harness failures raise."""
        from .aspects import ASPECTS, AspectContext

        if aspect in ASPECTS:
            spec = ASPECTS.get(aspect)
            verdict = spec.grade(AspectContext(self, case, spec))
        else:
            verdict = ItemVerdict(outcome="skipped", message=f"aspect {aspect} is not graded yet")
        write_model(self.case_dir(case).grading(aspect), verdict)
        self._write_case_facts(case)
        return verdict

    def _write_case_facts(self, case: Case) -> None:
        """What re-grading and the review report need of the case (``case.json``), beside its
        grading: golden answer, level, error types, the execution reference and the spec."""
        path = self.case_dir(case).facts
        if path.exists():
            return
        facts = {
            "case_id": case.id,
            # Which repository the case is: memory built from this run is never retrieved for
            # a case of the same project (imported and AEC case ids do not name it).
            "repository": case.spec.repository.name,
            "level": case.golden.level,
            "error_types": [error.error_type for error in case.golden.errors],
            "golden": json.loads(case.golden.model_dump_json()),
            "reference": (json.loads(case.reference.model_dump_json()) if case.reference else None),
            # The case as loaded: ``regrade`` grades every aspect from it (AEC's task and PASS
            # set, the budgets) without the case files, which may have moved since.
            "spec": json.loads(case.spec.model_dump_json()),
            "variant": case.variant,
        }
        absent = self.images.absent.get(case.id)
        if absent:
            # Written only when some were absent: a complete checkout's case.json is unchanged.
            facts["absent_files"] = absent[:ABSENT_FILES_KEPT]
            facts["absent_count"] = len(absent)
        atomic_write_text(path, json.dumps(facts, indent=2, sort_keys=True) + "\n")


# A long setup (a torch install takes minutes) says it is alive this often.
HEARTBEAT_SECONDS = 30.0


@contextlib.contextmanager
def heartbeat(progress: Progress, step: str, budget: float) -> Iterator[None]:
    """Report ``step``'s elapsed time against its budget every ``HEARTBEAT_SECONDS`` until the
    block ends: without it the terminal is silent for the whole of a long setup."""
    import threading

    done = threading.Event()
    started = time.monotonic()

    def beat() -> None:
        while not done.wait(HEARTBEAT_SECONDS):
            elapsed = time.monotonic() - started
            progress(f"{step}: {elapsed:.0f} s of its {budget:.0f} s budget")

    thread = threading.Thread(target=beat, name="enconda-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
