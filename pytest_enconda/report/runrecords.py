"""A run's records, read once and typed: what the summary, the exports and the review report read.

``RunRecords.load`` reads ``results.jsonl``'s rows (given, as ``ResultRow``) and each case's
records as the live run wrote them: ``case.json``, the agent's outcome, the diagnosis grade, the
execution record, the final state, the graded interpreter, AEC's grade, the item verdicts and
the pyramid stages, each as its model; and for reviewers, bounded tails of the case's logs, its
setup script and trajectory. A record that is absent is ``None``; one that cannot be read or is
not the model (an edited run) is ``None`` too and named in the case's ``problems``. Renderers
take these and never read a case folder themselves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ..aec.grading import GRADE_FILE, AecGrade
from ..agents.base import AgentOutcome, Step
from ..artifacts import ArtifactError
from ..cases.models import GoldenAnswer
from ..efficiency import efficiency, recorded_facts
from ..grading.diagnosis import DiagnosisGrade
from ..grading.judges.base import JudgeStats
from ..grading.verdict import ItemVerdict
from ..probing.execution import ExecutionRecord
from ..probing.final_state import FinalState
from ..probing.interpreter import GradedInterpreter
from ..probing.pyramid import StageResult
from ..records import (
    CaseDir,
    CaseFacts,
    ResultRow,
    RunDir,
    read_record,
)
from .evidence import Tail, read_tail, step_log, trajectory_steps

M = TypeVar("M", bound=BaseModel)
Key = tuple[str, str]
SHOWN_FILES = 200


@dataclass
class CaseRecords:
    """One case's records (see the module's docstring)."""

    case_id: str
    paths: CaseDir
    facts: CaseFacts | None = None
    golden: GoldenAnswer | None = None
    outcome: AgentOutcome | None = None
    diagnosis: DiagnosisGrade | None = None
    execution: ExecutionRecord | None = None
    state: FinalState | None = None
    interpreter: GradedInterpreter | None = None
    aec: AecGrade | None = None
    gradings: dict[str, ItemVerdict] = field(default_factory=dict)
    stages: dict[str, StageResult] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    logs: dict[str, Tail] = field(default_factory=dict)
    setup_script: str | None = None
    files: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """Records that are there but cannot be read as the harness writes them, each named."""

    @property
    def root(self) -> Path:
        return self.paths.root

    @property
    def golden_types(self) -> list[str]:
        if self.facts is not None and self.facts.error_types:
            return list(self.facts.error_types)
        return list(self.diagnosis.golden_types) if self.diagnosis is not None else []

    @property
    def predicted_types(self) -> list[str]:
        if self.diagnosis is not None:
            return list(self.diagnosis.predicted_types)
        if self.outcome is not None:
            return [str(p.error_type) for p in self.outcome.diagnosis]
        return []

    def efficiency(self) -> dict[str, float | None]:
        """Time to ready, tokens, cost and sizes (``efficiency.efficiency``, the one rule)."""
        return efficiency(
            _dump(self.outcome),
            state=_dump(self.state),
            execution=_dump(self.execution),
            facts=recorded_facts(stage.model_dump(mode="json") for stage in self.stages.values()),
        )

    def timing(self, rows: Iterable[ResultRow]) -> dict[str, float]:
        """Where the case's time went: the agent's own clock, and the rest of its items' time
        (image builds, boxes, snapshots, the replay, probes, grading), and their sum; with the
        agent's wall-clock budget and the slowdown it was stretched by, where recorded."""
        items = sum(row.duration for row in rows)
        agent = self.outcome.wall_time if self.outcome is not None else 0.0
        timing = {
            "agent_seconds": round(agent, 3),
            "harness_seconds": round(max(0.0, items - agent), 3),
            "item_seconds": round(items, 3),
        }
        clock = self.outcome.clock if self.outcome is not None else None
        if clock is not None:
            timing["agent_budget_seconds"] = clock.seconds
            timing["clock_factor"] = clock.factor
        return timing


def _dump(model: BaseModel | None) -> dict[str, Any] | None:
    return None if model is None else model.model_dump(mode="json")


def _present(path: Path) -> bool:
    return path.is_symlink() or path.exists()


