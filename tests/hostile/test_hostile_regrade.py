"""``regrade`` and ``compare`` of a run directory someone edited: a FIFO log, a log linked to a
host file and a case folder linked out of the run are refused and named; nothing hangs and the
host file's text reaches no report."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

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
    (folder, _summary, kept), _ = attempt("regrade run", lambda: regrade(hostile_run, out=out), ())
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
