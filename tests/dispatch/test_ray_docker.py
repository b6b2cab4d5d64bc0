"""A shipped diagnosis case and a research case through ``--dispatch ray`` (a local Ray instance,
the node's Docker) give the same item outcomes as a local run, and leave no container behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

if os.environ.get("CI") != "true":  # .ci/run installs the dev extra: there, ray must import
    pytest.importorskip("ray", reason="--dispatch ray needs the 'ray' extra")

ROOT = Path(__file__).resolve().parents[2]
CASE = ROOT / "benchmark_cases" / "diagnosis" / "wordstat-e2"
# The case factory lives beside the plugin tests; this module may be collected without them.
sys.path.insert(0, str(ROOT / "tests" / "plugin"))


def _docker() -> bool:
    try:
        return subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _outcomes(run_dir: Path, *extra: str, case: Path = CASE) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(
        ["pytest", "-q", "-p", "no:cacheprovider", str(case), "--run-dir", str(run_dir), *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=900,
        check=False,
    )
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {row["item"]: row["outcome"] for row in rows}


@pytest.mark.slow
def test_a_shipped_case_on_ray_matches_a_local_run(tmp_path: Path) -> None:
    if not _docker():
        pytest.skip("no Docker daemon")
    from pytest_enconda.dispatch.ray import node_run_dir

    local = _outcomes(tmp_path / "local")
    dispatched = _outcomes(tmp_path / "ray", "--dispatch", "ray")
    assert dispatched == local and len(local) == 4
    record = json.loads((tmp_path / "ray" / "cases" / "wordstat-e2" / "dispatch.json").read_text())
    assert record["failures"] == {} and len(record["attempts"]) == 1
    # The node's backend labels its containers with the node-local run directory's name.
    run_id = node_run_dir((tmp_path / "ray").resolve()).name
    left = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=io.enconda.run={run_id}"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    assert left == []


@pytest.mark.slow
def test_a_research_case_on_ray_matches_a_local_run(tmp_path: Path) -> None:
    """The research pyramid runs on the node: the agent's venv, C0 imports, C1 on CPU; the GPU
    stages skip on a cluster that declares no GPU, exactly as they do locally."""
    if not _docker():
        pytest.skip("no Docker daemon")
    from casefactory import write_research_case

    case = write_research_case(tmp_path / "cases", "ray-research")
    local = _outcomes(tmp_path / "local", "--agent=oracle", case=case)
    dispatched = _outcomes(tmp_path / "ray", "--agent=oracle", "--dispatch", "ray", case=case)
    assert dispatched == local, (local, dispatched)
    stage = {item.split("::test_")[1][:2]: outcome for item, outcome in local.items()}
    assert (stage["c0"], stage["c1"]) == ("passed", "passed"), local
    assert (stage["c2"], stage["c3"], stage["c4"]) == ("skipped",) * 3, local
    record = json.loads((tmp_path / "ray" / "cases" / "ray-research" / "dispatch.json").read_text())
    assert record["failures"] == {} and len(record["attempts"]) == 1


@pytest.mark.slow
def test_ctrl_c_on_the_driver_cancels_the_case_and_removes_its_containers(
    tmp_path: Path,
) -> None:
    """SIGINT to ``pytest --dispatch ray`` while the case's container runs on the node: the run
    stops, and no container of the run is left on the engine."""
    import signal
    import time

    if not _docker():
        pytest.skip("no Docker daemon")
    from pytest_enconda.dispatch.ray import node_run_dir

    run_dir = tmp_path / "ray"
    run_id = node_run_dir(run_dir.resolve()).name
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    driver = subprocess.Popen(
        [
            *("pytest", "-q", "-p", "no:cacheprovider", str(CASE)),
            *("--run-dir", str(run_dir), "--dispatch", "ray"),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )

    def containers() -> list[str]:
        return subprocess.run(
            ["docker", "ps", "-aq", "--filter", f"label=io.enconda.run={run_id}"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.split()

    try:
        deadline = time.monotonic() + 300
        while not containers() and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.5)
        assert containers(), "no container of the run ever started"
        driver.send_signal(signal.SIGINT)
        output, _ = driver.communicate(timeout=180)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode != 0
    assert "ray: cancelling 1 cases on the cluster" in output, output[-3000:]
    assert containers() == []
