"""Reading a test runner's log: counts of passed, failed and skipped tests and a verdict.

Runners: each ecosystem's (``pytest_enconda.ecosystems``), read in registration order: pytest,
unittest, cargo test, go test (plain and ``-v``), ctest, Automake's ``make check``, JUnit 4
(JUnitCore), JUnit 5 (ConsoleLauncher), Maven Surefire, node's test runner (TAP and spec), Jest,
Mocha, PHPUnit. This module reads no runner itself: it runs them all and decides.

Verdict rules, in order (the README's "Reading test logs" repeats them):

1. A summary that counts a failed test or an error -> ``failure``.
2. A compile error or a collection error the runner itself reports (``could not compile``,
   ``[build failed]``, ``COMPILATION ERROR``, pytest's "errors during collection", a test file that
   failed to load) -> ``failure``, whatever else passed.
3. Summaries that executed no test at all ("no tests ran", ``Ran 0 tests``, ``[no test files]``,
   ``No tests were found!!!``) -> ``failure``: the runner ran and proved nothing.
4. Summaries that pass: ``success``, unless an exit code was given and is not 0, then
   ``inconclusive`` (the process failed after or around a passing summary: a later step, a
   coverage gate, or a summary printed by another command than the one that failed).
5. No summary: a compiler's error lines -> ``failure``; else a non-zero exit code -> ``failure``;
   else ``inconclusive`` (exit 0 with no summary, or prose claiming success, proves nothing).

Several runs in one log (cargo's per-binary ``test result:`` lines, go's packages, Maven's modules,
two commands' outputs) are summed. A count is ``None`` where the log does not say it (plain
``go test`` names packages, not tests; a compile error prints no counts).

Logs are bounded: past ``MAX_CHARS`` only the head and the tail are read (summaries sit at the end,
banners at the start), and ``truncated`` says so. Standard library and pydantic only.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ..ecosystems import ECOSYSTEMS, MAX_EVIDENCE, LogParser, any_of
from ..textio import open_regular

Verdict = Literal["success", "failure", "inconclusive"]

HEAD_CHARS = 200_000
TAIL_CHARS = 800_000
MAX_CHARS = HEAD_CHARS + TAIL_CHARS
# The runners' regexes are anchored and unambiguous, but a single megabyte-long line (a
# minified bundle, a progress bar without newlines) is still cut before matching.
MAX_LINE = 2_000
# A stream (standard input, a FIFO, a device) has no end to seek to: past this much it is cut,
# so that `test-log /dev/zero` ends.
MAX_STREAM_BYTES = 1 << 30

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][A-Za-z0-9]")


class TestLogResult(BaseModel):
    """What a test log says: runner(s), counts, verdict and the lines that decided it."""

    __test__ = False  # a pydantic model named Test*, not a test class for pytest to collect

    framework: str = Field(description="runner name, several joined by '+', or 'unknown'")
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    errors: int | None = Field(default=None, description="errors apart from failed assertions")
    verdict: Verdict
    reason: str
    evidence: list[str] = Field(default_factory=list)
    truncated: bool = False

    def summary(self) -> dict[str, object]:
        """The CLI's JSON: the five documented keys, plus errors and the reason."""
        return {
            "framework": self.framework,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "verdict": self.verdict,
            "errors": self.errors,
            "reason": self.reason,
        }


def _clean(text: str) -> list[str]:
    return [line[:MAX_LINE].rstrip() for line in _ANSI.sub("", text).splitlines()]


# Signs of a failed build for logs with no runner summary, beside each ecosystem's compilers'
# (``Ecosystem.compile_errors``): languages no ecosystem covers, and errors any of them prints.
_COMPILE_SIGNS = (
    r"\S+\.(?:cs|swift):\[?\d+[:,]\d*\]?:? (?:fatal )?error:?",
    r"error: ",
    r"SyntaxError: ",
)


def _parsers() -> list[LogParser]:
    return [parser for ecosystem in ECOSYSTEMS.values() for parser in ecosystem.log_parsers]


def _compile_signs() -> re.Pattern[str]:
    patterns = [sign for ecosystem in ECOSYSTEMS.values() for sign in ecosystem.compile_errors]
    # re's own cache compiles the joined pattern once while the registry stays as it is.
    return re.compile("^" + any_of([*patterns, *_COMPILE_SIGNS]))


