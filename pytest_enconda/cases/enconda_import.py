"""Import EnConda-Bench's released layout directly as cases.

Layout (``--cases PATH`` may name any of the three levels)::

    enconda-dev/
        repo_info.jsonl                 {"repository": "owner/name", "revision": "<commit>"}
        instances/
            error_gen_<owner>_<name>/   one folder per repository
                <instance>/             README.md|README.rst|... and README.json (the golden)

The golden answer of an instance is the ``README.json`` in the instance's own folder, never one
found by a name search: EnConda-Bench's evaluator matches folder names by substring, so
``readme_1`` picks up ``readme_1_only_E1`` or ``readme_10``.

Golden files vary in places. Unambiguous variants are normalised and recorded as *notes*
(``readme.json`` spelled in lower case, ``"level10"`` capping 12 errors, ``"e1"`` for ``E1``, a
single string for ``correction_candidates``); anything else makes the instance a *problem*, named
by file and reason, and the other instances still load.

Decisions, with the data that motivated them (2,074 instance folders of ``enconda-dev``):

- ``level`` is the number of errors. The generator caps its ``levelN`` at 10 (16 instances list
  11 to 14 errors under ``"level10"``), so a disagreeing file ``level`` is a note, not a problem.
- 33 instances have no errors (``"level0"``): they load, as cases whose correct diagnosis is
  empty, with a note.
- An instance whose repository has no ``repo_info.jsonl`` entry is a problem: without a pinned
  revision the execution item could not be reproduced, and ``RepoSource`` requires one.
- ``test_command`` defaults to ``python -m pytest -q``. EnConda-Bench's execution harness
  (``Evaluation/Execution``) is not in its public repository snapshot we could read, so what its
  Pass@1 check runs could not be confirmed. The verification sidecar (``pytest-enconda verify``)
  supplies a discovered test command, test tools and a PASS set per repository; an instance
  without a verified record gets ``reference.verified = False`` and its execution item skips.
- The original README (``--readme-variant=original``) is the repository folder's own
  ``error_gen_<owner>_<name>/README.*``: 37 of the 160 repository folders hold one (all
  ``README.rst``); the other instances have none, and their items skip under that variant.

A dataset is data people download: nothing in it may reach outside it. Every file and folder
must resolve, after following symlinks, inside the folder given (or the dataset folder holding
its ``repo_info.jsonl``); repository names must be ``owner/name`` of safe characters and
revisions may not look like options. What breaks a rule is a problem of that instance (or line).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..error_types import ERROR_TYPES, code_of_dataset_name
from ..textio import decode_utf8, parse_json, read_bounded
from .loader import MAX_FILE_BYTES
from .models import (
    Case,
    CaseSpec,
    ExecutionReference,
    GoldenAnswer,
    RepoSource,
    parse_level,
)
from .sidecar import SIDECAR_NAME, SidecarError, find_sidecar, read_sidecar

__all__ = ["DEFAULT_TEST_COMMAND", "DatasetLoad", "ImportProblem", "load_dataset"]

DEFAULT_TEST_COMMAND = "python -m pytest -q"
REPO_INFO = "repo_info.jsonl"
INSTANCES = "instances"
REPO_PREFIX = "error_gen_"
GOLDEN_NAME = "README.json"
# EnConda-Bench's own preference when an instance holds several READMEs.
README_SUFFIX_ORDER = (".md", ".rst", ".txt", "")

_TYPE_CODE = re.compile(r"^\s*E\s*[-_]?\s*(\d+)\b", re.IGNORECASE)
# Other spellings of the golden error fields, mapped to EnConda-Bench's released names.
_FIELD_ALIASES = {
    "type": "error_type",
    "errortype": "error_type",
    "error-type": "error_type",
    "description": "error_description",
    "errordescription": "error_description",
    "error-description": "error_description",
    "candidates": "correction_candidates",
    "correction_candidate": "correction_candidates",
    "correctioncandidates": "correction_candidates",
    "answer": "golden_answer",
    "goldenanswer": "golden_answer",
    "golden": "golden_answer",
    "fix_answer": "golden_answer",
}
_GOLDEN_FIELDS = ("error_type", "error_description", "correction_candidates", "golden_answer")
_CASE_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._/-]+")
# GitHub's characters for owners and repositories; '.' and '..' would be path steps, not names.
_REPO_PART = re.compile(r"^[A-Za-z0-9._-]{1,100}$")
# A commit, tag or branch; never starting with '-', which git would read as an option.
_REVISION = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/-]{0,254}$")
_NATURAL = re.compile(r"(\d+)")


class ImportProblem(BaseModel):
    """One thing the importer could not read (or, as a note, had to normalise)."""

    model_config = ConfigDict(frozen=True)

    file: str
    reason: str


class DatasetLoad(BaseModel):
    """The cases of a dataset, and what could not be read (``problems``) or was normalised."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    root: Path
    cases: list[Case] = Field(default_factory=list)
    # owner/name -> revision of every repository folder read, those without instances too: the
    # verification sidecar covers the dataset's repositories, not only those with cases today.
    repositories: dict[str, str] = Field(default_factory=dict)
    problems: list[ImportProblem] = Field(default_factory=list)
    notes: list[ImportProblem] = Field(default_factory=list)

    def counts_by_type(self) -> dict[str, int]:
        """Golden errors per error type over all cases."""
        counts = Counter(error_type for case in self.cases for error_type in case.error_types)
        return {error_type: counts.get(error_type, 0) for error_type in ERROR_TYPES}

    def counts_by_level(self) -> dict[int, int]:
        counts = Counter(case.level for case in self.cases)
        return dict(sorted(counts.items()))


