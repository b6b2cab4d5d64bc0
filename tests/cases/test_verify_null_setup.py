"""verify's null setup (issue 47 item 1): after a verified attempt, the graded test step runs in
a box of the task image as it is (an empty setup script), and the record says what share of the
PASS set that reaches; a reference an empty setup passes is trivial, in the sidecar, the
imported case, the audit and a run's Pass@1."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from verifyfake import fake_context

from pytest_enconda.backends.fake import FakeBackend, FakeBox, canned
from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.grading.aggregate import CaseResult, aggregate
from pytest_enconda.probing.junit import JUNIT_PATH
from pytest_enconda.report.tables import notes
from pytest_enconda.sandbox.containers import ExecResult
from pytest_enconda.verify.attempt import attempt

MARK = "/opt/set-up"


def _report(names: list[str]) -> str:
    cases = "".join(f'<testcase classname="tests" name="{name}"/>' for name in names)
    suite = f'<testsuite name="pytest" tests="{len(names)}">{cases}</testsuite>'
    return f"<testsuites>{suite}</testsuites>"


class _Box:
    """The setup leaves a mark; the tests that need the setup pass only where it is."""

    def __init__(self, alone: list[str], set_up: list[str]) -> None:
        self.alone, self.set_up = alone, set_up

    def respond(
        self, box: FakeBox, command: str, _timeout: float, _workdir: str, _env: Mapping[str, str]
    ) -> ExecResult:
        if "setup.sh" in command:
            box.path(MARK).parent.mkdir(parents=True, exist_ok=True)
            box.path(MARK).write_text("yes")
            return canned("installed", 0)
        if "--junitxml" in command:
            names = self.set_up if box.path(MARK).is_file() else self.alone
            report = box.path(JUNIT_PATH)
            report.parent.mkdir(parents=True, exist_ok=True)
            report.write_text(_report(names))
            return canned(f"{len(names)} passed", 0)
        return canned("", 0)


def _verify(tmp_path: Path, alone: list[str], set_up: list[str]) -> RepoVerification:
    backend = FakeBackend(tmp_path / "fake", responder=_Box(alone, set_up).respond)
    ctx = fake_context(tmp_path, None, [], backend=backend)
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", test_command="python -m pytest"
    )
    assert attempt(ctx, record, backend.add_image("img"), "recipe", "pip install .\n", tmp_path, [])
    return record


def test_a_reference_an_empty_setup_passes_is_trivial(tmp_path: Path) -> None:
    record = _verify(tmp_path, ["a", "b"], ["a", "b"])
    assert len(record.pass_set) == 2
    assert record.null_setup is not None
    assert (record.null_setup.passed, record.null_setup.pass_set) == (2, 2)
    assert record.null_setup.trivial and record.null_setup.share == 1.0
    assert (tmp_path / "null-setup-test.log").is_file()


def test_a_reference_that_needs_its_setup_is_not(tmp_path: Path) -> None:
    record = _verify(tmp_path, ["a"], ["a", "b", "c", "d"])
    assert len(record.pass_set) == 4 and record.null_setup is not None
    assert (record.null_setup.passed, record.null_setup.share) == (1, 0.25)
    assert not record.null_setup.trivial


def test_pass_at_1_on_non_trivial_cases_is_the_headline() -> None:
    results = [
        CaseResult(case_id="t1", level=1, execution_passed=True, trivial=True),
        CaseResult(case_id="t2", level=1, execution_passed=True, trivial=True),
        CaseResult(case_id="n1", level=1, execution_passed=True),
        CaseResult(case_id="n2", level=1, execution_passed=False),
    ]
    summary = aggregate(results).to_summary_json(agent="a", model=None)
    assert summary["pass_at_1"] == 0.75 and summary["pass_at_1_non_trivial"] == 0.5
    assert summary["execution"] == {"run": 4, "passed": 3, "trivial_run": 2, "trivial_passed": 2}
    line = next(text for text in notes(summary) if "non-trivial" in text)
    assert "50.0 over 2; 2 trivial" in line


def test_the_audit_flags_a_trivial_reference(tmp_path: Path) -> None:
    from test_cases_audit import INSTALL, Dataset, error

    from pytest_enconda.agents.readme_commands import extract_commands
    from pytest_enconda.cases.audit import GRADING_FLAGS, TRIVIAL, audit_cases
    from pytest_enconda.cases.enconda_import import load_dataset
    from pytest_enconda.cases.models import ExecutionReference

    data = Dataset(tmp_path / "data")
    data.add("1", INSTALL.replace("widget-core", "widget-cor"),
             error("E1", "misspelled `widget-cor`", "pip install widget-core"))  # fmt: skip
    (case,) = load_dataset(data.root).cases
    trivial = case.model_copy(update={"reference": ExecutionReference(verified=True, trivial=True)})
    (record,) = audit_cases([trivial], extract_commands).records
    assert TRIVIAL in record.flags and TRIVIAL not in GRADING_FLAGS
    (plain,) = audit_cases([case], extract_commands).records
    assert TRIVIAL not in plain.flags
