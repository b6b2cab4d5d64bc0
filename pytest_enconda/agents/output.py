"""The output contract every agent that works in the task container follows.

Inside the container the agent leaves, in ``/enconda/output/``:

- ``diagnosis.json``: ``{"detected_errors": [{"error_type", "error_description",
  "fix_suggestion"}]}`` (EnConda-Bench's analysis object) or a bare list of those objects;
- ``setup.sh``: its final setup script, graded by Pass@1 in a fresh container;
- ``report.json``: for research tasks, the self-report (a JSON object);
- ``test_command``: for AEC tasks, the command that runs the repository's tests (text; graded
  after ``setup.sh`` in a fresh container, with the variables the setup exported).

Which files a task kind's agents leave is the kind's ``outputs`` (``kinds.TaskKind``).

The harness copies the folder out when the agent stops. A missing or malformed file is recorded
in ``AgentOutcome.output_problems`` under the file's name with the reason, and fails the aspects
it feeds; it never stops the run.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .. import textio
from ..errors import HarnessError
from .base import AgentOutcome, PredictedError

OUTPUT_DIR = "/enconda/output"
DIAGNOSIS = "diagnosis.json"
SETUP = "setup.sh"
REPORT = "report.json"
TEST_COMMAND = "test_command"
# A test command is a line or a short script, not a file's worth.
MAX_TEST_COMMAND_CHARS = 20_000
MAX_FILE_BYTES = 2_000_000
# The folder as a whole: its files are a few small ones. A box's 3 GiB file is refused on the
# archive's word before a byte of it is copied (the files are then copied one by one).
MAX_FOLDER_BYTES = 16 * MAX_FILE_BYTES


class DiagnosisFile(BaseModel):
    """``diagnosis.json``: the paper's analysis object."""

    model_config = ConfigDict(extra="ignore")

    detected_errors: list[PredictedError] = Field(default_factory=list)


class Outputs(BaseModel):
    """What the agent left, read and checked; ``problems`` maps a file name to what is wrong."""

    diagnosis: list[PredictedError] = Field(default_factory=list)
    setup_script: str = ""
    test_command: str = ""
    self_report: dict[str, Any] | None = None
    problems: dict[str, str] = Field(default_factory=dict)

    def apply_to(self, outcome: AgentOutcome) -> None:
        """The outcome gets what the agent left, and the problems of what it left malformed."""
        outcome.diagnosis = self.diagnosis
        outcome.setup_script = self.setup_script
        outcome.test_command = self.test_command
        outcome.self_report = self.self_report
        outcome.output_problems = self.problems


def _validation_details(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}" for err in exc.errors()
    )


def _decode(name: str, data: bytes) -> str:
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{name}: {len(data)} bytes, more than the {MAX_FILE_BYTES} allowed")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 text (byte {exc.start})") from None


def _load_json(name: str, text: str) -> Any:
    try:
        return textio.parse_json(text)
    except textio.JsonError as exc:
        if not exc.lineno:  # nested too deeply, a number past the digit limit
            raise ValueError(f"{name}: {exc.msg}") from None
        raise ValueError(f"{name}: line {exc.lineno} column {exc.colno}: {exc.msg}") from None


def parse_diagnosis(data: bytes | str, name: str = DIAGNOSIS) -> list[PredictedError]:
    """The predicted errors in a diagnosis file; ``ValueError`` names the file, line or field."""
    text = data if isinstance(data, str) else _decode(name, data)
    return diagnosis_from_value(_load_json(name, text), name)


def diagnosis_from_value(value: Any, name: str = DIAGNOSIS) -> list[PredictedError]:
    """An analysis object or a bare list of errors, checked field by field."""
    if isinstance(value, list):
        value = {"detected_errors": value}
    if not isinstance(value, dict):
        raise ValueError(
            f"{name}: expected an object with 'detected_errors' or a list of errors, got "
            f"{type(value).__name__}"
        )
    if "detected_errors" not in value:
        raise ValueError(f"{name}: expected the key 'detected_errors' (a list of errors)")
    try:
        return DiagnosisFile.model_validate(value).detected_errors
    except ValidationError as exc:
        raise ValueError(f"{name}: {_validation_details(exc)}") from None


def parse_report(data: bytes, name: str = REPORT) -> dict[str, Any]:
    value = _load_json(name, _decode(name, data))
    if not isinstance(value, dict):
        raise ValueError(f"{name}: expected a JSON object, got {type(value).__name__}")
    return value


def _read_output(folder: Path | None, name: str) -> tuple[bytes | None, str | None]:
    """(the file's bytes, or None; why it is refused, or None). Only a regular file in the
    copied folder is read: a link the agent left (to ``/etc/shadow``, or to another output)
    is refused, never followed on the host."""
    if folder is None:
        return None, None
    path = folder / name
    if not path.is_symlink() and not path.exists():
        return None, None
    try:
        return textio.read_within(folder, path, MAX_FILE_BYTES), None
    except ValueError as exc:
        return None, f"{name}: refused, outputs must be regular files: {exc}"
    except OSError as exc:
        return None, f"{name}: cannot be read: {exc.strerror or exc}"


