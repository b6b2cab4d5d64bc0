"""The setup script and the test command share one environment: what the script exports (an
activated venv, a PATH edit) is there when the tests start in a fresh shell. Fake backend for the
rule, Docker for a real venv."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cases_for_tests import make_case

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.models import Case
from pytest_enconda.probing.execution import run_execution
from pytest_enconda.probing.shell import SETUP_ENV_PATH, in_setup_env, setup_command
from pytest_enconda.records import CaseDir


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeBackend]:
    backend = FakeBackend(tmp_path / "fake")
    yield backend
    backend.close()


def _run(fake: FakeBackend, case: Case, script: str, tmp_path: Path) -> tuple[list, CaseDir]:
    paths = CaseDir(tmp_path / "run", case.id)
    image = fake.task_image(case, case.case_dir / "repo", {"README.md": b"# one\n"})
    record = run_execution(fake, image, case, script, paths)
    return [(step.name, step.exit_code) for step in record.steps], paths


def test_exported_variables_reach_the_test_command(fake: FakeBackend, tmp_path: Path) -> None:
    case = make_case(tmp_path / "c", test_command='test "$ENCONDA_T" = from-setup')
    steps, _ = _run(fake, case, "export ENCONDA_T=from-setup\n", tmp_path)
    assert steps == [("setup", 0), ("test", 0)]


def test_variables_the_setup_did_not_export_do_not(fake: FakeBackend, tmp_path: Path) -> None:
    case = make_case(tmp_path / "c", test_command='test "$ENCONDA_T" = from-setup')
    steps, _ = _run(fake, case, "ENCONDA_T=from-setup\n", tmp_path)
    assert steps == [("setup", 0), ("test", 1)]


def test_a_script_that_exits_early_keeps_its_exit_code_and_its_environment(
    fake: FakeBackend, tmp_path: Path
) -> None:
    case = make_case(tmp_path / "c", test_command='test "$ENCONDA_T" = early')
    steps, _ = _run(fake, case, "export ENCONDA_T=early\nexit 0\necho never\n", tmp_path)
    assert steps == [("setup", 0), ("test", 0)]


def test_a_failing_command_still_fails_the_setup(fake: FakeBackend, tmp_path: Path) -> None:
    case = make_case(tmp_path / "c")
    steps, paths = _run(fake, case, "false\necho after-false\n", tmp_path)
    assert steps == [("setup", 1)]
    assert "after-false" not in paths.execution_log("setup").read_text()


def test_a_failing_pipeline_fails_the_setup(fake: FakeBackend, tmp_path: Path) -> None:
    case = make_case(tmp_path / "c")
    steps, _ = _run(fake, case, "false | cat\n", tmp_path)
    assert steps == [("setup", 1)]


def test_the_shell_variables_of_the_setup_are_not_carried() -> None:
    saved = setup_command("/tmp/enconda/setup.sh")
    for name in ("PWD", "OLDPWD", "SHLVL"):
        assert name in saved
    assert in_setup_env("pytest").endswith("\npytest")
    assert SETUP_ENV_PATH in in_setup_env("pytest")


@pytest.mark.docker
def test_a_venv_activated_by_the_setup_runs_the_tests_in_docker(sandbox, base_image) -> None:
    from pytest_enconda.backends.base import started
    from pytest_enconda.backends.docker import DockerBackend

    backend = DockerBackend(sandbox=sandbox)
    script = (
        "python -m venv /opt/readme-venv\n"
        "source /opt/readme-venv/bin/activate\n"
        "export ENCONDA_T=docker\n"
    )
    with started(backend, base_image, case_id="t/setup-env", role="test") as box:
        box.copy_in(script.encode(), "/tmp/enconda/setup.sh")
        setup = box.exec(setup_command("/tmp/enconda/setup.sh"), timeout=120)
        assert setup.exit_code == 0, setup.output
        probe = 'python -c "import sys; print(sys.prefix)"; echo "T=$ENCONDA_T"'
        bare = box.exec(probe, timeout=60)
        shared = box.exec(in_setup_env(probe), timeout=60)
    assert "/opt/readme-venv" not in bare.output
    assert "/opt/readme-venv" in shared.output and "T=docker" in shared.output
    backend.close()


@pytest.mark.docker
def test_the_tests_meet_the_restored_readme_in_docker(tmp_path: Path, sandbox, base_image) -> None:
    """In a real box: the setup reads the case's README, the test step the repository's own,
    written back after the setup ended."""
    from pytest_enconda.backends.docker import DockerBackend

    backend = DockerBackend(sandbox=sandbox)
    test = "grep -q own README.md && grep -q injected seen-by-setup.md"
    case = make_case(tmp_path / "c", test_command=test)
    image = backend.task_image(case, case.case_dir / "repo", {"README.md": b"# injected\n"})
    paths = CaseDir(tmp_path / "run", case.id)
    script = "cp README.md seen-by-setup.md\n"
    restored = run_execution(backend, image, case, script, paths, restore={"README.md": b"# own\n"})
    kept = run_execution(backend, image, case, script, CaseDir(tmp_path / "run2", case.id))
    assert [(s.name, s.exit_code) for s in restored.steps] == [("setup", 0), ("test", 0)]
    assert [(s.name, s.exit_code) for s in kept.steps] == [("setup", 0), ("test", 1)]
    backend.close()
