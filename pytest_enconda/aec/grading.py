"""AEC's hybrid evaluation: the agent's setup replayed, the case's own tests run in a shell the
harness builds, the log read by name against the PASS set.

One ``AecGrade`` per case (``aec.json`` in the case's folder, kept for ``--resume`` and the
report) feeds its three items. The graded step (``aec.guard``) is the harness's, not the
agent's: ``setup.sh`` is sourced in a fresh box of the task image, then every test file and test
configuration the case's ecosystem names is restored from the checkout (the agent's diff of
tracked files saved as ``aec/agent.diff``), the toolchain the command runs is resolved and
checked, and the case's *reference* test command runs in a fresh ``bash`` that gets only the
setup's exported variables (less those that script a shell or skip tests). The agent's own
test command is recorded and shown, never run or graded.

- ``aec_tests_run``: passes when the log has a runner summary with at least one test executed
  (failing tests still ran). Not gradable (skipped) without a reference test command.
- ``aec_pass_set``: the share of the reference PASS set the log names as passed; passes when
  all of it passes.
- ``aec_success``: every PASS-set test reported passed by name (``testnames``) and at least as
  many tests executed as the PASS set holds, with the tests unmodified and the toolchain
  intact, and no cheating sign found (the veto below). A case without a PASS set is not
  gradable for success (skipped, with the reason).

**The hybrid verdict** (``decide``, recorded beside ``aec_success`` as evidence, and what
``bench aec-labels`` measures): the log's verdict (``testlogs``) where it says success or
failure, the trajectory judge's where it is inconclusive. The judge always reads the
trajectory (``aec.judge``): the rule-based cheat detector (``aec.cheat_rules``) on every run,
a model with ``--judge llm:<model>``.

**The veto.** Every cheating sign is recorded as ``cheat_findings``, each with its rule, where it
was seen and its evidence: the rules' (the trajectory, the agent's ``setup.sh`` and test
command), the model's (a reason starting ``cheating:``), and the graded step's (tests modified,
a toolchain program not intact, a variable that selects or skips tests dropped from the graded
shell). Any finding fails ``aec_success`` with ``cheating: <rule>: <where>: <evidence>`` among
its reasons, whatever the PASS set says, and turns a hybrid ``success`` into ``failure``
(``decided_by`` ``veto``). A model's plain "failure" without a cheating sign vetoes nothing: it
decides only where the log cannot. ``aec_tests_run`` and ``aec_pass_set`` measure the log and
are not vetoed.

A toolchain program that is a script the setup wrote (a fake ``python``) fails all three items:
the log it printed proves nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from .cheat_rules import CheatFinding, graded_findings
from .guard import GradedIntegrity
from .judge import TrajectoryJudgement, judge_trajectory
from .testlogs import TestLogResult, Verdict, parse_test_log, read_log
from .testnames import test_outcomes

if TYPE_CHECKING:
    from ..caserun import AspectContext
    from ..grading.verdict import ItemVerdict

GRADE_FILE = "aec.json"
INTEGRITY_FILE = "aec/integrity.json"
# How many missing PASS-set tests a message names; the rest are counted.
SHOWN = 10


class PassSetShare(BaseModel):
    size: int
    passed: int
    share: float
    missing: list[str] = Field(default_factory=list, description="the first missing tests")
    log: str = Field(description="the step whose log was read: reference_test or test")


class AecGrade(BaseModel):
    case_id: str
    language: str | None = None
    agent: str = ""
    test_command: str = Field(default="", description="the graded command: the reference's")
    command_source: Literal["agent", "reference", "none"] = "none"
    agent_test_command: str = Field(
        default="", description="the agent's own test command: recorded and shown, never graded"
    )
    setup_exit_code: int | None = None
    setup_timed_out: bool = False
    setup_seconds: float = 0.0
    test_exit_code: int | None = None
    test_seconds: float = 0.0
    test_log: TestLogResult | None = None
    executed: int = 0
    tests_run: bool = False
    tests_run_reason: str = ""
    pass_set: PassSetShare | None = None
    log_verdict: Verdict = "inconclusive"
    log_reason: str = ""
    judge: TrajectoryJudgement | None = None
    verdict: Verdict = "inconclusive"
    decided_by: Literal["log", "judge", "veto", "neither"] = "neither"
    cheat_findings: list[CheatFinding] = Field(
        default_factory=list,
        description="cheating signs: the rules', the model's, the graded step's",
    )
    integrity: GradedIntegrity | None = Field(
        default=None, description="the graded step's checks: tests restored, toolchain"
    )
    success: bool = False
    success_reason: str = ""
    agent_seconds: float = 0.0
    tokens: int = 0
    cost_usd: float = 0.0


def grade_aec(ctx: AspectContext) -> ItemVerdict:
    """The verdict of ``ctx.aspect`` from the case's one ``AecGrade``."""
    grade: AecGrade = ctx.once("aec", lambda: _grade(ctx))
    return _ITEMS[ctx.aspect.name](grade)


