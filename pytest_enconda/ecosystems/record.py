"""What an ecosystem is: the ``Ecosystem`` record, the ``ECOSYSTEMS`` registry, and the shapes
its parts share (a runner's reading of a log, a test's outcome, the profile fields it fills).

An ecosystem is a language family with its toolchain (Rust with Cargo, C/C++ with CMake, make,
meson and Autotools, ...). Its record says how a repository of it is recognised, what Debian
installs its toolchain from, what its build and test commands look like, how its runners' logs
and per-test lines read, and what the codebase profile says about a checkout of it. Everything
that treats languages differently (AEC grading and ``test-log``, the profile, ``import-msb``,
the heuristic and ``readme`` agents, the case format's language hint) reads these records, so a
new ecosystem is one module plus one registration.

Standard library only: the case loader reads the languages, and the log reader runs in
``test-log`` without the rest of the harness.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..registry import Registry
from ..textio import parse_json
from .testfiles import COMMON, TestFiles

ENTRY_POINT_GROUP = "pytest_enconda.ecosystems"

# A runner's evidence is the lines that decided its reading; a log keeps this many in all.
MAX_EVIDENCE = 6

Outcome = Literal["passed", "failed", "skipped"]


@dataclass
class Found:
    """One runner's reading of a log (``testlogs`` sums the readings of every runner)."""

    framework: str
    passed: int | None = None
    failed: int | None = None
    skipped: int | None = None
    errors: int | None = None
    summary: bool = False  # a counting summary (or the runner's own "no tests") was seen
    ran: bool | None = None  # whether a test executed, where counts cannot say (plain go test)
    compile_error: bool = False
    collection_error: bool = False
    evidence: list[str] = field(default_factory=list)

    def add(self, name: str, value: int) -> None:
        setattr(self, name, (getattr(self, name) or 0) + value)

    def executed(self) -> int:
        return (self.passed or 0) + (self.failed or 0) + (self.errors or 0)


# A runner's log parser: the log's lines (colour codes gone, each cut to a bounded length) to
# its reading, or None where the runner is not in the log.
LogParser = Callable[[list[str]], "Found | None"]
# A runner's per-test name parser: (line index, test name, outcome) for each line of the log
# that names a test. A line is the first parser's that claims it, in registration order.
NameParser = Callable[[Sequence[str]], Iterable[tuple[int, str, Outcome]]]


def ints(match: re.Match[str]) -> list[int]:
    return [int(group or 0) for group in match.groups()]


@dataclass(frozen=True)
class Checkout:
    """A repository's files as an ecosystem's profile reads them. ``read`` is the profile's own
    bounded reader (a path to its text, "" where it cannot be read), so every ecosystem reads
    files the same way."""

    root: Path
    read: Callable[[Path], str]

    def has(self, name: str) -> bool:
        return (self.root / name).is_file()

    def text(self, name: str) -> str:
        return self.read(self.root / name)

    def json(self, name: str) -> dict[str, Any]:
        """The file's JSON object; {} where it is not one (a list, a syntax error)."""
        try:
            value = parse_json(self.text(name))
        except ValueError:  # also nested too deeply, or a number past the digit limit
            return {}
        return value if isinstance(value, dict) else {}