class ImportReport:
    """What an import could not read (problems) and what it read with a caveat (notes)."""

    def __init__(self) -> None:
        self.problems: list[ImportProblem] = []
        self.notes: list[ImportProblem] = []

    def problem(self, file: Path | str, reason: str) -> None:
        self.problems.append(ImportProblem(file=str(file), reason=reason))

    def note(self, file: Path | str, reason: str) -> None:
        self.notes.append(ImportProblem(file=str(file), reason=reason))


class _Roots:
    """The folders every path of the dataset must resolve inside (symlinks followed).

    Resolution is memoised per folder, on strings: resolving each of the 6,000 files of the
    shared dataset from scratch tripled its import time, and a path that is not a link resolves
    to its folder's resolution and its own name (one ``lstat``).
    """

    def __init__(self, *folders: Path) -> None:
        self.folders = [str(folder.resolve()) for folder in folders]
        self._prefixes = tuple(folder.rstrip(os.sep) + os.sep for folder in self.folders)
        self._resolved: dict[str, str] = {}
        # Absolute paths that a directory listing showed are not symlinks: no lstat needed.
        self.plain: set[str] = set()

    def saw(self, entry: os.DirEntry[str]) -> None:
        if not entry.is_symlink():
            self.plain.add(os.path.abspath(entry.path))

    def resolve(self, path: str) -> str:
        known = self._resolved.get(path)
        if known is not None:
            return known
        parent, name = os.path.split(path)
        if (
            not parent
            or parent == path
            or name in ("", ".", "..")
            or (path not in self.plain and os.path.islink(path))
        ):
            known = os.path.realpath(path)
        else:
            known = os.path.join(self.resolve(parent), name)
        self._resolved[path] = known
        return known

    def check(self, path: Path, field: str, report: ImportReport) -> bool:
        """Whether ``path`` resolves inside; if not, a problem naming the field and target."""
        try:
            resolved = self.resolve(os.path.abspath(path))
        except (OSError, RuntimeError) as exc:  # a symlink loop
            report.problem(path, f"{field}: cannot resolve: {exc}")
            return False
        if resolved in self.folders or resolved.startswith(self._prefixes):
            return True
        where = ", ".join(self.folders)
        report.problem(path, f"{field}: resolves to {resolved}, outside the dataset ({where})")
        return False


