"""The ``replay`` agent: grades recorded predictions without running anything.

``--predictions PATH`` may be:

- a JSONL file of our own ``AgentOutcome`` records (one per line; a later line for the same case
  replaces an earlier one, as ``--resume`` appends);
- a run directory of ours (``cases/*/agent/outcome.json``);
- EnConda-Bench's inference output: the output folder or its ``results/`` folder, laid out as its
  ``OutputManager.save_analysis_result`` writes it (``Inference/core/processors/output_manager.py``
  in TencentYoutuResearch/EnConda-Bench)::

      results/<owner>_<name>_<instance>/<instance>_errors.json
      results/<owner>_<name>_<instance>/<instance>_setup.sh

  where ``<owner>_<name>`` is the ``error_gen_`` folder without its prefix and ``<instance>`` the
  instance folder's name; the JSON holds ``{repo_name, readme_name, timestamp, errors: [
  {error_type, error_description, fix_answer}]}``. Its ``processing_records.jsonl``, beside
  ``results/``, adds token usage and the message of instances that failed.

A prediction is matched to a case by the case's folder (``error_gen_<key>/<instance>``), which is
exact: EnConda-Bench's evaluator matches by substring and so confuses ``readme_1`` with
``readme_10``. Malformed fields are graded as far as possible and listed in the outcome's
``problems``.

A prediction that cannot be read at all (not UTF-8, UTF-16, invalid JSON, nested too deeply, not
an object) is the harness's input problem, not the agent's answer: its case's items are *errors*
(``UnreadablePrediction``) whose message names the file, the line and the reason. A record that
names no case (a JSONL line without a readable ``case_id``) cannot be attributed: a case left
without a prediction says so, and lists those records (``MissingPrediction``), and every such
record is a warning of the run (``input_warnings``: the terminal summary and the run directory's
``input_warnings.json``), whether or not a case misses it. Each bad record costs only its own case.
A UTF-8 byte-order mark is accepted everywhere.

A torn line (cut off mid-write, or otherwise unreadable) whose text still shows
``"case_id": "<id>"`` is that case's record: as the later line it replaces an earlier record for
the case like any other, so the case is an ``UnreadablePrediction`` naming both lines, and the
older record is never graded in its place. A valid line after it replaces it in turn. One that
names a case the run did not grade is a warning of the run, with its file and line.

Every file is read bounded and as a regular file only (a FIFO or ``/dev/zero`` is refused, not
waited on); inside a predictions folder no symbolic link is followed (a link to a host file is
refused, named, and costs only its case).
"""

from __future__ import annotations

import json
import re
import threading
from collections import defaultdict
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..error_types import ERROR_TYPES
from ..errors import HarnessError
from ..textio import decode_utf8, parse_json, read_bounded, read_within
from .base import AgentOutcome, AgentTask, PredictedError, TokenUsage

__all__ = ["MissingPrediction", "ReplayAgent", "UnreadablePrediction"]

ERRORS_SUFFIX = "_errors.json"
SETUP_SUFFIX = "_setup.sh"
REPO_PREFIX = "error_gen_"
RECORDS_FILE = "processing_records.jsonl"
# The fields EnConda-Bench's inference writes, and spellings of the fix it is read from.
_FIX_FIELDS = ("fix_answer", "fix_suggestion", "golden_answer", "fix")
# Unattributable records listed in a MissingPrediction message; the rest are counted.
_LISTED_PROBLEMS = 5
# A prediction far larger than any diagnosis and script is a mistake or an attack.
MAX_PREDICTION_BYTES = 16 * 1024 * 1024


