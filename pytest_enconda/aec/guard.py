"""AEC's graded step made the harness's, not the agent's: the case's tests restored from the
checkout, the agent's changes to them found, and the test command run in a shell the setup
cannot script.

A replayed ``setup.sh`` runs as root in the box the tests then run in, so without this it could
delete the failing tests, edit them to ``assert True``, put a fake ``python`` on PATH or export
``PYTEST_ADDOPTS``, and the log would read as a success. ``GradedGuard`` hooks into the replay
(``probing.execution.replay``):

- **before the setup** it hashes every file of the fresh checkout (the box's, which is the
  pinned revision: the task image holds it) into a manifest kept on this host, keeps a copy of
  the tree in the box for the diff, and copies the test files and test configuration the case's
  ecosystem's record names (``Ecosystem.test_files``) out to the case's folder;
- **after the setup** it hashes the tree again: every tracked file changed, deleted or (a test
  source) added is a change, with its diff saved (``aec/agent.diff``); one to a test file or to
  the test part of a configuration is "tests modified". The test files are then written back
  from the copy on this host, and test sources and configuration the setup added removed;
- **the graded shell** is a fresh ``bash --noprofile --norc`` under ``env -i`` with the
  variables the setup exported, read here as data (never sourced: the file is in the box the
  setup controlled), less those that would script the shell or skip tests (``graded_env``);
  functions, aliases and traps do not cross;
- **the toolchain** the command runs is resolved in that shell and checked (``graded_env``).
"""

from __future__ import annotations

import io
import shlex
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from ..ecosystems.testfiles import TestFiles
from .graded_env import (
    IMAGE_TOOLS_SCRIPT,
    PYTHONS,
    SITE_SCRIPT,
    TOOLS_SCRIPT,
    StrippedVariable,
    ToolCheck,
    check_tools,
    clean_environment,
    launcher,
    parse_image_tools,
    site_checks,
    site_findings,
    tools_to_check,
)

if TYPE_CHECKING:
    from ..backends.base import Box

WORK = "/tmp/enconda/graded"
PRISTINE = f"{WORK}/pristine"
# Folders a build, a package manager or a virtual environment fills: not the repository's.
SKIPPED_DIRS = (
    ".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", "target", "build",
    ".pytest_cache", ".tox", ".nox", ".mypy_cache", ".gradle", ".m2", ".cargo", "dist",
    ".eggs", "vendor",
)  # fmt: skip
HARNESS_SECONDS = 600.0
# How many changes the record lists (the diff has them all).
MAX_LISTED = 200
MAX_EXCERPT = 4_000


class TrackedChange(BaseModel):
    path: str
    change: Literal["modified", "deleted", "added"]
    test: bool = Field(description="a test file or test configuration, restored before the tests")
    counts: bool = Field(description="a change to the tests: 'tests modified'")


class GradedIntegrity(BaseModel):
    """What the graded step found and did (``aec/integrity.json`` in the case's folder)."""

    checked: bool = Field(default=False, description="the setup ended and the checks ran")
    test_files: int = Field(default=0, description="test files and configs in the checkout")
    restored: str | None = Field(
        default=None, description="the checkout's test files, a tar relative to the case folder"
    )
    changes: list[TrackedChange] = Field(default_factory=list)
    changed_files: int = 0
    added_other: int = Field(default=0, description="files the setup added that are not tests")
    removed: list[str] = Field(default_factory=list, description="test sources the setup added")
    diff: str | None = Field(default=None, description="the agent's diff, relative path")
    diff_excerpt: str = Field(default="", description="the diff's first lines, for messages")
    tests_modified: bool = False
    stripped: list[StrippedVariable] = Field(default_factory=list)
    tools: list[ToolCheck] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def toolchain_problems(self) -> list[ToolCheck]:
        return [tool for tool in self.tools if tool.problem]


def _manifest_script() -> str:
    prune = " -o ".join(f"-name {shlex.quote(name)}" for name in SKIPPED_DIRS)
    # sha256sum escapes a name with a newline or backslash ("\" first): such lines are skipped.
    return (
        f"find . \\( {prune} \\) -prune -o -type f -print0 "
        "| LC_ALL=C sort -z | xargs -0 -r sha256sum --"
    )