class _Repo(BaseModel):
    owner: str
    name: str
    revision: str

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


# ----------------------------------------------------------------------------- public API


def load_dataset(
    root: Path,
    *,
    test_command: str = DEFAULT_TEST_COMMAND,
    verification: Path | None = None,
) -> DatasetLoad:
    """Load every instance under ``root``; unreadable ones are listed in ``problems``.

    ``root`` may be the dataset folder (``instances/`` and ``repo_info.jsonl``), the
    ``instances`` folder, one ``error_gen_*`` repository folder, or one instance folder.
    ``verification`` is the sidecar of ``pytest-enconda verify``; without it the one beside the
    dataset is used, if any (see ``apply_verification``).
    """
    root = Path(root)
    report = ImportReport()
    load = DatasetLoad(root=root)
    layout = _layout(root, report)
    if layout is None:
        load.problems = report.problems
        return load
    repo_dirs, only_instance, repo_info_path = layout
    # The folder given, and the dataset folder above it that holds repo_info.jsonl.
    roots = _Roots(root, *([repo_info_path.parent] if repo_info_path else []))
    if repo_info_path is not None and not _Roots(repo_info_path.parent).check(
        repo_info_path, REPO_INFO, report
    ):
        repo_info_path = None
    repos = _read_repo_info(repo_info_path, report) if repo_info_path else {}
    if repo_info_path is None:
        report.problem(root, f"no readable {REPO_INFO} beside or above it: revisions are unknown")
    seen_ids: set[str] = set()
    for repo_dir in repo_dirs:
        load.cases.extend(
            _load_repo(
                repo_dir,
                repos,
                repo_info_path,
                only_instance,
                test_command,
                seen_ids,
                roots,
                report,
                load.repositories,
            )
        )
    start = repo_info_path.parent if repo_info_path else root
    sidecar_path = verification or find_sidecar(start)
    load.cases = apply_verification(load.cases, sidecar_path, report)
    load.problems = report.problems
    load.notes = report.notes
    return load


def apply_verification(cases: list[Case], path: Path | None, report: ImportReport) -> list[Case]:
    """Each case with its execution reference: the sidecar's verified record of its repository
    at its revision (test command, test tools, PASS set; the reference setup becomes the golden
    setup the oracle returns), or the reason it has none; and with the record's base image."""
    sidecar = None
    why = f"no verification sidecar ({SIDECAR_NAME} beside the dataset, or --verification)"
    if path is not None:
        try:
            sidecar = read_sidecar(path)
        except SidecarError as exc:
            report.problem(path, str(exc).removeprefix(f"{path}: "))
            why = f"the verification sidecar cannot be used: {exc}"
    out = []
    for case in cases:
        source = case.spec.repository
        name = "/".join(str(source.url).rstrip("/").split("/")[-2:])
        record = sidecar.record(name, str(source.revision)) if sidecar else None
        if record is not None and record.base_image != case.spec.base_image:
            # The agent, the oracle and Pass@1 run on the interpreter the reference was built
            # on: the one the repository's declared Python range allows, verified or not.
            case = case.model_copy(
                update={"spec": case.spec.model_copy(update={"base_image": record.base_image})}
            )
        if sidecar is None:
            reference = ExecutionReference(verified=False, reason=why)
        elif record is None:
            reference = ExecutionReference(
                verified=False,
                reason=f"{name}@{str(source.revision)[:12]} has no record in {path}",
                sidecar=str(path),
            )
        elif not record.verified:
            reference = ExecutionReference(
                verified=False,
                reason=f"{name}: {record.why_unverified}",
                sidecar=str(path),
            )
        else:
            reference = ExecutionReference(
                verified=True,
                test_tools=tuple(record.test_tools),
                test_requirements=tuple(record.test_requirements),
                services=tuple(record.services),
                pass_set=frozenset(record.pass_set),
                packages_before=record.packages_before,
                sidecar=str(path),
                setup_seconds=record.reference_setup_seconds,
            )
            spec = case.spec.model_copy(update={"test_command": record.test_command})
            out.append(
                case.model_copy(
                    update={
                        "spec": spec,
                        "reference": reference,
                        "golden_setup_text": record.reference_setup,
                    }
                )
            )
            continue
        out.append(case.model_copy(update={"reference": reference}))
    return out


