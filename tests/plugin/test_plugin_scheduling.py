"""Scheduling by case (issue 17): every item of a case on one worker, its agent run once.

The scope comes from the case node in the item's id, never from the item's own name: probe
items end in a test function's name, and a user's probe in whatever its author chose.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from casefactory import golden_error, write_case, write_research_case

pytest_plugins = ["pytester"]

# Each item's worker, written from the worker itself (the controller only sees node ids). A
# plugin, not a conftest: the shipped pyramid probes live outside the test's folder.
WHERE = """
import os

def pytest_runtest_setup(item):
    with open(os.path.join(str(item.config.invocation_params.dir), "where.tsv"), "a") as handle:
        handle.write(item.nodeid + "\\t" + os.environ.get("PYTEST_XDIST_WORKER", "-") + "\\n")
"""
USER_PROBE = """
def test_zz_user_check(enconda_case):
    assert enconda_case.id
"""


def _record_workers(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    pytester.makepyfile(where_plugin=WHERE)
    monkeypatch.setenv("PYTHONPATH", str(pytester.path), prepend=":")
    return ["-p", "where_plugin"]


def _workers_per_case(root: Path) -> dict[str, set[str]]:
    per_case: dict[str, set[str]] = defaultdict(set)
    for line in (root / "where.tsv").read_text().splitlines():
        nodeid, worker = line.split("\t")
        # Ids are relative to the rootdir, which the --python/--repo paths can move up to /.
        case_folder = nodeid.split("/case.toml")[0]
        per_case["/".join(case_folder.split("/")[-2:])].add(worker)
    return per_case


def test_case_scope_reads_the_case_node_from_the_id(tmp_path: Path) -> None:
    from pytest_enconda.scheduling import case_scope

    case_dir = write_case(tmp_path, "one", errors=[golden_error("E4")])
    data = tmp_path / "DATA"
    data.mkdir()
    (data / "repo_info.jsonl").write_text("")
    (tmp_path / "test_plain.py").write_text("def test_x():\n    pass\n")
    case = f"{case_dir.relative_to(tmp_path)}/case.toml"
    assert case_scope(f"{case}::execution", tmp_path) == case
    assert case_scope(f"{case}::probe_pyramid.py::test_c1_entry_point_on_cpu", tmp_path) == case
    assert case_scope(f"{case}::probes/probe_mine.py::TestX::test_y", tmp_path) == case
    assert case_scope("DATA::owner/name/3::fixes", tmp_path) == "DATA::owner/name/3"
    assert case_scope("DATA::owner/name/3::probe_pyramid.py::test_c0", tmp_path) == (
        "DATA::owner/name/3"
    )
    assert case_scope("test_plain.py::test_x", tmp_path) is None
    assert case_scope(case, tmp_path) is None  # the case file itself is no item


@pytest.mark.slow
def test_host_backend_items_of_a_research_case_share_a_worker(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Host backend (no Docker; it grades one case): the pyramid's probes and a user probe on
    two workers. Scoped by item name, as before, they ran on gw0 and gw1."""
    case_dir = write_research_case(pytester.path, "alpha", probes={"probe_user.py": USER_PROBE})
    (case_dir / "repo" / "helper_mod.py").write_text("VALUE = 2\n")
    where = _record_workers(pytester, monkeypatch)
    report = pytester.path / "report.json"
    report.write_text(json.dumps({"python_path": sys.executable, "env_tool": "pip"}))
    repo = pytester.path / "cases" / "alpha" / "repo"
    result = pytester.runpytest_subprocess(
        "cases",
        *where,
        "-n",
        "2",
        "-k",
        "not C0",  # C0 is pyright over the repository: slow, and not what is checked here
        "--python",
        sys.executable,
        "--repo",
        str(repo),
        "--report",
        str(report),
        "--run-dir",
        str(pytester.path / "run"),
    )
    # C1 and the user's probe pass; C2-C4 skip (no GPU, no --ddp-cpu); C5 fails on a report
    # with only two of the required keys. Outcomes are not what is checked here: where they ran.
    result.assert_outcomes(passed=2, skipped=3, failed=1)
    per_case = _workers_per_case(pytester.path)
    assert set(per_case) == {"cases/alpha"}
    assert len(per_case["cases/alpha"]) == 1, per_case
    lines = (pytester.path / "where.tsv").read_text().splitlines()
    assert len(lines) == 6  # C1..C5 and the user's probe


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.usefixtures("base_image")
def test_docker_agent_runs_once_per_research_case_under_xdist(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A counting agent (its runs.jsonl gets one line per run) on two research cases, -n 2."""
    for name in ("alpha", "beta"):
        write_research_case(pytester.path, name, probes={"probe_user.py": USER_PROBE})
    where = _record_workers(pytester, monkeypatch)
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases", *where, "-n", "2", "-k", "C1 or C5 or user", "--run-dir", str(run)
    )
    result.assert_outcomes(passed=6)
    per_case = _workers_per_case(pytester.path)
    assert set(per_case) == {"cases/alpha", "cases/beta"}
    assert all(len(workers) == 1 for workers in per_case.values()), per_case
    for name in ("alpha", "beta"):
        runs = (run / "cases" / name / "agent" / "runs.jsonl").read_text().splitlines()
        assert len(runs) == 1, runs
        assert json.loads(runs[0])["worker"] in per_case[f"cases/{name}"]
