"""The run directory's records: where every file of a run lives, and how the shared ones are read.

``RunDir`` and ``CaseDir`` are the only places a run path is spelled, so a reader (the summary,
``regrade``, ``compare``, the review report) and the writer (the live run) cannot disagree on a
name. ``results.jsonl`` has one reader and one writer here (``ResultsFile``), rows typed as
``ResultRow``; ``run.json``, ``summary.json`` and ``case.json`` are read through bounded readers
whose errors name the file and the field (``efficiency`` reads a case's time to ready, tokens,
cost and sizes from them).

Imported lazily by the plugin (pydantic stays out of a dormant pytest run).
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from . import textio
from .artifacts import ArtifactError, atomic_write_text, safe_name

M = TypeVar("M", bound=BaseModel)

MAX_RESULTS_BYTES = 256 << 20
MAX_RESULT_LINE_BYTES = 1 << 20
MAX_RECORD_BYTES = 64 << 20
MESSAGE_CHARS = 4000
HEADLINE_CHARS = 500


def failure_headline(report: Any) -> str | None:
    """One line saying why a test (a user's probe) failed, in pytest's ``file:line: message``
    form with the exception's own message: ``probe_x.py:6: AssertionError: the tokenizer is
    not installed``; for a bare ``assert`` pytest's explanation (``assert 3 == 4``). A message
    of several lines (a command's output) gives its first and last. ``None`` when the failure
    is not an exception's (a harness item's own message)."""
    longrepr = getattr(report, "longrepr", None)
    crash = getattr(longrepr, "reprcrash", None)
    if crash is None or not str(getattr(crash, "message", "")).strip():
        return None
    if getattr(getattr(longrepr, "reprtraceback", None), "style", None) == "value":
        # ``pytest.fail(msg, pytrace=False)`` (a stage's own probe): the text is the message.
        return None
    lines = [line.strip() for line in str(crash.message).splitlines() if line.strip()]
    # pytest adds its explanation (``assert ...``, ``+  where ...``) after the user's message.
    own = []
    for line in lines:
        if own and line.startswith("assert "):
            break
        own.append(line)
    text = own[0] if len(own) == 1 else f"{own[0]} … {own[-1]}"
    headline = f"{Path(str(crash.path)).name}:{crash.lineno}: {text}"
    return headline if len(headline) <= HEADLINE_CHARS else headline[: HEADLINE_CHARS - 1] + "…"


# ----------------------------------------------------------------------------- paths


class CaseDir:
    """The fixed artifact folder of one case inside a run directory."""

    def __init__(self, run_dir: Path, case_id: str) -> None:
        self.run_dir = Path(run_dir)
        self.case_id = case_id
        self.root = self.run_dir / "cases" / safe_name(case_id)

    @classmethod
    def at(cls, folder: Path, case_id: str = "") -> CaseDir:
        """The case folder ``folder`` as it lies in a run read back, whatever id its name
        escapes (a shortened name cannot be turned back into its id)."""
        case = cls.__new__(cls)
        case.root = Path(folder)
        case.run_dir = case.root.parent.parent
        case.case_id = case_id
        return case

    # -- the agent
    @property
    def agent_dir(self) -> Path:
        return self.root / "agent"

    @property
    def agent_outcome(self) -> Path:
        return self.agent_dir / "outcome.json"

    @property
    def setup_script(self) -> Path:
        return self.agent_dir / "setup.sh"

    @property
    def agent_log(self) -> Path:
        return self.agent_dir / "agent.log"

    @property
    def trajectory(self) -> Path:
        """The agent's steps as JSONL (model turns, commands, outputs, exit codes, tokens)."""
        return self.agent_dir / "trajectory.jsonl"

    @property
    def agent_runs(self) -> Path:
        """One line per process that started the agent (a second line means it ran twice)."""
        return self.agent_dir / "runs.jsonl"

    # -- execution (setup script replayed, tests run)
    @property
    def execution_record(self) -> Path:
        return self.root / "execution" / "record.json"

    def execution_log(self, step: str) -> Path:
        return self.root / "execution" / f"{step}.log"

    @property
    def junit(self) -> Path:
        return self.root / "execution" / "junit.xml"

    @property
    def golden_dir(self) -> Path:
        """The golden setup measured on this machine (the execution budgets' calibration)."""
        return self.root / "execution" / "golden"

    @property
    def golden_record(self) -> Path:
        return self.golden_dir / "timing.json"

    # -- grading
    @property
    def grading_dir(self) -> Path:
        return self.root / "grading"

    def grading(self, item: str) -> Path:
        return self.grading_dir / f"{item}.json"

    @property
    def diagnosis(self) -> Path:
        return self.grading("diagnosis")

    def item_gradings(self) -> list[Path]:
        """Per-item verdicts (the shared diagnosis grade is not an item's)."""
        return [p for p in sorted(self.grading_dir.glob("*.json")) if p.stem != "diagnosis"]

    @property
    def facts(self) -> Path:
        """``case.json``: the golden answer and reference re-grading needs."""
        return self.root / "case.json"

    # -- a research case's final state and probes
    @property
    def environment_dir(self) -> Path:
        return self.root / "environment"

    @property
    def final_state(self) -> Path:
        return self.environment_dir / "state.json"

    def environment_log(self, name: str) -> Path:
        return self.environment_dir / f"{name}.log"

    def environment_logs(self) -> list[Path]:
        return sorted(self.environment_dir.glob("*.log"))

    @property
    def interpreter(self) -> Path:
        """Which Python the probes graded and how it was found (``GradedInterpreter``)."""
        return self.environment_dir / "interpreter.json"

    @property
    def environment_report(self) -> Path:
        return self.environment_dir / "report.json"

    def pyramid(self, stage: str) -> Path:
        return self.root / "pyramid" / f"{stage}.json"

    def pyramid_files(self) -> list[Path]:
        return sorted((self.root / "pyramid").glob("*.json"))

    @property
    def probes_dir(self) -> Path:
        return self.root / "probes"

    def relative(self, path: Path) -> str:
        """``path`` as saved in a record: relative to the case folder."""
        return str(path.relative_to(self.root))


class RunDir:
    """The files of one run directory (run level); ``case(id)`` gives a case's."""

    # Rewritten by a regrade from the graded results, never copied from the original run.
    REGENERATED = (
        "judge-stats",
        "summary.json",
        "summary.md",
        "tables.md",
        "results.csv",
        "report.html",
    )

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def case(self, case_id: str) -> CaseDir:
        return CaseDir(self.root, case_id)

    @property
    def run_id(self) -> str:
        """The run's label on its containers and images: the folder's name and a digest of its
        path, so two runs in folders of one name (``run``, a date) never count each other's."""
        digest = hashlib.sha256(str(self.root.resolve()).encode("utf-8")).hexdigest()[:8]
        return f"{self.root.name}-{digest}"

    @property
    def results(self) -> Path:
        return self.root / "results.jsonl"

    @property
    def results_file(self) -> ResultsFile:
        return ResultsFile(self.results)

    @property
    def run_info(self) -> Path:
        return self.root / "run.json"

    @property
    def summary_json(self) -> Path:
        return self.root / "summary.json"

    @property
    def summary_md(self) -> Path:
        return self.root / "summary.md"

    @property
    def tables_md(self) -> Path:
        return self.root / "tables.md"

    @property
    def results_csv(self) -> Path:
        return self.root / "results.csv"

    @property
    def report_html(self) -> Path:
        return self.root / "report.html"

    @property
    def harness_log(self) -> Path:
        return self.root / "logs" / "harness.log"

    @property
    def judge_stats_dir(self) -> Path:
        return self.root / "judge-stats"

    def judge_stats(self, name: str) -> Path:
        return self.judge_stats_dir / f"{name}.json"

    @property
    def import_problems(self) -> Path:
        return self.root / "import_problems.json"

    @property
    def input_warnings(self) -> Path:
        """Input the run read past (replay records naming no case, result lines ``--resume``
        dropped): ``[{"file", "reason"}]``, also shown in the terminal summary."""
        return self.root / "input_warnings.json"

    @property
    def cases_dir(self) -> Path:
        return self.root / "cases"

    def foreign_entries(self, limit: int = 10) -> list[str]:
        """Links and special files in the run directory (the first ``limit``, each with what it
        is). The harness writes neither, so a run holding one was edited or made by someone
        else: ``--resume`` would follow the link to a host file or hang on the FIFO. Walked
        without following links and without opening anything."""
        found: list[str] = []
        for current, dirs, files in os.walk(self.root):
            for name in [*dirs, *files]:
                path = Path(current, name)
                kind = _foreign_kind(path)
                if kind is not None:
                    found.append(f"{path} ({kind})")
                    if len(found) >= limit:
                        return found
            dirs[:] = [name for name in dirs if not Path(current, name).is_symlink()]
        return found

    @property
    def cost_ledger(self) -> Path:
        """Run-wide model spending shared by xdist workers (``--max-cost``)."""
        return self.root / "cost-ledger.json"


def _foreign_kind(path: Path) -> str | None:
    try:
        mode = path.lstat().st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
        return None
    return "a FIFO" if stat.S_ISFIFO(mode) else "not a regular file"


# ----------------------------------------------------------------------------- bounded readers


def read_json_file(path: Path, *, limit: int = MAX_RECORD_BYTES, root: Path | None = None) -> Any:
    """A JSON document; an absent, oversized, linked, special or malformed file raises
    ``ArtifactError`` naming it (a run directory is input like any other: copied, edited,
    truncated, or made by someone else). With ``root``, no link on the way down from it is
    followed either: a run directory's records never read a host file."""
    try:
        data = textio.read_input(path, limit, root)
    except ValueError as exc:
        raise ArtifactError(f"{path}: cannot be read: {exc}") from None
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    try:
        return textio.parse_json(textio.decode_utf8(data))
    except ValueError as exc:
        reason = str(exc).removeprefix("not valid JSON: ")
        raise ArtifactError(f"{path}: not JSON: {reason}") from None


SHOWN_PROBLEMS = 10


def _problems(exc: ValidationError) -> str:
    """The first invalid fields: a record with 20,000 wrong entries is one message, not 20,000."""
    errors = exc.errors()
    shown = "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
        for err in errors[:SHOWN_PROBLEMS]
    )
    more = len(errors) - SHOWN_PROBLEMS
    return shown + (f"; and {more} more" if more > 0 else "")