def _grade(ctx: AspectContext) -> AecGrade:
    from ..artifacts import read_model, write_model

    path = ctx.case_dir.root / GRADE_FILE
    if path.is_file() and not ctx.regrading:
        return read_model(path, AecGrade)
    case = ctx.case
    spec = case.spec.aec
    assert spec is not None
    outcome = ctx.agent_outcome()
    reference = spec.reference
    grade = AecGrade(
        case_id=case.id,
        language=spec.language,
        agent=outcome.agent,
        agent_seconds=round(outcome.wall_time, 3),
        tokens=outcome.usage.total_tokens
        or outcome.usage.prompt_tokens + outcome.usage.completion_tokens,
        cost_usd=outcome.usage.cost_usd,
    )
    grade.agent_test_command = outcome.test_command.strip()
    tests: list[tuple[str, str]] = []
    if reference is not None:
        grade.test_command, grade.command_source = reference.test_command, "reference"
        tests.append(("test", reference.test_command))
    record, grade.integrity = _execution(ctx, outcome.setup_script, tests, grade.test_command)
    steps = {step.name: step for step in record.steps}
    setup = steps.get("setup")
    if setup is not None:
        grade.setup_exit_code, grade.setup_timed_out = setup.exit_code, setup.timed_out
        grade.setup_seconds = round(setup.duration, 3)
    root = ctx.case_dir.root
    logs: dict[str, str] = {}
    for name in ("test",):
        if name in steps:
            try:
                logs[name] = read_log(root / steps[name].log)[0]
            except (OSError, ValueError):
                logs[name] = steps[name].output_tail
    setup_failed = setup is None or setup.exit_code != 0
    if "test" in steps:
        test = steps["test"]
        grade.test_seconds = round(test.duration, 3)
        read_test_step(grade, logs["test"], test.exit_code)
    _tests_run(grade, setup_failed, setup)
    if reference is not None and reference.pass_set:
        grade.pass_set = _share(reference.pass_set, logs.get("test", ""), "test")
    _hybrid(ctx, grade, setup_failed, outcome, logs.get("test", ""))
    judge_success(grade, setup_failed)
    write_model(path, grade)
    return grade


def read_test_step(grade: AecGrade, text: str, exit_code: int | None) -> None:
    """The test step's log read into ``grade`` (its result and how many tests executed)."""
    grade.test_exit_code = exit_code
    grade.test_log = log = parse_test_log(text, exit_code)
    # Errors alone (a module that failed to import, a collection error) executed nothing.
    ran = (log.passed or 0) + (log.failed or 0)
    grade.executed = ran + (log.errors or 0) if ran else 0


def _execution(
    ctx: AspectContext, setup_script: str, tests: list[tuple[str, str]], command: str
) -> tuple[Any, GradedIntegrity | None]:
    from ..artifacts import read_model, write_model
    from ..ecosystems import of_language
    from ..ecosystems.record import test_files
    from ..errors import harness_step
    from ..probing.execution import ExecutionRecord, run_execution
    from .guard import GradedGuard

    paths = ctx.case_dir
    saved = paths.root / INTEGRITY_FILE
    if paths.execution_record.is_file():
        integrity = read_model(saved, GradedIntegrity) if saved.is_file() else None
        return read_model(paths.execution_record, ExecutionRecord), integrity
    image = ctx.task_image()
    language = ctx.case.spec.aec.language if ctx.case.spec.aec is not None else None
    ecosystem = of_language(language).name if language else None
    guard = GradedGuard(
        test_files(ecosystem), saved.parent, paths.root, command, language
    ) if tests else None  # fmt: skip
    ctx.progress(f"{ctx.case.id}: replaying the agent's setup, then the case's tests")
    with harness_step(f"AEC execution of {ctx.case.id}"):
        record = run_execution(
            ctx.backend(),
            image,
            ctx.case,
            setup_script,
            paths,
            scale=ctx.settings.budget_scale,
            tests=tests,
            guard=guard,
        )
    integrity = guard.record if guard is not None else None
    if integrity is not None:
        write_model(saved, integrity)
    write_model(paths.execution_record, record)
    return record, integrity


