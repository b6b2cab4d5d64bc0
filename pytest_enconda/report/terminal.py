"""The terminal summary section of a benchmark run."""

from __future__ import annotations

from typing import Any

MAX_PROBLEMS_SHOWN = 50


def write_terminal_summary(terminalreporter: Any, session: Any) -> None:
    problems = session.import_problems
    if problems:
        terminalreporter.section("enconda: instances that could not be read", sep="-")
        for file, reason in problems[:MAX_PROBLEMS_SHOWN]:
            terminalreporter.write_line(f"{file}: {reason}")
        if len(problems) > MAX_PROBLEMS_SHOWN:
            terminalreporter.write_line(f"... and {len(problems) - MAX_PROBLEMS_SHOWN} more")
        if session.settings.allow_import_problems:
            terminalreporter.write_line(
                f"{len(problems)} import problem(s): exit status left as is "
                "(--allow-import-problems)"
            )
        else:
            terminalreporter.write_line(
                f"{len(problems)} import problem(s): input was lost, so the exit status is "
                "non-zero (--allow-import-problems exits 0 when everything else passed)"
            )
    warnings = session.input_warnings
    if warnings:
        terminalreporter.section("enconda: input read past (warnings)", sep="-")
        for warning in warnings[:MAX_PROBLEMS_SHOWN]:
            terminalreporter.write_line(warning)
        if len(warnings) > MAX_PROBLEMS_SHOWN:
            terminalreporter.write_line(f"... and {len(warnings) - MAX_PROBLEMS_SHOWN} more")
        terminalreporter.write_line(
            f"{len(warnings)} input warning(s), listed in {session.run_paths.input_warnings}"
        )
    summary = session.summary
    if not summary:
        return
    from .tables import render_terminal

    terminalreporter.section("enconda summary", sep="=")
    width = terminalreporter._tw.fullwidth
    from .tables import has_diagnosis

    if has_diagnosis(summary):
        terminalreporter.write(render_terminal(summary, console_width=width))
    if summary.get("subsets"):
        from .subset import render_side_by_side

        terminalreporter.write(render_side_by_side(summary))
    if summary.get("pyramid"):
        from .pyramid import pyramid_table

        terminalreporter.write_line("Runtime pyramid (ResearchEnvBench's main table)")
        terminalreporter.write_line(pyramid_table(summary["pyramid"]))
    timeouts = summary.get("timeouts") or 0
    if timeouts:
        terminalreporter.write_line(
            f"timeouts: {timeouts} item(s) ran out of their calibrated budget (counted apart "
            "in summary.json, results.csv and report.html; pytest counts them as failed)"
        )
    usage = summary.get("agent_usage") or {}
    if usage.get("calls"):
        cost = usage.get("cost_usd")
        shown = (
            f"${cost:.4f}"
            if cost is not None
            else (
                f"unknown (no price for the model; ${usage.get('priced_cost_usd', 0):.4f} priced)"
            )
        )
        terminalreporter.write_line(
            f"agent model usage: {usage['calls']} calls over {usage['cases']} case(s), "
            f"{usage['prompt_tokens']} prompt + {usage['completion_tokens']} completion tokens "
            f"= {usage['total_tokens']}, cost {shown}"
        )
    spend = summary.get("run_spend") or {}
    outside = spend.get("outside_outcomes") or {}
    if spend.get("error"):
        terminalreporter.write_line(f"model spend: {spend['error']}")
    elif outside.get("calls"):
        terminalreporter.write_line(
            f"model spend over the whole run (cost-ledger.json): {spend['calls']} calls, "
            f"${spend['cost_usd']:.4f}; {outside['calls']} of them (${outside['cost_usd']:.4f}) "
            "are in no case's agent outcome (judges, attempts cut by --max-cost or ended early)"
        )
    terminalreporter.write_line(f"run directory: {session.run_dir}")