def parse_manifest(text: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in text.splitlines():
        digest, sep, path = line.partition("  ")
        if not sep or line.startswith("\\") or not path.startswith("./"):
            continue
        found[path[2:]] = digest
    return found


class GradedGuard:
    """The graded step's checks for one replay (``replay`` calls the hooks in order)."""

    def __init__(
        self, files: TestFiles, folder: Path, case_root: Path, command: str, language: str | None
    ) -> None:
        self.files = files
        self.folder = folder
        self.case_root = case_root
        self.command = command
        self.language = language
        self.record = GradedIntegrity()
        self._before: dict[str, str] = {}
        self._tests: list[str] = []
        self._env: dict[str, str] = {}
        self._names = tools_to_check(command, language)
        self._image_tools: dict[str, str] = {}
        self._image_site: set[tuple[str, str]] = set()

    def _relative(self, path: Path) -> str:
        return path.relative_to(self.case_root).as_posix()

    def _exec(self, box: Box, command: str, log: Path | None = None) -> str:
        from ..errors import HarnessError

        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True)
            log.unlink(missing_ok=True)
        result = box.exec(command, timeout=HARNESS_SECONDS, log_path=log)
        if result.exit_code != 0:
            raise HarnessError(
                f"the graded step's check failed ({result.exit_code}): {command[:200]}\n"
                + result.output[-2000:]
            )
        return log.read_text(errors="replace") if log is not None else result.output

    def before_setup(self, box: Box) -> None:
        self.record = GradedIntegrity()
        skip = " ".join(f"--exclude={shlex.quote(name)}" for name in SKIPPED_DIRS)
        manifest = self._exec(
            box,
            f"set -eo pipefail; mkdir -p {PRISTINE}; {_manifest_script()}; "
            f"tar -cf - {skip} . | tar -xf - -C {PRISTINE}",
            self.folder / "checkout.sha256",
        )
        self._before = parse_manifest(manifest)
        self._scan_image(box)
        self._tests = [path for path in self._before if self.files.matches(path)]
        self.record.test_files = len(self._tests)
        if not self._tests:
            return
        box.copy_in(_nul_list(self._tests), f"{WORK}/tests.lst")
        self._exec(box, f"tar -cf {WORK}/tests.tar --null -T {WORK}/tests.lst")
        tar = self.folder / "checkout-tests.tar"
        tar.unlink(missing_ok=True)
        box.copy_out(f"{WORK}/tests.tar", tar)
        self.record.restored = self._relative(tar)

    def after_setup(self, box: Box, workdir: str) -> None:
        after = parse_manifest(
            self._exec(box, _manifest_script(), self.folder / "after-setup.sha256")
        )
        changes: list[TrackedChange] = []
        for path, digest in self._before.items():
            if path not in after:
                changes.append(self._change(path, "deleted"))
            elif after[path] != digest:
                changes.append(self._change(path, "modified"))
        added = [path for path in after if path not in self._before]
        sources = [path for path in added if self.files.counts_added(path)]
        self.record.added_other = len(added) - len(sources)
        changes += [self._change(path, "added") for path in sources]
        self._judge_sections(box, [c for c in changes if c.test and c.change == "modified"])
        self.record.changed_files = len(changes)
        self.record.changes = changes[:MAX_LISTED]
        self.record.tests_modified = any(change.counts for change in changes)
        if changes:
            box.copy_in(_nul_list([c.path for c in changes]), f"{WORK}/changed.lst")
            diff = self.folder / "agent.diff"
            text = self._exec(box, _DIFF, diff)
            self.record.diff = self._relative(diff)
            self.record.diff_excerpt = text[:MAX_EXCERPT]
        self._restore(box, sources)
        self._env, self.record.stripped = clean_environment(self._saved_env(box))
        script = launcher(self._env, f"bash --noprofile --norc {WORK}/tools.sh")
        # Written again after the setup: the setup could have rewritten the box's copies.
        box.copy_in(self._checks_script(box, TOOLS_SCRIPT).encode(), f"{WORK}/tools.sh")
        box.copy_in(script.encode(), f"{WORK}/check.sh")
        output = self._exec(box, f"bash --noprofile --norc {WORK}/check.sh")
        own = {f"{workdir.rstrip('/')}/{p}" for p, d in after.items() if self._before.get(p) == d}
        self.record.tools = check_tools(output, self._image_tools, own)
        site, summary = site_checks(output, self._image_site)
        self.record.tools += site
        if summary is not None:
            self.record.notes.append(f"site check: {summary}")
        self.record.checked = True

    def _checks_script(self, box: Box, tools: str) -> str:
        """``tools`` for this command's programs, with the site check where it runs Python."""
        from ..probing.scripts import probe_script

        names = " ".join(shlex.quote(n) for n in self._names)
        script = tools.replace("@NAMES@", names)
        pythons = [name for name in self._names if name in PYTHONS]
        if pythons:
            probe = f"{WORK}/site_integrity.py"
            box.copy_in(probe_script("site_integrity.py").read_bytes(), probe)
            script += SITE_SCRIPT.replace("@PYTHONS@", " ".join(pythons)).replace("@PROBE@", probe)
        return script

    def _scan_image(self, box: Box) -> None:
        """What the image had before the setup: each program of the command's names, and the
        site check's findings (a sandbox's own .pth), with their content's hashes."""
        box.copy_in(self._checks_script(box, IMAGE_TOOLS_SCRIPT).encode(), f"{WORK}/image.sh")
        output = self._exec(box, f"bash --noprofile --norc {WORK}/image.sh")
        self._image_tools = parse_image_tools(output)
        self._image_site = site_findings(output)

    def _change(self, path: str, change: Literal["modified", "deleted", "added"]) -> TrackedChange:
        test = self.files.matches(path)
        return TrackedChange(path=path, change=change, test=test, counts=test)

    def _judge_sections(self, box: Box, changed: list[TrackedChange]) -> None:
        """A configuration only part of which is the tests' counts only where that part
        changed (a dependency pinned in pyproject.toml is not a change to the tests)."""
        from .test_sections import test_part

        mixed = [change for change in changed if self.files.is_mixed(change.path)]
        if not mixed or self.record.restored is None:
            return
        box.copy_in(_nul_list([c.path for c in mixed]), f"{WORK}/mixed.lst")
        self._exec(box, f"tar -cf {WORK}/mixed.tar --null -T {WORK}/mixed.lst")
        agent_tar = self.folder / "agent-configs.tar"
        agent_tar.unlink(missing_ok=True)
        box.copy_out(f"{WORK}/mixed.tar", agent_tar)
        original = _members(self.case_root / self.record.restored)
        theirs = _members(agent_tar)
        for change in mixed:
            name = change.path
            before, now = original.get(name), theirs.get(name)
            if before is None or now is None:
                continue
            change.counts = test_part(name, before) != test_part(name, now)

    def _restore(self, box: Box, added_sources: list[str]) -> None:
        if added_sources:
            box.copy_in(_nul_list(added_sources), f"{WORK}/added.lst")
            self._exec(box, f"xargs -0 -r rm -f -- < {WORK}/added.lst")
            self.record.removed = added_sources[:MAX_LISTED]
        if self.record.restored is not None:
            box.copy_in(self.case_root / self.record.restored, f"{WORK}/restore.tar")
            # A file the setup replaced with a folder or link is replaced back.
            extract = f"tar --unlink-first --recursive-unlink -xpf {WORK}/restore.tar"
            if box.exec(extract, timeout=HARNESS_SECONDS).exit_code != 0:
                # Seen under load on the real engine after a pytest run ("Cannot open: File
                # exists"): the test files are removed by the list made here, then extracted.
                box.copy_in(_nul_list(self._tests), f"{WORK}/restore.lst")
                self._exec(box, f"xargs -0 -r rm -rf -- < {WORK}/restore.lst; {extract}")
                self.record.notes.append("the test files were removed before they were restored")

    def _saved_env(self, box: Box) -> str:
        from ..probing.shell import SETUP_ENV_PATH

        saved = self.folder / "setup-env.sh"
        saved.unlink(missing_ok=True)
        try:
            box.copy_out(SETUP_ENV_PATH, saved, limit=4_000_000)
        except FileNotFoundError:
            self.record.notes.append("the setup left no environment: the image's is used")
            return ""
        return saved.read_text(errors="replace")

    def graded_command(self, box: Box, command: str) -> str:
        """The shell line the replay runs for the graded step."""
        box.copy_in(launcher(self._env, command).encode(), f"{WORK}/graded.sh")
        return f"bash --noprofile --norc {WORK}/graded.sh"


_DIFF = f"""\
while IFS= read -r -d '' p; do
  a={PRISTINE}/"$p"; b="$p"
  [ -f "$a" ] || a=/dev/null; [ -f "$b" ] || b=/dev/null
  diff -u --label "a/$p" --label "b/$p" -- "$a" "$b" || true
done < {WORK}/changed.lst
"""


def _nul_list(paths: list[str]) -> bytes:
    return b"".join(path.encode() + b"\0" for path in paths)


def _members(tar: Path) -> dict[str, str]:
    """Each regular file of ``tar`` as text, read in memory (never extracted)."""
    found: dict[str, str] = {}
    with tarfile.open(tar) as archive:
        for member in archive.getmembers():
            if not member.isfile() or member.size > 4_000_000:
                continue
            data = archive.extractfile(member)
            if data is not None:
                name = member.name[2:] if member.name.startswith("./") else member.name
                found[name] = io.TextIOWrapper(data, errors="replace").read()
    return found
