"""A stage, an aspect and a task kind added by a test plugin (a conftest.py), with no package
file touched (issue 44: one module plus one registration each).

The README's "Adding a stage or an aspect" example, run: the host backend (``--python``) grades
the interpreter running this test, so no Docker is needed. The stage declares a GPU and a budget:
its probe carries the ``gpu`` marker, its budget is in the item's timeout, and its column is in
the summary and the reports. The task kind's case runs on the fake backend.
"""

from __future__ import annotations

import json
import sys

import pytest
from casefactory import write_case, write_research_case
from fakeruns import fake_project

from pytest_enconda.cases.loader import load_case
from pytest_enconda.items import case_timeout

pytest_plugins = ["pytester"]

PLUGIN = """
from pytest_enconda.aspects import ASPECTS, Aspect
from pytest_enconda.stages import STAGES, Stage


def python_runs(ctx):
    from pytest_enconda.probing.pyramid import StageResult

    run = ctx.environment.run("python3 --version", timeout=60)
    outcome = "passed" if run.ok else "failed"
    numbers = {"exit_code": run.exit_code}
    return StageResult(stage="C9", outcome=outcome, message=run.output.strip(), numbers=numbers)


def readme_has_a_title(ctx):
    from pytest_enconda.grading.verdict import ItemVerdict

    titled = ctx.case.readme_text.lstrip().startswith("#")
    return ItemVerdict(
        outcome="passed" if titled else "failed",
        message="the README starts with a title" if titled else "no title",
        numbers={"readme_chars": len(ctx.case.readme_text)},
    )


STAGES.register(
    Stage(
        name="C9",
        title="C9 python",
        run=python_runs,
        probe="test_c9_python_runs",
        description="python3 --version exits 0 in the environment.",
        gpus=1,
        budget_seconds=321,
    )
)
ASPECTS.register(
    Aspect(name="readme_title", grade=readme_has_a_title, graded_by="the README's first line")
)
"""


def test_a_conftest_adds_a_stage_and_an_aspect(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(PLUGIN)
    research = write_research_case(pytester.path, "alpha")
    write_case(pytester.path, "beta")
    report = pytester.path / "report.json"
    report.write_text(json.dumps({"python_path": sys.executable, "env_tool": "pip"}))
    run = pytester.path / "run"
    # A subprocess: the registrations must not leak into this test process's registries.
    result = pytester.runpytest_subprocess(
        "cases",
        "-k",
        "C9 or readme_title",
        "--python",
        sys.executable,
        "--repo",
        str(research / "repo"),
        "--report",
        str(report),
        "--run-dir",
        str(run),
        "-v",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*alpha*probe_pyramid.py::test_c9_python_runs PASSED*", "*beta*readme_title PASSED*"]
    )
    stage = json.loads((run / "cases" / "alpha" / "pyramid" / "C9.json").read_text())
    assert stage["outcome"] == "passed" and stage["message"].startswith("Python 3.")
    lines = (run / "results.jsonl").read_text().splitlines()
    rows = {row["item"]: row for row in map(json.loads, lines)}
    assert rows["probe_pyramid.py::test_c9_python_runs"]["stage"] == "C9"
    assert rows["readme_title"]["outcome"] == "passed"
    verdict = json.loads((run / "cases" / "beta" / "grading" / "readme_title.json").read_text())
    assert verdict["numbers"]["readme_chars"] > 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["pyramid"]["C9"]["passed"] == 1
    # Its column, under its title, in the pyramid tables of tables.md and report.html.
    header = next(line for line in (run / "tables.md").read_text().splitlines() if "C1 CPU" in line)
    assert "| C9 python |" in header, header
    html = (run / "report.html").read_text()
    pyramid = html[html.index('id="enconda-pyramid"') :].split("</table>")[0]
    assert '<td>C9 python</td><td class="num">1</td>' in pyramid
    assert "Runtime pyramid C0-C9" in html


# Each collected item's timeout and whether it is marked gpu, for the test to read.
COLLECTED = """
import json


def pytest_collection_finish(session):
    found = {
        item.nodeid: {
            "timeout": item.get_closest_marker("timeout").args[0],
            "gpu": item.get_closest_marker("gpu") is not None,
        }
        for item in session.items
    }
    (session.config.rootpath / "collected.json").write_text(json.dumps(found))
"""


def test_a_conftest_stage_with_a_gpu_and_a_budget_is_marked_and_timed(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(PLUGIN + COLLECTED)
    research = write_research_case(pytester.path, "alpha")
    result = pytester.runpytest_subprocess("cases", "--co", "-q", "--strict-markers", "-m", "gpu")
    assert result.ret == 0, result.stdout.str()
    collected = json.loads((pytester.path / "collected.json").read_text())
    gpu = sorted(nodeid.rsplit("::", 1)[1] for nodeid, item in collected.items() if item["gpu"])
    assert gpu == [
        "test_c2_gpu_visible",
        "test_c3_entry_point_on_one_gpu",
        "test_c4_distributed_run",
        "test_c9_python_runs",
    ]
    # The built-in stages' budgets as this process (without C9) counts them, plus C9's.
    expected = case_timeout(load_case(research / "case.toml")) + 321
    assert {item["timeout"] for item in collected.values()} == {expected}


KIND = """
from pytest_enconda.aspects import ASPECTS, Aspect
from pytest_enconda.kinds import TASK_KINDS, TaskKind, TaskPrompt


def setup_then_test(ctx):
    from pytest_enconda.grading.verdict import ItemVerdict

    missing = ctx.missing_output()
    if missing is not None:
        return missing
    steps = ctx.execution_record().steps
    failed = [step.name for step in steps if step.exit_code != 0]
    return ItemVerdict(
        outcome="failed" if failed or not steps else "passed",
        message=f"failed: {failed}" if failed else f"{len(steps)} steps exited 0",
    )


TASK_KINDS.register(
    TaskKind(
        "toy",
        "a toy kind: the setup and the test command, run",
        needs_test_command=True,
        outputs=("setup.sh",),
        prompt=TaskPrompt("What to leave behind", "Write `$output_dir/$setup`."),
        marker="toykind",
    )
)
ASPECTS.register(
    Aspect("toy_runs", setup_then_test, contract_file="setup.sh", task_kind="toy")
)
"""


def test_a_conftest_adds_a_task_kind(pytester: pytest.Pytester) -> None:
    fake_project(pytester.path)
    conftest = pytester.path / "conftest.py"
    conftest.write_text(conftest.read_text() + KIND)
    toy = write_case(pytester.path, "toy-case")
    write_case(pytester.path, "diag")
    toml = toy / "case.toml"
    toml.write_text(toml.read_text().replace('suite = "diagnosis"', 'suite = "toy"'))
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases", "-m", "toykind", "--strict-markers", "--run-dir", str(run), "-v"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*toy-case*toy_runs PASSED*"])
    verdict = json.loads((run / "cases" / "toy-case" / "grading" / "toy_runs.json").read_text())
    assert verdict["message"] == "2 steps exited 0"
