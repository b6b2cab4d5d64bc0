"""Replayed predictions (``--agent replay --predictions``) made by someone else: records that name
no case are warnings of the run, a torn later record of a case is that case's error (never a
silent grade of the older one), and no file of a predictions folder is read through a link, as a
FIFO or without a bound."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_enconda.agents.base import AgentOutcome, AgentTask
from pytest_enconda.agents.replay import (
    ERRORS_SUFFIX,
    RECORDS_FILE,
    SETUP_SUFFIX,
    MissingPrediction,
    ReplayAgent,
    UnreadablePrediction,
)
from pytest_enconda.cases.models import Case, CaseSpec

EXAMPLES = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
EXPECTED = (MissingPrediction, UnreadablePrediction)


def case(root: Path, case_id: str, folder: str = "") -> Case:
    spec = CaseSpec.model_validate(
        {
            "id": case_id,
            "suite": "diagnosis",
            "readme": "README.md",
            "test_command": "true",
            "repository": {"kind": "folder", "path": "repo"},
        }
    )
    return Case(spec=spec, case_dir=root / (folder or case_id), readme_text="")


def task(of: Case) -> AgentTask:
    return AgentTask(case=of, readme_text="", readme_name="README.md")


def outcome_line(case_id: str, script: str = "pip install .\n") -> bytes:
    outcome = AgentOutcome(case_id=case_id, agent="llm", setup_script=script)
    return outcome.model_dump_json().encode()


def replay(agent: ReplayAgent, of: Case, attempt, kind: str = "predictions"):
    return attempt(kind, lambda: agent.run(task(of)), EXPECTED)


@pytest.mark.parametrize(
    "line",
    [b"garbage", b"\xff\xfe not utf-8", b"[1, 2]", b'{"no": "case id"}', b'{"case_id": 5}'],
    ids=["garbage", "non-utf8", "a list", "no case_id", "case_id a number"],
)
def test_a_line_naming_no_case_is_a_warning_with_its_line(
    attempt, tmp_path: Path, line: bytes
) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(outcome_line("good") + b"\n" + line + b"\n")
    agent = ReplayAgent(path)
    outcome, error = replay(agent, case(tmp_path, "good"), attempt)
    assert error is None and outcome.setup_script == "pip install .\n"
    (warning,) = agent.input_warnings()
    assert warning.startswith(f"{path}:2: ")


@pytest.mark.parametrize(
    "torn",
    [
        b'{"case_id": "a", "agent": "llm", "setup_script": "pip ins',
        b'{"case_id": "a", "setup_script": "\xff\xfe"}',
        b'{"agent": "llm", "case_id": "a", "diagnosis": [[[',
    ],
    ids=["cut off", "non-utf8", "cut off later"],
)
def test_a_torn_newer_record_makes_its_case_an_error_naming_both_lines(
    attempt, tmp_path: Path, torn: bytes
) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(outcome_line("a", "old\n") + b"\n" + outcome_line("b") + b"\n" + torn + b"\n")
    agent = ReplayAgent(path)
    _, error = replay(agent, case(tmp_path, "a"), attempt)
    assert isinstance(error, UnreadablePrediction)
    assert f"{path}:3: " in str(error) and f"earlier one ({path}:1)" in str(error)
    assert agent.input_warnings() == []  # attributed to its case, not a stray line
    outcome, error = replay(agent, case(tmp_path, "b"), attempt)
    assert error is None and outcome.setup_script == "pip install .\n"


def test_a_valid_record_after_a_torn_one_is_graded(attempt, tmp_path: Path) -> None:
    path = tmp_path / "predictions.jsonl"
    path.write_bytes(b'{"case_id": "a", "setup_scr\n' + outcome_line("a", "new\n") + b"\n")
    outcome, error = replay(ReplayAgent(path), case(tmp_path, "a"), attempt)
    assert error is None and outcome.setup_script == "new\n"
    assert any(f"{path}:1" in problem for problem in outcome.problems)


@EXAMPLES
@given(lines=st.lists(st.binary(max_size=300), max_size=8))
def test_any_lines_cost_only_themselves(attempt, tmp_path_factory, lines: list[bytes]) -> None:
    folder = tmp_path_factory.mktemp("p")
    path = folder / "predictions.jsonl"
    lines = [line.replace(b"\n", b" ").replace(b"good", b"g00d") for line in lines]
    # The good line first: a file that starts as UTF-16 is refused whole (named, documented).
    path.write_bytes(b"\n".join([outcome_line("good"), *lines]) + b"\n")
    agent = ReplayAgent(path)
    outcome, error = replay(agent, case(folder, "good"), attempt)
    assert error is None and outcome.setup_script == "pip install .\n"
    assert all(warning.startswith(f"{path}:") for warning in agent.input_warnings())


def enconda_results(root: Path, instance: str = "error_readme_1") -> tuple[Path, Case]:
    """An EnConda-Bench inference output with one instance; the case it belongs to."""
    folder = root / "out" / "results" / f"o_r_{instance}"
    folder.mkdir(parents=True)
    errors = {"errors": [{"error_type": "E4", "error_description": "d", "fix_answer": "f"}]}
    (folder / f"{instance}{ERRORS_SUFFIX}").write_text(json.dumps(errors))
    (folder / f"{instance}{SETUP_SUFFIX}").write_text("pip install .\n")
    return folder, case(root / "dataset" / "error_gen_o_r", "o/r/1", folder=instance)


def make_special(path: Path, kind: str, canary: Path) -> None:
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link to a host file":
        path.symlink_to(canary)
    elif kind == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "huge":
        with path.open("wb") as handle:
            handle.truncate(1 << 30)  # a sparse 1 GiB file: past the 16 MiB bound


SPECIALS = ["fifo", "link to a host file", "link to /dev/zero", "huge"]


@pytest.mark.parametrize("special", SPECIALS)
@pytest.mark.parametrize("name", [ERRORS_SUFFIX, SETUP_SUFFIX])
def test_special_files_in_an_enconda_output_cost_their_case(
    attempt, tmp_path: Path, canary: Path, name: str, special: str
) -> None:
    folder, bad = enconda_results(tmp_path)
    make_special(folder / f"error_readme_1{name}", special, canary)
    _, error = replay(ReplayAgent(tmp_path / "out"), bad, attempt, "replay folder")
    assert isinstance(error, UnreadablePrediction)
    assert f"error_readme_1{name}" in str(error)
    reasons = ("symbolic link", "not a regular file", "larger than allowed")
    assert any(reason in str(error) for reason in reasons), error


@pytest.mark.parametrize("special", SPECIALS)
def test_special_processing_records_are_a_warning(
    attempt, tmp_path: Path, canary: Path, special: str
) -> None:
    _folder, good = enconda_results(tmp_path)
    records = tmp_path / "out" / RECORDS_FILE
    records.write_text("")
    make_special(records, special, canary)
    agent = ReplayAgent(tmp_path / "out")
    outcome, error = replay(agent, good, attempt, "replay folder")
    assert error is None and outcome.setup_script == "pip install .\n"
    (warning,) = agent.input_warnings()
    assert warning.startswith(f"{records}: cannot read")
    assert "larger than allowed" in warning or special != "huge"


@pytest.mark.parametrize("special", SPECIALS)
def test_special_outcomes_in_a_run_directory_are_warnings(
    attempt, tmp_path: Path, canary: Path, special: str
) -> None:
    run = tmp_path / "run"
    for case_id in ("good", "bad"):
        (run / "cases" / case_id / "agent").mkdir(parents=True)
        (run / "cases" / case_id / "agent" / "outcome.json").write_bytes(outcome_line(case_id))
    bad_file = run / "cases" / "bad" / "agent" / "outcome.json"
    make_special(bad_file, special, canary)
    agent = ReplayAgent(run)
    outcome, error = replay(agent, case(tmp_path, "good"), attempt, "replay folder")
    assert error is None and outcome.setup_script == "pip install .\n"
    _, error = replay(agent, case(tmp_path, "bad"), attempt, "replay folder")
    assert isinstance(error, MissingPrediction) and str(bad_file) in str(error)
    assert [w.split(": cannot read")[0] for w in agent.input_warnings()] == [str(bad_file)]


def test_a_linked_case_folder_in_a_run_directory_is_not_read(
    attempt, tmp_path: Path, canary: Path
) -> None:
    outside = tmp_path / "elsewhere" / "agent"
    outside.mkdir(parents=True)
    (outside / "outcome.json").write_bytes(outcome_line("bad", canary.read_text()))
    (tmp_path / "run" / "cases" / "good" / "agent").mkdir(parents=True)
    (tmp_path / "run" / "cases" / "good" / "agent" / "outcome.json").write_bytes(
        outcome_line("good")
    )
    (tmp_path / "run" / "cases" / "bad").symlink_to(outside.parent)
    agent = ReplayAgent(tmp_path / "run")
    _, error = replay(agent, case(tmp_path, "bad"), attempt, "replay folder")
    assert isinstance(error, MissingPrediction) and "symbolic link" in str(error)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "huge"])
def test_the_predictions_file_itself(attempt, tmp_path: Path, special: str) -> None:
    path = tmp_path / "predictions.jsonl"
    if special == "fifo":
        os.mkfifo(path)
    elif special == "huge":
        with path.open("wb") as handle:
            handle.truncate(17 * 1024 * 1024)  # sparse: over the bound, no disk used
    else:
        path = Path(special)
    agent = ReplayAgent(path)
    _, error = replay(agent, case(tmp_path, "a"), attempt)
    assert isinstance(error, MissingPrediction) and str(path) in str(error)
    reason = "larger than allowed" if special == "huge" else "not a regular file"
    assert reason in agent.input_warnings()[0]
