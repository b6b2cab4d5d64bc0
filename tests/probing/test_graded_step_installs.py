"""The graded test step installs only what it may (issue 47 item 1): in the replay, a runtime
requirement an older sidecar record still lists among its test requirements is not installed,
and the record's runtime requirements reach the imported case. Fake backend."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.enconda_import import load_dataset
from pytest_enconda.cases.models import Case, ExecutionReference
from pytest_enconda.cases.sidecar import SIDECAR_NAME, RepoVerification, Sidecar
from pytest_enconda.probing.execution import run_execution
from pytest_enconda.records import CaseDir
from pytest_enconda.verify.sidecar_writer import write_sidecar

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backends"))
from cases_for_tests import make_case  # pyright: ignore[reportMissingImports]

LISTED = ("requests>=2.20", "requests-mock", ".[test]")


def _test_installs(tmp_path: Path, runtime: tuple[str, ...]) -> list[str]:
    """The pip lines of the replay's test step for a case whose record lists ``LISTED``."""
    fake = FakeBackend(tmp_path / "fake")
    try:
        case = make_case(tmp_path / "c", test_command="python -m pytest tests")
        reference = ExecutionReference(
            verified=True,
            test_tools=("pytest",),
            test_requirements=LISTED,
            runtime_requirements=runtime,
            pass_set=frozenset({"tests::test_one"}),
        )
        case = case.model_copy(update={"reference": reference})
        image = fake.task_image(case, case.case_dir / "repo", {})
        run_execution(fake, image, case, "true\n", CaseDir(tmp_path / "run", case.id))
        tests = [command for command in fake.commands() if "--junitxml" in command]
        assert len(tests) == 1
        return [line for line in tests[0].splitlines() if "pip install" in line]
    finally:
        fake.close()


def test_the_replay_installs_no_runtime_requirement_the_record_lists(tmp_path: Path) -> None:
    installs = _test_installs(tmp_path, ("requests",))
    assert any("requests-mock" in line for line in installs)
    assert not any("requests>=2.20" in line or ".[test]" in line for line in installs)


def test_a_record_without_runtime_requirements_never_installs_the_checkout(
    tmp_path: Path,
) -> None:
    installs = _test_installs(tmp_path, ())
    # Nothing says requests is the project's: it installs; the checkout itself never does.
    assert any("requests>=2.20" in line for line in installs)
    assert not any(".[test]" in line for line in installs)


def _imported(tmp_path: Path, record: RepoVerification) -> Case:
    data = tmp_path / "data"
    data.mkdir(parents=True)
    revision = "a" * 40
    line = {"repository": "o/a", "revision": revision}
    (data / "repo_info.jsonl").write_text(json.dumps(line) + "\n")
    folder = data / "instances" / "error_gen_o_a" / "o_a_error_readme_1"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("# x\n\n```bash\npip install bad\n```\n")
    error = {
        "error_type": "E1",
        "error_description": "the package does not exist",
        "correction_candidates": [],
        "golden_answer": "pip install good",
    }
    (folder / "README.json").write_text(json.dumps({"level": "level1", "errors": [error]}))
    write_sidecar(data / SIDECAR_NAME, Sidecar(repositories={"o/a": record}))
    return load_dataset(data).cases[0]


def test_the_records_runtime_requirements_reach_the_case(tmp_path: Path) -> None:
    record = RepoVerification(
        repository="o/a",
        revision="a" * 40,
        status="verified",
        test_command="python -m pytest",
        test_tools=["pytest"],
        test_requirements=["requests", "mock"],
        runtime_requirements=["requests"],
        pass_set=["tests::test_one"],
    )
    case = _imported(tmp_path / "new", record)
    assert case.reference is not None and case.reference.verified
    assert case.reference.runtime_requirements == ("requests",)
    old = record.model_copy(update={"runtime_requirements": None})
    case = _imported(tmp_path / "old", old)
    assert case.reference is not None and case.reference.runtime_requirements == ()


def test_a_real_shell_runs_no_install_of_a_runtime_requirement(tmp_path: Path) -> None:
    """The step run by bash with a stand-in ``python`` logging each call: pip is asked for the
    test-only requirement alone, and the log says what was left to the setup."""
    import os
    import subprocess

    from pytest_enconda.probing.junit import run_tests_command

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    stub = bin_dir / "python"
    stub.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexit 0\n')
    stub.chmod(0o755)
    command = run_tests_command(
        "true", [], ["parameterized", "Django>=3", ".[test]"], runtime=["django"]
    )
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    calls = [call for call in log.read_text().splitlines() if call.startswith("-m pip")]
    assert calls == ["-m pip install -q parameterized"]
    assert "left to the setup (the project's own runtime needs)" in result.stderr
    assert "Django>=3" in result.stderr