def read_record(
    path: Path, model: type[M], *, limit: int = MAX_RECORD_BYTES, root: Path | None = None
) -> M:
    """``path`` validated as ``model``; errors name the file and each invalid field."""
    data = read_json_file(path, limit=limit, root=root)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ArtifactError(f"{path}: not a valid {model.__name__}: {_problems(exc)}") from None


class RunInfo(BaseModel):
    """``run.json``: what ran, with which settings; other fields are kept as they are."""

    model_config = ConfigDict(extra="allow")

    tool: str = "pytest-enconda"
    version: str | None = None
    started: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    agent: dict[str, Any] | str | None = None
    argv: list[str] = Field(default_factory=list)
    subset: str | None = Field(
        default=None, description="the verified-subset file the summary used, if any"
    )
    regraded_from: dict[str, Any] | None = None


class RunSummary(BaseModel):
    """``summary.json``'s top-level fields every reader relies on; the rest is kept as is."""

    model_config = ConfigDict(extra="allow")

    agent: str | None = None
    model: str | None = None
    judge_name: str | None = None
    cases: int = 0
    run_dir: str | None = None
    harness_version: str | None = None
    case_set: dict[str, Any] | None = None
    items: dict[str, dict[str, int]] = Field(default_factory=dict)
    subsets: dict[str, dict[str, Any]] | None = None
    regraded_from: str | None = None


