"""verify's attempt line says why a test run reported no test: pytest's own words (a usage error,
a conftest that cannot be imported), not only "no JUnit report"; and, where every test errored,
the first error pytest printed."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from verifyfake import fake_context

from pytest_enconda.backends.fake import FakeBackend, FakeBox, canned
from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.probing.junit import JUNIT_PATH
from pytest_enconda.sandbox.containers import ExecResult
from pytest_enconda.verify.attempt import attempt, oom_kills
from pytest_enconda.verify.context import VerifyContext

USAGE_ERROR = (
    "ERROR: usage: python -m pytest [options] [file_or_dir] [file_or_dir] [...]\n"
    "python -m pytest: error: unrecognized arguments: --nomigrations --reuse-db\n"
    "  inifile: /data/project/pytest.ini\n"
    "  rootdir: /data/project\n"
)


class _Box:
    """What the boxes answer: setup succeeds; every test run ends in pytest's usage error and
    leaves no report. ``answer`` gives a command's output and exit code; ``report`` is the JUnit
    report the command leaves ("" for none)."""

    report = ""

    def answer(self, command: str) -> tuple[str, int | None]:
        output = USAGE_ERROR if "pytest" in command else "installed"
        return output, 4 if "pytest" in command else 0

    def respond(
        self, box: FakeBox, command: str, _timeout: float, _workdir: str, _env: Mapping[str, str]
    ) -> ExecResult:
        output, code = self.answer(command)
        if self.report and "--junitxml" in command:
            report = box.path(JUNIT_PATH)
            report.parent.mkdir(parents=True, exist_ok=True)
            report.write_text(self.report)
        return canned(output, code)


COLLECTION_ERRORS = """\
==================================== ERRORS ====================================
___________________ ERROR collecting tests/baseline_tests.py ___________________
ImportError while importing test module '/data/project/tests/baseline_tests.py'.
E   ModuleNotFoundError: No module named 'courlan.filters'
E   AttributeError: a later one
"""
ERRORED_REPORT = (
    '<testsuites><testsuite name="pytest" errors="2" failures="0" skipped="0" tests="2">'
    '<testcase classname="tests.baseline_tests" name="tests.baseline_tests">'
    '<error message="collection failure">trace</error></testcase>'
    '<testcase classname="tests.unit_tests" name="tests.unit_tests">'
    '<error message="collection failure">trace</error></testcase>'
    "</testsuite></testsuites>"
)


class _ErroredBox(_Box):
    """Every test module fails to import: a report of errors only."""

    report = ERRORED_REPORT

    def answer(self, command: str) -> tuple[str, int | None]:
        output = COLLECTION_ERRORS if "pytest" in command else "installed"
        return output, 1 if "pytest" in command else 0


def _ctx(tmp_path: Path, box: _Box) -> tuple[VerifyContext, str]:
    """verify's context on a fake backend whose boxes answer as ``box`` says (a 4g memory
    limit, the default), and the image an attempt starts from."""
    backend = FakeBackend(tmp_path / "fake", responder=box.respond)
    return fake_context(tmp_path, None, [], backend=backend), backend.add_image("img")


def test_the_attempt_line_names_the_first_collection_error(tmp_path: Path) -> None:
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", test_command="python -m pytest"
    )
    ctx, image = _ctx(tmp_path, _ErroredBox())
    assert not attempt(ctx, record, image, "recipe", "pip install .\n", tmp_path, [])
    why = "first error: ModuleNotFoundError: No module named 'courlan.filters'"
    assert record.attempts == [
        "recipe: no test passed in both runs ("
        f"run 1: 0 passed 0 failed 2 errors 0 skipped ({why}), "
        f"run 2: 0 passed 0 failed 2 errors 0 skipped ({why}))"
    ]


def test_the_attempt_line_names_the_usage_error(tmp_path: Path) -> None:
    ctx, image = _ctx(tmp_path, _Box())
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", test_command="python -m pytest"
    )
    verified = attempt(ctx, record, image, "recipe", "pip install .\n", tmp_path, [])
    assert not verified
    why = "no JUnit report: exit 4: unrecognized arguments: --nomigrations --reuse-db"
    assert record.attempts == [
        "recipe: no test passed in both runs ("
        f"run 1: 0 passed 0 failed 0 errors 0 skipped ({why}), "
        f"run 2: 0 passed 0 failed 0 errors 0 skipped ({why}))"
    ]


class _OutgrownBox(_Box):
    """The tests outgrow the box: the kernel kills pytest (exit 137), no report; the memory
    cgroup counts the kill."""

    def answer(self, command: str) -> tuple[str, int | None]:
        if "memory.events" in command:
            return "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n", 0
        if "pytest" in command:
            return "tests/paz/models/detection/efficientdet/efficientdet_test.py ....", 137
        return "installed", 0


def test_the_attempt_line_says_the_box_ran_out_of_memory(tmp_path: Path) -> None:
    """paz: a model test outgrew the 4g box in both runs, and both said only "no JUnit report"."""
    ctx, image = _ctx(tmp_path, _OutgrownBox())
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", test_command="python -m pytest"
    )
    assert not attempt(ctx, record, image, "recipe", "pip install .\n", tmp_path, [])
    why = (
        "no JUnit report: out of memory: the box's 4g limit killed 1 process(es) (ENCONDA_MEMORY "
        "raises it); exit 137: tests/paz/models/detection/efficientdet/efficientdet_test.py ...."
    )
    assert record.attempts == [
        "recipe: no test passed in both runs ("
        f"run 1: 0 passed 0 failed 0 errors 0 skipped ({why}), "
        f"run 2: 0 passed 0 failed 0 errors 0 skipped ({why}))"
    ]
    # Without a kill in the count, the reason stays pytest's own.
    quiet = FakeBackend(tmp_path / "quiet", responder=_Box().respond)
    assert oom_kills(quiet.start(quiet.add_image("img"), case_id="o/n", role="test")) == 0
    quiet.close()


@pytest.mark.docker
def test_the_kernel_s_kill_is_counted_in_a_real_box(
    sandbox_settings, docker_client, base_image, test_run_id
) -> None:
    """A box with a 96m limit: a process taking 512 MiB is killed and counted; before, none."""
    from pytest_enconda.sandbox.containers import Sandbox

    small = Sandbox(
        sandbox_settings.model_copy(update={"memory": "96m"}),
        f"{test_run_id}-oom",
        client=docker_client,
    )
    try:
        with small.container(base_image, case_id="t/oom", role="test") as box:
            assert oom_kills(box) == 0
            run = box.exec("python3 -c 'b = bytearray(512 * 2**20); print(len(b))'", timeout=120)
            assert run.exit_code == 137, run.output
            assert oom_kills(box) == 1
    finally:
        small.close()


class _LackingBox(_Box):
    """The conftest opens a file the repository's snapshot lacks."""

    def answer(self, command: str) -> tuple[str, int | None]:
        if "pytest" not in command:
            return "", 0
        output = (
            "ImportError while loading conftest '/data/project/tests/conftest.py'.\n"
            "E   FileNotFoundError: [Errno 2] Unable to synchronously open file (unable to open "
            "file: name = 'tests/_ground_truth_adatas/adata_200.h5ad', errno = 2)\n"
        )
        return output, 4


