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

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..error_types import ERROR_TYPES
from ..textio import decode_utf8, parse_json
from .enconda_golden import first_errors, normalise_golden
from .enconda_layout import (
    GOLDEN_NAME,
    REPO_INFO,
    REPO_PREFIX,
    Repo,
    Roots,
    find_layout,
    match_repo,
    natural_key,
    read_dataset_bytes,
    read_dataset_text,
    read_repo_info,
    subdirs,
)
from .import_report import ImportProblem, ImportReport
from .models import (
    Case,
    CaseSpec,
    ExecutionReference,
    GoldenAnswer,
    RepoSource,
)
from .sidecar import SIDECAR_NAME, SidecarError, find_sidecar, read_sidecar

__all__ = [
    "DEFAULT_TEST_COMMAND",
    "DatasetLoad",
    "ImportProblem",
    "ImportReport",
    "load_dataset",
]

DEFAULT_TEST_COMMAND = "python -m pytest -q"
# EnConda-Bench's own preference when an instance holds several READMEs.
README_SUFFIX_ORDER = (".md", ".rst", ".txt", "")

_CASE_ID_UNSAFE = re.compile(r"[^A-Za-z0-9._/-]+")


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
    layout = find_layout(root, report)
    if layout is None:
        load.problems = report.problems
        return load
    repo_dirs, only_instance, repo_info_path = layout
    # The folder given, and the dataset folder above it that holds repo_info.jsonl.
    roots = Roots(root, *([repo_info_path.parent] if repo_info_path else []))
    if repo_info_path is not None and not Roots(repo_info_path.parent).check(
        repo_info_path, REPO_INFO, report
    ):
        repo_info_path = None
    repos = read_repo_info(repo_info_path, report) if repo_info_path else {}
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
                runtime_requirements=tuple(record.runtime_requirements or ()),
                services=tuple(record.services),
                pass_set=frozenset(record.pass_set),
                packages_before=record.packages_before,
                sidecar=str(path),
                setup_seconds=record.reference_setup_seconds,
                trivial=record.null_setup is not None and record.null_setup.trivial,
                submodules=tuple(record.submodules),
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


# ----------------------------------------------------------------------------- instances


def _load_repo(
    repo_dir: Path,
    repos: dict[str, Repo],
    repo_info_path: Path | None,
    only_instance: str | None,
    test_command: str,
    seen_ids: set[str],
    roots: Roots,
    report: ImportReport,
    found: dict[str, str],
) -> list[Case]:
    key = repo_dir.name.removeprefix(REPO_PREFIX)
    if not roots.check(repo_dir, "repository folder", report):
        return []
    try:
        instance_dirs = subdirs(repo_dir, roots)
    except OSError as exc:
        report.problem(repo_dir, f"cannot list: {exc}")
        return []
    if only_instance is not None:
        instance_dirs = [path for path in instance_dirs if path.name == only_instance]
    elif not instance_dirs:
        report.note(repo_dir, "no instance folders")
        if (repo := match_repo(key, repos, repo_dir, report)) is not None:
            found[repo.full_name] = repo.revision
        return []
    if only_instance is None:
        stray = sorted(p.name for p in repo_dir.iterdir() if p.is_file() and not _is_readme(p.name))
        if stray:
            report.note(repo_dir, f"ignored files outside instance folders: {', '.join(stray)}")
    repo = match_repo(key, repos, repo_dir, report)
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
    instance_dirs.sort(key=lambda path: natural_key(short_names[path.name]))
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


def _original_readme(repo_dir: Path, roots: Roots, report: ImportReport) -> str | None:
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


def _read_readme(path: Path, report: ImportReport) -> str | None:
    """A README's text; undecodable bytes are replaced (the agent still gets the rest)."""
    try:
        raw = read_dataset_bytes(path)
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


def _pick_files(instance_dir: Path, roots: Roots, report: ImportReport) -> tuple[Path, Path] | None:
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


def _case_id(repo: Repo, short: str, instance_dir: Path, report: ImportReport) -> str:
    raw = f"{repo.owner}/{repo.name}/{short}"
    case_id = _CASE_ID_UNSAFE.sub("-", raw).lstrip("._/-")
    if case_id != raw:
        report.note(instance_dir, f"case id {raw!r} has characters ids cannot hold: {case_id!r}")
    return case_id


def _load_instance(
    instance_dir: Path,
    repo: Repo,
    short: str,
    test_command: str,
    seen_ids: set[str],
    roots: Roots,
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
        report.problem(instance_dir, f"cannot make a case: {first_errors(exc)}")
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


def _read_golden(path: Path, report: ImportReport) -> GoldenAnswer | None:
    try:
        data = parse_json(read_dataset_text(path))
    except OSError as exc:
        report.problem(path, f"cannot read: {exc}")
        return None
    except ValueError as exc:
        report.problem(path, str(exc))
        return None
    problems: list[str] = []
    notes: list[str] = []
    golden = normalise_golden(data, problems, notes)
    for message in notes:
        report.note(path, message)
    for message in problems:
        report.problem(path, message)
    return None if problems else golden
