"""Issue 46's three log-parser faults, each on a real log (tests/aec/logs, made by running go test
and ctest; its README says how): a go test-timeout panic read as a pass, a failure in the middle
of a log over the size bound dropped, a CTest "Not Run" test counted failed and skipped. Each is
read with and without the command's exit code: without it, none may read as a success."""

from __future__ import annotations

import gzip
import importlib.util
import io
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_enconda.aec import testlogs
from pytest_enconda.aec.testlogs import parse_test_log, read_log
from pytest_enconda.aec.testnames import test_outcomes as outcomes_of

LOGS = Path(__file__).resolve().parent / "logs"
COUNTS = ("framework", "passed", "failed", "skipped", "errors")


def _counts(result: testlogs.TestLogResult) -> dict[str, Any]:
    return {key: getattr(result, key) for key in COUNTS}


def _big() -> str:
    return gzip.decompress((LOGS / "go-big.log.gz").read_bytes()).decode("utf-8")


@pytest.mark.parametrize("exit_code", [None, 1], ids=["log", "log+exit"])
@pytest.mark.parametrize(
    ("name", "passed", "skipped"), [("go-timeout", None, None), ("go-timeout-v", 2, 0)]
)
def test_a_go_timeout_panic_is_a_failure(
    name: str, passed: int | None, skipped: int | None, exit_code: int | None
) -> None:
    # The package failed with no `--- FAIL` line: one error, not a pass.
    result = parse_test_log((LOGS / f"{name}.log").read_text(encoding="utf-8"), exit_code)
    assert _counts(result) == {
        "framework": "go",
        "passed": passed,
        "failed": 0,
        "skipped": skipped,
        "errors": 1,
    }
    assert (result.verdict, result.reason) == ("failure", "1 errors")
    assert "FAIL\texample.com/tl/b\t" in "\n".join(result.evidence)
    assert "panic: test timed out after 1s" in result.evidence


def test_a_failing_test_is_not_also_a_package_error() -> None:
    # The package line that follows a `--- FAIL` is that test's, not another failure.
    text = "--- FAIL: TestX (0.00s)\nFAIL\nFAIL\texample.com/x\t0.01s\nok  \texample.com/y\t0.01s\n"
    result = parse_test_log(text)
    assert (result.failed, result.errors, result.verdict) == (1, None, "failure")


@pytest.mark.parametrize("exit_code", [None, 8], ids=["log", "log+exit"])
def test_a_ctest_not_run_test_is_failed_not_skipped(exit_code: int | None) -> None:
    text = (LOGS / "ctest-notrun.log").read_text(encoding="utf-8")
    result = parse_test_log(text, exit_code)
    assert _counts(result) == {
        "framework": "ctest",
        "passed": 2,
        "failed": 1,
        "skipped": 0,
        "errors": None,
    }
    assert result.verdict == "failure"
    assert outcomes_of(text) == {"t_one": "passed", "t_missing": "failed", "t_three": "passed"}


@pytest.mark.parametrize("exit_code", [None, 1], ids=["log", "log+exit"])
def test_a_failure_in_the_middle_of_a_long_log_is_read(exit_code: int | None) -> None:
    text = _big()
    failure = text.index("--- FAIL: TestAdd")
    # The log really is past the bound, and its failure outside what the head and tail hold.
    assert len(text) > testlogs.MAX_CHARS
    assert testlogs.HEAD_CHARS < failure < len(text) - testlogs.TAIL_CHARS
    result = parse_test_log(text, exit_code)
    assert result.truncated
    assert _counts(result) == {
        "framework": "go",
        "passed": 3000,
        "failed": 1,
        "skipped": 0,
        "errors": None,
    }
    assert (result.verdict, result.reason) == ("failure", "1 failed")
    assert "FAIL\texample.com/tl/b\t0.004s" in result.evidence