class CaseFacts(BaseModel):
    """``case.json``: what re-grading and the review report need of a case."""

    model_config = ConfigDict(extra="allow")

    case_id: str
    repository: str | None = None  # RepoSource.name: the memory's leakage guard reads it
    level: int | None = None
    error_types: list[str] = Field(default_factory=list)
    golden: dict[str, Any] = Field(default_factory=dict)
    reference: dict[str, Any] | None = None
    absent_files: list[str] = Field(
        default_factory=list,
        description="files the repository's snapshot lacked (the first 200, sorted): the agent's "
        "checkout went without them, as the reference's did",
    )
    absent_count: int = Field(default=0, ge=0, description="how many files it lacked in all")
    spec: dict[str, Any] | None = Field(
        default=None,
        description="the case's spec as loaded (``CaseSpec``); runs from before kept none",
    )
    variant: Literal["erroneous", "original"] = "erroneous"


def read_run_info(run: RunDir) -> RunInfo | None:
    """``run.json``, or ``None`` when the run has none (it ran no item)."""
    return read_record(run.run_info, RunInfo, root=run.root) if _present(run.run_info) else None


def read_summary(run: RunDir) -> dict[str, Any] | None:
    """``summary.json`` as written (validated for its known fields), or ``None`` if absent."""
    if not _present(run.summary_json):
        return None
    summary = read_record(run.summary_json, RunSummary, root=run.root)
    return summary.model_dump(mode="json", exclude_unset=True)


