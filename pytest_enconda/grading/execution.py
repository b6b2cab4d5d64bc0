"""Pass@1 verdict from an execution record (and, for a verified reference, its JUnit report)."""

from __future__ import annotations

from pathlib import Path

from ..cases.models import ExecutionReference
from ..probing.execution import ExecutionRecord
from ..probing.junit import JUnitError, counts, read_junit
from .verdict import ItemVerdict

# How many PASS-set tests a failure message names; the rest are counted.
SHOWN = 10


def grade_execution(
    record: ExecutionRecord,
    reference: ExecutionReference | None = None,
    case_root: Path | None = None,
) -> ItemVerdict:
    """Setup must exit 0. Then, without a verified reference, the test command must exit 0; with
    one, every test of the PASS set must pass in the runner's JUnit report (tests outside the set
    are reported in the numbers, not counted)."""
    numbers: dict = {
        "steps": {
            step.name: {
                "exit_code": step.exit_code,
                "timed_out": step.timed_out,
                "duration": round(step.duration, 3),
            }
            for step in record.steps
        },
        "duration": round(record.duration, 3),
    }
    if record.calibration is not None:
        numbers["calibration"] = record.calibration.model_dump(mode="json", exclude={"golden"})
    verified = reference is not None and reference.verified
    for step in record.steps:
        if step.exit_code != 0 and not (verified and step.name == "test" and not step.timed_out):
            if step.timed_out:
                why = f"timed out after {step.budget:g} s"
                calibration = record.calibration
                if calibration is not None and calibration.note.startswith("the golden setup "):
                    why += f" ({calibration.note})"
                elif calibration is not None and step.name in calibration.golden_stopped:
                    # Its time is the limit's, not what the golden setup needs here.
                    why += (
                        " (the golden setup was itself stopped at its limit of "
                        f"{calibration.golden_stopped[step.name]:g} s here; budget "
                        f"max({calibration.case_budgets[step.name]:g} s, "
                        f"{calibration.factor:g} x that))"
                    )
                elif calibration is not None and step.name in calibration.golden_seconds:
                    why += (
                        f" (the golden setup took {calibration.golden_seconds[step.name]:.0f} s "
                        f"here; budget max({calibration.case_budgets[step.name]:g} s, "
                        f"{calibration.factor:g} x that))"
                    )
            else:
                why = f"exited with {step.exit_code}"
            message = (
                ("TIMEOUT: " if step.timed_out else "")
                + f"{step.name} step {why}: {step.command}\n"
                f"--- last output of {step.name} ({step.log}) ---\n{step.output_tail}"
            )
            return ItemVerdict(
                outcome="failed", message=message, numbers=numbers, timed_out=step.timed_out
            )
    if [step.name for step in record.steps] != ["setup", "test"]:
        return ItemVerdict(
            outcome="error", message="execution record is incomplete", numbers=numbers
        )
    if not verified or reference is None:
        return ItemVerdict(outcome="passed", message="setup and tests exited 0", numbers=numbers)
    test = record.steps[1]
    if record.junit is None or case_root is None:
        return ItemVerdict(
            outcome="failed",
            message=f"the test command wrote no JUnit report (exited with {test.exit_code})\n"
            f"--- last output of test ({test.log}) ---\n{test.output_tail}",
            numbers=numbers,
        )
    try:
        outcomes = read_junit(Path(case_root) / record.junit, root=Path(case_root))
    except JUnitError as exc:
        return ItemVerdict(
            outcome="failed", message=f"the JUnit report cannot be read: {exc}", numbers=numbers
        )
    missing = sorted(test for test in reference.pass_set if outcomes.get(test) != "passed")
    outside = {
        test: outcome for test, outcome in outcomes.items() if test not in reference.pass_set
    }
    numbers["pass_set"] = {
        "size": len(reference.pass_set),
        "passed": len(reference.pass_set) - len(missing),
    }
    numbers["outside_pass_set"] = counts(outside)  # type: ignore[arg-type]
    outside_text = ", ".join(f"{n} {k}" for k, n in numbers["outside_pass_set"].items() if n)
    if missing:
        shown = "\n".join(f"  {test}: {outcomes.get(test, 'not run')}" for test in missing[:SHOWN])
        more = f"\n  ... and {len(missing) - SHOWN} more" if len(missing) > SHOWN else ""
        return ItemVerdict(
            outcome="failed",
            message=f"{len(missing)} of {len(reference.pass_set)} PASS-set tests did not pass "
            f"(test command exited with {test.exit_code}):\n{shown}{more}",
            numbers=numbers,
        )
    return ItemVerdict(
        outcome="passed",
        message=f"all {len(reference.pass_set)} PASS-set tests passed"
        + (f"; outside the PASS set: {outside_text}" if outside_text else ""),
        numbers=numbers,
    )
