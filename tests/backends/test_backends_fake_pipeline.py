"""Logic above the backend, on the fake one: execution replay and JUnit grading, the final
state, C0's dispatch and an agent loop. Each was reachable only through Docker before."""

from __future__ import annotations

import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from cases_for_tests import make_case

from pytest_enconda.backends.fake import FakeBackend, FakeBox, canned
from pytest_enconda.cases.models import Case, ExecutionReference
from pytest_enconda.grading.execution import grade_execution
from pytest_enconda.probing.execution import run_execution
from pytest_enconda.probing.final_state import build_final_state
from pytest_enconda.records import CaseDir

JUNIT = """<?xml version="1.0"?>
<testsuites><testsuite name="pytest" tests="2">
  <testcase classname="tests.test_a" name="test_one" time="0.1"/>
  <testcase classname="tests.test_a" name="test_two" time="0.1"><failure message="boom"/></testcase>
</testsuite></testsuites>
"""


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeBackend]:
    backend = FakeBackend(tmp_path / "fake")
    yield backend
    backend.close()


@pytest.fixture
def case(tmp_path: Path) -> Case:
    return make_case(tmp_path / "case", files={"requirements.txt": "\n"})


def task_image(fake: FakeBackend, case: Case) -> str:
    return fake.task_image(case, case.case_dir / "repo", {"README.md": case.readme_text.encode()})


def test_execution_runs_setup_then_tests_in_one_fresh_box(
    fake: FakeBackend, case: Case, tmp_path: Path
) -> None:
    paths = CaseDir(tmp_path / "run", case.id)
    script = "echo installing\ntouch installed\n"
    record = run_execution(fake, task_image(fake, case), case, script, paths)
    assert [step.name for step in record.steps] == ["setup", "test"]
    assert [step.exit_code for step in record.steps] == [0, 0]
    assert "installing" in paths.execution_log("setup").read_text()
    assert [call.op for call in fake.calls if call.op in ("start", "remove")] == ["start", "remove"]
    assert grade_execution(record, None, paths.root).outcome == "passed"


def test_failed_setup_skips_the_tests(fake: FakeBackend, case: Case, tmp_path: Path) -> None:
    paths = CaseDir(tmp_path / "run", case.id)
    record = run_execution(fake, task_image(fake, case), case, "exit 4\n", paths)
    assert [(step.name, step.exit_code) for step in record.steps] == [("setup", 4)]
    verdict = grade_execution(record, None, paths.root)
    assert verdict.outcome == "failed"
    assert "setup step exited with 4" in verdict.message


def test_setup_past_its_budget_is_a_timeout(fake: FakeBackend, case: Case, tmp_path: Path) -> None:
    def slow_setup(box: FakeBox, command: str, timeout: float, *_: object) -> object:
        return canned("still going", timed_out=True) if "setup.sh" in command else None

    fake.responder = slow_setup  # type: ignore[assignment]
    paths = CaseDir(tmp_path / "run", case.id)
    record = run_execution(fake, task_image(fake, case), case, "sleep 999\n", paths)
    assert record.steps[0].timed_out and record.steps[0].exit_code is None
    verdict = grade_execution(record, None, paths.root)
    assert "timed out after" in verdict.message


def test_verified_reference_is_graded_on_the_junit_report_the_test_step_wrote(
    fake: FakeBackend, case: Case, tmp_path: Path
) -> None:
    """The test command is answered by a responder that writes the runner's JUnit report
    where pytest's --junitxml would, as the real runner does inside the box."""

    def runner(
        box: FakeBox, command: str, timeout: float, workdir: str, env: Mapping[str, str]
    ) -> object:
        if "--junitxml=" not in command:
            return None
        report = box.path("/tmp/enconda/junit.xml")
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(JUNIT)
        return canned("1 failed, 1 passed", exit_code=1)

    fake.responder = runner  # type: ignore[assignment]
    reference = ExecutionReference(
        verified=True, test_tools=("pytest",), pass_set=frozenset({"tests.test_a::test_one"})
    )
    verified = case.model_copy(update={"reference": reference})
    paths = CaseDir(tmp_path / "run", case.id)
    record = run_execution(fake, task_image(fake, verified), verified, "true\n", paths)
    assert record.junit == "execution/junit.xml"
    assert (paths.root / "execution" / "junit.xml").read_text() == JUNIT
    # The failing test is outside the PASS set: Pass@1 holds although pytest exited 1.
    assert grade_execution(record, reference, paths.root).outcome == "passed"
    stricter = reference.model_copy(
        update={"pass_set": frozenset({"tests.test_a::test_one", "tests.test_a::test_two"})}
    )
    assert grade_execution(record, stricter, paths.root).outcome == "failed"


