"""A run directory written the way the session writes one, without Docker: real models (agent
outcome, execution record), real grading (``grade_diagnosis`` with the offline judge,
``grade_execution``), the same file layout. The review report reads only these files."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_enconda.agents.base import AgentOutcome, PredictedError, Step, TokenUsage
from pytest_enconda.artifacts import write_model
from pytest_enconda.cases.models import GoldenAnswer, GoldenError
from pytest_enconda.grading.diagnosis import grade_diagnosis
from pytest_enconda.grading.execution import grade_execution
from pytest_enconda.grading.judges.offline import OfflineJudge
from pytest_enconda.probing.execution import ExecutionRecord, StepRecord
from pytest_enconda.records import CaseDir, ResultRow, RunDir
from pytest_enconda.report.exports import write_exports
from pytest_enconda.report.runrecords import RunRecords
from pytest_enconda.report.summary import summarize, write_summary

ITEMS = ("execution", "error_types", "descriptions", "fixes")


@dataclass
class CaseSpec:
    case_id: str
    golden: list[tuple[str, str, str]]  # (type, description, fix)
    predicted: list[tuple[str, str, str]]
    setup_exit: int = 0
    test_exit: int = 0
    tokens: int = 0
    wall_time: float = 1.0
    steps: list[Step] = field(default_factory=list)


def golden_answer(spec: CaseSpec) -> GoldenAnswer:
    return GoldenAnswer(
        errors=[
            GoldenError(error_type=t, error_description=d, golden_answer=f)  # type: ignore[arg-type]
            for t, d, f in spec.golden
        ],
        level=len(spec.golden),
    )


def write_case(run_dir: Path, spec: CaseSpec, judge: OfflineJudge) -> list[dict[str, Any]]:
    case_dir = CaseDir(run_dir, spec.case_id)
    golden = golden_answer(spec)
    script = "#!/bin/bash\npip install -e .\n"
    outcome = AgentOutcome(
        case_id=spec.case_id,
        agent="scripted",
        diagnosis=[
            PredictedError(error_type=t, error_description=d, fix_suggestion=f)
            for t, d, f in spec.predicted
        ],
        setup_script=script,
        trajectory=spec.steps,
        usage=TokenUsage(total_tokens=spec.tokens, prompt_tokens=spec.tokens, calls=1),
        wall_time=spec.wall_time,
    )
    write_model(case_dir.agent_outcome, outcome)
    case_dir.setup_script.write_text(script, encoding="utf-8")
    for name, code in (("setup", spec.setup_exit), ("test", spec.test_exit)):
        case_dir.execution_log(name).parent.mkdir(parents=True, exist_ok=True)
        case_dir.execution_log(name).write_text(f"{name} output\nexit {code}\n", encoding="utf-8")
    steps = [
        StepRecord(
            name="setup",
            command="bash -eo pipefail /tmp/enconda/setup.sh",
            exit_code=spec.setup_exit,
            duration=2.0,
            budget=300,
            output_tail=f"setup output\nexit {spec.setup_exit}\n",
            log="execution/setup.log",
        )
    ]
    if spec.setup_exit == 0:
        steps.append(
            StepRecord(
                name="test",
                command="python -m pytest -q",
                exit_code=spec.test_exit,
                duration=1.0,
                budget=120,
                output_tail="1 passed\n" if spec.test_exit == 0 else "1 failed\n",
                log="execution/test.log",
            )
        )
    record = ExecutionRecord(case_id=spec.case_id, image="enconda/task:test", steps=steps)
    write_model(case_dir.execution_record, record)
    grade = grade_diagnosis(golden, outcome.diagnosis, judge)
    write_model(case_dir.root / "grading" / "diagnosis.json", grade)
    facts = {
        "case_id": spec.case_id,
        "level": golden.level,
        "error_types": [e.error_type for e in golden.errors],
        "golden": json.loads(golden.model_dump_json()),
        "reference": None,
    }
    (case_dir.root / "case.json").write_text(json.dumps(facts), encoding="utf-8")
    rows = []
    for item in ITEMS:
        if item == "execution":
            verdict = grade_execution(record, None, case_dir.root)
        else:
            verdict = grade.items[item]
        write_model(case_dir.grading(item), verdict)
        rows.append(
            {
                "case": spec.case_id,
                "item": item,
                "level": golden.level,
                "outcome": verdict.outcome,
                "message": verdict.message if verdict.outcome != "passed" else "",
                "duration": 1.5,
                "nodeid": f"cases/{spec.case_id}/case.toml::{item}",
            }
        )
    return rows


def build_run(run_dir: Path, specs: list[CaseSpec], agent: str = "scripted") -> dict[str, Any]:
    """Write every case, ``results.jsonl``, the summary and the exports; return the summary."""
    judge = OfflineJudge()
    rows = [row for spec in specs for row in write_case(run_dir, spec, judge)]
    (run_dir / "results.jsonl").write_text(
        "".join(json.dumps(row, sort_keys=True) + "\n" for row in rows), encoding="utf-8"
    )
    (run_dir / "run.json").write_text(
        json.dumps({"settings": {"agent": agent, "model": None, "judge": "offline"}}),
        encoding="utf-8",
    )
    write_model(RunDir(run_dir).judge_stats("main"), judge.stats())
    typed = [ResultRow.model_validate(row) for row in rows]
    records = RunRecords.load(run_dir, {row.key: row for row in typed})
    summary = summarize(records, agent, None, "offline")
    write_summary(run_dir, summary)
    write_exports(records, summary)
    return summary


def standard_specs() -> list[CaseSpec]:
    """Three cases: all right; wrong type and a failing test; setup that breaks."""
    return [
        CaseSpec(
            "alpha-e4",
            golden=[
                (
                    "E4",
                    "requirements.txt is named requirement.txt",
                    "pip install -r requirements.txt",
                )
            ],
            predicted=[
                (
                    "E4",
                    "requirements.txt is named requirement.txt",
                    "pip install -r requirements.txt",
                )
            ],
            tokens=1200,
            steps=[
                Step(command="ls", output="README.md setup.py", exit_code=0, thought="look around"),
                Step(
                    command="pip install -r requirement.txt",
                    output="ERROR: no such file",
                    exit_code=1,
                ),
            ],
        ),
        CaseSpec(
            "beta-e1-e7",
            golden=[
                ("E1", "the package needs numpy, which the README omits", "pip install numpy"),
                ("E7", "the README installs before cloning", "git clone first, then pip install ."),
            ],
            predicted=[("E2", "wrong command name", "use tabkit instead")],
            test_exit=1,
            tokens=3400,
        ),
        CaseSpec(
            "gamma-e6",
            golden=[("E6", "python 3.6 is required but too old", "use python 3.11")],
            predicted=[],
            setup_exit=2,
            tokens=0,
        ),
    ]
