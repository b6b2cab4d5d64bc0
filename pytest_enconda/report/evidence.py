"""The bounded readers of a run's case files: log tails, JSON artifacts, the trajectory
(``runrecords`` reads each case's records through them, once per case).

Every log is read from its end with ``seek`` (never whole): a 50 MB agent log costs the report
``TAIL_BYTES``, and the full file stays one link away. JSON artifacts are read only below
``MAX_JSON_BYTES``; a bigger one is named as too big instead of loaded.
"""

from __future__ import annotations

import io
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from pydantic import ValidationError

from .. import textio
from ..agents.base import Step
from ..records import CaseDir

if TYPE_CHECKING:
    from ..agents.base import AgentOutcome
    from ..probing.execution import ExecutionRecord

TAIL_BYTES = 6000
STEP_OUTPUT_CHARS = 1500
MAX_STEPS = 200
# One trajectory line: a step with its output is far less; a longer line (a file with no
# newline) is passed over without being held.
MAX_LINE_CHARS = 8 << 20
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


def trajectory_steps(case_dir: CaseDir, outcome: AgentOutcome | None) -> list[Step]:
    """The agent's steps: ``trajectory.jsonl`` as it was written, else the outcome's list.

    Outputs are cut to their tails; past ``MAX_STEPS`` the rest is counted, not shown. A line
    that is not a step (an edited file) is passed over.
    """
    handle = _open(case_dir.trajectory, case_dir.run_dir, 1 << 62)
    steps: Iterator[Step] = iter(())
    if handle is not None:
        steps = _jsonl(handle)
    elif outcome is not None:
        steps = iter(outcome.trajectory)
    # Only the steps shown are kept; the rest are counted as they stream past.
    head = itertools.islice(steps, MAX_STEPS)
    shown = [step.model_copy(update={"output": cut(step.output)}) for step in head]
    more = sum(1 for _ in steps)
    if more:
        shown.append(Step(kind="note", command=f"… {more} more steps"))
    return shown


def _lines(handle: io.TextIOWrapper, limit: int = MAX_LINE_CHARS) -> Iterator[str]:
    """The lines of ``handle`` of at most ``limit`` characters; a longer one is read past a
    chunk at a time, never held."""
    while line := handle.readline(limit):
        if len(line) == limit and not line.endswith("\n"):
            while (rest := handle.readline(limit)) and not rest.endswith("\n"):
                pass
            continue
        yield line


def _jsonl(binary: BinaryIO) -> Iterator[Step]:
    # Line by line: a long trajectory is never held whole, only its parsed steps (outputs cut).
    with io.TextIOWrapper(binary, encoding="utf-8", errors="replace") as handle:
        for raw in _lines(handle):
            line = raw.strip()
            if not line:
                continue
            try:
                value = textio.parse_json(line)
            except ValueError:
                continue
            if not isinstance(value, dict):
                continue
            value["output"] = cut(str(value.get("output") or ""))
            try:
                yield Step.model_validate(value)
            except ValidationError:
                continue


def step_log(case_dir: CaseDir, execution: ExecutionRecord | None, step: str) -> Path:
    """Where the replay wrote ``step``'s log: the record names it (an oracle's replay is the
    golden measurement, kept under ``execution/golden/``). A name that is not a plain relative path
    inside the case directory is ignored for the usual place."""
    for record in execution.steps if execution is not None else []:
        if record.name != step:
            continue
        name = record.log
        if name and not name.startswith("/"):
            parts = Path(name).parts
            if ".." not in parts:
                return case_dir.root.joinpath(*parts)
    return case_dir.execution_log(step)
