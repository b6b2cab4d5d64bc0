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

Logs are bounded: past ``MAX_CHARS`` the head and the tail are read whole (summaries sit at the
end, banners at the start), and of the middle only the lines a runner's parsers read: each
ecosystem's verdict and count lines (``Ecosystem.verdict_lines``, ``count_lines``: summaries,
failures, passing tests), up to ``MAX_KEPT_LINES`` of each kind, so that a failure in the middle
of a long log is still read and memory stays bounded; ``truncated`` says so. Standard library and
pydantic only.
"""

from __future__ import annotations

import codecs
import io
import os
import re
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator
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
# so that `test-log /dev/zero` ends. A longer file's middle is read up to this much, then its tail.
MAX_STREAM_BYTES = 1 << 30
# Of a long log's middle, at most this many verdict lines and as many count lines are kept (each
# cut to MAX_LINE): a log of a million failing tests still costs megabytes, not gigabytes, and a
# failure never waits on room that passing tests' lines took.
MAX_KEPT_LINES = 5_000
# A long log is read in pieces of at most this many characters (a line, or part of a longer one).
_PIECE = 1 << 16

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


def _kept_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Every registered ecosystem's verdict lines and count lines, each as one pattern."""
    ecosystems = ECOSYSTEMS.values()
    verdicts = [pattern for ecosystem in ecosystems for pattern in ecosystem.verdict_lines]
    counts = [pattern for ecosystem in ecosystems for pattern in ecosystem.count_lines]
    # re's own cache compiles each joined pattern once while the registry stays as it is.
    return re.compile(any_of(verdicts)), re.compile(any_of(counts))


class _Bounder:
    """A log fed in pieces (each a line, or part of a line longer than ``_PIECE``): its head
    and tail whole, and of the middle only the verdict and count lines, in the log's order
    (a runner's parser reads a package's failures before its package line)."""

    def __init__(self) -> None:
        self.verdict, self.count = _kept_patterns()
        self.head: list[str] = []
        self.head_chars = 0
        self.tail: deque[tuple[str, bool]] = deque()  # (piece, whether it starts a line)
        self.tail_chars = 0
        self.kept: list[str] = []
        # Past the cap, the latest verdict lines still: a run's summary follows its failures.
        self.late: deque[str] = deque(maxlen=MAX_KEPT_LINES)
        self.kept_verdicts = self.kept_counts = 0
        self.cut = False
        self.line_start = True

    def feed(self, piece: str) -> None:
        starts_line, self.line_start = self.line_start, piece.endswith(("\n", "\r"))
        if self.head_chars < HEAD_CHARS:
            room = HEAD_CHARS - self.head_chars
            self.head.append(piece[:room])
            self.head_chars += len(piece[:room])
            piece, starts_line = piece[room:], False
            if not piece:
                return
        self.tail.append((piece, starts_line))
        self.tail_chars += len(piece)
        while self.tail_chars > TAIL_CHARS:
            dropped, dropped_starts = self.tail.popleft()
            self.tail_chars -= len(dropped)
            self.cut = True
            self._middle(dropped, dropped_starts)

    def _middle(self, piece: str, starts_line: bool) -> None:
        # A piece may hold several lines by splitlines' reckoning (a bare "\r"); a part of a long
        # line that does not start it is never read as a line of its own.
        for index, raw in enumerate(piece.splitlines()):
            if index == 0 and not starts_line:
                continue
            line = _ANSI.sub("", raw[:MAX_LINE]).rstrip()
            if self.verdict.match(line):
                if self.kept_verdicts < MAX_KEPT_LINES:
                    self.kept_verdicts += 1
                    self.kept.append(line)
                else:
                    self.late.append(line)
            elif self.count.match(line) and self.kept_counts < MAX_KEPT_LINES:
                self.kept_counts += 1
                self.kept.append(line)

    def text(self) -> str:
        head = "".join(self.head)
        tail = "".join(piece for piece, _ in self.tail)
        if not self.cut:
            return head + tail
        # The head may end inside a line and the tail start inside one: newlines keep them and
        # the kept lines apart.
        return "\n".join([head, *self.kept, *self.late, tail])


def _text_pieces(text: str) -> Iterator[str]:
    start = 0
    while start < len(text):
        end = text.find("\n", start, start + _PIECE)
        end = start + _PIECE if end < 0 else end + 1
        yield text[start:end]
        start = end


def _bound(text: str) -> tuple[str, bool]:
    if len(text) <= MAX_CHARS:
        return text, False
    bounder = _Bounder()
    for piece in _text_pieces(text):
        bounder.feed(piece)
    return bounder.text(), bounder.cut


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

    A large file's head and tail are read whole and its middle streamed for the lines that
    ``parse_test_log`` keeps of it; past ``MAX_STREAM_BYTES`` of middle the rest is skipped to
    the tail, so a multi-gigabyte file costs at most that much reading. A stream is read up to
    ``MAX_STREAM_BYTES``. Bytes that are not UTF-8 are replaced, as logs mix encodings.
    """
    if str(source) == "-":
        return _read_stream(sys.stdin.buffer)
    # A regular file only (``ValueError`` otherwise): a FIFO without a writer would block the
    # read for ever, a device never end; a stream comes on standard input.
    with open_regular(Path(source), 1 << 62) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= MAX_STREAM_BYTES:
            return _read_stream(handle)
        bounder = _Bounder()
        for piece in _pieces(handle.read, MAX_STREAM_BYTES - TAIL_CHARS):
            bounder.feed(piece)
        handle.seek(-TAIL_CHARS, os.SEEK_END)
        bounder.line_start = False  # the seek lands inside a line
        bounder.cut = True
        for piece in _pieces(handle.read, TAIL_CHARS):
            bounder.feed(piece)
        return bounder.text(), True


def _pieces(read: Callable[[int], bytes], limit: int) -> Iterator[str]:
    """The text of at most ``limit`` bytes from ``read``, decoded, in pieces of at most
    ``_PIECE`` characters that end at a newline where a line is shorter."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    total = 0
    while total < limit and (chunk := read(min(1 << 16, limit - total))):
        total += len(chunk)
        pending += decoder.decode(chunk)
        start = 0
        while (end := pending.find("\n", start, start + _PIECE)) >= 0 or len(
            pending
        ) - start >= _PIECE:
            end = start + _PIECE if end < 0 else end + 1
            yield pending[start:end]
            start = end
        pending = pending[start:]
    pending += decoder.decode(b"", final=True)
    if pending:
        yield from _text_pieces(pending)


def _read_stream(stream: io.BufferedIOBase | io.RawIOBase | object) -> tuple[str, bool]:
    read = stream.read  # type: ignore[attr-defined]
    bounder = _Bounder()
    total = 0

    def counted(size: int) -> bytes:
        nonlocal total
        chunk: bytes = read(size)
        total += len(chunk)
        return chunk

    for piece in _pieces(counted, MAX_STREAM_BYTES):
        bounder.feed(piece)
    truncated = bounder.cut or total >= MAX_STREAM_BYTES
    return bounder.text(), truncated
