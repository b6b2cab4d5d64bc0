"""construct on the real Docker engine: a shipped repository's README verified, errors injected
and validated by running them, the dataset written and loadable with Pass@1 ground truth."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_enconda.cases.enconda_import import load_dataset

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("base_image")]

REPOS = Path(__file__).resolve().parents[2] / "benchmark_cases" / "repos"


def test_construct_validates_in_docker(tmp_path: Path) -> None:
    out = tmp_path / "OUT"
    command = [
        sys.executable,
        "-m",
        "pytest_enconda.cli",
        "construct",
        str(REPOS / "confmerge"),
        "--out",
        str(out),
        "--types",
        "E2,E4",
        "--per-type",
        "1",
        "--levels",
        "1,2",
        "-n",
        "2",
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1500, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "construct-report.json").read_text())
    outcome = report["repositories"]["local/confmerge"]
    assert outcome["accepted"], outcome["reason"]
    validations = outcome["validations"]
    assert len(validations) == 2
    for validation in validations.values():
        # Each error stops the literal setup at the edited command (the failing step is known).
        assert validation["verdict"] == "effective", validation
        assert validation["setup_exit"] not in (0, None)
        assert validation["failed_command"]
    sidecar = json.loads((out / "enconda-verification.json").read_text())
    record = sidecar["repositories"]["local/confmerge"]
    assert record["status"] == "verified"
    assert record["reference_source"] == "agent:readme"
    load = load_dataset(out)
    assert load.problems == []
    kept = [r for r in outcome["instances"] if r["kept"]]
    assert len(load.cases) == len(kept) >= 3
    assert {case.level for case in load.cases} == {1, 2}
    assert all(case.reference.verified for case in load.cases)
    assert "injected errors kept by validation: E2 1/1, E4 1/1" in done.stdout
    # A second run redoes nothing: no container is started.
    again = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    assert again.returncode == 0, again.stderr
    assert "validated" not in again.stdout and "verifying" not in again.stdout
