"""Write back into a memory file how often each triple was retrieved, used and helped in runs.

During a run the memory file is read-only (every xdist worker and Ray node reads the same file,
and a benchmark's input must not change under it); each case records in ``agent/memory.json``
which triples it was given and, for the heuristic agent, which it used and which helped (the
action tried made the failing step pass). ``pytest-enconda memory credit FILE RUN...`` adds those
counts to the file afterwards, once per run (the run's id is kept in the file's meta table, so
crediting a run twice changes nothing).

What "helped" means is the agent's own record: for the heuristic agent, the stored action was
tried and the step then passed. Agents that only receive the triples in their prompt (swe-agent,
zero-shot) record what they were given; nothing attributes their success to one triple, so they
add to ``retrieved`` only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .. import textio
from ..records import RunDir
from .store import MemoryStore

__all__ = ["CreditReport", "credit_runs"]

MAX_RECORD_BYTES = 4 << 20


@dataclass
class CreditReport:
    runs: int = 0
    skipped_runs: list[str] = field(default_factory=list)
    cases: int = 0
    retrieved: int = 0
    used: int = 0
    helped: int = 0
    unknown_ids: int = 0
    problems: list[str] = field(default_factory=list)


def _ids(value: Any) -> list[int]:
    """Triple ids from a record's list: plain ids (heuristic) or hits with an ``id``; one that
    no SQLite row can have (below 1, 2**63 or more) is kept, and counted as unknown."""
    if not isinstance(value, list):
        return []
    found: list[int] = []
    for item in value:
        if isinstance(item, dict):
            item = item.get("id")
        if isinstance(item, int) and not isinstance(item, bool):
            found.append(item)
    return found


def _same_file(named: str, memory: Path) -> bool:
    """Whether a record's ``memory`` names ``memory``; a name no path can have (a NUL byte, too
    long to resolve) names no file."""
    try:
        return Path(named).resolve() == memory.resolve()
    except (OSError, ValueError):
        return False


def credit_runs(memory: Path, runs: list[Path]) -> CreditReport:
    report = CreditReport()
    with MemoryStore(memory, create=False) as store:
        meta = store.meta()
        for run in runs:
            run_dir = RunDir(run)
            key = f"credited:{run_dir.run_id}"
            if key in meta:
                report.skipped_runs.append(f"{run} (credited {meta[key]})")
                continue
            report.runs += 1
            for path in sorted((run / "cases").glob("*/agent/memory.json")):
                try:
                    record = textio.parse_json(textio.read_input(path, MAX_RECORD_BYTES, run))
                except (OSError, ValueError) as exc:
                    report.problems.append(f"{path}: {exc}")
                    continue
                if not isinstance(record, dict):
                    report.problems.append(f"{path}: expected a JSON object")
                    continue
                source = record.get("memory")
                if isinstance(source, str) and not _same_file(source, memory):
                    # Ids are per file: another file's triple 7 is not this one's.
                    report.problems.append(f"{path}: given by another memory file, {source}")
                    continue
                report.cases += 1
                for column, field_name in (
                    ("retrieved", "given"),
                    ("used", "used"),
                    ("helped", "helped"),
                ):
                    ids = _ids(record.get(field_name))
                    stored = store.known(ids)
                    known = [i for i in ids if i in stored]
                    report.unknown_ids += len(ids) - len(known)
                    store.count(known, column)
                    setattr(report, column, getattr(report, column) + len(known))
            store.set_meta(key, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return report