def test_final_state_snapshots_what_the_setup_left_with_its_report(
    fake: FakeBackend, case: Case, tmp_path: Path
) -> None:
    paths = CaseDir(tmp_path / "run", case.id)
    script = (
        "mkdir -p .venv && head -c 5000 /dev/zero > .venv/big\n"
        'echo \'{"python_path": "/data/project/.venv/bin/python"}\' > /enconda/output/report.json\n'
    )
    state = build_final_state(fake, task_image(fake, case), case, script, paths)
    assert state.setup_exit_code == 0 and not state.setup_timed_out
    assert state.writable_bytes >= 5000
    assert state.report_file == "environment/report.json"
    assert "python_path" in (paths.root / state.report_file).read_text()
    assert fake.image_exists(state.image)
    with_state = fake.start(state.image, case_id=case.id, role="probe")
    assert with_state.exec("wc -c < .venv/big", timeout=10).output.strip() == "5000"
    # The live box is gone: probes only ever see the snapshot.
    assert not [box for box in fake.live.values() if box.role == "agent-state"]


def test_final_state_without_a_report(fake: FakeBackend, case: Case, tmp_path: Path) -> None:
    paths = CaseDir(tmp_path / "run", case.id)
    state = build_final_state(fake, task_image(fake, case), case, "exit 2\n", paths)
    assert state.setup_exit_code == 2
    assert state.report_file is None


def test_c0_in_a_box_scans_with_the_image_python_and_lends_pyright_by_mounts(
    fake: FakeBackend, case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    """C0's dispatch without Docker or pyright: the scan runs for real in the fake box, pyright's
    compact answer is canned, and the mounts it would need are checked."""
    from pytest_enconda.probing import imports
    from pytest_enconda.probing.environment import BoxEnvironment

    install = imports.PyrightInstall.model_construct(
        node=Path(shutil.which("bash") or "/bin/bash"),
        package_dir=Path(imports.__file__).parent,
        version="1.0-test",
    )
    monkeypatch.setattr(imports, "locate_pyright", lambda: install)
    image = fake.task_image(
        case, case.case_dir / "repo", {"main.py": b"import json\nimport yaml\nimport numpy\n"}
    )

    def pyright(box: FakeBox, command: str, *_: object) -> object:
        if "--outputjson" not in command:
            return None
        return canned(
            '{"enconda_compact": 1, "version": "1.0-test", "filesAnalyzed": 1, '
            '"missing": ["numpy"], "unreadable": []}',
            exit_code=1,
        )

    fake.responder = pyright  # type: ignore[assignment]
    environment = BoxEnvironment(fake, image, case.id, python="python3")
    result = environment.check_imports(60)
    assert result.error is None, result.error
    assert result.missing == ["numpy"]
    assert result.total >= 2
    mounted = [call.detail["mounts"] for call in fake.ops("start") if call.detail["mounts"]]
    assert len(mounted) == 1
    assert {Path(m.target).name for m in mounted[0]} == {"node", "basedpyright", "config"}


def test_budget_scale_stretches_the_final_states_setup(
    fake: FakeBackend, case: Case, tmp_path: Path
) -> None:
    """--budget-scale applies to a research case's setup replay too (its final state)."""
    image = task_image(fake, case)
    recorded: list[float] = []

    def respond(box: FakeBox, command: str, timeout: float, *_: object) -> None:
        if "setup.sh" in command:
            recorded.append(timeout)
        return None

    fake.responder = respond
    build_final_state(fake, image, case, "true\n", CaseDir(tmp_path / "run", case.id), scale=2.5)
    assert recorded == [case.spec.budgets.setup_seconds * 2.5]