@dataclass
class ProfileFields:
    """What a checkout of an ecosystem adds to the codebase profile (``agents.profile``)."""

    package_manager: str | None = None
    config_file: str | None = None
    language_version: str | None = None
    install_command: str | None = None
    test_command: str | None = None
    test_framework: str | None = None
    build_tools: list[str] = field(default_factory=list)
    # Debian packages the manifests name (CMake's find_package, Composer's ext-*).
    system_packages: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Ecosystem:
    """One ecosystem. Regular expressions are given as pattern text, so that the readers can
    join every registered ecosystem's into one expression.

    - ``languages``: the AEC language hints it answers to (``case.toml``'s ``[aec] language``,
      ``import-msb``), lower case; ``aliases`` maps other spellings onto them.
    - ``manifests``: files at a repository's root that mark it, listed among the profile's
      dependency manifests; ``markers``: files that mark it without being manifests (C's
      ``Makefile``). ``fallback``: its files are common in repositories of other languages (a
      ``package.json`` for tooling), so it is chosen only where no other ecosystem's files are.
    - ``debian_packages``: what ``apt-get install`` installs its compiler or runtime from (a
      build tool that repositories choose among, Maven or Gradle, npm or yarn, is theirs);
      ``programs``: the commands its toolchains provide.
    - ``build_commands`` / ``test_commands``: patterns of the command lines that build the
      project and that run its tests (a README's steps are read by them); ``test_command``: its
      usual verbose test command, whose log names each test (``import-msb``'s reference).
    - ``log_parsers``: its runners' summary readers (``aec.testlogs``); ``name_parsers``: its
      runners' per-test lines (``aec.testnames``); ``compile_errors``: patterns of its
      compilers' error lines, read where a log has no runner summary.
    - ``verdict_lines`` / ``count_lines``: patterns (matched at a line's start) of the lines its
      log parsers read: those that can decide a verdict (a run's summary, a failing test or
      package, a compile or collection error; few per run) and the others they count (a passing
      or skipped test's or package's line). A log too long to read whole keeps them from the
      middle it otherwise drops (``aec.testlogs``), each kind up to its own cap, so passing
      lines never crowd out a failure.
    - ``test_files``: what its test discovery reads (test folders and file globs, the test
      configuration): the files AEC's graded step restores from the checkout after the agent's
      setup (``aec.guard``); what every ecosystem shares (a Makefile) is added to it.
    - ``toolchain``: the programs any test command of it runs (its interpreter, compiler or
      build tool, named or not: a Makefile's ``java``), which the graded step resolves and
      checks and which are never scripts; ``test_tools``: programs its test commands may name
      (``pytest``, ``npm``), checked where the command names them (a package manager's launcher
      script is one).
    - ``profile``: what a checkout of it says (version, package manager, commands); None where
      the profile reads it itself (Python).
    """

    name: str
    title: str
    languages: tuple[str, ...]
    aliases: Mapping[str, str] = field(default_factory=dict)
    manifests: tuple[str, ...] = ()
    markers: tuple[str, ...] = ()
    fallback: bool = False
    debian_packages: tuple[str, ...] = ()
    programs: tuple[str, ...] = ()
    build_commands: tuple[str, ...] = ()
    test_commands: tuple[str, ...] = ()
    test_command: str = ""
    log_parsers: tuple[LogParser, ...] = ()
    name_parsers: tuple[NameParser, ...] = ()
    compile_errors: tuple[str, ...] = ()
    verdict_lines: tuple[str, ...] = ()
    count_lines: tuple[str, ...] = ()
    test_files: TestFiles = field(default_factory=TestFiles)
    toolchain: tuple[str, ...] = ()
    test_tools: tuple[str, ...] = ()
    profile: Callable[[Checkout], ProfileFields] | None = None

    @property
    def detection_files(self) -> tuple[str, ...]:
        return (*self.manifests, *self.markers)

    def detected(self, root: Path) -> bool:
        """Whether the repository at ``root`` has one of its files."""
        return any((root / name).is_file() for name in self.detection_files)


ECOSYSTEMS: Registry[Ecosystem] = Registry("ecosystem", ENTRY_POINT_GROUP)


def detection_order() -> list[Ecosystem]:
    """Every ecosystem in the order a repository's language is decided: registration order,
    the fallbacks last."""
    ecosystems = ECOSYSTEMS.values()
    return [e for e in ecosystems if not e.fallback] + [e for e in ecosystems if e.fallback]


def languages() -> list[str]:
    """Every AEC language hint, in registration order."""
    return [language for ecosystem in ECOSYSTEMS.values() for language in ecosystem.languages]


def canonical_language(value: str) -> str | None:
    """``value`` as a known language hint (case and aliases aside), or None."""
    lowered = value.strip().lower()
    for ecosystem in ECOSYSTEMS.values():
        if lowered in ecosystem.languages:
            return lowered
        if lowered in ecosystem.aliases:
            return ecosystem.aliases[lowered]
    return None


def of_language(language: str) -> Ecosystem:
    """The ecosystem of a (canonical) language hint."""
    for ecosystem in ECOSYSTEMS.values():
        if language in ecosystem.languages:
            return ecosystem
    raise KeyError(f"no ecosystem has the language {language!r}; known: {', '.join(languages())}")


def any_of(patterns: Iterable[str]) -> str:
    """One pattern matching any of ``patterns`` (never matching where there are none)."""
    joined = "|".join(f"(?:{pattern})" for pattern in patterns)
    return f"(?:{joined})" if joined else r"(?!)"


def first(pattern: str, text: str) -> str | None:
    """The first non-empty group of ``pattern``'s first match in ``text`` (``^`` at each line),
    stripped; None where it does not match."""
    match = re.search(pattern, text, re.MULTILINE)
    if not match:
        return None
    return next((g.strip() for g in match.groups() if g), None)


def table(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` when it is a table (a dict), else an empty one."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def source_error(*extensions: str) -> str:
    """The pattern of a compiler's error line naming a source file with one of ``extensions``
    (``src/a.c:3:5: error:``, ``Main.java:[4,7] error:``)."""
    return rf"\S+\.(?:{'|'.join(extensions)}):\[?\d+[:,]\d*\]?:? (?:fatal )?error:?"


def test_files(ecosystem: str | None) -> TestFiles:
    """The test files of a registered ecosystem (by name), with what every ecosystem shares
    (``testfiles.COMMON``)."""
    record = ECOSYSTEMS.get(ecosystem) if ecosystem and ecosystem in ECOSYSTEMS else None
    return COMMON | (record.test_files if record is not None else TestFiles())
