"""What a reviewer needs per case, read from the run directory with bounded reads.

Every log is read from its end with ``seek`` (never whole): a 50 MB agent log costs the report
``TAIL_BYTES``, and the full file stays one link away. JSON artifacts are read only below
``MAX_JSON_BYTES``; a bigger one is named as too big instead of loaded.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from .. import records, textio
from ..records import CaseDir

TAIL_BYTES = 6000
STEP_OUTPUT_CHARS = 1500
MAX_STEPS = 200
MAX_JSON_BYTES = 256 << 20


@dataclass(frozen=True)
class Tail:
    """The end of a file: ``text`` is its last bytes, ``size`` the file's full size."""

    path: Path
    text: str
    size: int

    @property
    def truncated(self) -> bool:
        return self.size > len(self.text.encode("utf-8", errors="replace"))


def _open(path: Path, root: Path | None, limit: int) -> BinaryIO | None:
    """``path`` opened if it is a regular file reached through no link from ``root`` (the run
    directory): a run directory given to ``regrade`` or ``compare`` may hold links to host
    files, and the report must not show them."""
    try:
        if root is not None and textio.link_within(root, path) is not None:
            return None
        return textio.open_regular(path, limit, follow_links=False)
    except (OSError, ValueError):
        return None


def read_tail(path: Path, limit: int = TAIL_BYTES, root: Path | None = None) -> Tail | None:
    handle = _open(path, root, 1 << 62)
    if handle is None:
        return None
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            handle.seek(size - limit)
        data = handle.read(limit)
    text = data.decode("utf-8", errors="replace")
    if size > limit and "\n" in text:
        text = text[text.index("\n") + 1 :]  # start at a whole line
    return Tail(path=path, text=text, size=size)


def read_json(path: Path, root: Path | None = None) -> Any:
    """A JSON artifact, or ``None`` when absent, too big or unreadable (the report names it)."""
    handle = _open(path, root, MAX_JSON_BYTES)
    if handle is None:
        return None
    try:
        with handle:
            return textio.parse_json(handle.read())
    except (OSError, ValueError):
        return None


