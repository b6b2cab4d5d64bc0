"""PHPUnit 9's per-test names (``--debug``) on real logs of the phpmoney case."""

from __future__ import annotations

from pathlib import Path

from pytest_enconda.aec.testlogs import parse_test_log
from pytest_enconda.aec.testnames import test_outcomes as names_in

LOGS = Path(__file__).parent / "logs" / "phpunit"
NS = "PhpMoney\\Tests\\"


def _outcomes(name: str) -> dict[str, str]:
    return dict(names_in((LOGS / name).read_text(encoding="utf-8")))


def test_a_passing_run_names_every_test_passed() -> None:
    found = _outcomes("pass.log")
    assert len(found) == 9
    assert set(found.values()) == {"passed"}
    assert found[f"{NS}MoneyTest::testAddsExactly"] == "passed"
    assert f"{NS}AllocatorTest::testLosesNothing" in found


def test_verbose_lists_give_each_outcome() -> None:
    found = _outcomes("fail-verbose.log")
    assert len(found) == 15
    assert found[f"{NS}ExtraTest::testErrors"] == "failed"
    assert found[f"{NS}MoneyTest::testMultipliesRoundingHalfAwayFromZero"] == "failed"
    assert found[f'{NS}ExtraTest::testProvided with data set "two" (2)'] == "failed"
    assert found[f'{NS}ExtraTest::testProvided with data set "one" (1)'] == "passed"
    assert found[f"{NS}ExtraTest::testSkipped"] == "skipped"
    assert found[f"{NS}ExtraTest::testIncomplete"] == "skipped"
    # PHPUnit counts a risky test (no assertion) as run, not as a failure.
    assert found[f"{NS}ExtraTest::testRisky"] == "passed"
    assert found[f"{NS}MoneyTest::testAddsExactly"] == "passed"


def test_unlisted_skips_leave_no_test_passed() -> None:
    """Without --verbose the skipped and incomplete tests are counted but not listed: no
    unlisted test can be told to have passed, so none reads as passed; the risky one is
    listed (as PHPUnit 9 lists it without --verbose too), so it keeps its pass."""
    found = _outcomes("fail.log")
    assert len(found) == 15
    assert found[f"{NS}ExtraTest::testErrors"] == "failed"
    assert found[f"{NS}ExtraTest::testSkipped"] == "skipped"
    assert found[f"{NS}MoneyTest::testAddsExactly"] == "skipped"
    assert found[f"{NS}ExtraTest::testRisky"] == "passed"
    assert [name for name, outcome in found.items() if outcome == "passed"] == [
        f"{NS}ExtraTest::testRisky"
    ]


def test_a_listed_test_that_never_ended_is_named() -> None:
    log = (
        "PHPUnit 9.6.7 by Sebastian Bergmann and contributors.\n\n"
        "Test 'A\\BTest::testOk' started\nTest 'A\\BTest::testOk' ended\n\n"
        "There was 1 error:\n\n1) A\\BTest::testData\n"
        "The data provider specified for A\\BTest::testData is invalid.\n\n"
        "ERRORS!\nTests: 2, Assertions: 1, Errors: 1.\n"
    )
    assert dict(names_in(log)) == {"A\\BTest::testOk": "passed", "A\\BTest::testData": "failed"}


def test_the_summary_parser_agrees_with_the_names() -> None:
    counts = parse_test_log((LOGS / "fail-verbose.log").read_text(encoding="utf-8"))
    assert counts is not None
    assert (counts.failed, counts.errors) == (2, 1)