# ----------------------------------------------------------------------------- layout


def _natural_key(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in _NATURAL.split(name)]


def _find_up(start: Path, name: str, levels: int) -> Path | None:
    folder = start
    for _ in range(levels):
        # exists(): a FIFO or device there is refused by its reader, named, not passed over.
        if (folder / name).exists() and not (folder / name).is_dir():
            return folder / name
        folder = folder.parent
    return None


def _subdirs(folder: Path, roots: _Roots | None = None) -> list[Path]:
    dirs = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir():
                dirs.append(Path(entry.path))
                if roots is not None:
                    roots.saw(entry)
    return sorted(dirs, key=lambda path: _natural_key(path.name))


def _layout(root: Path, report: ImportReport) -> tuple[list[Path], str | None, Path | None] | None:
    """(repository folders, the one instance to load or None, repo_info.jsonl or None)."""
    if not root.is_dir():
        report.problem(root, "not a directory")
        return None
    if (root / INSTANCES).is_dir():
        info = root / REPO_INFO
        repo_info = info if info.exists() and not info.is_dir() else None
        return _repo_dirs(root / INSTANCES), None, repo_info
    if root.name.startswith(REPO_PREFIX) and not _is_instance(root):
        return [root], None, _find_up(root.parent, REPO_INFO, 2)
    if _is_instance(root):
        return [root.parent], root.name, _find_up(root.parent.parent, REPO_INFO, 2)
    repo_dirs = _repo_dirs(root)
    if repo_dirs:
        return repo_dirs, None, _find_up(root, REPO_INFO, 2)
    report.problem(
        root,
        f"no EnConda-Bench layout: expected {INSTANCES}/ or {REPO_PREFIX}<owner>_<name>/ "
        "folders holding <instance>/README.json",
    )
    return None


def _repo_dirs(folder: Path) -> list[Path]:
    return [path for path in _subdirs(folder) if path.name.startswith(REPO_PREFIX)]


def _is_instance(folder: Path) -> bool:
    return any(path.name.lower() == GOLDEN_NAME.lower() for path in folder.iterdir())


# ----------------------------------------------------------------------------- repo_info.jsonl


def _read_repo_info(path: Path, report: ImportReport) -> dict[str, _Repo]:
    """Folder key (``owner_name``) → repository; bad lines are problems of that line."""
    repos: dict[str, _Repo] = {}
    ambiguous: set[str] = set()
    try:
        text = _read_text(path)
    except (OSError, ValueError) as exc:
        report.problem(path, f"cannot read: {exc}")
        return repos
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = parse_json(line)
        except ValueError as exc:
            report.problem(where, str(exc))
            continue
        if not isinstance(record, dict):
            report.problem(where, "expected a JSON object")
            continue
        repository = record.get("repository")
        revision = record.get("revision")
        if not _valid_repository(repository):
            report.problem(
                where,
                "repository: expected 'owner/name' of letters, digits, '.', '-' and '_' "
                f"(neither part '.' or '..'), got {repository!r}",
            )
            continue
        assert isinstance(repository, str)
        if not isinstance(revision, str) or not _REVISION.match(revision.strip()):
            report.problem(
                where,
                "revision: expected a commit (or tag) of letters, digits, '.', '/', '-' and "
                f"'_', not starting with '-', got {revision!r}",
            )
            continue
        owner, name = repository.split("/")
        key = f"{owner}_{name}"
        repo = _Repo(owner=owner, name=name, revision=revision.strip())
        known = repos.get(key)
        if known is None:
            repos[key] = repo
        elif known.full_name != repo.full_name:
            # ``a_b/c`` and ``a/b_c`` share the folder ``error_gen_a_b_c``: no way to tell.
            report.problem(
                where,
                f"{repository} and {known.full_name} both map to folder {REPO_PREFIX}{key}",
            )
            ambiguous.add(key)
        elif known.revision != repo.revision:
            report.problem(
                where,
                f"{repository} listed again with revision {repo.revision}; "
                f"keeping the first ({known.revision})",
            )
    for key in ambiguous:
        del repos[key]
    return repos


