"""The AEC hybrid verdict against trajectories labelled by reading them.

    python -m pytest_enconda.bench aec-labels [--labels PATH] [--judge offline|llm:<model>]
                                              [--judge-api-base URL] [--json PATH] [--show N]

``benchmark_cases/aec_labels/labels.jsonl`` holds real AEC runs (agents run in Docker by
``scripts/aec_label_runs.py``), each labelled ``success`` or ``failure`` by reading its trajectory
and its replay's logs under ``benchmark_cases/aec_labels/CRITERIA.md``, with a one-line reason.
Each item keeps what the hybrid verdict is computed from, bounded: the setup's exit, the test
command, the test step's exit and the tail of its log (checked, when extracted, to read as the
whole log reads), and the trajectory (each step's output cut to what the judge is shown).

The verdict is recomputed with ``aec.grading.grade_from_artifacts`` (the grader's own functions,
``decide`` among them: the test-log parsers, the trajectory judge where the log is inconclusive,
and a cheating sign's veto over a success) and compared with the labels: agreement, confusion
counts, the share the log decided alone, the share that needed the judge, the judge's agreement
on that share, and the runs the veto turned to failure. An inconclusive verdict fails
``aec_success``, so it counts as a predicted failure. The judge reads every trajectory: the
offline judge's rules (``aec.cheat_rules``) over the trajectory, the agent's setup.sh and its
own test command, never saying success; ``--judge llm:<model>`` asks a model besides, on every
run with a trajectory, and its verdict decides where the log is inconclusive.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .. import textio

LABELS_DIR = Path(__file__).resolve().parents[2] / "benchmark_cases" / "aec_labels"
DEFAULT_LABELS = LABELS_DIR / "labels.jsonl"
MAX_LABELS_BYTES = 4 << 20
# What an item keeps: the judge is shown each step's last STEP_OUTPUT_CHARS, the test output's
# last 4,000 characters; the log's tail is kept longer where the parsers need it.
LOG_TAIL_CHARS = 4_000
MAX_LOG_CHARS = 16_000
MAX_STEPS = 60

Label = Literal["success", "failure"]
AgentName = Literal["oracle", "readme", "heuristic", "swe-agent", "zero-shot", "command"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LabelledStep(_Frozen):
    command: str = Field(max_length=8_000)
    exit_code: int | None = None
    output: str = Field(default="", max_length=2_000, description="the output's tail")
    thought: str = Field(default="", max_length=1_000)


class RecordedVerdict(_Frozen):
    """What the harness recorded when the run was graded (offline judge)."""

    log_verdict: Literal["success", "failure", "inconclusive"]
    verdict: Literal["success", "failure", "inconclusive"]
    decided_by: Literal["log", "judge", "neither"]


class LabelledRun(_Frozen):
    """One real AEC run, its label and the artifacts its hybrid verdict is computed from."""

    id: str = Field(pattern=r"^[a-z0-9-]+/[A-Za-z0-9][A-Za-z0-9._-]*$", description="group/case")
    case: str = Field(min_length=1)
    agent: AgentName
    scenario: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    language: str = Field(min_length=1)
    label: Label
    reason: str = Field(min_length=3, max_length=400, description="one line: why the label")
    task: str = Field(min_length=1, max_length=2_000)
    setup_exit_code: int | None = Field(description="None: the setup step did not run")
    setup_timed_out: bool = False
    setup_script: str = Field(default="", max_length=8_000, description="the agent's setup.sh")
    test_command: str = Field(default="", max_length=2_000)
    command_source: Literal["agent", "reference", "none"]
    test_exit_code: int | None = None
    test_log: str | None = Field(
        default=None, max_length=MAX_LOG_CHARS, description="the log's tail; None: no test step"
    )
    test_log_chars: int = Field(default=0, ge=0, description="the whole log's length")
    trajectory: list[LabelledStep] = Field(default_factory=list, max_length=MAX_STEPS)
    trajectory_steps: int = Field(default=0, ge=0, description="steps in the whole trajectory")
    output_problem: str | None = Field(
        default=None,
        max_length=400,
        description="the harness's message where the agent left no setup.sh: its items fail "
        "before the hybrid verdict (no replay, no log, no judge)",
    )
    recorded: RecordedVerdict | None = Field(description="None exactly where output_problem")

    @model_validator(mode="after")
    def _recorded_unless_no_outputs(self) -> LabelledRun:
        if (self.recorded is None) != (self.output_problem is not None):
            raise ValueError("expected recorded, or output_problem (no setup.sh), not both")
        return self


class LabelsFormatError(textio.JsonLinesError):
    """A labels file that does not validate; the message names each line and field."""

    what = "labels file"


def load_labels(path: Path) -> list[LabelledRun]:
    """Every line of ``path`` as a ``LabelledRun`` (read bounded, never through a link); all
    problems are reported together."""
    try:
        text = textio.decode_utf8(textio.read_input(path, MAX_LABELS_BYTES))
    except (OSError, ValueError) as exc:
        raise LabelsFormatError(path, [f"<file>: cannot be read: {exc}"]) from None
    runs: list[LabelledRun] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, run in textio.validated_lines(text, LabelledRun, problems):
        if run.id in seen:
            problems.append(f"line {number}: id: {run.id!r} is also line {seen[run.id]}")
        seen.setdefault(run.id, number)
        runs.append(run)
    if problems:
        raise LabelsFormatError(path, problems)
    return runs


def recompute(run: LabelledRun, judge: Any) -> Any:
    """The run's ``AecGrade`` again, from its stored artifacts, by the grader's functions."""
    from ..aec.grading import grade_from_artifacts
    from ..agents.base import Step

    steps = [
        Step(command=s.command, exit_code=s.exit_code, output=s.output, thought=s.thought)
        for s in run.trajectory
    ]
    return grade_from_artifacts(
        case_id=run.case,
        test_command=run.test_command,
        command_source=run.command_source,
        setup_exit_code=run.setup_exit_code,
        setup_timed_out=run.setup_timed_out,
        test_text=run.test_log,
        test_exit_code=run.test_exit_code,
        judge=judge,
        task=run.task,
        steps=steps,
        setup_script=run.setup_script,
        agent_test_command=run.test_command if run.command_source == "agent" else "",
    )


def _confusion(pairs: Sequence[tuple[bool, bool]]) -> dict[str, int | float | None]:
    """Counts of (label success, predicted success) and the agreement."""
    counts = Counter(pairs)
    n = len(pairs)
    agree = counts[(True, True)] + counts[(False, False)]
    return {
        "n": n,
        "agree": agree,
        "agreement": round(agree / n, 4) if n else None,
        "tp": counts[(True, True)],
        "fp": counts[(False, True)],
        "fn": counts[(True, False)],
        "tn": counts[(False, False)],
    }


def measure(runs: Sequence[LabelledRun], judge: Any) -> tuple[dict[str, Any], list[dict]]:
    """The figures on ``runs`` and one row per run (its label, the log's and hybrid verdicts)."""
    rows = []
    for run in runs:
        if run.output_problem is not None:
            # No setup.sh: the harness fails every item before replaying anything, as here.
            rows.append(
                {
                    "id": run.id,
                    "agent": run.agent,
                    "label": run.label,
                    "log_verdict": None,
                    "verdict": "failure",
                    "decided_by": "no_outputs",
                    "judge_reason": None,
                    "cheating": [],
                    "matches_recorded": True,
                }
            )
            continue
        grade = recompute(run, judge)
        recorded = run.recorded
        assert recorded is not None
        rows.append(
            {
                "id": run.id,
                "agent": run.agent,
                "label": run.label,
                "log_verdict": grade.log_verdict,
                "verdict": grade.verdict,
                "decided_by": grade.decided_by,
                "judge_reason": grade.judge.reason if grade.judge is not None else None,
                "cheating": [f.text() for f in grade.cheat_findings],
                "matches_recorded": (grade.log_verdict, grade.verdict, grade.decided_by)
                == (recorded.log_verdict, recorded.verdict, recorded.decided_by),
            }
        )
    n = len(rows)
    by_log = [r for r in rows if r["log_verdict"] in ("success", "failure")]
    needed = [r for r in rows if r["log_verdict"] == "inconclusive"]
    no_outputs = [r for r in rows if r["decided_by"] == "no_outputs"]
    vetoed = [r for r in rows if r["decided_by"] == "veto"]
    flagged = [r for r in rows if r["cheating"]]

    def pairs(subset: list[dict]) -> list[tuple[bool, bool]]:
        return [(r["label"] == "success", r["verdict"] == "success") for r in subset]

    agents = sorted({r["agent"] for r in rows})
    figures: dict[str, Any] = {
        "judge": str(getattr(judge, "name", type(judge).__name__)),
        "items": n,
        "labels": dict(Counter(r["label"] for r in rows)),
        "hybrid": _confusion(pairs(rows)),
        "log_decided": {
            "items": len(by_log),
            "share": round(len(by_log) / n, 4) if n else None,
            **_confusion(pairs(by_log)),
        },
        "judge_needed": {
            "items": len(needed),
            "share": round(len(needed) / n, 4) if n else None,
            "labels": dict(Counter(r["label"] for r in needed)),
            "judge_verdicts": dict(Counter(r["verdict"] for r in needed)),
            **_confusion(pairs(needed)),
        },
        "no_outputs": {
            "items": len(no_outputs),
            "share": round(len(no_outputs) / n, 4) if n else None,
            **_confusion(pairs(no_outputs)),
        },
        "vetoed": {
            "items": len(vetoed),
            "labels": dict(Counter(r["label"] for r in vetoed)),
            **_confusion(pairs(vetoed)),
        },
        "cheating_found": {
            "items": len(flagged),
            "labels": dict(Counter(r["label"] for r in flagged)),
        },
        "decided_by": dict(Counter(r["decided_by"] for r in rows)),
        "by_agent": {a: _confusion(pairs([r for r in rows if r["agent"] == a])) for a in agents},
        "recomputed_equals_recorded": sum(r["matches_recorded"] for r in rows),
    }
    return figures, rows


def print_figures(figures: dict[str, Any]) -> None:
    def line(name: str, c: dict) -> str:
        if not c["n"]:
            return f"  {name:28s} n=0"
        return (
            f"  {name:28s} n={c['n']:3d}  agree {c['agree']:3d} ({c['agreement']:.1%})  "
            f"tp {c['tp']} fp {c['fp']} fn {c['fn']} tn {c['tn']}"
        )

    n = figures["items"]
    print(f"{n} labelled AEC runs, labels {figures['labels']}, judge {figures['judge']}")
    print(line("hybrid verdict", figures["hybrid"]))
    log, needed = figures["log_decided"], figures["judge_needed"]
    print(line(f"decided by the log ({log['share'] or 0:.1%})", log))
    print(line(f"judge needed ({needed['share'] or 0:.1%})", needed))
    print(f"  judge's verdicts where needed: {needed['judge_verdicts']}")
    gone = figures["no_outputs"]
    print(line(f"no setup.sh, failed early ({gone['share'] or 0:.1%})", gone))
    vetoed, found = figures["vetoed"], figures["cheating_found"]
    print(line("success vetoed (cheating)", vetoed))
    print(f"  cheating signs found on {found['items']} runs, labels {found['labels']}")
    print(f"  decided by: {figures['decided_by']}")
    for agent, c in figures["by_agent"].items():
        print(line(f"agent {agent}", c))
    print(
        f"  recomputed verdict equals the one recorded at run time: "
        f"{figures['recomputed_equals_recorded']} of {n}"
    )


# --- extraction from run directories (scripts/aec_label_runs.py extract) -------------------

_PREFIX = {"sw-": "swe-agent", "zs-": "zero-shot", "cmd-": "command"}


def _scenario(group: str, case: str, agent: str) -> str:
    for prefix in _PREFIX:
        if case.startswith(prefix):
            # sw-<repo>-<scenario>: the scenario is what follows the repository's name
            return case[len(prefix) :].split("-", 1)[1]
    return {"oracle": "golden", "readme": "readme-literal", "heuristic": "heuristic"}.get(
        agent, agent
    )


def log_excerpt(text: str, exit_code: int | None) -> tuple[str, bool]:
    """The shortest tail of ``text`` (from ``LOG_TAIL_CHARS`` up) that the parsers read as they
    read the whole log; ``False`` when even ``MAX_LOG_CHARS`` does not."""
    from ..aec.testlogs import parse_test_log

    def key(t: str) -> tuple:
        r = parse_test_log(t, exit_code)
        return (r.framework, r.passed, r.failed, r.skipped, r.errors, r.verdict)

    whole = key(text)
    size = LOG_TAIL_CHARS
    while True:
        tail = text[-size:]
        if key(tail) == whole:
            return tail, True
        if size >= MAX_LOG_CHARS or size >= len(text):
            return text[-MAX_LOG_CHARS:], False
        size *= 2


def extract_run(group: str, case_dir: Path) -> dict[str, Any] | None:
    """One unlabelled item from a case folder of a run directory (None: not an AEC run)."""
    from ..aec.grading import AecGrade
    from ..aec.judge import STEP_OUTPUT_CHARS
    from ..agents.base import AgentOutcome
    from ..artifacts import read_model
    from ..cases.models import AEC_TASK
    from ..grading.verdict import ItemVerdict
    from ..probing.execution import ExecutionRecord

    outcome_path = case_dir / "agent" / "outcome.json"
    if not outcome_path.is_file():
        return None
    outcome = read_model(outcome_path, AgentOutcome)
    problem = None
    if (case_dir / "aec.json").is_file():
        grade = read_model(case_dir / "aec.json", AecGrade)
    else:
        graded = case_dir / "grading" / "aec_success.json"
        if not graded.is_file():
            return None  # not graded (yet): nothing to compare a label with
        verdict = read_model(graded, ItemVerdict)
        if "output_problem" not in verdict.numbers:
            return None  # stopped for another reason: not an agent's run to label
        problem = verdict.message[:400]
        grade = AecGrade(case_id=outcome.case_id, agent=outcome.agent)
    record_path = case_dir / "execution" / "record.json"
    steps = {}
    if record_path.is_file():
        steps = {s.name: s for s in read_model(record_path, ExecutionRecord).steps}
    test_log, exact, chars = None, True, 0
    if "test" in steps:
        from ..aec.testlogs import read_log

        text = read_log(case_dir / steps["test"].log)[0]
        chars = len(text)
        test_log, exact = log_excerpt(text, steps["test"].exit_code)
    setup = steps.get("setup")
    trajectory = [
        {
            "command": s.command[:8_000],
            "exit_code": s.exit_code,
            "output": s.output[-STEP_OUTPUT_CHARS:],
            "thought": s.thought[:1_000],
        }
        for s in outcome.trajectory[-MAX_STEPS:]
    ]
    return {
        "id": f"{group}/{grade.case_id}",
        "case": grade.case_id,
        "agent": outcome.agent,
        "scenario": _scenario(group, grade.case_id, outcome.agent),
        "language": grade.language or "unknown",
        "label": None,
        "reason": None,
        "task": AEC_TASK,
        "setup_exit_code": setup.exit_code if setup is not None else None,
        "setup_timed_out": bool(setup.timed_out) if setup is not None else False,
        "setup_script": outcome.setup_script[:8_000],
        "test_command": grade.test_command,
        "command_source": grade.command_source,
        "test_exit_code": steps["test"].exit_code if "test" in steps else None,
        "test_log": test_log,
        "test_log_chars": chars,
        "trajectory": trajectory,
        "trajectory_steps": len(outcome.trajectory),
        "output_problem": problem,
        "recorded": None
        if problem is not None
        else {
            "log_verdict": grade.log_verdict,
            "verdict": grade.verdict,
            "decided_by": grade.decided_by,
        },
        "_log_excerpt_exact": exact,
    }


def extract_runs(runs: Path) -> list[dict[str, Any]]:
    """Unlabelled items of every AEC case run under ``runs/<group>/cases/``."""
    items = []
    for group in sorted(p for p in runs.iterdir() if p.is_dir()):
        cases = group / "cases"
        if not cases.is_dir():
            continue
        for case_dir in sorted(p for p in cases.iterdir() if p.is_dir()):
            item = extract_run(group.name, case_dir)
            if item is not None:
                items.append(item)
    return items


def main(argv: Sequence[str] | None = None) -> int:
    from ..grading.judges import create_judge

    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench aec-labels")
    parser.add_argument("--labels", type=Path, default=DEFAULT_LABELS, help="labelled runs")
    parser.add_argument("--judge", default="offline", help="offline or llm:<model>")
    parser.add_argument("--judge-api-base", default=None)
    parser.add_argument("--show", type=int, default=0, help="print up to N disagreements")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        runs = load_labels(args.labels)
        judge = create_judge(args.judge, api_base=args.judge_api_base)
    except (LabelsFormatError, ValueError) as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if not runs:
        print(f"no labelled runs in {args.labels}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    figures, rows = measure(runs, judge)
    seconds = time.perf_counter() - started
    print_figures(figures)
    print(f"  ({seconds:.2f} s)")
    wrong = [r for r in rows if (r["label"] == "success") != (r["verdict"] == "success")]
    for row in wrong[: args.show]:
        print(
            f"  disagree {row['id']}: label {row['label']}, verdict {row['verdict']} by "
            f"{row['decided_by']} (log {row['log_verdict']})"
        )
    for row in [r for r in rows if r["cheating"]][: args.show]:
        print(f"  cheating {row['id']} ({row['label']}): {row['cheating'][0][:160]}")
    if args.json:
        out = {
            "data": f"{len(runs)} labelled runs of {args.labels.name} "
            "(benchmark_cases/aec_labels, criteria in CRITERIA.md)",
            **figures,
            "disagreements": [r["id"] for r in wrong],
        }
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        print(f"figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
