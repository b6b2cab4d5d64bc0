"""Shell commands read as words, for AEC's cheat rules (``aec.cheat_rules``): each simple
command with its words (wrappers such as ``sudo`` and ``env`` and assignments taken off), the
files it redirects to, the operator after it and the here-document it reads, and the commands
held in it (``bash -c``, a here-document, what ``printf`` writes to a script).

A reader, not a shell: quoting is ``shlex``'s, nothing is expanded, and a line that does not
split (an unclosed quote) splits on blanks. Good enough to tell a write from a mention.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_PUNCT = ";<>|&"
# How deep a command inside a command (bash -c, a script written by printf) is read.
MAX_DEPTH = 3
MAX_LINE = 4_000
# Lines read of one text: a trajectory step past them is a file written, not commands.
MAX_LINES = 2_000
_WRAPPERS = {"sudo", "command", "exec", "nohup", "time", "nice", "stdbuf", "xargs"}


@dataclass
class Segment:
    """One simple command: its words (wrappers and assignments taken off), what it writes."""

    words: list[str]
    assigns: list[tuple[str, str]] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    op: str = ""
    body: str = ""
    line: str = ""
    script: bool = False

    @property
    def name(self) -> str:
        return self.words[0].rsplit("/", 1)[-1] if self.words else ""

    @property
    def feeds_script(self) -> bool:
        """Its here-document is a script: run by a shell or written to one."""
        return self.name in ("bash", "sh", "source") or any(
            SCRIPT_FILE.search(w) for w in self.writes
        )

    @property
    def args(self) -> list[str]:
        return self.words[1:]


def _tokens(line: str) -> list[str]:
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=_PUNCT)
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return line.split()


def _is_op(token: str) -> bool:
    return bool(token) and all(c in _PUNCT for c in token)


def _split(line: str, body: str, script: bool) -> list[Segment]:
    """``line``'s simple commands; ``body`` (its here-document) goes with the one reading it."""
    segments: list[Segment] = []
    current = Segment(words=[], line=line, script=script)
    tokens = _tokens(line)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if _is_op(token) and ("<" in token or ">" in token):
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if current.words and current.words[-1].isdigit():
                current.words.pop()  # the file descriptor of 2> or 1>
            if token.startswith("<<") and token != "<<<":
                current.body = body
            elif ">" in token and "<" not in token and not (token == ">&" and target.isdigit()):
                current.writes.append(target)
            i += 2
            continue
        if _is_op(token):
            current.op = token
            segments.append(current)
            current = Segment(words=[], line=line, script=script)
        else:
            current.words.append(token)
        i += 1
    segments.append(current)
    return [_unwrap(s) for s in segments if s.words or s.writes]


def _unwrap(segment: Segment) -> Segment:
    words = segment.words
    while words:
        match = _ASSIGN.match(words[0])
        name = PurePosixPath(words[0]).name
        if match:
            segment.assigns.append((match.group(1), match.group(2)))
            words = words[1:]
        elif name in _WRAPPERS or name == "env":
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[1:]
        elif name == "timeout":
            words = [w for w in words[1:] if not w.startswith("-")][1:]
        else:
            break
    if words and words[0] in ("export", "declare", "typeset", "readonly"):
        segment.assigns += [
            (m.group(1), m.group(2)) for w in words[1:] if (m := _ASSIGN.match(w)) is not None
        ]
    segment.words = words
    return segment


def _lines(text: str) -> Iterator[tuple[str, str]]:
    """Each logical line of a shell text (continuations joined) with its here-document."""
    # A line is cut: shlex reads a character at a time, and a longer line is data, not a command.
    raw = [line[:MAX_LINE] for line in text.replace("\\\n", " ").splitlines()[:MAX_LINES]]
    i = 0
    while i < len(raw):
        line = raw[i]
        i += 1
        match = _HEREDOC.search(line) if "<<<" not in line else None
        if match is None:
            yield line, ""
            continue
        body: list[str] = []
        while i < len(raw) and raw[i].strip() != match.group(2):
            body.append(raw[i])
            i += 1
        i += 1
        yield line, "\n".join(body)


SCRIPT_FILE = re.compile(r"(?:\.sh|/test_command|^test_command|setup\.sh)$")


def segments(text: str, script: bool = False, depth: int = 0) -> Iterator[Segment]:
    """Every simple command of ``text``, and of the commands it holds: ``bash -c``'s, a
    here-document's, what ``echo``/``printf`` write to a script (those are ``script``)."""
    for line, body in _lines(text):
        for segment in _split(line, body, script):
            yield segment
            if depth >= MAX_DEPTH:
                continue
            writes_script = any(SCRIPT_FILE.search(w) for w in segment.writes)
            if segment.body:
                yield from segments(segment.body, script or segment.feeds_script, depth + 1)
            if segment.name in ("bash", "sh", "eval") and "-c" in segment.args:
                at = segment.args.index("-c")
                if at + 1 < len(segment.args):
                    yield from segments(segment.args[at + 1], script, depth + 1)
            elif segment.name in ("echo", "printf") and writes_script:
                yield from segments(printed(segment), True, depth + 1)


def printed(segment: Segment) -> str:
    """What ``echo``/``printf`` print, roughly: the arguments, escapes read."""
    args = [a for a in segment.args if not re.fullmatch(r"-[neE]+", a)]
    if segment.name == "printf" and args and "%" in args[0]:
        args = args[1:] if "%s" in args[0] else args
    text = "\n".join(args)
    return text.replace("\\n", "\n").replace("\\t", "\t")


_RUN_VIA = {"uv", "poetry", "pipenv", "pdm", "hatch", "rye"}
_JS_RUNNERS = {"jest", "mocha", "vitest", "ava", "tap", "jasmine", "karma"}
_PLAIN_RUNNERS = {"pytest", "py.test", "unittest", "tox", "nox", "ctest", "phpunit", "nextest"}


def runner(words: Sequence[str]) -> tuple[str, list[str]]:
    """The program a command runs, through ``python -m``, ``poetry run``, ``npx``: its name and
    its arguments."""
    words = list(words)
    while words:
        name = PurePosixPath(words[0]).name
        if re.fullmatch(r"python[\d.]*|pypy[\d.]*", name) and len(words) > 2 and words[1] == "-m":
            return words[2], words[3:]
        if name in _RUN_VIA and len(words) > 1 and words[1] == "run":
            words = words[2:]
        elif name in ("npx", "bunx", "pnpx") or (
            name in ("yarn", "pnpm") and len(words) > 1 and words[1] in _JS_RUNNERS
        ):
            words = words[1:]
        else:
            return name, words[1:]
    return "", []


def runs_tests(words: Sequence[str]) -> bool:
    name, args = runner(words)
    first = args[0] if args else ""
    if name in _PLAIN_RUNNERS or name in _JS_RUNNERS:
        return True
    if name in ("go", "cargo"):
        return first in ("test", "nextest")
    if name in ("npm", "yarn", "pnpm", "bun"):
        return first in ("test", "t") or (first == "run" and len(args) > 1 and "test" in args[1])
    if name in ("mvn", "mvnw", "gradle", "gradlew"):
        return any(a in ("test", "verify", "check", "build") for a in args)
    if name in ("make", "ninja", "meson"):
        return any(a in ("test", "tests", "check") for a in args)
    return False
