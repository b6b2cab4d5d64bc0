"""What pytest walks past: which files are cases, which folders are datasets or case repositories.

Standard library only, and cheap: the plugin calls these for every path of every pytest run where
it is installed, most of which collect no benchmark at all.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

CASE_FILE = "case.toml"
REPO_INFO = "repo_info.jsonl"
RESEARCH_MANIFEST = "manifest.json"
RESEARCH_CATEGORIES = "scripts_repos_test_categories.csv"
# A case file declares its suite or its repository; another tool's ``case.toml`` does neither.
# Blanks within the line: ``\s*`` reached across every blank line below each line start.
_CASE_CONTENT = re.compile(rb"^[^\S\n]*(?:suite\s*=|\[repository\])", re.MULTILINE)
# How deep below a collected folder case files are looked for, and folders never looked into.
_SCAN_DEPTH = 4
_SKIP_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "reports"})
_PEEK_BYTES = 1 << 16
# A case file is a page of TOML; the loader refuses a larger one, by name.
MAX_CASE_BYTES = 1 << 20


def is_case_file(path: Path) -> bool:
    """A ``case.toml`` whose content is a benchmark case's (by its suite or repository), or one
    that cannot be told apart: empty, not UTF-8, not TOML, not a regular file. Those are
    collected so that collection names the file and what is wrong, instead of skipping a
    broken case without a word; another tool's readable ``case.toml`` is left alone."""
    if path.name != CASE_FILE:
        return False
    # Here, not at the top: textio brings tomllib, and a run that meets no case.toml (most runs
    # of the installed plugin) never needs it.
    from . import textio

    try:
        with textio.open_regular(path, MAX_CASE_BYTES) as handle:
            head = handle.read(_PEEK_BYTES)
            if _CASE_CONTENT.search(head.removeprefix(b"\xef\xbb\xbf")) is not None:
                return True
            data = head + handle.read()
    except (OSError, ValueError):
        return True
    try:
        parsed = textio.parse_toml(textio.decode_utf8(data))
    except ValueError:
        return True
    # Quoted keys ("suite" = ...) and a long comment before the key are still a case's.
    return not parsed or "suite" in parsed or "repository" in parsed


def is_special_case_file(path: Path) -> bool:
    """A ``case.toml`` that is there but is no regular file (a FIFO, a device, a link to one,
    a dangling link): pytest passes such entries over without a word, so the plugin collects
    them itself and its reader refuses each by name."""
    try:
        if not (path.is_symlink() or path.exists()):
            return False
        return not (path.is_file() or path.is_dir())
    except OSError:
        return True


def is_link_loop(path: Path) -> bool:
    """A folder link to a folder that holds it: walking it never ends."""
    if not path.is_symlink():
        return False
    try:
        target = path.resolve(strict=True)
        here = path.parent.resolve(strict=True)
    except (OSError, RuntimeError):
        return True  # a link loop of its own, or a dangling link: nothing to collect there
    return target == here or target in here.parents


def is_dataset_dir(path: Path) -> bool:
    """EnConda-Bench's released layout: the folder with ``repo_info.jsonl``, its ``instances``,
    one repository's ``instances/error_gen_<owner>_<name>``, or one instance folder in it (the
    importer loads each; a constructed set is checked one repository or instance at a time)."""
    if (path / REPO_INFO).is_file():
        return True
    if path.name == "instances":
        return (path.parent / REPO_INFO).is_file()
    if path.name.startswith("error_gen_") and path.parent.name == "instances":
        return (path.parent.parent / REPO_INFO).is_file()
    repo = path.parent
    return (
        repo.name.startswith("error_gen_")
        and repo.parent.name == "instances"
        and (repo.parent.parent / REPO_INFO).is_file()
        and (path / "README.json").is_file()
    )


def is_research_dataset_dir(path: Path) -> bool:
    """ResearchEnvBench's released metadata: ``manifest.json`` beside the applicability table."""
    # exists(), not is_file(): a FIFO or a device there is the importer's to refuse by name,
    # not a reason to treat the folder as something else and say nothing.
    return (path / RESEARCH_MANIFEST).exists() and (path / RESEARCH_CATEGORIES).exists()


def _case_files(root: Path) -> list[Path]:
    found = []
    base_depth = len(root.parts)
    for current, dirs, files in os.walk(root):
        here = Path(current)
        if len(here.parts) - base_depth >= _SCAN_DEPTH:
            dirs[:] = []
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS]
        if CASE_FILE in files and is_case_file(here / CASE_FILE):
            found.append(here / CASE_FILE)
            dirs[:] = []  # a case folder's own subfolders hold its files, not more cases
    return found


def case_repository_dirs(roots: list[Path]) -> set[Path]:
    """Repository folders named by the case files under ``roots``: their own tests are not ours.

    Only ``[repository] path`` is read; a case file that cannot be read is left to collection,
    which reports it.
    """
    repos: set[Path] = set()
    case_dirs: set[Path] = set()
    for root in roots:
        if not root.is_dir():
            continue
        for case_file in _case_files(root):
            from . import textio  # only where a case file is met (see is_case_file)

            case_dirs.add(case_file.parent.resolve())
            try:
                # Bounded and guarded as the loader's read: a huge literal or deep key here
                # would stop collection before any case is reported.
                data = textio.parse_toml(textio.read_text(case_file, MAX_CASE_BYTES))
                repository = data.get("repository") or {}
                relative = repository.get("path") if repository.get("kind") != "url" else None
            except (OSError, ValueError, AttributeError):
                continue
            if isinstance(relative, str) and relative:
                repos.add((case_file.parent / relative).resolve())
    # A folder that holds cases is collected whatever a case names as its repository.
    return {
        repo
        for repo in repos
        if not any(case_dir == repo or repo in case_dir.parents for case_dir in case_dirs)
    }


def collection_roots(config: pytest.Config) -> list[Path]:
    """The folders this run collects from (its arguments, or ``testpaths``)."""
    roots = []
    for arg in config.args:
        path = Path(arg.split("::", 1)[0])
        path = path if path.is_absolute() else config.invocation_params.dir / path
        if path.is_dir():
            roots.append(path.resolve())
    return roots


def leads_to_argument(config: pytest.Config, path: Path) -> bool:
    """Whether a folder this run collects (an argument, or ``--cases``) lies inside ``path``."""
    here = path.resolve()
    return any(here in root.parents for root in collection_roots(config))


def find_datasets(root: Path, depth: int = 3) -> list[Path]:
    """Dataset folders (EnConda-Bench's or ResearchEnvBench's layout) at or below ``root``.

    A release keeps its metadata in a subfolder beside code and tests of its own; the walk
    stops at the first dataset on each path and never enters hidden or tool folders.
    """
    found: list[Path] = []
    base_depth = len(root.parts)
    for current, dirs, _files in os.walk(root):
        here = Path(current)
        if is_dataset_dir(here) or is_research_dataset_dir(here):
            found.append(here)
            dirs[:] = []
            continue
        if len(here.parts) - base_depth >= depth:
            dirs[:] = []
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
    return found


def holds_cases(root: Path) -> bool:
    """Whether ``root`` holds case folders (``case.toml``) within the collection depth."""
    return bool(_case_files(root))