class _Reader:
    """Reads one case's records, naming each that is there but cannot be read."""

    def __init__(self, paths: CaseDir) -> None:
        self.paths = paths
        self.problems: list[str] = []

    def record(self, path: Path, model: type[M]) -> M | None:
        if not _present(path):
            return None
        try:
            # Bounded, no link followed from the run directory: a run directory is input.
            return read_record(path, model, root=self.paths.run_dir)
        except ArtifactError as exc:
            self.problems.append(str(exc))
            return None

    def records(self, paths: Iterable[Path], model: type[M]) -> dict[str, M]:
        read = {path.stem: self.record(path, model) for path in paths}
        return {name: value for name, value in read.items() if value is not None}

    def golden(self, facts: CaseFacts | None) -> GoldenAnswer | None:
        if facts is None or not facts.golden:
            return None
        try:
            return GoldenAnswer.model_validate(facts.golden)
        except ValidationError as exc:
            self.problems.append(f"{self.paths.facts}: its golden answer is not valid: {exc}")
            return None


def load_case(run_dir: Path, case_id: str) -> CaseRecords:
    """One case's records, read once (the live run's pytest-html rows read one as it goes)."""
    paths = CaseDir(run_dir, case_id)
    read = _Reader(paths)
    facts = read.record(paths.facts, CaseFacts)
    outcome = read.record(paths.agent_outcome, AgentOutcome)
    execution = read.record(paths.execution_record, ExecutionRecord)
    records = CaseRecords(
        case_id=case_id,
        paths=paths,
        facts=facts,
        golden=read.golden(facts),
        outcome=outcome,
        diagnosis=read.record(paths.diagnosis, DiagnosisGrade),
        execution=execution,
        state=read.record(paths.final_state, FinalState),
        interpreter=read.record(paths.interpreter, GradedInterpreter),
        aec=read.record(paths.root / GRADE_FILE, AecGrade),
        gradings=read.records(paths.item_gradings(), ItemVerdict),
        stages=read.records(paths.pyramid_files(), StageResult),
        steps=trajectory_steps(paths, outcome),
        problems=read.problems,
    )
    _add_evidence(records, execution)
    return records


def _add_evidence(records: CaseRecords, execution: ExecutionRecord | None) -> None:
    """The logs' tails, the setup script and the case's files, for the review report."""
    paths = records.paths
    run_dir = paths.run_dir
    candidates = {
        "setup log": step_log(paths, execution, "setup"),
        "test log": step_log(paths, execution, "test"),
        "agent log": paths.agent_log,
    }
    # A research case's final state: the agent's script run to build it (where setup failed).
    for env_log in paths.environment_logs():
        candidates[f"final state {env_log.name}"] = env_log
    for probe_log in sorted(paths.probes_dir.glob("*")):
        if probe_log.is_file():
            candidates[f"probe {probe_log.name}"] = probe_log
    for name, path in candidates.items():
        tail = read_tail(path, root=run_dir)
        if tail is not None:
            records.logs[name] = tail
    script = read_tail(paths.setup_script, limit=20000, root=run_dir)
    records.setup_script = script.text if script is not None else None
    root = paths.root
    if root.is_dir() and not root.is_symlink():
        records.files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())[
            :SHOWN_FILES
        ]


@dataclass
class RunRecords:
    """A run's result rows and its cases' records, read once: every renderer's input."""

    root: Path
    rows: dict[Key, ResultRow]
    cases: dict[str, CaseRecords]
    judge_stats: list[JudgeStats] = field(default_factory=list)
    """What each process's judge did (the controller's and each xdist worker's)."""

    @classmethod
    def load(cls, run_dir: Path, rows: Mapping[Key, ResultRow]) -> RunRecords:
        """The run's records for ``rows``: each of their cases read once."""
        cases = {case: load_case(run_dir, case) for case in sorted({c for c, _i in rows})}
        stats = []
        for path in sorted(RunDir(run_dir).judge_stats_dir.glob("*.json")):
            try:
                stats.append(read_record(path, JudgeStats, root=run_dir))
            except ArtifactError:
                continue  # an edited or linked file counts as no judge work
        return cls(Path(run_dir), dict(rows), cases, stats)

    def case_rows(self) -> dict[str, list[ResultRow]]:
        """Each case's rows, cases in order."""
        by_case: dict[str, list[ResultRow]] = {case: [] for case in sorted(self.cases)}
        for (case, _item), row in self.rows.items():
            by_case.setdefault(case, []).append(row)
        return by_case

    def judge(self, name: str) -> JudgeStats:
        """The run's judge statistics, summed over its processes."""
        total = JudgeStats(name=name)
        for stats in self.judge_stats:
            total = total.merged(stats)
        return total
