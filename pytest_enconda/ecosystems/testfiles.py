"""What each ecosystem's test discovery reads: the files AEC's graded step restores from the
checkout after the agent's setup (``aec.guard``), so the tests graded are the case's, not the
agent's.

Each ecosystem's record holds its own (``Ecosystem.test_files``), so a third party's ecosystem
gets them by registering its record; one without them restores only what every ecosystem
shares, ``COMMON``. Standard library only, as the records.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class TestFiles:
    """``paths``: ``dir/`` (or ``a/b/``) names a folder at any depth whose files are all tests;
    anything else is a file name glob (``test_*.py``). ``configs``: file name globs of the test
    configuration, restored whole (``pyproject.toml``: its ``[tool.pytest]`` table lives there);
    ``sections``: of those, the ones that are more than test configuration, where only a change
    to their test part (``aec.guard``'s readers) counts as a change to the tests. ``sources``:
    file name globs of test sources; a file the setup *added* counts only when it is one (a
    build writes its own files into test folders: CMake's in-source ``tests/Makefile``) or a
    test configuration (a ``pytest.ini`` that takes precedence over ``pyproject.toml``), unless
    its name is in ``generated``: configurations a build writes itself (CMake's ``Makefile``)."""

    __test__ = False  # not a pytest test class, whatever its name

    paths: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    generated: tuple[str, ...] = ()

    def is_test(self, path: str) -> bool:
        pure = PurePosixPath(path)
        folders = pure.parts[:-1]
        for pattern in self.paths:
            if pattern.endswith("/"):
                wanted = tuple(pattern.strip("/").split("/"))
                if any(
                    folders[i : i + len(wanted)] == wanted
                    for i in range(len(folders) - len(wanted) + 1)
                ):
                    return True
            elif fnmatch.fnmatchcase(pure.name, pattern):
                return True
        return False

    def is_config(self, path: str) -> bool:
        name = PurePosixPath(path).name
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.configs)

    def is_mixed(self, path: str) -> bool:
        """A configuration file only part of which configures the tests."""
        return PurePosixPath(path).name in self.sections

    def is_source(self, path: str) -> bool:
        name = PurePosixPath(path).name
        return self.is_test(path) and any(fnmatch.fnmatchcase(name, p) for p in self.sources)

    def counts_added(self, path: str) -> bool:
        """Whether a file the setup added is a change to the tests (and is removed)."""
        if self.is_source(path):
            return True
        return self.is_config(path) and PurePosixPath(path).name not in self.generated

    def matches(self, path: str) -> bool:
        return self.is_test(path) or self.is_config(path)

    def __or__(self, other: TestFiles) -> TestFiles:
        return TestFiles(
            paths=(*self.paths, *other.paths),
            configs=(*self.configs, *other.configs),
            sections=(*self.sections, *other.sections),
            sources=(*self.sources, *other.sources),
            generated=(*self.generated, *other.generated),
        )


# Every case's, whatever its language: a Makefile's `test` target and a CI-free runner script
# are how many repositories run their tests.
COMMON = TestFiles(
    configs=("Makefile", "GNUmakefile"),
    sections=("Makefile", "GNUmakefile"),
    generated=("Makefile", "GNUmakefile"),
)
