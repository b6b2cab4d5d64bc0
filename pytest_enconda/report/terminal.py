"""The terminal summary section of a benchmark run."""

from __future__ import annotations

from typing import Any


def write_terminal_summary(terminalreporter: Any, session: Any) -> None:
    summary = session.summary
    if session.import_problems:
        terminalreporter.section("enconda: instances that could not be read", sep="-")
        for file, reason in session.import_problems[:50]:
            terminalreporter.write_line(f"{file}: {reason}")
        if len(session.import_problems) > 50:
            terminalreporter.write_line(f"... and {len(session.import_problems) - 50} more")
    if not summary:
        return
    terminalreporter.section("enconda summary", sep="=")
    terminalreporter.write_line(f"run directory: {session.run_dir}")
    counts = summary["pass_at_1_counts"]
    value = summary["pass_at_1"]
    shown = "n/a" if value is None else f"{value:.3f}"
    terminalreporter.write_line(
        f"agent={summary['agent']} cases={summary['cases']} "
        f"Pass@1={shown} ({counts['passed']}/{counts['graded']}, harness errors {counts['errors']})"
    )