def _valid_repository(value: object) -> bool:
    if not isinstance(value, str) or value.count("/") != 1:
        return False
    return all(_REPO_PART.match(part) and part not in (".", "..") for part in value.split("/"))


def _match_repo(
    key: str, repos: dict[str, _Repo], folder: Path, report: ImportReport
) -> _Repo | None:
    if key in repos:
        return repos[key]
    # EnConda-Bench's own loader compares names with ``-`` read as ``_``, case kept; we also
    # ignore case, and accept the match only when it is unique.
    loose = key.replace("-", "_").lower()
    matches = [repo for k, repo in repos.items() if k.replace("-", "_").lower() == loose]
    if len(matches) == 1:
        report.note(folder, f"matched to {matches[0].full_name} in {REPO_INFO} ignoring case/-/_")
        return matches[0]
    return None


# ----------------------------------------------------------------------------- instances


def _load_repo(
    repo_dir: Path,
    repos: dict[str, _Repo],
    repo_info_path: Path | None,
    only_instance: str | None,
    test_command: str,
    seen_ids: set[str],
    roots: _Roots,
    report: ImportReport,
    found: dict[str, str],
) -> list[Case]:
    key = repo_dir.name.removeprefix(REPO_PREFIX)
    if not roots.check(repo_dir, "repository folder", report):
        return []
    try:
        instance_dirs = _subdirs(repo_dir, roots)
    except OSError as exc:
        report.problem(repo_dir, f"cannot list: {exc}")
        return []
    if only_instance is not None:
        instance_dirs = [path for path in instance_dirs if path.name == only_instance]
    elif not instance_dirs:
        report.note(repo_dir, "no instance folders")
        if (repo := _match_repo(key, repos, repo_dir, report)) is not None:
            found[repo.full_name] = repo.revision
        return []
    if only_instance is None:
        stray = sorted(p.name for p in repo_dir.iterdir() if p.is_file() and not _is_readme(p.name))
        if stray:
            report.note(repo_dir, f"ignored files outside instance folders: {', '.join(stray)}")
    repo = _match_repo(key, repos, repo_dir, report)
    if repo is None:
        where = repo_info_path or REPO_INFO
        for instance_dir in instance_dirs:
            report.problem(
                instance_dir,
                f"no revision: repository {key!r} has no entry in {where}",
            )
        return []
    found[repo.full_name] = repo.revision
    short_names = _short_names(key, [path.name for path in instance_dirs])
    # Merged instances sort among the others by what follows the repository name.
    instance_dirs.sort(key=lambda path: _natural_key(short_names[path.name]))
    original = _original_readme(repo_dir, roots, report)
    cases = []
    for instance_dir in instance_dirs:
        if not roots.check(instance_dir, "instance folder", report):
            continue
        case = _load_instance(
            instance_dir,
            repo,
            short_names[instance_dir.name],
            test_command,
            seen_ids,
            roots,
            report,
            original,
        )
        if case is not None:
            cases.append(case)
    return cases