def read_case_facts(case: CaseDir) -> CaseFacts | None:
    return read_record(case.facts, CaseFacts, root=case.run_dir) if _present(case.facts) else None


def _present(path: Path) -> bool:
    """Something is there: a link or a FIFO is present (and refused by the reader, by name),
    not silently absent as ``is_file()`` would make it."""
    return path.is_symlink() or path.exists()


# ----------------------------------------------------------------------------- results.jsonl

Outcome = Literal["passed", "failed", "skipped", "error"]


class ResultRow(BaseModel):
    """One line of ``results.jsonl``: an item's outcome (keyed by case and item)."""

    model_config = ConfigDict(extra="allow")

    case: str
    item: str
    level: int | None = None
    outcome: Outcome
    message: str = ""
    headline: str = Field(
        default="", description="a failed test's one-line cause; its traceback is the message"
    )
    duration: float = 0.0
    nodeid: str = ""
    stage: str | None = None
    timed_out: bool = Field(
        default=False,
        description="a failed item whose step ran out of its calibrated budget (``label``)",
    )
    not_finished: bool = Field(
        default=False,
        description="a skipped item whose case the run-wide cost ceiling (--max-cost) stopped "
        "before it finished or started (``label``); --resume runs it again",
    )

    @property
    def key(self) -> tuple[str, str]:
        return (self.case, self.item)

    @property
    def label(self) -> str:
        """The outcome as the records count it: a timed-out failure is ``timeout``, apart from
        plain failures (pytest still counts it among its failures); an item the cost ceiling
        kept from finishing is ``not_finished``, apart from other skips."""
        if self.outcome == "skipped" and self.not_finished:
            return "not_finished"
        return "timeout" if self.outcome == "failed" and self.timed_out else self.outcome

    def to_json(self) -> dict[str, Any]:
        """The line's object: ``stage`` only on probe rows, ``timed_out`` only on timeouts,
        ``not_finished`` only on items the cost ceiling stopped, as rows have always been
        written."""
        data = self.model_dump(mode="json")
        if data.get("stage") is None:
            data.pop("stage", None)
        if not data.get("timed_out"):
            data.pop("timed_out", None)
        if not data.get("not_finished"):
            data.pop("not_finished", None)
        return data


Results = dict[tuple[str, str], ResultRow]
"""A run's result rows by (case, item), typed from the writer to the last renderer."""


def failure_message(case_id: str, item: str, message: str) -> str:
    """A failed item's message as its report shows it (and ``results.jsonl`` keeps it): the
    live run and a regrade must write the same line for the same verdict."""
    return f"{case_id}::{item}: {message}"


@dataclass
class ResultsRead:
    """Rows keyed by (case, item), a later line replacing an earlier one; ``problems`` names each
    line that could not be read (``file:line: reason``)."""

    rows: Results = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


class ResultsFile:
    """The one reader and writer of ``results.jsonl``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def append(self, row: ResultRow) -> None:
        """One line; a single write() of a short line is atomic enough for one writer."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(_line(row.to_json()))
            handle.flush()
            os.fsync(handle.fileno())

    def rewrite(self, rows: Iterable[ResultRow]) -> None:
        atomic_write_text(self.path, "".join(_line(row.to_json()) for row in rows))

    def read(self) -> ResultsRead:
        read = ResultsRead()
        try:
            handle = textio.open_regular(self.path, MAX_RESULTS_BYTES, follow_links=False)
        except (OSError, ValueError) as exc:
            read.problems.append(f"{self.path}: cannot be read: {exc}")
            return read
        with handle:
            number = 0
            # A line is read to its bound, never whole: one huge line costs a megabyte.
            while line := handle.readline(MAX_RESULT_LINE_BYTES + 1):
                number += 1
                if len(line) > MAX_RESULT_LINE_BYTES and not line.endswith(b"\n"):
                    while (rest := handle.readline(MAX_RESULT_LINE_BYTES)) and not rest.endswith(
                        b"\n"
                    ):
                        pass
                    read.problems.append(
                        f"{self.path}:{number}: a line over "
                        f"{MAX_RESULT_LINE_BYTES} bytes is not a result"
                    )
                    continue
                if not line.strip():
                    continue
                try:
                    row = ResultRow.model_validate_json(line)
                except ValidationError as exc:
                    read.problems.append(
                        f"{self.path}:{number}: not a result line ({_problems(exc)})"
                    )
                    continue
                read.rows[row.key] = row
        return read


def _line(row: Mapping[str, Any]) -> str:
    return json.dumps(row, sort_keys=True) + "\n"
