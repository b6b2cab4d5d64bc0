"""Pass@1 verdict from an execution record."""

from __future__ import annotations

from ..probing.execution import ExecutionRecord
from .verdict import ItemVerdict


def grade_execution(record: ExecutionRecord) -> ItemVerdict:
    numbers = {
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
    for step in record.steps:
        if step.exit_code != 0:
            if step.timed_out:
                why = f"timed out after {step.budget:g} s"
            else:
                why = f"exited with {step.exit_code}"
            message = (
                f"{step.name} step {why}: {step.command}\n"
                f"--- last output of {step.name} ({step.log}) ---\n{step.output_tail}"
            )
            return ItemVerdict(outcome="failed", message=message, numbers=numbers)
    if [step.name for step in record.steps] != ["setup", "test"]:
        return ItemVerdict(
            outcome="error", message="execution record is incomplete", numbers=numbers
        )
    return ItemVerdict(outcome="passed", message="setup and tests exited 0", numbers=numbers)
