"""A stage and an aspect added by a test plugin (a conftest.py), with no package file touched.

The README's "Adding a stage or an aspect" example, run: the host backend (``--python``) grades
the interpreter running this test, so no Docker is needed.
"""

from __future__ import annotations

import json
import sys

import pytest
from casefactory import write_case, write_research_case

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