def _total(values: Iterable[int | None]) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def _bound(text: str) -> tuple[str, bool]:
    if len(text) <= MAX_CHARS:
        return text, False
    return text[:HEAD_CHARS] + "\n" + text[-TAIL_CHARS:], True


def parse_test_log(
    text: str, exit_code: int | None = None, *, truncated: bool = False
) -> TestLogResult:
    """Read a test log (the runner detected from its text) into counts and a verdict.

    ``truncated``: the caller already cut the text (``read_log`` does); it is reported as such.
    """
    text, cut = _bound(text)
    truncated = truncated or cut
    lines = _clean(text)
    found = [parsed for parser in _parsers() if (parsed := parser(lines)) is not None]
    framework = "+".join(parsed.framework for parsed in found) or "unknown"
    counts = {
        key: _total(getattr(parsed, key) for parsed in found)
        for key in ("passed", "failed", "skipped", "errors")
    }
    evidence = [line for parsed in found for line in parsed.evidence]

    def result(verdict: Verdict, reason: str, extra: Iterable[str] = ()) -> TestLogResult:
        lines_ = list(dict.fromkeys([*evidence, *extra]))[-MAX_EVIDENCE:]
        return TestLogResult(
            framework=framework,
            verdict=verdict,
            reason=reason,
            evidence=[line[:300] for line in lines_],
            truncated=truncated,
            **counts,
        )

    summaries = [item for item in found if item.summary]
    failed, errors = counts["failed"] or 0, counts["errors"] or 0
    if failed or errors:
        parts = [f"{failed} failed"] * bool(failed) + [f"{errors} errors"] * bool(errors)
        return result("failure", ", ".join(parts))
    if any(item.compile_error for item in found):
        return result("failure", "compile error")
    if any(item.collection_error for item in found):
        return result("failure", "collection error: a test file or class failed to load")
    if summaries:
        ran = any(item.executed() > 0 or item.ran for item in summaries)
        if not ran:
            return result("failure", "no tests ran")
        if exit_code not in (None, 0):
            return result("inconclusive", f"the summary passes but the command exited {exit_code}")
        return result("success", "tests ran and none failed")
    signs_pattern = _compile_signs()
    signs = [line for line in lines if signs_pattern.match(line)]
    if signs:
        return result("failure", "build or compile error, no runner summary", signs[:3])
    if exit_code not in (None, 0):
        return result("failure", f"no runner summary and the command exited {exit_code}")
    return result("inconclusive", "no runner summary")


def read_log(source: str | Path) -> tuple[str, bool]:
    """A log's text from a path (``-``: standard input), bounded as ``parse_test_log`` bounds it.

    Only the head and the tail of a large file are read, so a multi-gigabyte log costs as much
    as a small one; a stream is read up to ``MAX_STREAM_BYTES``. Bytes that are not UTF-8 are
    replaced, as logs mix encodings.
    """
    if str(source) == "-":
        return _read_stream(sys.stdin.buffer)
    # A regular file only (``ValueError`` otherwise): a FIFO without a writer would block the
    # read for ever, a device never end; a stream comes on standard input.
    with open_regular(Path(source), 1 << 62) as handle:
        if os.fstat(handle.fileno()).st_size > MAX_CHARS:
            head = handle.read(HEAD_CHARS)
            handle.seek(-TAIL_CHARS, os.SEEK_END)
            tail = handle.read(TAIL_CHARS)
            return _decode(head) + "\n" + _decode(tail), True
        return _read_stream(handle)


def _read_stream(stream: io.BufferedIOBase | io.RawIOBase | object) -> tuple[str, bool]:
    read = stream.read  # type: ignore[attr-defined]
    head = b""
    tail = bytearray()
    truncated = False
    total = 0
    while total < MAX_STREAM_BYTES and (chunk := read(1 << 16)):
        total += len(chunk)
        if len(head) < HEAD_CHARS:
            take = HEAD_CHARS - len(head)
            head += chunk[:take]
            chunk = chunk[take:]
        tail += chunk
        if len(tail) > TAIL_CHARS:
            del tail[: len(tail) - TAIL_CHARS]
            truncated = True
    truncated = truncated or total >= MAX_STREAM_BYTES
    joiner = "\n" if truncated else ""
    return _decode(head) + joiner + _decode(bytes(tail)), truncated


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
