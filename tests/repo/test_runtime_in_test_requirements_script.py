"""scripts/runtime_in_test_requirements.py on a mirror made here: a verified record whose test
requirements name the project's runtime requirement is counted, with what is left to the setup."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from gitutil import git

from pytest_enconda.cases.sidecar import RepoVerification, Sidecar
from pytest_enconda.verify.sidecar_writer import write_sidecar

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "runtime_in_test_requirements.py"


def test_the_script_counts_records_whose_step_installed_runtime_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / "setup.py").write_text("from setuptools import setup\nsetup(name='h')\n")
    (origin / "requirements.txt").write_text("requests>=2\n")
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "one")
    revision = git(origin, "rev-parse", "HEAD")
    mirror = tmp_path / "mirror"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(mirror / "o+h" / "repo"))
    common = {"revision": revision, "status": "verified", "pass_set": ["t::a"]}
    sidecar = Sidecar(
        repositories={
            "o/h": RepoVerification(
                repository="o/h", test_requirements=["requests", "responses"], **common
            ),
            "o/gone": RepoVerification(repository="o/gone", test_requirements=["x"], **common),
        }
    )
    write_sidecar(tmp_path / "side.json", sidecar)
    spec = importlib.util.spec_from_file_location("runtime_in_test_requirements", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main([str(tmp_path / "side.json"), "--repo-mirror", str(mirror)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1 of 1 verified records list a runtime requirement")
    assert "1 verified records had no mirror" in out
    assert "| o/h | `requests` | 2 |" in out
