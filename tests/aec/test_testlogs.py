"""The test-log parsers on real logs (tests/data/testlogs, made by running each runner) and on
garbage; the ``test-log`` command as users call it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_enconda.aec import testlogs
from pytest_enconda.aec.testlogs import parse_test_log, read_log
from pytest_enconda.cli import main

DATA = Path(__file__).resolve().parents[1] / "data" / "testlogs"
RUNNERS = sorted(path.parent.name for path in DATA.glob("*/expected.json"))
CASES = [
    (runner, name, expected)
    for runner in RUNNERS
    for name, expected in json.loads((DATA / runner / "expected.json").read_text()).items()
]
COUNTS = ("framework", "passed", "failed", "skipped", "errors")


def test_every_runner_and_scenario_has_logs() -> None:
    # The brief's list of runners (and Automake's, which jq's `make check` needs) and, for each,
    # the five scenarios.
    assert set(RUNNERS) == {
        "pytest", "unittest", "cargo", "go", "ctest", "junit4", "junit5", "maven",
        "node", "jest", "mocha", "phpunit", "automake",
    }  # fmt: skip
    for runner in RUNNERS:
        names = {name for r, name, _ in CASES if r == runner}
        assert {"pass", "fail", "error", "none", "skip"} <= names, runner
        assert {path.stem for path in (DATA / runner).glob("*.log")} == names, runner


@pytest.mark.parametrize(
    ("runner", "name", "expected"), CASES, ids=[f"{r}/{n}" for r, n, _ in CASES]
)
@pytest.mark.parametrize("with_exit_code", [False, True], ids=["log", "log+exit"])
def test_real_log(runner: str, name: str, expected: dict[str, Any], with_exit_code: bool) -> None:
    text = (DATA / runner / f"{name}.log").read_text(encoding="utf-8")
    result = parse_test_log(text, expected["exit_code"] if with_exit_code else None)
    assert {key: getattr(result, key) for key in COUNTS} == {key: expected[key] for key in COUNTS}
    assert result.verdict == expected["verdict"], result.reason
    if result.verdict == "success":
        assert result.evidence, "a success names the summary line that settled it"


@pytest.mark.parametrize(
    ("runner", "name"),
    [("pytest", "pass"), ("cargo", "pass"), ("go", "pass-v"), ("maven", "pass"), ("node", "pass")],
)
def test_passing_summary_with_failing_exit_code_is_inconclusive(runner: str, name: str) -> None:
    result = parse_test_log((DATA / runner / f"{name}.log").read_text(encoding="utf-8"), 1)
    assert result.verdict == "inconclusive"
    assert "exited 1" in result.reason


@pytest.mark.parametrize(
    ("text", "exit_code", "verdict"),
    [
        ("Installing...\nAll tests passed!\nDone.\n", None, "inconclusive"),
        ("All tests passed!\n", 0, "inconclusive"),
        ("Everything works, 100% of tests passed.\n", 1, "failure"),
        ("", None, "inconclusive"),
        ("", 0, "inconclusive"),
        ("src/main.c:3:5: error: unknown type name 'foo'\n", None, "failure"),
        # A TAP comment alone is not node's totals block (hypothesis found it read as a pass).
        ("# pass 1\n", None, "inconclusive"),
        ("\u2139 tests 1\n# pass 1\n", 0, "inconclusive"),
    ],
    ids=[
        "prose",
        "prose-exit-0",
        "prose-exit-1",
        "empty",
        "empty-exit-0",
        "gcc-error",
        "tap-comment",
        "mixed-node-markers",
    ],
)
def test_without_a_summary(text: str, exit_code: int | None, verdict: str) -> None:
    result = parse_test_log(text, exit_code)
    assert (result.framework, result.verdict) == ("unknown", verdict)
    assert result.passed is None


def test_several_runs_in_one_log_are_summed() -> None:
    # Two commands in one log (e.g. `pytest && cargo test`): both runners, counts added.
    text = (DATA / "pytest" / "skip.log").read_text() + (DATA / "cargo" / "fail.log").read_text()
    result = parse_test_log(text)
    assert (result.framework, result.passed, result.failed, result.skipped) == (
        "pytest+cargo",
        5,
        1,
        1,
    )
    assert result.verdict == "failure"


def test_huge_log_keeps_head_and_tail(tmp_path: Path) -> None:
    summary = (DATA / "pytest" / "pass.log").read_text()
    text = "x" * 100 + "\n" + ("noise line\n" * (testlogs.MAX_CHARS // 5)) + summary
    result = parse_test_log(text)
    assert (result.truncated, result.verdict, result.passed) == (True, "success", 3)
    path = tmp_path / "big.log"
    path.write_text(text)
    read, truncated = read_log(path)
    assert truncated and len(read) <= testlogs.MAX_CHARS + 1 and read.endswith(summary)


def test_non_utf8_and_ansi_colours_are_read() -> None:
    coloured = b"\x1b[32m==== 2 passed in 0.10s ====\x1b[0m\n\xff\xfe junk\n"
    result = parse_test_log(coloured.decode("utf-8", errors="replace"))
    assert (result.framework, result.passed, result.verdict) == ("pytest", 2, "success")


@pytest.mark.parametrize(("name", "code"), [("pass", 0), ("fail", 1), ("none", 1)])
def test_cli_json_and_exit_codes(name: str, code: int, capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "pytest" / f"{name}.log"
    assert main(["test-log", str(path), "--json"]) == code
    printed = json.loads(capsys.readouterr().out)
    expected = json.loads((DATA / "pytest" / "expected.json").read_text())[name]
    assert {key: printed[key] for key in ("framework", "passed", "failed", "skipped")} == {
        key: expected[key] for key in ("framework", "passed", "failed", "skipped")
    }
    assert printed["verdict"] == expected["verdict"]


def test_cli_readable_line_and_inconclusive_exit(capsys: pytest.CaptureFixture[str]) -> None:
    path = DATA / "cargo" / "pass.log"
    assert main(["test-log", str(path), "--exit-code", "3"]) == 2
    out = capsys.readouterr().out
    assert out.startswith("cargo: inconclusive (the summary passes but the command exited 3)")
    assert "4 passed, 0 failed, 0 skipped" in out


def test_cli_reads_stdin_in_a_process() -> None:
    log = (DATA / "go" / "fail-v.log").read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", "pytest_enconda.cli", "test-log", "-", "--json"],
        input=log,
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout) == {
        "framework": "go",
        "passed": 3,
        "failed": 1,
        "skipped": 0,
        "verdict": "failure",
        "errors": None,
        "reason": "1 failed",
    }


def test_cli_missing_file_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["test-log", str(tmp_path / "absent.log")]) == 2
    assert "cannot read" in capsys.readouterr().err


# Lines a log is made of: the runners' own summary vocabulary, so garbage comes near the
# patterns, plus arbitrary text.
_FRAGMENTS = st.sampled_from(
    [
        "test result: ok.",
        " passed",
        " failed",
        "Tests run: ",
        "OK (",
        "ok  \texample.com/x\t",
        "# pass ",
        "\u2139 tests ",
        "Ran ",
        " tests in 0.1s",
        "=== ",
        "Tests: ",
        " passing (3ms)",
        "100% tests passed",
        "[ ",
        " tests successful ]",
        "All tests passed!",
        "\x1b[31m",
        "\n",
        "\r",
        ", ",
        "; ",
    ]
)
_GARBAGE = st.lists(
    st.one_of(_FRAGMENTS, st.text(max_size=30), st.integers(0, 10**6).map(str)), max_size=60
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_GARBAGE, exit_code=st.one_of(st.none(), st.integers(-255, 255)))
def test_garbage_never_raises_and_is_never_success(text: str, exit_code: int | None) -> None:
    result = parse_test_log(text, exit_code)
    assert result.verdict in ("failure", "inconclusive")


@settings(max_examples=100, deadline=None)
@given(prefix=_GARBAGE, suffix=_GARBAGE)
def test_a_failing_summary_is_never_outvoted(prefix: str, suffix: str) -> None:
    # Whatever surrounds a real failing run, the verdict stays failure.
    failing = (DATA / "maven" / "fail.log").read_text()
    result = parse_test_log(f"{prefix}\n{failing}\n{suffix}", 0)
    assert result.verdict == "failure"
    assert (result.failed or 0) >= 1


def test_an_unindented_mocha_total_is_no_summary() -> None:
    """Hypothesis found "1 passing (3ms)" alone read as a Mocha success; Mocha's epilogue always
    indents its totals (tests/data/testlogs/mocha/*.log), so a bare one is other text."""
    assert parse_test_log("1 passing (3ms)", None).verdict == "inconclusive"
    assert parse_test_log("\n  1 passing (3ms)\n", None).verdict == "success"