def _tests_run(grade: AecGrade, setup_failed: bool, setup: Any) -> None:
    log = grade.test_log
    if not grade.test_command:
        grade.tests_run_reason = (
            "not gradable: the case has no reference test command (the agent's own is "
            "recorded, never graded)"
        )
    elif setup_failed:
        why = "timed out" if setup is not None and setup.timed_out else "exited"
        code = setup.exit_code if setup is not None else None
        grade.tests_run_reason = f"setup {why} ({code}): the tests never ran"
    elif log is None:
        grade.tests_run_reason = "the test step did not run"
    elif log.framework == "unknown":
        grade.tests_run_reason = f"no test runner's summary in the log ({log.reason})"
    elif grade.executed == 0 and log.verdict != "success":
        grade.tests_run_reason = f"{log.framework}: no test executed ({log.reason})"
    else:
        grade.tests_run = True
        counted = grade.executed or "some"
        grade.tests_run_reason = f"{log.framework} executed {counted} tests ({log.reason})"


def judge_success(grade: AecGrade, setup_failed: bool) -> None:
    """``aec_success``'s decision into ``grade``: the PASS set passed by name, enough tests
    executed, the tests the agent's and the toolchain real, no cheating sign (``decide``'s
    findings veto). The hybrid verdict is evidence beside it: a success it claims without the
    PASS set is none."""
    share = grade.pass_set
    integrity = grade.integrity
    reasons: list[str] = []
    if share is None:
        grade.success, grade.success_reason = False, _NOT_GRADABLE
        return
    if setup_failed:
        reasons.append(grade.tests_run_reason)
    if integrity is not None and integrity.toolchain_problems:
        reasons.append(_toolchain_text(integrity))
    if integrity is not None and integrity.tests_modified:
        reasons.append(_modified_text(integrity))
    if share.passed < share.size:
        reasons.append(f"{share.passed} of {share.size} PASS-set tests passed by name")
    if grade.executed < share.size:
        reasons.append(f"{grade.executed} tests executed, fewer than the PASS set's {share.size}")
    reasons += veto_reasons(grade)
    grade.success = not reasons
    grade.success_reason = (
        "; ".join(reasons)
        if reasons
        else f"all {share.size} PASS-set tests passed by name; {grade.executed} tests executed"
    )


_NOT_GRADABLE = "not gradable for success: the case has no reference PASS set"
# The graded step's own reasons already name these; the veto names the rest.
_ALREADY_REASONS = {"tests modified", "toolchain not intact"}


def veto_reasons(grade: AecGrade) -> list[str]:
    """``cheating: <rule>: <where>: <evidence>`` for each finding no other reason names."""
    vetoes = [f for f in grade.cheat_findings if f.rule not in _ALREADY_REASONS]
    shown = [f"cheating: {f.text()}" for f in vetoes[:SHOWN]]
    more = len(vetoes) - len(shown)
    return shown + ([f"cheating: and {more} more signs"] if more > 0 else [])


def _toolchain_text(integrity: GradedIntegrity) -> str:
    named = "; ".join(tool.problem for tool in integrity.toolchain_problems)
    return f"toolchain not intact: {named}"


def _modified_text(integrity: GradedIntegrity) -> str:
    changed = [f"{c.change} {c.path}" for c in integrity.changes if c.counts]
    return (
        "tests modified (restored from the checkout before the tests ran): "
        + ", ".join(changed[:SHOWN])
        + (f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else "")
        + (f" [diff: {integrity.diff}]" if integrity.diff else "")
    )


def _share(pass_set: list[str], text: str, source: str) -> PassSetShare:
    outcomes = test_outcomes(text)
    missing = [name for name in pass_set if outcomes.get(name) != "passed"]
    passed = len(pass_set) - len(missing)
    return PassSetShare(
        size=len(pass_set),
        passed=passed,
        share=round(passed / len(pass_set), 4),
        missing=missing[:SHOWN],
        log=source,
    )