def cut(text: str, limit: int = STEP_OUTPUT_CHARS) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def trajectory_steps(case_dir: CaseDir, outcome: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """The agent's steps: ``trajectory.jsonl`` as it was written, else the outcome's list.

    Outputs are cut to their tails; past ``MAX_STEPS`` the rest is counted, not shown.
    """
    steps: list[dict[str, Any]] = []
    path = case_dir.trajectory
    handle = _open(path, case_dir.run_dir, 1 << 62)
    if handle is not None:
        for step in _jsonl(handle):
            steps.append(step)
    elif outcome:
        listed = outcome.get("trajectory")
        if isinstance(listed, list):
            steps = [step for step in listed if isinstance(step, dict)]
    shown = []
    for step in steps[:MAX_STEPS]:
        shown.append({**step, "output": cut(str(step.get("output") or ""))})
    if len(steps) > MAX_STEPS:
        shown.append({"kind": "note", "command": f"… {len(steps) - MAX_STEPS} more steps"})
    return shown


def _jsonl(binary: BinaryIO) -> Iterator[dict[str, Any]]:
    # Line by line: a long trajectory is never held whole, only its parsed steps (outputs cut).
    with io.TextIOWrapper(binary, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                value = textio.parse_json(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                value["output"] = cut(str(value.get("output") or ""))
                yield value


@dataclass
class CaseEvidence:
    case_id: str
    root: Path
    paths: CaseDir
    facts: dict[str, Any] | None
    outcome: dict[str, Any] | None
    diagnosis: dict[str, Any] | None
    execution: dict[str, Any] | None
    state: dict[str, Any] | None
    gradings: dict[str, dict[str, Any]]
    stages: dict[str, dict[str, Any]]
    steps: list[dict[str, Any]]
    logs: dict[str, Tail] = field(default_factory=dict)
    setup_script: str | None = None
    files: list[Path] = field(default_factory=list)
    interpreter: dict[str, Any] | None = None
    """``environment/interpreter.json``: which Python the probes graded, and how it was found."""

    @property
    def golden_types(self) -> list[str]:
        if self.facts and isinstance(self.facts.get("error_types"), list):
            return [str(t) for t in self.facts["error_types"]]
        if self.diagnosis:
            return [str(t) for t in self.diagnosis.get("golden_types") or []]
        return []

    @property
    def predicted_types(self) -> list[str]:
        if self.diagnosis:
            return [str(t) for t in self.diagnosis.get("predicted_types") or []]
        if self.outcome:
            return [str(p.get("error_type")) for p in self.outcome.get("diagnosis") or []]
        return []


def step_log(case_dir: CaseDir, execution: Mapping[str, Any] | None, step: str) -> Path:
    """Where the replay wrote ``step``'s log: the record names it (an oracle's replay is the
    golden measurement, kept under ``execution/golden/``). A name that is not a plain relative path
    inside the case directory is ignored for the usual place."""
    for record in (execution or {}).get("steps") or []:
        if not isinstance(record, Mapping) or record.get("name") != step:
            continue
        name = record.get("log")
        if isinstance(name, str) and name and not name.startswith("/"):
            parts = Path(name).parts
            if ".." not in parts:
                return case_dir.root.joinpath(*parts)
    return case_dir.execution_log(step)


def load_case(run_dir: Path, case_id: str) -> CaseEvidence:
    case_dir = CaseDir(run_dir, case_id)
    root = case_dir.root
    outcome = read_json(case_dir.agent_outcome, run_dir)
    gradings = {
        path.stem: value
        for path in case_dir.item_gradings()
        if isinstance(value := read_json(path, run_dir), dict)
    }
    stages = {
        path.stem: value
        for path in case_dir.pyramid_files()
        if isinstance(value := read_json(path, run_dir), dict)
    }
    logs: dict[str, Tail] = {}
    execution = _object(read_json(case_dir.execution_record, run_dir))
    candidates = {
        "setup log": step_log(case_dir, execution, "setup"),
        "test log": step_log(case_dir, execution, "test"),
        "agent log": case_dir.agent_log,
    }
    # A research case's final state: the agent's script run to build it (where setup failed).
    for env_log in case_dir.environment_logs():
        candidates[f"final state {env_log.name}"] = env_log
    for probe_log in sorted(case_dir.probes_dir.glob("*")):
        if probe_log.is_file():
            candidates[f"probe {probe_log.name}"] = probe_log
    for name, path in candidates.items():
        tail = read_tail(path, root=run_dir)
        if tail is not None:
            logs[name] = tail
    script = read_tail(case_dir.setup_script, limit=20000, root=run_dir)
    files = (
        sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
        if root.is_dir() and not root.is_symlink()
        else []
    )
    return CaseEvidence(
        case_id=case_id,
        root=root,
        paths=case_dir,
        facts=_object(read_json(case_dir.facts, run_dir)),
        outcome=_object(outcome),
        diagnosis=_object(read_json(case_dir.diagnosis, run_dir)),
        execution=execution,
        state=_object(read_json(case_dir.final_state, run_dir)),
        gradings=gradings,
        stages=stages,
        steps=trajectory_steps(case_dir, outcome if isinstance(outcome, dict) else None),
        logs=logs,
        setup_script=script.text if script is not None else None,
        files=files[:200],
        interpreter=_object(read_json(case_dir.interpreter, run_dir)),
    )


def _object(value: Any) -> dict[str, Any] | None:
    """A record's JSON object; anything else (an edited run's ``true`` or list) is absent."""
    return value if isinstance(value, dict) else None


def efficiency(evidence: CaseEvidence) -> dict[str, float | None]:
    return records.efficiency(
        evidence.outcome,
        state=evidence.state,
        execution=evidence.execution,
        facts=records.recorded_facts(evidence.stages.values()),
    )