class MissingPrediction(HarnessError):
    """The predictions hold nothing for this case (and what could not be read, if anything)."""

    def __init__(self, case_id: str, path: Path, problems: list[str] | None = None) -> None:
        self.case_id = case_id
        self.path = path
        self.problems = list(problems or [])
        message = f"no recorded prediction for case {case_id} in {path}"
        if self.problems:
            listed = self.problems[:_LISTED_PROBLEMS]
            more = len(self.problems) - len(listed)
            message += (
                f"; {len(self.problems)} record(s) there could not be read or name no case"
                + "".join(f"\n  {problem}" for problem in listed)
                + (f"\n  ... and {more} more" if more else "")
            )
        super().__init__(message)


class UnreadablePrediction(HarnessError):
    """The case's recorded prediction exists but cannot be read: an input problem."""

    def __init__(self, case_id: str, failure: str) -> None:
        self.case_id = case_id
        self.failure = failure
        super().__init__(f"unreadable recorded prediction for case {case_id}: {failure}")


# The case a torn line still names: its ``"case_id": "..."`` pair, read from the raw text.
_NAMED_CASE = re.compile(r'"case_id"\s*:\s*"((?:[^"\\\n]|\\.){1,1000})"')


def _named_case(text: str) -> str | None:
    """The case id a line that is not a readable record still shows, if it shows one."""
    match = _NAMED_CASE.search(text)
    if match is None:
        return None
    try:
        case_id = json.loads(f'"{match.group(1)}"')
    except ValueError:
        return None
    return case_id if isinstance(case_id, str) and case_id else None


def _read_bytes(path: Path, root: Path | None = None) -> bytes:
    """Bounded, a regular file only. The file ``--predictions`` names is the user's own and may
    be a link; a file inside a predictions folder (``root``) is read only with no link on the
    way down from it: the folder may come from anyone, and a link may point at any host file."""
    if root is None:
        return read_bounded(path, MAX_PREDICTION_BYTES)
    return read_within(root, path, MAX_PREDICTION_BYTES)


def _read_json(path: Path, root: Path | None = None) -> Any:
    """A whole JSON file; ``ValueError`` (or ``OSError``) with the reason otherwise."""
    return parse_json(decode_utf8(_read_bytes(path, root)))


def _jsonl_lines(path: Path, root: Path | None = None) -> list[tuple[int, str | None, str, bytes]]:
    """(line number, text or None, why not, the raw line) of each non-blank line: a bad line
    costs only itself, so lines are decoded one by one."""
    lines = []
    data = _read_bytes(path, root)
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise ValueError("UTF-16 text; expected UTF-8")
    data = data.removeprefix(b"\xef\xbb\xbf")
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            lines.append((number, raw.decode("utf-8"), "", raw))
        except UnicodeDecodeError as exc:
            reason = f"not UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1})"
            lines.append((number, None, reason, raw))
    return lines


def _count(value: object, where: str, problems: list[str]) -> int:
    """A token count; anything but a non-negative whole number is reported and counted as 0."""
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    problems.append(f"{where}: expected a whole number of tokens, got {value!r}; counted as 0")
    return 0


def _unknown_type(where: str, error: PredictedError) -> str:
    return (
        f"{where}.error_type: {error.error_type!r} is not one of {', '.join(ERROR_TYPES)}; "
        "kept (graded as a wrong type)"
    )


def _short(error: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in err['loc']) or '<root>'}: {err['msg']}"
        for err in error.errors()[:5]
    )


class _Recorded:
    """What was recorded for one case: an outcome, or why there is none.

    ``unreadable``: the record exists but cannot be read (the harness's input problem);
    otherwise a missing outcome is the agent's (its inference failed).
    """

    def __init__(
        self,
        outcome: AgentOutcome | None,
        source: str,
        failure: str = "",
        *,
        unreadable: bool = False,
    ) -> None:
        self.outcome = outcome
        self.source = source
        self.failure = failure
        self.unreadable = unreadable