def contract_files(suite: str | None, research: bool = False) -> tuple[str, ...]:
    """The files a case of ``suite`` asks its agent for (its task kind's ``outputs``)."""
    if suite is None:
        return (SETUP, REPORT) if research else (SETUP, DIAGNOSIS)
    from ..kinds import TASK_KINDS

    return TASK_KINDS.get(suite).outputs


def parse_test_command(data: bytes, name: str = TEST_COMMAND) -> str:
    """The test command file's text, stripped; ``ValueError`` when empty or absurd."""
    text = _decode(name, data).strip()
    if not text:
        raise ValueError(f"{name}: the test command is empty")
    if len(text) > MAX_TEST_COMMAND_CHARS:
        raise ValueError(f"{name}: {len(text)} characters, more than {MAX_TEST_COMMAND_CHARS}")
    return text


def read_outputs(
    folder: Path | None, *, research: bool = False, suite: str | None = None
) -> Outputs:
    """Read the files of the contract from a host folder (a copy of ``/enconda/output``).

    ``suite`` names the case's task kind, whose ``outputs`` say which files are asked for;
    without it ``research`` chooses between the diagnosis and the research contract."""
    outputs = Outputs()
    files = contract_files(suite, research)

    def data_of(name: str) -> bytes | None:
        data, refused = _read_output(folder, name)
        if refused is not None:
            outputs.problems[name] = refused
        return data

    setup = data_of(SETUP)
    if setup is None:
        outputs.problems.setdefault(
            SETUP, f"no setup script written ({OUTPUT_DIR}/{SETUP} is missing)"
        )
    else:
        try:
            outputs.setup_script = _decode(SETUP, setup)
        except ValueError as exc:
            outputs.problems[SETUP] = str(exc)
        else:
            if not outputs.setup_script.strip():
                outputs.problems[SETUP] = f"{SETUP}: the setup script is empty"
    parsed: list[tuple[str, str, Callable[[bytes], Any], str]] = [
        (TEST_COMMAND, "test command", parse_test_command, "test_command"),
        (DIAGNOSIS, "diagnosis", parse_diagnosis, "diagnosis"),
    ]
    for name, what, parse, field in parsed:
        if name not in files:
            continue
        data = data_of(name)
        if data is None:
            outputs.problems.setdefault(name, f"no {what} written ({OUTPUT_DIR}/{name} is missing)")
            continue
        try:
            setattr(outputs, field, parse(data))
        except ValueError as exc:
            outputs.problems[name] = str(exc)
    if REPORT in files:
        report = data_of(REPORT)
        if report is None:
            if REPORT in outputs.problems:  # refused: present but not a regular file
                outputs.self_report = {"__invalid__": outputs.problems[REPORT]}
            else:
                outputs.problems[REPORT] = (
                    f"no self-report written ({OUTPUT_DIR}/{REPORT} is missing)"
                )
        else:
            try:
                outputs.self_report = parse_report(report)
            except ValueError as exc:
                outputs.problems[REPORT] = str(exc)
                outputs.self_report = {"__invalid__": str(exc)}
    return outputs


def _copy_each(container: Any, target: Path, names: list[str]) -> dict[str, str]:
    """Copy the contract's files one by one (after the folder as a whole was refused): a link
    or special file costs only itself, and is named."""
    refused: dict[str, str] = {}
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        dest = target / name
        if dest.is_symlink() or dest.exists():
            # Left by the refused folder copy: never read what it may have half extracted.
            dest.unlink() if not dest.is_dir() or dest.is_symlink() else shutil.rmtree(dest)
        try:
            container.copy_out(f"{OUTPUT_DIR}/{name}", dest, limit=MAX_FILE_BYTES)
        except FileNotFoundError:
            continue
        except HarnessError as exc:  # a link, a special file, or too large
            refused[name] = f"{name}: refused: {exc}"
    return refused


def collect_outputs(
    container: Any,
    keep_dir: Path | None = None,
    *,
    research: bool = False,
    suite: str | None = None,
) -> Outputs:
    """Copy ``/enconda/output`` out of ``container`` (into ``keep_dir`` when given) and read it.

    The backends refuse to copy a folder holding a link out of the box or a special file; the
    agent made it, so it is the agent's output problem, and the regular files beside it are
    still read.
    """
    with tempfile.TemporaryDirectory(prefix="enconda-output-") as tmp:
        target = keep_dir if keep_dir is not None else Path(tmp) / "output"
        try:
            container.copy_out(OUTPUT_DIR, target, limit=MAX_FOLDER_BYTES)
        except FileNotFoundError:
            return read_outputs(None, research=research, suite=suite)
        except HarnessError as exc:
            names = list(contract_files(suite, research))
            research = REPORT in names
            refused = _copy_each(container, target, names)
            outputs = read_outputs(target, research=research, suite=suite)
            outputs.problems.update(refused)
            if research and REPORT in refused:
                outputs.self_report = {"__invalid__": refused[REPORT]}
            outputs.problems.setdefault("output", f"{OUTPUT_DIR}: {exc}")
            return outputs
        return read_outputs(target, research=research, suite=suite)


def prepare_output_dir(container: Any) -> None:
    """Create ``/enconda/output`` (empty) so the agent only has to write into it."""
    container.exec(f"mkdir -p {OUTPUT_DIR}", timeout=30)