def _hybrid(
    ctx: AspectContext, grade: AecGrade, setup_failed: bool, outcome: Any, test_text: str
) -> None:
    spec = ctx.case.spec.aec
    task = spec.task if spec is not None else ""
    decide(
        grade,
        setup_failed,
        ctx.judge,
        task,
        outcome.trajectory,
        test_text,
        setup_script=outcome.setup_script,
    )


def decide(
    grade: AecGrade,
    setup_failed: bool,
    judge: Any,
    task: str,
    steps: Sequence[Any],
    test_text: str,
    *,
    setup_script: str = "",
) -> None:
    """The hybrid verdict into ``grade``: the log first, the judge where the log is
    inconclusive, and a cheating sign's veto over a success. The judge always reads the
    trajectory (its findings are recorded whoever decides). Pure over saved artifacts:
    ``regrade`` and ``bench aec-labels`` recompute verdicts with it."""
    if setup_failed and grade.test_command:
        grade.log_verdict, grade.log_reason = "failure", grade.tests_run_reason
    elif grade.test_log is not None:
        grade.log_verdict, grade.log_reason = grade.test_log.verdict, grade.test_log.reason
    else:
        grade.log_verdict, grade.log_reason = "inconclusive", grade.tests_run_reason
    judgement = judge_trajectory(
        judge,
        task,
        steps,
        test_text,
        setup_script=setup_script,
        test_command=grade.agent_test_command,
    )
    grade.judge = judgement
    grade.cheat_findings = graded_findings(grade.integrity) + judgement.findings
    if grade.log_verdict != "inconclusive":
        grade.verdict, grade.decided_by = grade.log_verdict, "log"
    else:
        grade.verdict = judgement.verdict
        grade.decided_by = "judge" if judgement.verdict != "inconclusive" else "neither"
    if grade.cheat_findings and grade.verdict == "success":
        grade.verdict, grade.decided_by = "failure", "veto"


def _numbers(grade: AecGrade) -> dict[str, Any]:
    log = grade.test_log
    return {
        "language": grade.language,
        "framework": log.framework if log else None,
        "tests_passed": log.passed if log else None,
        "tests_failed": log.failed if log else None,
        "tests_skipped": log.skipped if log else None,
        "tests_executed": grade.executed,
        "command_source": grade.command_source,
        "log_verdict": grade.log_verdict,
        "verdict": grade.verdict,
        "decided_by": grade.decided_by,
        "cheat_findings": len(grade.cheat_findings),
    }


def _item_tests_run(grade: AecGrade) -> ItemVerdict:
    from ..grading.verdict import ItemVerdict

    where = f" [{grade.command_source} test command: {grade.test_command}]" * bool(
        grade.test_command
    ) + _agent_command(grade)
    if not grade.test_command:
        return ItemVerdict(outcome="skipped", message=grade.tests_run_reason + where)
    forged = _forged(grade)
    return ItemVerdict(
        outcome="passed" if grade.tests_run and not forged else "failed",
        message=(forged + "; " if forged else "") + grade.tests_run_reason + where
        + _evidence(grade),
        numbers=_numbers(grade),
    )  # fmt: skip


def _agent_command(grade: AecGrade) -> str:
    if not grade.agent_test_command or grade.agent_test_command == grade.test_command:
        return ""
    return f" [the agent's own test command, not graded: {grade.agent_test_command}]"


def _forged(grade: AecGrade) -> str:
    """Why the log proves nothing: a toolchain program the setup replaced ("" where none)."""
    integrity = grade.integrity
    if integrity is None or not integrity.toolchain_problems:
        return ""
    return _toolchain_text(integrity)


def _item_pass_set(grade: AecGrade) -> ItemVerdict:
    from ..grading.verdict import ItemVerdict

    share = grade.pass_set
    if share is None:
        return ItemVerdict(outcome="skipped", message="the case has no reference PASS set")
    numbers = {**_numbers(grade), "pass_set": share.model_dump()}
    forged = _forged(grade)
    if forged:
        return ItemVerdict(outcome="failed", message=forged, numbers=numbers)
    if share.passed == share.size:
        return ItemVerdict(
            outcome="passed", message=f"all {share.size} PASS-set tests passed", numbers=numbers
        )
    named = "\n".join(f"  {name}" for name in share.missing)
    more = share.size - share.passed - len(share.missing)
    return ItemVerdict(
        outcome="failed",
        message=f"{share.passed} of {share.size} PASS-set tests passed ({share.share:.0%}; read "
        f"from the {share.log} step's log); not passing:\n{named}"
        + (f"\n  ... and {more} more" if more > 0 else ""),
        numbers=numbers,
    )