def _original_readme(repo_dir: Path, roots: _Roots, report: ImportReport) -> str | None:
    """The repository folder's own README: the README before errors were injected."""
    try:
        with os.scandir(repo_dir) as entries:
            files = [Path(entry.path) for entry in entries if entry.is_file()]
    except OSError as exc:
        report.problem(repo_dir, f"cannot list: {exc}")
        return None
    readmes = sorted((path for path in files if _is_readme(path.name)), key=_readme_preference)
    if not readmes:
        return None
    path = readmes[0]
    if len(readmes) > 1:
        others = ", ".join(other.name for other in readmes[1:])
        report.note(repo_dir, f"several original READMEs; using {path.name}, not {others}")
    if not roots.check(path, "original README", report):
        return None
    return _read_readme(path, report)


def _is_readme(name: str) -> bool:
    return Path(name).stem.lower() == "readme" and Path(name).suffix.lower() != ".json"


def _readme_preference(path: Path) -> tuple[int, int, str]:
    suffix = path.suffix.lower()
    order = README_SUFFIX_ORDER.index(suffix) if suffix in README_SUFFIX_ORDER else 9
    return (order, 0 if path.stem == "README" else 1, path.name)


def _read_bounded(path: Path) -> bytes:
    """At most ``MAX_FILE_BYTES``: a README or golden file far larger is a mistake or an attack."""
    return read_bounded(path, MAX_FILE_BYTES)


def _read_text(path: Path) -> str:
    return decode_utf8(_read_bounded(path))


def _read_readme(path: Path, report: ImportReport) -> str | None:
    """A README's text; undecodable bytes are replaced (the agent still gets the rest)."""
    try:
        raw = _read_bounded(path)
    except (OSError, ValueError) as exc:
        report.problem(path, f"cannot read: {exc}")
        return None
    try:
        return decode_utf8(raw)
    except ValueError as exc:
        if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
            # Replacing bytes would leave a NUL between every letter: nothing left to read.
            report.problem(path, str(exc))
            return None
        report.note(path, f"{exc}; undecodable bytes replaced")
        return raw.decode("utf-8", errors="replace")


def _short_names(key: str, names: list[str]) -> dict[str, str]:
    """``<key>_error_readme_1`` / ``error_gen_<key>_error_readme_merge_k2`` → the part after.

    Falls back to the full folder name where stripping would make two instances alike.
    """
    short: dict[str, str] = {}
    for name in names:
        for prefix in (f"{REPO_PREFIX}{key}_", f"{key}_"):
            if name.startswith(prefix) and len(name) > len(prefix):
                short[name] = name[len(prefix) :]
                break
        else:
            short[name] = name
    counts = Counter(short.values())
    return {name: (value if counts[value] == 1 else name) for name, value in short.items()}


def _pick_files(
    instance_dir: Path, roots: _Roots, report: ImportReport
) -> tuple[Path, Path] | None:
    """(README, golden) of an instance folder, exactly as named there."""
    try:
        with os.scandir(instance_dir) as entries:
            files = {}
            for entry in entries:
                # Not only regular files: a FIFO or device README is refused by its reader,
                # named, instead of passed over as if the folder had none.
                if not entry.is_dir():
                    files[entry.name] = Path(entry.path)
                    roots.saw(entry)
    except OSError as exc:
        report.problem(instance_dir, f"cannot list: {exc}")
        return None
    golden = files.get(GOLDEN_NAME)
    if golden is None:
        spelled = [path for name, path in files.items() if name.lower() == GOLDEN_NAME.lower()]
        if len(spelled) != 1:
            report.problem(instance_dir / GOLDEN_NAME, "golden file not found in the folder")
            return None
        golden = spelled[0]
        report.note(golden, f"golden file spelled {golden.name!r}; read as {GOLDEN_NAME}")
    readmes = [path for name, path in files.items() if _is_readme(name)]
    if not readmes:
        report.problem(instance_dir, "no README file (README.md, README.rst, ...) in the folder")
        return None
    readmes.sort(key=_readme_preference)
    if len(readmes) > 1:
        others = ", ".join(path.name for path in readmes[1:])
        report.note(instance_dir, f"several READMEs; using {readmes[0].name}, not {others}")
    return readmes[0], golden