class ReplayAgent:
    name = "replay"

    def __init__(self, predictions: Path | str, **_: Any) -> None:
        self.predictions = Path(predictions)
        # Problems that belong to no case (a JSONL line without case_id, a stray file).
        # Filled on first use: the agent loads its predictions lazily, once.
        self.load_problems: list[str] = []
        self._by_case_id: dict[str, _Recorded] = {}
        self._by_folder: dict[tuple[str, str], _Recorded] = {}
        self._by_instance: dict[str, list[_Recorded]] = defaultdict(list)
        self._loaded = False
        self._lock = threading.Lock()
        # The cases this agent was asked for: by default, the run's graded cases.
        self._asked: set[str] = set()

    # ------------------------------------------------------------------------- protocol

    def run(self, task: AgentTask) -> AgentOutcome:
        self._load()
        case = task.case
        self._asked.add(case.id)
        recorded = self._lookup(case.id, case.case_dir)
        if recorded is None:
            raise MissingPrediction(case.id, self.predictions, self.load_problems)
        if recorded.unreadable:
            raise UnreadablePrediction(case.id, recorded.failure)
        if recorded.outcome is None:
            return AgentOutcome(
                case_id=case.id,
                agent=self.name,
                status="no_prediction",
                message=recorded.failure,
                problems=[recorded.failure],
            )
        return recorded.outcome.model_copy(update={"case_id": case.id}, deep=True)

    def input_warnings(self, graded: Collection[str] | None = None) -> list[str]:
        """What of the predictions could not be read or names no case (``file:line: reason``):
        the run reports each, whether or not a case goes without a prediction for it.

        A torn line that still names a case is that case's error, said by its items; one that
        names a case the run did not grade (``graded``: the run's case ids, by default those
        this agent was asked for) would be said nowhere, so it is a warning too."""
        self._load()
        cases = self._asked if graded is None else set(graded)
        unattributed = [
            f"{recorded.failure} (it names case {case_id!r}, which this run did not grade)"
            for case_id, recorded in self._by_case_id.items()
            if recorded.unreadable and case_id not in cases
        ]
        return [*self.load_problems, *unattributed]

    def case_ids(self) -> set[str]:
        """Case ids of the JSONL records (EnConda folders are keyed by folder, not id)."""
        self._load()
        return set(self._by_case_id)

    # ------------------------------------------------------------------------- lookup

    def _lookup(self, case_id: str, case_dir: Path) -> _Recorded | None:
        if case_id in self._by_case_id:
            return self._by_case_id[case_id]
        instance = case_dir.name
        key = case_dir.parent.name.removeprefix(REPO_PREFIX)
        if (key, instance) in self._by_folder:
            return self._by_folder[(key, instance)]
        # Results whose folder does not name the repository: the instance folder's exact name
        # decides, and only when one such prediction has it.
        candidates = self._by_instance.get(instance, [])
        return candidates[0] if len(candidates) == 1 else None

    # ------------------------------------------------------------------------- loading

    def _load(self) -> None:
        with self._lock:
            if self._loaded:
                return
            path = self.predictions
            if path.is_dir():
                self._load_dir(path)
            elif path.exists():
                # A FIFO or a device is refused by the reader with its reason, not waited on.
                self._load_jsonl(path)
            else:
                self.load_problems.append(f"{path}: no such file or directory")
            self._loaded = True

    def _load_dir(self, path: Path) -> None:
        outcomes = sorted(path.glob("cases/*/agent/outcome.json"))
        if outcomes:
            for file in outcomes:
                self._load_outcome_json(file, path)
            return
        results = path / "results" if (path / "results").is_dir() else path
        # Beside results/ (the folder given may be results/ itself).
        records = self._read_processing_records(results.parent / RECORDS_FILE, results.parent)
        found = False
        for file in sorted(results.glob(f"*/*{ERRORS_SUFFIX}")) + sorted(
            results.glob(f"*{ERRORS_SUFFIX}")
        ):
            found = True
            try:
                self._load_enconda(file, results, records)
            except (ValueError, TypeError, RecursionError) as exc:
                # Whatever else a hostile file holds costs its own case, never the run.
                self._register_file(file, results, f"cannot read {file}: {exc!r}")
        jsonl = sorted(path.glob("*.jsonl"))
        for file in jsonl:
            if file.name != RECORDS_FILE:
                found = True
                self._load_jsonl(file, path)
        self._add_failed_records(records)
        if not found and not records:
            self.load_problems.append(
                f"{path}: no predictions found (expected *{ERRORS_SUFFIX} under results/, "
                "an AgentOutcome JSONL, or cases/*/agent/outcome.json)"
            )

    # --- our own outcomes

    def _load_jsonl(self, path: Path, root: Path | None = None) -> None:
        try:
            lines = _jsonl_lines(path, root)
        except (OSError, ValueError) as exc:
            self.load_problems.append(f"{path}: cannot read: {exc}")
            return
        for number, line, reason, raw in lines:
            where = f"{path}:{number}"
            if line is None:
                self._unreadable_record(where, reason, raw.decode("utf-8", errors="replace"))
            else:
                self._add_outcome_record(line, where)

    def _load_outcome_json(self, path: Path, root: Path) -> None:
        try:
            text = decode_utf8(_read_bytes(path, root))
        except (OSError, ValueError) as exc:
            self.load_problems.append(f"{path}: cannot read: {exc}")
            return
        self._add_outcome_record(text, str(path))

    def _unreadable_record(self, where: str, reason: str, text: str) -> None:
        """A record that cannot be read: its case's, when its text still names one (a torn
        line replaces an earlier record as any later line does, and its case is an error
        instead of a silent grade of the older record); otherwise a load problem."""
        case_id = _named_case(text)
        if case_id is None:
            self.load_problems.append(f"{where}: {reason}")
            return
        failure = f"{where}: {reason}"
        previous = self._by_case_id.get(case_id)
        if previous is not None:
            failure += (
                f"; it is this case's later record, so the earlier one ({previous.source}) "
                "is not graded in its place"
            )
        self._by_case_id[case_id] = _Recorded(None, where, failure, unreadable=True)

    def _add_outcome_record(self, text: str, where: str) -> None:
        try:
            data = parse_json(text)
        except ValueError as exc:
            self._unreadable_record(where, str(exc), text)
            return
        if not isinstance(data, dict):
            self.load_problems.append(
                f"{where}: not an AgentOutcome: expected a JSON object, got {type(data).__name__}"
            )
            return
        case_id = data.get("case_id")
        if not isinstance(case_id, str) or not case_id:
            got = "no case_id field" if "case_id" not in data else f"case_id {case_id!r}"
            self.load_problems.append(
                f"{where}: not an AgentOutcome: case_id: expected a non-empty string, got {got}"
            )
            return
        try:
            outcome = AgentOutcome.model_validate(data)
        except ValidationError as exc:
            # _salvage checks each diagnosis entry, its types included.
            outcome = self._salvage(data, where, exc)
        else:
            for index, error in enumerate(outcome.diagnosis):
                if error.error_type not in ERROR_TYPES:
                    outcome.problems.append(_unknown_type(f"{where}: diagnosis[{index}]", error))
        previous = self._by_case_id.get(case_id)
        if previous is not None:
            outcome.problems.append(
                f"{where}: replaces an earlier record for this case ({previous.source})"
            )
        self._by_case_id[case_id] = _Recorded(outcome, where)

    def _salvage(self, data: dict[str, Any], where: str, exc: ValidationError) -> AgentOutcome:
        """Keep every field that is valid on its own; report the rest."""
        problems = [f"{where}: {_short(exc)}"]
        diagnosis = self._diagnosis(
            data.get("diagnosis", []),
            where,
            problems,
            fix_field="fix_suggestion",
            label="diagnosis",
        )
        kept: dict[str, Any] = {"case_id": data["case_id"], "agent": self.name}
        for field in AgentOutcome.model_fields:
            if field in ("case_id", "agent", "diagnosis", "problems") or field not in data:
                continue
            try:
                AgentOutcome.model_validate({"case_id": "x", "agent": "x", field: data[field]})
            except ValidationError:
                continue
            kept[field] = data[field]
        previous = data.get("problems")
        if isinstance(previous, list):
            problems = [str(p) for p in previous] + problems
        return AgentOutcome.model_validate({**kept, "diagnosis": diagnosis, "problems": problems})

    # --- EnConda-Bench's results

    def _read_processing_records(
        self, path: Path, root: Path
    ) -> dict[tuple[str, str], dict[str, Any]]:
        """(repo_name, readme_name) → the last record; unreadable lines are load problems."""
        records: dict[tuple[str, str], dict[str, Any]] = {}
        if not (path.is_symlink() or path.exists()):
            return records
        try:
            lines = _jsonl_lines(path, root)
        except (OSError, ValueError) as exc:
            self.load_problems.append(f"{path}: cannot read: {exc}")
            return records
        for number, line, reason, _raw in lines:
            where = f"{path}:{number}"
            try:
                record = parse_json(line) if line is not None else None
            except ValueError as exc:
                reason = str(exc)
                record = None
            if not isinstance(record, dict):
                self.load_problems.append(f"{where}: {reason or 'expected a JSON object'}")
                continue
            key = (str(record.get("repo_name", "")), str(record.get("readme_name", "")))
            records[key] = record
        return records

    def _register_folder(self, key: str | None, instance: str, recorded: _Recorded) -> None:
        if key is not None:
            self._by_folder[(key, instance)] = recorded
        else:
            self._by_instance[instance].append(recorded)

    @staticmethod
    def _split_folder(folder: str, instance: str) -> str | None:
        """``<key>_<instance>`` → ``<key>``; None when the folder is not named that way."""
        suffix = f"_{instance}"
        if folder.endswith(suffix) and len(folder) > len(suffix):
            return folder[: -len(suffix)]
        return None

    def _place(self, file: Path, results: Path) -> tuple[str, str, str | None]:
        """(instance, folder, repository key) of an ``_errors.json`` file."""
        instance = file.name[: -len(ERRORS_SUFFIX)]
        folder = file.parent.name if file.parent != results else ""
        key = self._split_folder(folder, instance) if folder else None
        return instance, folder, key

    def _register_file(self, file: Path, results: Path, failure: str) -> None:
        instance, _folder, key = self._place(file, results)
        self._register_folder(key, instance, _Recorded(None, str(file), failure, unreadable=True))

    def _load_enconda(
        self, file: Path, results: Path, records: dict[tuple[str, str], dict[str, Any]]
    ) -> None:
        instance, folder, key = self._place(file, results)
        where = str(file)
        problems: list[str] = []
        if folder and key is None:
            problems.append(
                f"{where}: folder {folder!r} is not named <owner>_<name>_{instance}; "
                "matched by instance name alone"
            )
        try:
            data = _read_json(file, results)
        except (OSError, ValueError) as exc:
            self._register_file(file, results, f"cannot read {file}: {exc}")
            return
        if not isinstance(data, dict):
            failure = f"cannot read {file}: expected a JSON object, got {type(data).__name__}"
            self._register_file(file, results, failure)
            return
        readme_name = data.get("readme_name")
        if readme_name is not None and readme_name != instance:
            problems.append(
                f"{where}: readme_name {readme_name!r} differs from the file name ({instance!r}); "
                "the file name is used"
            )
        diagnosis = self._diagnosis(data.get("errors"), where, problems, fix_field="fix_answer")
        setup = file.with_name(instance + SETUP_SUFFIX)
        script = ""
        if setup.is_symlink() or setup.exists():
            try:
                # Never through a link: the script would be read into artifacts and run as the
                # agent's setup. Bounded: a 1 GiB script is not a prediction. One that is there
                # and cannot be read is the input's problem, not an empty answer of the agent's.
                data = _read_bytes(setup, results)
                script = data.decode("utf-8", errors="replace")
            except (OSError, ValueError) as exc:
                self._register_file(file, results, f"cannot read {setup}: {exc}")
                return
        elif isinstance(data.get("shell_script"), str):
            script = data["shell_script"]
        else:
            problems.append(f"{setup}: no setup script recorded")
        record = records.get((folder, instance), {})
        usage = record.get("token_usage") if isinstance(record, dict) else None
        tokens = TokenUsage()
        if isinstance(usage, dict):
            at = f"{RECORDS_FILE} ({folder}/{instance}): token_usage"
            tokens = TokenUsage(
                prompt_tokens=_count(usage.get("input_tokens"), f"{at}.input_tokens", problems),
                completion_tokens=_count(
                    usage.get("output_tokens"), f"{at}.output_tokens", problems
                ),
                total_tokens=_count(usage.get("total_tokens"), f"{at}.total_tokens", problems),
                calls=1,
            )
        elif usage is not None:
            problems.append(
                f"{RECORDS_FILE} ({folder}/{instance}): token_usage: expected an object, "
                f"got {type(usage).__name__}; not counted"
            )
        outcome = AgentOutcome(
            case_id=f"{folder or '?'}/{instance}",
            agent=self.name,
            diagnosis=diagnosis,
            setup_script=script,
            usage=tokens,
            status="completed",
            problems=problems,
        )
        self._register_folder(key, instance, _Recorded(outcome, where))

    def _add_failed_records(self, records: dict[tuple[str, str], dict[str, Any]]) -> None:
        """Instances whose inference failed: EnConda-Bench writes a record but no files."""
        for (repo_name, readme_name), record in records.items():
            if record.get("success", True) or not readme_name:
                continue
            # A failed record names the repository folder (``error_gen_<key>``) itself.
            key = repo_name.removeprefix(REPO_PREFIX)
            if (key, readme_name) in self._by_folder:
                continue
            failure = f"inference failed: {record.get('error_message') or 'no message'}"
            recorded = _Recorded(None, RECORDS_FILE, failure)
            self._register_folder(key, readme_name, recorded)

    # --- diagnosis entries

    def _diagnosis(
        self, raw: object, where: str, problems: list[str], fix_field: str, label: str = "errors"
    ) -> list[PredictedError]:
        if raw is None:
            problems.append(f"{where}: no {label} list; nothing diagnosed")
            return []
        if not isinstance(raw, list):
            problems.append(f"{where}: {label}: expected a list, got {type(raw).__name__}")
            return []
        diagnosis: list[PredictedError] = []
        for index, entry in enumerate(raw):
            at = f"{where}: {label}[{index}]"
            if not isinstance(entry, dict):
                problems.append(f"{at}: expected an object, got {type(entry).__name__}; skipped")
                continue
            fields: dict[str, str] = {}
            for field in ("error_type", "error_description"):
                fields[field] = self._text(entry.get(field), f"{at}.{field}", problems)
            name = next((n for n in (fix_field, *_FIX_FIELDS) if n in entry), fix_field)
            if name != fix_field:
                problems.append(f"{at}: fix read from {name!r} (expected {fix_field!r})")
            fields["fix_suggestion"] = self._text(entry.get(name), f"{at}.{name}", problems)
            error = PredictedError(**fields)
            # A missing type was reported above; an unknown one is kept and graded as wrong.
            if error.error_type and error.error_type not in ERROR_TYPES:
                problems.append(_unknown_type(at, error))
            diagnosis.append(error)
        return diagnosis

    @staticmethod
    def _text(value: object, where: str, problems: list[str]) -> str:
        if value is None:
            problems.append(f"{where}: missing")
            return ""
        if isinstance(value, str):
            return value
        problems.append(f"{where}: expected text, got {type(value).__name__}; converted")
        return json.dumps(value) if isinstance(value, dict | list) else str(value)
