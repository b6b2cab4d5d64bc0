"""C5: the agent's self-report claims nothing the probes contradict (hallucination audit)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Stage, StageContext

if TYPE_CHECKING:
    from ..probing.pyramid import StageResult


def report_read(raw: dict[str, Any] | None) -> Any:
    """The self-report checked against ResearchEnvBench's schema (ok, missing or invalid)."""
    from ..grading.pyramid import ReportRead, SelfReportError, load_self_report

    if raw is None:
        return ReportRead(outcome="missing", problem="the agent wrote no report.json")
    if "__invalid__" in raw:
        return ReportRead(outcome="invalid", problem=str(raw["__invalid__"]))
    try:
        return ReportRead(outcome="ok", report=load_self_report(raw, name="report.json"))
    except SelfReportError as exc:
        return ReportRead(outcome="invalid", problem=str(exc))


def run(ctx: StageContext) -> StageResult:
    import shlex

    from ..grading.pyramid import Observations, audit_report, claimed_packages
    from ..probing.pyramid import StageResult

    read = ctx.report_read()
    observed = None
    if read.report is not None:
        python = read.report.python_path
        quoted = shlex.quote(python)
        # In the box, with its shell's test: -f is a regular file after links, so a folder
        # (executable to -x, as searchable) is no interpreter.
        check = ctx.environment.run(
            f"test -e {quoted} && echo EXISTS; test -f {quoted} && echo REGULAR; "
            f"test -x {quoted} && echo EXECUTABLE; true",
            timeout=60,
        )
        observed = Observations.from_facts(
            ctx.facts(),
            python_path=python,
            exists="EXISTS" in check.output,
            regular="REGULAR" in check.output,
            executable="EXECUTABLE" in check.output,
        )
        if claimed_packages(read.report):
            observed = observed.model_copy(update={"packages": _installed(ctx)})
    c2 = ctx.stage("C2").outcome
    c4 = ctx.stage("C4").outcome
    audit = audit_report(
        read,
        observed,
        c2_passed={"passed": True, "failed": False}.get(c2),
        c4_outcome=c4,
        exact_versions=ctx.exact_versions,
    )
    numbers: dict[str, Any] = {
        "hallucinations": [h.model_dump() for h in audit.hallucinations],
        "inconclusive": audit.inconclusive,
        "report_outcome": audit.outcome,
        **ctx.efficiency(),
    }
    if audit.outcome != "audited":
        return StageResult(
            stage="C5", outcome="failed", message=f"{audit.problem}", numbers=numbers
        )
    if audit.hallucinations:
        listed = "; ".join(f"{h.kind}: {h.message}" for h in audit.hallucinations)
        return StageResult(stage="C5", outcome="failed", message=listed, numbers=numbers)
    message = "the report claims nothing the probes contradict"
    if audit.inconclusive:
        message += f" ({len(audit.inconclusive)} claim(s) inconclusive)"
    return StageResult(stage="C5", outcome="passed", message=message, numbers=numbers)


# One JSON object of every distribution the interpreter sees, by PEP 503 name.
_LIST_PACKAGES = (
    "import importlib.metadata as m, json, re; print(json.dumps({"
    "re.sub(r'[-_.]+', '-', d.metadata['Name'] or '').lower(): d.version "
    "for d in m.distributions()}))"
)


def _installed(ctx: StageContext) -> dict[str, str] | None:
    """The graded interpreter's installed distributions; None when it cannot say."""
    import shlex

    from ..textio import parse_json

    environment = ctx.environment
    run = environment.run(
        f"{shlex.quote(environment.python)} -c {shlex.quote(_LIST_PACKAGES)}", timeout=120
    )
    lines = run.output.strip().splitlines()
    if not run.ok or not lines:
        return None
    try:
        listed = parse_json(lines[-1])
    except ValueError:  # also nested too deeply, or a number past the digit limit
        return None
    return {str(k): str(v) for k, v in listed.items()} if isinstance(listed, dict) else None


STAGE = Stage(
    name="C5",
    title="C5 path/version/capability",
    run=run,
    probe="test_c5_report_matches_reality",
    description="The agent's self-report claims nothing the probes contradict.",
    summary="audit",
)