def _case_id(repo: _Repo, short: str, instance_dir: Path, report: ImportReport) -> str:
    raw = f"{repo.owner}/{repo.name}/{short}"
    case_id = _CASE_ID_UNSAFE.sub("-", raw).lstrip("._/-")
    if case_id != raw:
        report.note(instance_dir, f"case id {raw!r} has characters ids cannot hold: {case_id!r}")
    return case_id


def _load_instance(
    instance_dir: Path,
    repo: _Repo,
    short: str,
    test_command: str,
    seen_ids: set[str],
    roots: _Roots,
    report: ImportReport,
    original_readme: str | None = None,
) -> Case | None:
    picked = _pick_files(instance_dir, roots, report)
    if picked is None:
        return None
    readme_path, golden_path = picked
    # Both checked before either is read: a host file must not even be parsed.
    readme_inside = roots.check(readme_path, "README", report)
    if not roots.check(golden_path, "golden file", report) or not readme_inside:
        return None
    golden = _read_golden(golden_path, report)
    if golden is None:
        return None
    readme_text = _read_readme(readme_path, report)
    if readme_text is None:
        return None

    case_id = _case_id(repo, short, instance_dir, report)
    if case_id in seen_ids:
        report.problem(instance_dir, f"case id {case_id!r} is already taken by another instance")
        return None
    # The README goes where upstream keeps it; generated folders sometimes spell it lower case.
    target = "README" + readme_path.suffix
    if readme_path.name != target:
        report.note(readme_path, f"README spelled {readme_path.name!r}; placed as {target}")
    kind = "merge" if "_merge_k" in instance_dir.name else None
    only = re.search(r"_only_(E\d+)$", instance_dir.name)
    tags = ["enconda"] + ([kind] if kind else []) + ([f"only_{only.group(1)}"] if only else [])
    try:
        spec = CaseSpec(
            id=case_id,
            suite="diagnosis",
            title=f"{repo.full_name} {instance_dir.name}",
            repository=RepoSource(
                kind="url", url=f"https://github.com/{repo.full_name}", revision=repo.revision
            ),
            readme=readme_path.name,
            readme_target=target,
            golden=golden_path.name,
            test_command=test_command,
            tags=tags,
        )
    except ValidationError as exc:
        report.problem(instance_dir, f"cannot make a case: {_first_errors(exc)}")
        return None
    seen_ids.add(case_id)
    return Case(
        spec=spec,
        case_dir=instance_dir,
        readme_text=readme_text,
        original_readme_text=original_readme,
        golden=golden,
    )


# ----------------------------------------------------------------------------- golden files


def _first_errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(part) for part in err['loc']) or '<root>'}: {err['msg']}"
        for err in exc.errors()[:5]
    )


def _read_golden(path: Path, report: ImportReport) -> GoldenAnswer | None:
    try:
        data = parse_json(_read_text(path))
    except OSError as exc:
        report.problem(path, f"cannot read: {exc}")
        return None
    except ValueError as exc:
        report.problem(path, str(exc))
        return None
    problems: list[str] = []
    notes: list[str] = []
    golden = _normalise_golden(data, problems, notes)
    for message in notes:
        report.note(path, message)
    for message in problems:
        report.problem(path, message)
    return None if problems else golden


