"""Collection, keywords, options and malformed cases, run as users run pytest (pytester)."""

from __future__ import annotations

import pytest
from casefactory import golden_error, write_case

pytest_plugins = ["pytester"]


def _collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line and not line.startswith("ERROR")]


def test_one_item_per_aspect(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "alpha-e4")
    result = pytester.runpytest("cases", "--collect-only", "-q")
    assert _collected(result) == [
        f"cases/alpha-e4/case.toml::{aspect}"
        for aspect in ("execution", "error_types", "descriptions", "fixes")
    ]


def test_k_selects_cases_by_error_type(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "alpha", errors=[golden_error("E4"), golden_error("E1")])
    write_case(pytester.path, "beta", errors=[golden_error("E2")])
    write_case(pytester.path, "gamma", errors=[golden_error("E4")])
    result = pytester.runpytest("cases", "--collect-only", "-q", "-k", "E4")
    cases = {line.split("/")[1] for line in _collected(result)}
    assert cases == {"alpha", "gamma"}
    result = pytester.runpytest("cases", "--collect-only", "-q", "-k", "level2 and execution")
    assert _collected(result) == ["cases/alpha/case.toml::execution"]
    result = pytester.runpytest("cases", "--collect-only", "-q", "-m", "diagnosis", "-k", "E2")
    assert {line.split("/")[1] for line in _collected(result)} == {"beta"}


def test_malformed_case_names_each_field_and_others_still_collect(
    pytester: pytest.Pytester,
) -> None:
    write_case(pytester.path, "good")
    bad = pytester.path / "cases" / "bad"
    bad.mkdir(parents=True)
    (bad / "case.toml").write_text(
        'id = "bad id"\nsuite = "diagnose"\nreadme = "missing.md"\n'
        'colour = "blue"\n[repository]\nkind = "git"\npath = "."\n'
    )
    result = pytester.runpytest("cases", "--collect-only", "-q")
    text = result.stdout.str()
    assert "cases/bad/case.toml: invalid case" in text
    for fragment in (
        "id: String should match pattern",
        "suite: Value error, expected one of diagnosis, research, aec, got 'diagnose'",
        "repository: Value error, kind='git' needs 'revision'",
        "colour: unknown field",
    ):
        assert fragment in text, fragment
    assert len(_collected(result)) == 4
    result.assert_outcomes(errors=1)


def test_diagnosis_case_needs_a_test_command(pytester: pytest.Pytester) -> None:
    case_dir = write_case(pytester.path, "notest")
    toml = (case_dir / "case.toml").read_text()
    (case_dir / "case.toml").write_text(
        "\n".join(line for line in toml.splitlines() if not line.startswith("test_command"))
    )
    result = pytester.runpytest("cases", "--collect-only", "-q")
    assert "a diagnosis case needs 'test_command'" in result.stdout.str()
    result.assert_outcomes(errors=1)


def test_missing_files_are_named(pytester: pytest.Pytester) -> None:
    case_dir = write_case(pytester.path, "gone")
    (case_dir / "golden.json").write_text('{"level": 2, "errors": [{"error_type": "E5"}]}')
    (case_dir / "setup.sh").unlink()
    result = pytester.runpytest("cases", "--collect-only", "-q")
    text = result.stdout.str()
    assert "golden_setup: file not found" in text
    assert "golden (golden.json): errors.0.error_type" in text
    assert "golden (golden.json): errors.0.golden_answer: required field is missing" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge-concurrency", "0"], "expected a positive integer, got '0'"),
        (["--agent", "no such agent"], "--agent: expected an agent name"),
        (["--network-mode", "wifi"], "--network-mode: expected one of bridge, host, none"),
        (["--gpus", "some"], "--gpus: expected 'none', 'all' or a count"),
        (["--agent-option", "novalue"], "--agent-option: expected KEY=VALUE"),
        (["--agent", "replay"], "--agent=replay needs --predictions PATH"),
        (["--repo-mirror", "/nonexistent/mirror"], "expected an existing directory"),
        (["--judge", "llm:"], "--judge 'llm:': expected llm:<model>, e.g. llm:gpt-4o-mini"),
        (["--judge", "9lives"], "--judge: expected NAME or NAME:ARG of a registered judge"),
    ],
)
def test_invalid_options_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    result = pytester.runpytest(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()


def test_existing_run_dir_needs_resume(pytester: pytest.Pytester) -> None:
    run_dir = pytester.path / "run"
    run_dir.mkdir()
    (run_dir / "results.jsonl").write_text("")
    result = pytester.runpytest("--run-dir", str(run_dir))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"use --resume {run_dir}" in result.stderr.str()


def test_unrelated_test_suite_is_untouched(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not (pytester.path / "reports").exists()
