"""Run directories given to --resume, regrade and compare, made by someone else: every file is
validated and bounded, no link is followed out of the run, and errors name file and field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_enconda import records
from pytest_enconda.artifacts import ArtifactError
from pytest_enconda.records import ResultRow, RunDir
from pytest_enconda.report.compare import CompareError, load_results, run_settings, saved_summary
from pytest_enconda.report.runrecords import load_case

EXAMPLES = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
HOSTILE_BYTES = [
    b"",
    b"\xff\xfe\x00",
    b"[" * 50_000,
    b'{"settings": ' * 5000 + b"{}" + b"}" * 5000,
    # Wrong types for every reader's fields at once, 20,000 of them in one list.
    json.dumps(
        {"settings": [1], "cases": "many", "case_id": 5, "error_types": list(range(20_000))}
    ).encode(),
]
READERS = {
    "run.json": lambda run: records.read_run_info(run),
    "summary.json": lambda run: records.read_summary(run),
    "case.json": lambda run: records.read_case_facts(run.case("c")),
}


def place(run: RunDir, name: str) -> Path:
    path = run.case("c").facts if name == "case.json" else run.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@pytest.mark.parametrize("name", sorted(READERS))
@pytest.mark.parametrize("data", HOSTILE_BYTES, ids=range(len(HOSTILE_BYTES)))
def test_hostile_records_name_their_file(attempt, tmp_path: Path, name: str, data: bytes) -> None:
    run = RunDir(tmp_path)
    path = place(run, name)
    path.write_bytes(data)
    _, error = attempt(name, lambda: READERS[name](run), (ArtifactError,))
    assert error is not None and str(path) in str(error)


@EXAMPLES
@given(value=JSON_VALUES)
def test_any_json_in_a_record_is_read_or_refused_by_name(attempt, tmp_path_factory, value) -> None:
    run = RunDir(tmp_path_factory.mktemp("run"))
    for name, reader in READERS.items():
        path = place(run, name)
        path.write_text(json.dumps(value))
        _, error = attempt(name, lambda reader=reader: reader(run), (ArtifactError,))
        assert error is None or str(path) in str(error)


@pytest.mark.parametrize("name", sorted(READERS))
@pytest.mark.parametrize("special", ["link", "fifo", "dev-zero"])
def test_links_and_special_files_are_refused(
    attempt, tmp_path: Path, canary: Path, name: str, special: str
) -> None:
    run = RunDir(tmp_path)
    path = place(run, name)
    if special == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(canary if special == "link" else "/dev/zero")
    _, error = attempt(name, lambda: READERS[name](run), (ArtifactError,))
    assert error is not None and str(path) in str(error)


def test_a_linked_case_folder_is_not_read(attempt, tmp_path: Path, canary: Path) -> None:
    outside = tmp_path / "elsewhere"
    (outside / "agent").mkdir(parents=True)
    (outside / "agent" / "agent.log").write_text(canary.read_text())
    (outside / "case.json").write_text(json.dumps({"case_id": "c", "note": canary.read_text()}))
    run = RunDir(tmp_path / "run")
    run.cases_dir.mkdir(parents=True)
    run.case("c").root.symlink_to(outside)
    _, error = attempt(
        "case.json", lambda: records.read_case_facts(run.case("c")), (ArtifactError,)
    )
    assert error is not None and "symbolic link" in str(error)
    evidence, _ = attempt("evidence", lambda: load_case(run.root, "c"), ())
    assert evidence.logs == {} and evidence.facts is None


@EXAMPLES
@given(
    lines=st.lists(
        st.binary(max_size=200) | JSON_VALUES.map(json.dumps).map(str.encode), max_size=8
    )
)
def test_results_jsonl_lines_cost_only_themselves(attempt, tmp_path_factory, lines) -> None:
    run = RunDir(tmp_path_factory.mktemp("run"))
    run.results_file.append(ResultRow(case="good", item="x", outcome="passed"))
    with run.results.open("ab") as handle:
        handle.write(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
    read, _ = attempt("results.jsonl", run.results_file.read, ())
    assert ("good", "x") in read.rows or any(key[0] == "good" for key in read.rows)
    assert all(str(run.results) in problem for problem in read.problems)
    _, error = attempt("results.jsonl", lambda: load_results(run.root), (CompareError,))
    assert error is None or str(run.results) in str(error)


@pytest.mark.parametrize("special", ["link", "fifo"])
def test_compare_refuses_a_linked_or_special_results_file(
    attempt, tmp_path: Path, canary: Path, special: str
) -> None:
    run = RunDir(tmp_path)
    if special == "fifo":
        os.mkfifo(run.results)
    else:
        run.results.symlink_to(canary)
    _, error = attempt("results.jsonl", lambda: load_results(tmp_path), (CompareError,))
    assert error is not None and str(run.results) in str(error)
    (tmp_path / "run.json").symlink_to(canary)
    _, error = attempt("run.json", lambda: run_settings(tmp_path), (CompareError,))
    assert error is not None and "run.json" in str(error)
    (tmp_path / "summary.json").write_bytes(b"{" * 100_000)
    _, error = attempt("summary.json", lambda: saved_summary(tmp_path), (CompareError,))
    assert error is not None and "summary.json" in str(error)


def test_a_junit_path_outside_the_run_decides_nothing(attempt, tmp_path: Path) -> None:
    from pytest_enconda.cases.models import ExecutionReference
    from pytest_enconda.grading.execution import grade_execution
    from pytest_enconda.probing.execution import ExecutionRecord

    passing = tmp_path / "passing.xml"
    passing.write_text('<testsuite><testcase classname="t" name="a"/></testsuite>')
    step = {"command": "x", "exit_code": 0, "duration": 1.0, "log": "l", "budget": 9.0}
    case_root = tmp_path / "run" / "cases" / "c"
    case_root.mkdir(parents=True)
    reference = ExecutionReference.model_validate({"verified": True, "pass_set": ["t::a"]})
    for junit in (str(passing), "../../../passing.xml"):
        record = ExecutionRecord.model_validate(
            {
                "case_id": "c",
                "image": "i",
                "steps": [{**step, "name": "setup"}, {**step, "name": "test"}],
                "junit": junit,
            }
        )
        verdict, _ = attempt(
            "record.json", lambda r=record: grade_execution(r, reference, case_root), ()
        )
        assert verdict.outcome != "passed" and "cannot" in verdict.message


RESUMED_FILES = [
    "results.jsonl",
    "run.json",
    "import_problems.json",
    "cases/c/agent/outcome.json",
    "cases/c/execution/record.json",
    "cases/c",
]


@pytest.mark.parametrize("special", ["link", "fifo", "dev-zero"])
@pytest.mark.parametrize("name", RESUMED_FILES)
def test_resume_refuses_a_run_with_links_or_special_files(
    attempt, tmp_path: Path, canary: Path, name: str, special: str
) -> None:
    """--resume reads saved outcomes, records and results from the run: a run directory holding
    a link or a FIFO is refused up front, naming it, instead of followed or waited on."""
    from pytest_enconda.settings import EncondaSettings
    from pytest_enconda.state import check_run_dir

    run = RunDir(tmp_path / "run")
    (run.root / "cases" / "c" / "agent").mkdir(parents=True)
    run.results_file.append(ResultRow(case="c", item="x", outcome="passed"))
    path = run.root / name
    if path.is_dir():
        path.rename(tmp_path / "moved")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
    if special == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(canary if special == "link" else "/dev/zero")
    settings = EncondaSettings(run_dir=run.root, resume=True)
    _, error = attempt("--resume run", lambda: check_run_dir(settings), (pytest.UsageError,))
    assert error is not None and f"{path} (a " in str(error)
    assert ("FIFO" if special == "fifo" else "symbolic link") in str(error)


def test_resume_accepts_a_run_the_harness_wrote(tmp_path: Path) -> None:
    from pytest_enconda.settings import EncondaSettings
    from pytest_enconda.state import check_run_dir

    run = RunDir(tmp_path / "run")
    (run.root / "cases" / "c" / "agent").mkdir(parents=True)
    (run.root / "cases" / "c" / "agent" / "outcome.json").write_text("{}")
    run.results_file.append(ResultRow(case="c", item="x", outcome="passed"))
    check_run_dir(EncondaSettings(run_dir=run.root, resume=True))
    assert run.foreign_entries() == []


@pytest.mark.parametrize(
    "special", ["linked trajectory", "fifo trajectory", "linked case folder", "fifo case.json"]
)
def test_memory_build_reads_no_link_and_waits_on_no_fifo(
    attempt, tmp_path: Path, canary: Path, special: str
) -> None:
    """``pytest-enconda memory build RUN``: a run directory is input here too."""
    from pytest_enconda.memory.build import build

    run = tmp_path / "run"
    for case_id in ("good", "bad"):
        agent = run / "cases" / case_id / "agent"
        agent.mkdir(parents=True)
        step = {"kind": "command", "command": "pip install .", "exit_code": 0, "output": "ok"}
        (agent / "trajectory.jsonl").write_text(json.dumps(step) + "\n")
        (run / "cases" / case_id / "case.json").write_text(json.dumps({"case_id": case_id}))
    bad = run / "cases" / "bad"
    if special == "linked trajectory":
        (bad / "agent" / "trajectory.jsonl").unlink()
        (bad / "agent" / "trajectory.jsonl").symlink_to(canary)
    elif special == "fifo trajectory":
        (bad / "agent" / "trajectory.jsonl").unlink()
        os.mkfifo(bad / "agent" / "trajectory.jsonl")
    elif special == "linked case folder":
        bad.rename(tmp_path / "outside")
        bad.symlink_to(tmp_path / "outside")
    else:
        (bad / "case.json").unlink()
        os.mkfifo(bad / "case.json")
    report, _ = attempt("memory build", lambda: build([run], tmp_path / "memory.db"), ())
    assert report.trajectories >= 1
    if special.endswith("trajectory"):
        (problem,) = report.problems
        assert str(bad / "agent" / "trajectory.jsonl") in problem
    stored = (tmp_path / "memory.db").read_bytes().decode("latin-1")
    assert canary.read_text().strip() not in stored


@pytest.mark.parametrize("special", ["huge", "fifo", "link"])
def test_a_trajectory_tail_costs_its_bound(attempt, tmp_path: Path, canary: Path, special: str):
    """The graded interpreter reads the tail of a saved trajectory: a 4 GiB one costs 2 MB, a
    FIFO or link is refused."""
    from pytest_enconda.textio import read_tail

    path = tmp_path / "trajectory.jsonl"
    if special == "huge":
        with path.open("wb") as handle:
            handle.truncate(4 << 30)  # sparse
            handle.write(b"x")
            handle.seek((4 << 30) - 5)
            handle.write(b"tail\n")
    elif special == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to(canary)
    tail, error = attempt("trajectory", lambda: read_tail(path, 2_000_000), (ValueError,))
    if special == "huge":
        assert error is None and len(tail) == 2_000_000 and tail.endswith(b"tail\n")
    else:
        assert error is not None and ("not a regular file" in str(error) or "link" in str(error))