def _normalise_type(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    match = _TYPE_CODE.match(value)
    if match:
        code = f"E{int(match.group(1))}"
        return code if code in ERROR_TYPES else None
    return code_of_dataset_name(value)


def _normalise_error(
    index: int, raw: object, problems: list[str], notes: list[str]
) -> dict[str, Any] | None:
    where = f"errors[{index}]"
    if not isinstance(raw, dict):
        problems.append(f"{where}: expected an object, got {type(raw).__name__}")
        return None
    error: dict[str, Any] = {}
    for field, value in raw.items():
        canonical = field if field in _GOLDEN_FIELDS else _FIELD_ALIASES.get(field.lower())
        if canonical is None:
            notes.append(f"{where}.{field}: unknown field dropped")
        elif canonical in error or (canonical != field and canonical in raw):
            notes.append(f"{where}.{field}: duplicate of {canonical} dropped")
        else:
            if canonical != field:
                notes.append(f"{where}.{field}: read as {canonical}")
            error[canonical] = value
    before = len(problems)

    error_type = error.get("error_type")
    code = _normalise_type(error_type)
    if code is None:
        expected = ", ".join(ERROR_TYPES)
        if error_type is None:
            problems.append(f"{where}.error_type: required field is missing")
        else:
            problems.append(f"{where}.error_type: expected one of {expected}, got {error_type!r}")
    elif code != error_type:
        notes.append(f"{where}.error_type: {error_type!r} read as {code}")
        error["error_type"] = code

    for field in ("error_description", "golden_answer"):
        value = error.get(field)
        if value is None:
            problems.append(f"{where}.{field}: required field is missing")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            notes.append(f"{where}.{field}: number {value!r} read as text")
            error[field] = str(value)
        elif not isinstance(value, str):
            problems.append(f"{where}.{field}: expected text, got {type(value).__name__}")

    candidates = error.get("correction_candidates")
    if candidates is None:
        if "correction_candidates" not in error:
            notes.append(f"{where}.correction_candidates: missing; read as []")
        else:
            notes.append(f"{where}.correction_candidates: null read as []")
        error["correction_candidates"] = []
    elif isinstance(candidates, str):
        notes.append(f"{where}.correction_candidates: a single string read as a list of one")
        error["correction_candidates"] = [candidates]
    elif isinstance(candidates, list):
        if not all(isinstance(item, str) for item in candidates):
            if all(isinstance(item, str | int | float) for item in candidates):
                notes.append(f"{where}.correction_candidates: numbers read as text")
                error["correction_candidates"] = [str(item) for item in candidates]
            else:
                problems.append(f"{where}.correction_candidates: expected a list of text")
    else:
        problems.append(
            f"{where}.correction_candidates: expected a list of text, "
            f"got {type(candidates).__name__}"
        )
    return error if len(problems) == before else None


def _normalise_golden(data: object, problems: list[str], notes: list[str]) -> GoldenAnswer | None:
    if not isinstance(data, dict):
        problems.append(f"<root>: expected a JSON object, got {type(data).__name__}")
        return None
    raw_errors = data.get("errors")
    if raw_errors is None:
        problems.append("errors: required field is missing")
        return None
    if isinstance(raw_errors, dict):
        notes.append("errors: a single object read as a list of one")
        raw_errors = [raw_errors]
    if not isinstance(raw_errors, list):
        problems.append(f"errors: expected a list, got {type(raw_errors).__name__}")
        return None
    errors = [_normalise_error(i, raw, problems, notes) for i, raw in enumerate(raw_errors)]
    if problems:
        return None

    count = len(errors)
    raw_level = data.get("level")
    if raw_level is None:
        notes.append(f"level: missing; the number of errors ({count}) is the level")
    else:
        try:
            level = parse_level(raw_level)
        except ValueError:
            notes.append(f"level: unreadable {raw_level!r}; the number of errors ({count}) is used")
        else:
            if level != count:
                notes.append(
                    f"level: file says {raw_level!r} but lists {count} errors; using {count}"
                )
    if count == 0:
        notes.append("no injected errors: the correct diagnosis is empty")

    extra = {k: v for k, v in data.items() if k not in ("errors", "level")}
    try:
        return GoldenAnswer.model_validate({**extra, "errors": errors, "level": count})
    except ValidationError as exc:
        problems.append(_first_errors(exc))
        return None