def test_the_attempt_line_names_a_file_the_snapshot_lacks(tmp_path: Path) -> None:
    """cellrank: its snapshot came without one .h5ad that its conftest opens."""
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", test_command="python -m pytest"
    )
    lacking = "tests/_ground_truth_adatas/adata_200.h5ad"
    record.record_absent([lacking, "docs/big.png"])
    ctx, image = _ctx(tmp_path, _LackingBox())
    assert not attempt(ctx, record, image, "recipe", "", tmp_path, [])
    why = f"(no JUnit report: the snapshot lacks {lacking}, which the tests open; exit 4: "
    assert record.attempts[0].count(why + "ImportError while loading conftest") == 2
    assert "docs/big.png" not in record.attempts[0]


HUGE = "tests/test_big.py::test_huge"
PASSED_REPORT = (
    '<testsuites><testsuite name="pytest" errors="0" failures="0" skipped="0" tests="2">'
    '<testcase classname="tests.test_big" name="test_small"/>'
    '<testcase classname="tests.test_small" name="test_ok"/>'
    "</testsuite></testsuites>"
)


class _OneTestOutgrowsBox(_Box):
    """The kernel kills pytest in ``test_huge`` (lifelines: one test outgrew the 4 GB box) until
    the command deselects it; then the others pass and are reported."""

    def __init__(self) -> None:
        self.commands: list[str] = []

    def answer(self, command: str) -> tuple[str, int | None]:
        self.commands.append(command)
        deselected = f"--deselect {HUGE}" in command
        self.report = PASSED_REPORT if deselected else ""
        if "memory.events" in command:
            return "oom_kill 1\n", 0
        if "current-test" in command and "pytest" not in command:
            return HUGE + "\n", 0
        if "pytest" in command:
            return ("2 passed", 0) if deselected else ("tests/test_big.py .", 137)
        return "installed", 0


