"""The host backend (``--python``/``--repo``) as the README shows it (issue 19)."""

from __future__ import annotations

import sys

import pytest
from casefactory import write_research_case


def test_no_case_collected_is_a_usage_error_with_a_hint(pytester: pytest.Pytester) -> None:
    repo = pytester.mkdir("repo")
    result = pytester.runpytest(
        "--python", sys.executable, "--repo", str(repo), "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*no case was collected: name the case's folder*"])


def test_one_environment_against_several_cases_is_refused(pytester: pytest.Pytester) -> None:
    first = write_research_case(pytester.path, "alpha")
    write_research_case(pytester.path, "beta")
    result = pytester.runpytest(
        "cases", "--python", sys.executable, "--repo", str(first / "repo"), "-k", "C1"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*but 2 cases were collected (alpha, beta): name exactly one*"])


def test_a_host_run_is_labelled_with_its_environment_not_the_oracle(
    pytester: pytest.Pytester,
) -> None:
    import json

    case = write_research_case(pytester.path, "alpha")
    run = pytester.path / "run"
    result = pytester.runpytest(
        "cases",
        "--python",
        sys.executable,
        "--repo",
        str(case / "repo"),
        "-k",
        "C5",
        "--run-dir",
        str(run),
    )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["agent"] == f"existing environment {sys.executable} (host backend)"