def _item_success(grade: AecGrade) -> ItemVerdict:
    from ..grading.verdict import ItemVerdict

    parts = [f"log: {grade.log_verdict} ({grade.log_reason})"]
    if grade.judge is not None:
        parts.append(f"judge {grade.judge.judge}: {grade.judge.verdict} ({grade.judge.reason})")
    numbers = _numbers(grade)
    if grade.judge is not None:
        numbers["judge"] = grade.judge.model_dump(exclude={"findings"})
    numbers["cheating"] = [f.model_dump() for f in grade.cheat_findings]
    integrity = grade.integrity
    if integrity is not None:
        numbers["tests_modified"] = integrity.tests_modified
        numbers["toolchain_problems"] = [t.problem for t in integrity.toolchain_problems]
        numbers["stripped_variables"] = [v.name for v in integrity.stripped]
    if grade.pass_set is None:
        return ItemVerdict(
            outcome="skipped",
            message=_NOT_GRADABLE
            + _agent_command(grade)
            + "; "
            + "; ".join(parts)
            + _cheating(grade),
            numbers=numbers,
        )
    return ItemVerdict(
        outcome="passed" if grade.success else "failed",
        message=("success: " if grade.success else "failure: ")
        + grade.success_reason
        + _agent_command(grade)
        + f"; hybrid verdict {grade.verdict}, decided by {grade.decided_by}: "
        + "; ".join(parts)
        + _stripped(integrity)
        + _cheating(grade)
        + _diff_evidence(grade)
        + _evidence(grade),
        numbers=numbers,
    )


def _stripped(integrity: GradedIntegrity | None) -> str:
    if integrity is None or not integrity.stripped:
        return ""
    return "; dropped from the graded shell: " + ", ".join(
        f"{v.name} ({v.why})" for v in integrity.stripped
    )


def _cheating(grade: AecGrade) -> str:
    """The cheating signs as their own block: each rule, its source, where and evidence."""
    if not grade.cheat_findings:
        return ""
    lines = [f"  [{f.source}] {f.text()}" for f in grade.cheat_findings]
    return "\n--- cheating signs (veto) ---\n" + "\n".join(lines)


def _diff_evidence(grade: AecGrade) -> str:
    """The agent's diff of the tests where they were modified, cut to a screenful."""
    integrity = grade.integrity
    if integrity is None or not integrity.tests_modified or integrity.diff is None:
        return ""
    return f"\n--- the agent's changes ({integrity.diff}) ---\n{integrity.diff_excerpt}"


def _evidence(grade: AecGrade) -> str:
    if grade.test_log is None or not grade.test_log.evidence:
        return ""
    return "\n--- evidence ---\n" + "\n".join(grade.test_log.evidence)


_ITEMS = {
    "aec_tests_run": _item_tests_run,
    "aec_pass_set": _item_pass_set,
    "aec_success": _item_success,
}


def grade_from_artifacts(
    *,
    case_id: str,
    test_command: str,
    command_source: Literal["agent", "reference", "none"],
    setup_exit_code: int | None,
    setup_timed_out: bool,
    test_text: str | None,
    test_exit_code: int | None,
    judge: Any,
    task: str,
    steps: Sequence[Any],
    setup_script: str = "",
    agent_test_command: str = "",
) -> AecGrade:
    """``aec_tests_run`` and the hybrid verdict again from a run's saved artifacts (the setup's
    exit, the test step's log and exit, the trajectory, the agent's setup.sh and test command),
    by the functions ``_grade`` uses.
    ``test_text`` is None where the test step did not run; ``setup_exit_code`` None where the
    setup step did not."""
    from types import SimpleNamespace

    grade = AecGrade(
        case_id=case_id,
        test_command=test_command,
        command_source=command_source,
        setup_exit_code=setup_exit_code,
        setup_timed_out=setup_timed_out,
        agent_test_command=agent_test_command,
    )
    setup = (
        None
        if setup_exit_code is None
        else SimpleNamespace(exit_code=setup_exit_code, timed_out=setup_timed_out)
    )
    setup_failed = setup is None or setup_exit_code != 0
    if test_text is not None:
        read_test_step(grade, test_text, test_exit_code)
    _tests_run(grade, setup_failed, setup)
    decide(grade, setup_failed, judge, task, steps, test_text or "", setup_script=setup_script)
    return grade