def test_a_long_log_read_from_a_file_or_a_stream_keeps_its_middle_failure(tmp_path: Path) -> None:
    text = _big()
    path = tmp_path / "big.log"
    path.write_text(text, encoding="utf-8")
    from_file = read_log(path)
    from_stream = testlogs._read_stream(io.BytesIO(text.encode()))  # pyright: ignore[reportPrivateUsage]
    for read, truncated in (from_file, from_stream):
        assert truncated
        # Head and tail whole, and of the middle only the lines the parsers read.
        assert read.startswith(text[: testlogs.HEAD_CHARS])
        assert read.endswith(text[-testlogs.TAIL_CHARS :])
        assert len(read) < len(text)
        result = parse_test_log(read, truncated=truncated)
        assert (result.failed, result.passed, result.verdict) == (1, 3000, "failure")
        # Reading the read text again keeps what it kept: grading reads a file, then parses.
        assert _counts(parse_test_log(read)) == _counts(parse_test_log(text))


def test_a_file_past_the_stream_limit_skips_to_its_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past MAX_STREAM_BYTES the rest of the middle is skipped: of this 1.72 MB file the first
    # 0.9 MB is streamed (its failure at 0.86 MB read), then the last 0.8 MB, its tail.
    monkeypatch.setattr(testlogs, "MAX_STREAM_BYTES", 1_700_000)
    text = _big()
    path = tmp_path / "big.log"
    path.write_text(text, encoding="utf-8")
    read, truncated = read_log(path)
    assert truncated and read.endswith(text[-testlogs.TAIL_CHARS :])
    result = parse_test_log(read)
    assert (result.failed, result.verdict) == (1, "failure")
    assert "ok  \texample.com/tl/c\t0.058s" in result.evidence


def test_passing_lines_never_crowd_out_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    # A middle of more passing tests than the cap keeps, then a failure: the failure is kept,
    # and what is kept stays bounded by the caps.
    monkeypatch.setattr(testlogs, "MAX_KEPT_LINES", 50)
    big = _big()
    start, end = big.index("--- FAIL: TestAdd"), big.index("ok  \texample.com/tl/c")
    failing = big[big.rindex("=== RUN", 0, start) : big.index("\n", end) + 1]
    passing = big[: big.index("ok  \texample.com/tl/a")]
    text = passing + passing + failing + passing
    result = parse_test_log(text)
    assert (result.truncated, result.failed, result.verdict) == (True, 1, "failure")
    bounded, _ = testlogs._bound(text)  # pyright: ignore[reportPrivateUsage]
    middle = len(bounded) - testlogs.MAX_CHARS
    assert middle < 3 * 50 * (testlogs.MAX_LINE + 1)


def test_many_failures_in_the_middle_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testlogs, "MAX_KEPT_LINES", 10)
    block = _big()[: testlogs.HEAD_CHARS]
    failures = "".join(f"--- FAIL: TestF{i} (0.00s)\n" for i in range(1_000))
    text = block + failures + "FAIL\texample.com/f\t0.1s\n" + "x\n" * testlogs.TAIL_CHARS
    bounded, cut = testlogs._bound(text)  # pyright: ignore[reportPrivateUsage]
    # The first ten verdict lines and the last ten: nine failures and the package line after them.
    assert cut and bounded.count("--- FAIL: TestF") == 19
    assert "--- FAIL: TestF999 " in bounded and "FAIL\texample.com/f\t0.1s" in bounded
    result = parse_test_log(text)
    assert (result.failed, result.verdict) == (19, "failure")


def _linear_trials() -> Any:
    path = Path(__file__).resolve().parents[1] / "hostile" / "test_regex_linear.py"
    spec = importlib.util.spec_from_file_location("_regex_linear_for_aec", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run_trials


def test_the_kept_line_patterns_are_linear() -> None:
    # Built from the registry at run time, so the hostile suite's scan of module-level patterns
    # does not see them joined: they are tried here the same way, on 1 MB adversarial texts.
    verdict, count = testlogs._kept_patterns()  # pyright: ignore[reportPrivateUsage]
    named: dict[str, re.Pattern[Any]] = {"testlogs.verdict": verdict, "testlogs.count": count}
    slow, trials = _linear_trials()(named)
    assert trials > 0 and not slow, slow