def test_a_test_that_outgrows_the_box_is_deselected_and_the_rest_verified(
    tmp_path: Path,
) -> None:
    box = _OneTestOutgrowsBox()
    ctx, image = _ctx(tmp_path, box)
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", test_command="python -m pytest"
    )
    assert attempt(ctx, record, image, "recipe", "pip install .\n", tmp_path, [])
    assert record.test_command == f"python -m pytest --deselect {HUGE}"
    assert record.pass_set == ["tests.test_big::test_small", "tests.test_small::test_ok"]
    assert record.attempts[0] == (
        f"recipe: {HUGE} outgrew the box's memory and took the run with it; "
        "the test command deselects it"
    )
    # One killed run, then two with the test deselected, then the null setup's (issue 47),
    # with the same command.
    runs = [c for c in box.commands if "--junitxml" in c]
    assert [f"--deselect {HUGE}" in c for c in runs] == [False, True, True, True]


def test_deselecting_stops_after_a_few_tests(tmp_path: Path) -> None:
    """A suite where every test outgrows the box is not deselected test by test forever."""

    class _Always(_OneTestOutgrowsBox):
        def answer(self, command: str) -> tuple[str, int | None]:
            return super().answer(command.replace("--deselect", "--other"))

    ctx, image = _ctx(tmp_path, _Always())
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", test_command="python -m pytest"
    )
    assert not attempt(ctx, record, image, "recipe", "pip install .\n", tmp_path, [])
    assert record.test_command.count("--deselect") == 3
    assert "out of memory" in record.attempts[-1]


@pytest.mark.docker
def test_the_test_a_memory_kill_took_is_named_in_a_real_box(
    sandbox_settings, docker_client, base_image, test_run_id, tmp_path: Path
) -> None:
    """A 256m box: the test step's pytest is killed in the test that takes 1 GiB; the box's
    memory count and the order plugin's note name it; deselected, the rest pass."""
    from pytest_enconda.probing.junit import JUNIT_PATH, read_junit, run_tests_command
    from pytest_enconda.probing.shell import in_setup_env
    from pytest_enconda.sandbox.containers import Sandbox
    from pytest_enconda.verify.attempt import _current_test

    small = Sandbox(
        sandbox_settings.model_copy(update={"memory": "256m"}),
        f"{test_run_id}-oom-test",
        client=docker_client,
    )
    suite = (
        "def test_ok():\n    pass\n"
        "def test_huge():\n    b = bytearray(2**30)\n    assert len(b)\n"
        "def test_after():\n    pass\n"
    )
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_big.py").write_text(suite)
    try:
        with small.container(base_image, case_id="t/oom-test", role="test", network=True) as box:
            box.copy_in(tmp_path / "tests", "/data/project/tests")
            step = in_setup_env(run_tests_command("python -m pytest tests", ["pytest"]))
            run = box.exec(step, timeout=600, workdir="/data/project")
            assert run.exit_code == 137, run.output[-2000:]
            assert oom_kills(box) >= 1
            assert _current_test(box) == "tests/test_big.py::test_huge"
            again = run_tests_command(
                "python -m pytest tests --deselect tests/test_big.py::test_huge", ["pytest"]
            )
            run = box.exec(in_setup_env(again), timeout=600, workdir="/data/project")
            box.copy_out(JUNIT_PATH, tmp_path / "junit.xml")
            assert read_junit(tmp_path / "junit.xml") == {
                "tests.test_big::test_ok": "passed",
                "tests.test_big::test_after": "passed",
            }, run.output[-2000:]
    finally:
        small.close()
