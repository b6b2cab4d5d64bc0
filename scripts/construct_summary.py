"""What construct kept, from one or more ``construct-report.json`` (runs into separate ``--out``).

    PYTHONPATH=$PWD python scripts/construct_summary.py OUT [OUT ...]

Prints, as Markdown: each repository (accepted or refused with the reason, the README rewrites
that prepared it for the checkout, errors injected and kept, instances kept per level), the kept
share per injector and error type and per rule, and the instances per level over all.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_enconda.construct.models import CONSTRUCT_TYPES, ConstructReport
from pytest_enconda.construct.run import read_report
from pytest_enconda.construct.writer import REPORT_NAME


def merged(folders: list[Path]) -> ConstructReport:
    report = ConstructReport()
    for folder in folders:
        part = read_report(folder / REPORT_NAME)
        for name, outcome in part.repositories.items():
            if name in report.repositories:
                raise SystemExit(f"{name} is in more than one report: give disjoint runs")
            report.repositories[name] = outcome
    return report


def lines(report: ConstructReport) -> list[str]:
    out = [
        "| repository | outcome | README rewrites | kept / injected | instances (levels) |",
        "| --- | --- | --- | --- | --- |",
    ]
    levels: dict[int, int] = {}
    for name, outcome in sorted(report.repositories.items(), key=lambda kv: kv[0].lower()):
        kept_levels: dict[int, int] = {}
        for record in outcome.instances:
            if record.kept:
                kept_levels[record.level] = kept_levels.get(record.level, 0) + 1
                levels[record.level] = levels.get(record.level, 0) + 1
        kept = sum(1 for i in outcome.injected if i.key not in outcome.dropped)
        state = "accepted" if outcome.accepted else f"refused: {outcome.reason[:160]}"
        cells = ", ".join(f"{k}: {v}" for k, v in sorted(kept_levels.items())) or "-"
        total = sum(kept_levels.values())
        out.append(
            f"| {name} | {state} | {len(outcome.prepared)} | {kept} / {len(outcome.injected)} "
            f"| {total} ({cells}) |"
        )
    out += ["", "| injector | " + " | ".join(CONSTRUCT_TYPES) + " | all |"]
    out.append("| --- " * (len(CONSTRUCT_TYPES) + 2) + "|")
    for injector, rows in sorted(report.kept_share().items()):
        cells = [
            f"{rows[t]['kept']} / {rows[t]['injected']}" if t in rows else "0 / 0"
            for t in CONSTRUCT_TYPES
        ]
        kept = sum(r["kept"] for r in rows.values())
        injected = sum(r["injected"] for r in rows.values())
        out.append(
            f"| {injector} (kept / injected) | " + " | ".join(cells) + f" | {kept} / {injected} |"
        )
    rules: dict[tuple[str, str], list[int]] = {}
    for outcome in report.repositories.values():
        for injection in outcome.injected:
            rule = (
                injection.rule.split("-")[0]
                if injection.rule.startswith(("misspell", "path", "pin"))
                else injection.rule
            )
            row = rules.setdefault((injection.error_type, rule), [0, 0])
            row[1] += 1
            row[0] += injection.key not in outcome.dropped
    out += ["", "| type | rule | kept / injected |", "| --- | --- | --- |"]
    for (error_type, rule), (kept, injected) in sorted(rules.items()):
        out.append(f"| {error_type} | {rule} | {kept} / {injected} |")
    dropped = [
        f"- {name} {i.error_type} {i.rule}: {outcome.dropped[i.key][:200]}"
        for name, outcome in sorted(report.repositories.items())
        for i in outcome.injected
        if i.key in outcome.dropped
    ]
    out += ["", "dropped:", *dropped] if dropped else []
    cells = ", ".join(f"level {k}: {v}" for k, v in sorted(levels.items()))
    out += ["", f"instances kept: {sum(levels.values())} ({cells})"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="+", help="folders pytest-enconda construct wrote")
    args = parser.parse_args(argv)
    print("\n".join(lines(merged([Path(folder) for folder in args.out]))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
