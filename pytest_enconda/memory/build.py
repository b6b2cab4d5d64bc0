"""``memory build``: triples from the trajectories of run directories (and mini-swe-agent's own
trajectory files), into one memory file."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .extract import llm_triples, offline_triples
from .store import MemoryStore, Provenance
from .trajectories import read_trace

# The heuristic agent's first note names the project: "project ['confmerge']".
# The list stops at the next bracket: from every "project [" the scan ran to the text's end.
_PROJECT_NOTE = re.compile(r"project \[([^\[\]]*)\]")


@dataclass
class BuildReport:
    cases: int = 0
    trajectories: int = 0
    triples: int = 0
    new: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass
class Source:
    trajectory: Path
    case_id: str
    run: str
    agent: str = ""
    model: str = ""
    repository: str = ""
    root: Path | None = None  # the run directory it lies in: no link below it is followed


# An imported instance's id: ``owner/name/instance`` (``asdf-format/asdf/error_readme_1``).
_IMPORTED_ID = re.compile(r"^(?P<repository>[A-Za-z0-9._-]+/[A-Za-z0-9._-]+)/[^/]+$")


def id_of_folder(name: str) -> str:
    """A case folder's id where no record names it (a run killed during its agent keeps only the
    trajectory): ``artifacts.safe_name`` undone (``a+2fb+2fc`` is ``a/b/c``, so the repository
    is still known), or the name itself where it does not undo (a shortened name)."""
    from ..artifacts import safe_name

    raw = re.sub(rb"\+([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), name.encode())
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return name
    return text if safe_name(text) == name else name


def repository_of(case_id: str, case_json: dict[str, Any] | None) -> str:
    """The case's repository: as its record names it, else read from the case id: an imported
    instance's ``owner/name`` (its last part names the instance, not the repository), a shipped
    case's id without its error suffix (``filesniff-e4-e6`` is the repository ``filesniff``)."""
    for key in ("repository", "repo"):
        value = (case_json or {}).get(key)
        if isinstance(value, str) and value:
            return value
        if isinstance(value, dict):
            for sub in ("url", "path", "name"):
                if value.get(sub):
                    return str(value[sub])
    imported = _IMPORTED_ID.match(case_id)
    if imported:
        return imported.group("repository")
    return re.sub(r"(-e\d+)+$", "", case_id.split("/")[-1]) or case_id


def _json(path: Path, root: Path) -> dict[str, Any] | None:
    """A run directory's record, or None: bounded, regular, and not behind a link."""
    from ..records import MAX_RECORD_BYTES, read_json_file

    try:
        value = read_json_file(path, limit=MAX_RECORD_BYTES, root=root)
    except ValueError:  # ArtifactError: absent, linked, special, oversized or not JSON
        return None
    return value if isinstance(value, dict) else None


def sources(paths: Sequence[Path]) -> list[Source]:
    """Every trajectory under ``paths``: run directories (``cases/*/agent/trajectory.jsonl``)
    and mini-swe-agent files (``*.traj.json``, or a file given by name)."""
    from ..records import CaseDir, RunDir

    found: list[Source] = []
    for path in paths:
        if path.is_file():
            found.append(Source(path, path.stem.removesuffix(".traj"), str(path.parent)))
            continue
        run = RunDir(path)
        if run.cases_dir.is_dir():
            # A linked case folder may lead anywhere on the host: not walked into.
            folders = (p for p in run.cases_dir.iterdir() if p.is_dir() and not p.is_symlink())
            for folder in sorted(folders):
                case_json = _json(folder / "case.json", path)
                # case.json is written with the grading: a run stopped after the agent has
                # only the agent's outcome, which names the case too. The folder is the
                # escaped id (``a+2fb+2fc``), so its name alone would lose the repository.
                case = CaseDir.at(folder)
                outcome = _json(case.agent_outcome, path) or {}
                case_id = str((case_json or {}).get("case_id") or outcome.get("case_id") or "")
                if not case_id or run.case(case_id).root != folder:
                    case_id = id_of_folder(folder.name)  # a record naming another is not believed
                trajectory = case.trajectory
                # A link or FIFO there is listed, and refused by name when read.
                if not (trajectory.is_symlink() or trajectory.exists()):
                    continue
                found.append(Source(trajectory, case_id, str(path),
                                    str(outcome.get("agent") or ""),
                                    str(outcome.get("model") or ""),
                                    repository_of(case_id, case_json), root=path))  # fmt: skip
        for traj in sorted(path.rglob("*.traj.json")):
            found.append(Source(traj, traj.name.removesuffix(".traj.json"), str(path),
                                "mini-swe-agent", root=path))  # fmt: skip
    return found


def build(
    paths: Sequence[Path],
    out: Path,
    extractor: str = "offline",
    complete: Callable[[list[dict[str, str]]], str] | None = None,
) -> BuildReport:
    """Add the triples of every trajectory under ``paths`` to the memory file ``out``."""
    report = BuildReport()
    found: list[Source] = []
    for path in paths:
        of_path = sources([path])
        if not of_path:
            # Said, not passed over: a path given by mistake (a FIFO, an empty folder) would
            # otherwise look like a run with nothing to learn from.
            report.problems.append(
                f"{path}: no trajectory (no cases/*/agent/trajectory.jsonl, no *.traj.json)"
            )
        found += of_path
    with MemoryStore(out) as store:
        store.set_meta("extractor", extractor)
        for source in found:
            report.trajectories += 1
            try:
                trace = read_trace(source.trajectory, source.root)
            except (OSError, ValueError) as exc:
                report.problems.append(f"{source.trajectory}: {exc}")
                continue
            repository = source.repository or repository_of(source.case_id, None)
            names = [repository.split("/")[-1]]
            for step in trace.steps[:3]:
                match = _PROJECT_NOTE.search(step.thought)
                if step.kind == "static" and match:
                    names += re.findall(r"'([^']+)'", match.group(1))
            if extractor == "offline":
                triples = offline_triples(trace, names)
            else:
                assert complete is not None, "an llm extractor needs a model"
                triples = llm_triples(trace, complete, names)
            report.cases += 1
            provenance = Provenance(source.case_id, source.run, source.agent,
                                    source.model or trace.model, repository)  # fmt: skip
            for triple in triples:
                _, new = store.add(triple, provenance)
                report.triples += 1
                report.new += int(new)
    return report
