"""A stage, an aspect and a task kind added by a test plugin (a conftest.py), with no package
file touched (issue 44: one module plus one registration each).

The README's "Adding a stage or an aspect" example, run: the host backend (``--python``) grades
the interpreter running this test, so no Docker is needed. One stage declares a budget of its own
(``c9_seconds``, 321 s unless the case's ``[budgets]`` says otherwise): it is in the item's
timeout and in the stage's context as it runs, and its column is in the summary and the reports.
Another declares a GPU: its probe carries the ``gpu`` marker, and on a host without one it is
skipped with the reason, as C2-C4 are. The task kind's case runs on the fake backend.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

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

    run = ctx.environment.run("python3 --version", timeout=ctx.budget)
    outcome = "passed" if run.ok else "failed"
    numbers = {"exit_code": run.exit_code, "budget": ctx.budget}
    return StageResult(stage="C9", outcome=outcome, message=run.output.strip(), numbers=numbers)


def on_a_gpu(ctx):
    from pytest_enconda.probing.pyramid import StageResult

    run = ctx.environment.run("python3 -c pass", gpus=0, timeout=60)
    return StageResult(stage="C6", outcome="passed" if run.ok else "failed", message="ran")


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
        name="C6",
        title="C6 on a GPU",
        run=on_a_gpu,
        probe="test_c6_on_a_gpu",
        description="python3 runs with GPU 0 visible.",
        gpus=1,
    )
)
STAGES.register(
    Stage(
        name="C9",
        title="C9 python",
        run=python_runs,
        probe="test_c9_python_runs",
        description="python3 --version exits 0 in the environment.",
        budget_field="c9_seconds",
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
    _give_budget(research, "c9_seconds = 77")
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
    assert stage["numbers"]["budget"] == 77  # the case's budget, in the stage's context
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


def _give_budget(case_dir: Path, line: str) -> None:
    """A line added to the case's ``[budgets]`` table (its last)."""
    toml = case_dir / "case.toml"
    toml.write_text(toml.read_text() + line + "\n")


def test_a_conftest_stage_with_a_gpu_and_a_budget_is_marked_and_timed(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(PLUGIN + COLLECTED)
    default = write_research_case(pytester.path, "alpha")
    given = write_research_case(pytester.path, "gamma")
    _give_budget(given, "c9_seconds = 500")
    result = pytester.runpytest_subprocess("cases", "--co", "-q", "--strict-markers")
    assert result.ret == 0, result.stdout.str()
    collected = json.loads((pytester.path / "collected.json").read_text())
    gpu = sorted(
        nodeid.rsplit("::", 1)[1]
        for nodeid, item in collected.items()
        if item["gpu"] and "alpha" in nodeid
    )
    assert gpu == [
        "test_c2_gpu_visible",
        "test_c3_entry_point_on_one_gpu",
        "test_c4_distributed_run",
        "test_c6_on_a_gpu",
    ]
    # The built-in stages' budgets as this process (without C9) counts them, plus C9's: its
    # default, or what the case gives it.
    timeouts = {nodeid.split("/")[1]: item["timeout"] for nodeid, item in collected.items()}
    base = case_timeout(load_case(default / "case.toml"))
    assert timeouts == {"alpha": base + 321, "gamma": base + 500}


def test_a_stage_budget_no_stage_declares_is_refused_at_collection(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(PLUGIN)
    _give_budget(write_research_case(pytester.path, "alpha"), "c9_secs_seconds = 5")
    _give_budget(write_research_case(pytester.path, "beta"), "c4_seconds = 5")
    result = pytester.runpytest_subprocess("cases", "--co", "-q")
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        [
            "*budgets.c9_secs_seconds*no pyramid stage of suite 'research' declares this budget;"
            " declared: c9_seconds*",
            "*budgets.c4_seconds: a ?research? field: write it there*",  # fnmatch: [ is a set
        ],
        consecutive=False,
    )


# The host's GPU count as the host backend reads it, fixed for the test.
HOST_GPUS = """
import pytest_enconda.backends.host as host

host.host_gpu_count = lambda: {gpus}
"""


@pytest.mark.parametrize(("gpus", "outcome"), [(0, "skipped"), (1, "passed")])
def test_a_conftest_gpu_stage_is_skipped_on_a_host_without_one(
    pytester: pytest.Pytester, gpus: int, outcome: str
) -> None:
    pytester.makeconftest(PLUGIN + HOST_GPUS.format(gpus=gpus))
    research = write_research_case(pytester.path, "alpha")
    report = pytester.path / "report.json"
    report.write_text(json.dumps({"python_path": sys.executable, "env_tool": "pip"}))
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "-m",
        "gpu",
        "-k",
        "C6",
        "--python",
        sys.executable,
        "--repo",
        str(research / "repo"),
        "--report",
        str(report),
        "--run-dir",
        str(run),
        "-rs",
    )
    result.assert_outcomes(**{outcome: 1})
    stage = json.loads((run / "cases" / "alpha" / "pyramid" / "C6.json").read_text())
    assert stage["outcome"] == outcome
    if gpus == 0:
        assert stage["message"].startswith("C6 needs a GPU (this host has 0)")
        result.stdout.fnmatch_lines(["*C6 needs a GPU (this host has 0)*"])


KIND = """
from pytest_enconda.aspects import ASPECTS, Aspect
from pytest_enconda.kinds import TASK_KINDS, ReportSection, TaskKind, TaskPrompt


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


def toy_summary(records):
    rows = [row for row in records.rows.values() if row.item == "toy_runs"]
    if not rows:
        return None
    return {"cases": len(rows), "passed": sum(row.outcome == "passed" for row in rows)}


def toy_html(summary):
    toy = summary.get("toy")
    if not toy:
        return []
    return [
        "<h3>Toy cases</h3>",
        f'<p id="enconda-toy">{toy["passed"]} of {toy["cases"]} toy cases ran</p>',
    ]


TASK_KINDS.register(
    TaskKind(
        "toy",
        "a toy kind: the setup and the test command, run",
        needs_test_command=True,
        outputs=("setup.sh",),
        prompt=TaskPrompt("What to leave behind", "Write `$output_dir/$setup`."),
        marker="toykind",
        report=ReportSection(html=toy_html, summarize=toy_summary),
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
    # Its report section: its numbers in summary.json under its name, its part of report.html
    # where the built-in kinds' go (none of theirs: no case of theirs ran).
    assert json.loads((run / "summary.json").read_text())["toy"] == {"cases": 1, "passed": 1}
    html = (run / "report.html").read_text()
    assert '<h3>Toy cases</h3>\n<p id="enconda-toy">1 of 1 toy cases ran</p>' in html
    assert html.index("enconda-toy") < html.index("Averages per case")
    assert "enconda-main" not in html and "enconda-aec" not in html
