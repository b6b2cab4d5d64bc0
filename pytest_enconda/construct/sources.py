"""The repositories a ``construct`` run starts from, each pinned in the run's own mirror: a
repository folder snapshotted as a one-commit git repository, or a dataset's repositories at
their revisions (from ``--repo-mirror``), their READMEs prepared on the way.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field

from ..cases.sidecar import ABSENT_FILES_KEPT
from ..errors import EncondaError
from .injection_facts import read_facts
from .models import ConstructReport, RepoOutcome
from .options import ConstructError, ConstructInputError, ConstructOptions, Progress
from .writer import read_repo_info, repo_key

MIRROR = "mirror"

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "pytest-enconda construct",
    "GIT_AUTHOR_EMAIL": "construct@example.invalid",
    "GIT_COMMITTER_NAME": "pytest-enconda construct",
    "GIT_COMMITTER_EMAIL": "construct@example.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **_GIT_ENV, "GIT_TERMINAL_PROMPT": "0"}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise ConstructError(f"git {args[0]} in {cwd} failed: {done.stderr.strip()[-300:]}")
    return done.stdout.strip()


def snapshot_folder(
    folder: Path, repository: str, mirror: Path, message: str = "", version: str = "0.0.0"
) -> tuple[str, list[str]]:
    """Commit a copy of ``folder``, its README prepared for the checkout (``prepare.py``), into
    ``mirror/<owner>+<name>/repo`` (bare), where ``--repo-mirror`` finds it: (the revision, the
    README rewrites). A fixed identity and date: the same tree gives the same revision."""
    from ..repo.readme import repository_readme
    from ..sandbox.repo import IGNORED_NAMES
    from .prepare import prepare_readme, scm_versioned

    owner, name = repository.split("/")
    target = mirror / f"{owner}+{name}" / "repo"
    ignored = shutil.ignore_patterns(*IGNORED_NAMES, "*.pyc")

    def skipped(where: str, names: list[str]) -> set[str]:
        # A FIFO would block the copy for ever and a device never end; git commits neither,
        # so the snapshot goes without them. Links are copied as links, never followed.
        special = {
            entry
            for entry in names
            if not ((path := Path(where, entry)).is_symlink() or path.is_file() or path.is_dir())
        }
        return set(ignored(where, names)) | special

    with tempfile.TemporaryDirectory(prefix="enconda-snapshot-") as tmp:
        work = Path(tmp) / name
        try:
            shutil.copytree(folder, work, symlinks=True, ignore=skipped)
        except shutil.Error as exc:
            failed = "; ".join(f"{src}: {why}" for src, _dst, why in exc.args[0][:3])
            raise ConstructInputError(f"{folder}: cannot be copied: {failed}") from None
        notes: list[str] = []
        try:
            readme_name, text = repository_readme(work)
        except EncondaError:
            readme_name, text = "", ""
        except ValueError as exc:
            # Too large (a README is kilobytes), or not a regular file.
            raise ConstructInputError(f"{folder}: its README: {exc}") from None
        if readme_name:
            scm = version if scm_versioned(work) else None
            prepared, notes = prepare_readme(
                text, readme_name, repository, read_facts(work), scm_version=scm
            )
            if notes:
                # newline="" keeps the prepared (LF) text byte for byte
                with open(work / readme_name, "w", encoding="utf-8", newline="") as fh:
                    fh.write(prepared)
        _git(work, "init", "--quiet", "--initial-branch=main")
        _git(work, "add", "-A")
        _git(
            work, "commit", "--quiet", "--no-verify", "-m", message or f"snapshot of {folder.name}"
        )
        revision = _git(work, "rev-parse", "HEAD")
        if target.is_dir():
            try:
                _git(target, "cat-file", "-e", "--end-of-options", f"{revision}^{{commit}}")
                return revision, notes
            except ConstructError:
                shutil.rmtree(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        _git(Path(tmp), "clone", "--quiet", "--bare", "--", str(work), str(target))
    return revision, notes


def snapshot_revision(
    repository: str,
    revision: str,
    repo_mirror: Path,
    mirror: Path,
    *,
    absent: list[str] | None = None,
) -> tuple[str, list[str]]:
    """A dataset repository at its pinned revision (from ``repo_mirror``), snapshotted like a
    folder into ``mirror`` with its README prepared; the commit message names the upstream
    revision it was made from. Files whose contents ``repo_mirror`` lacks are left out of the
    snapshot and their paths appended to ``absent`` (without it, they fail the snapshot)."""
    from ..cases.models import RepoSource
    from ..errors import RepositoryUnavailable
    from ..sandbox.repo import materialize

    source = RepoSource(kind="url", url=f"https://github.com/{repository}", revision=revision)
    with tempfile.TemporaryDirectory(prefix="enconda-upstream-") as tmp:
        tree = Path(tmp) / repository.split("/")[-1]
        try:
            materialize(source, Path(tmp), tree, mirror_dir=repo_mirror, absent=absent)
        except RepositoryUnavailable as exc:
            raise ConstructError(f"{repository}@{revision[:12]}: {exc}") from None
        return snapshot_folder(
            tree,
            repository,
            mirror,
            f"snapshot of {repository}@{revision}",
            version=_last_tag(repo_mirror, repository, revision),
        )


def _last_tag(repo_mirror: Path, repository: str, revision: str) -> str:
    """The revision's last release tag in the mirror (``v3.0`` -> ``3.0``), else ``0.0.0``."""
    git_dir = repo_mirror / repository.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        return "0.0.0"
    try:
        # The revision comes from the dataset's repo_info.jsonl: an operand, whatever it holds.
        tag = _git(git_dir, "describe", "--tags", "--abbrev=0", "--end-of-options", revision)
    except ConstructError:
        return "0.0.0"
    tag = tag.removeprefix("v")
    return tag if re.fullmatch(r"\d+(\.\d+)*([._-]?\w+)?", tag) else "0.0.0"


class Sources(BaseModel):
    """What ``construct`` works on: snapshots in ``OUT/mirror``, and where each came from."""

    revisions: dict[str, str] = Field(default_factory=dict)  # owner/name -> snapshot revision
    upstream: dict[str, str] = Field(default_factory=dict)  # owner/name -> dataset revision
    prepared: dict[str, list[str]] = Field(default_factory=dict)  # owner/name -> README rewrites
    # owner/name -> files the upstream snapshot lacked (first ABSENT_FILES_KEPT) and their count
    absent: dict[str, list[str]] = Field(default_factory=dict)
    absent_count: dict[str, int] = Field(default_factory=dict)


def resolve_sources(
    options: ConstructOptions,
    progress: Progress = print,
    report: ConstructReport | None = None,
) -> Sources:
    """Every repository snapshotted into ``OUT/mirror`` with its README prepared: a folder as it
    is, a dataset's repository at its pinned revision from ``--repo-mirror``. A dataset
    repository that ``report`` (a run being resumed) snapshotted from the same upstream revision
    keeps that snapshot: its validations stay valid even if the preparation rules changed since.
    ``OWNER/NAME`` (optionally ``@REVISION``) names one repository the mirror holds, at the
    mirror's ``HEAD`` when no revision is given."""
    found = Sources()
    previous = report.repositories if report is not None else {}
    local_mirror = options.out / MIRROR
    kinds = set()
    for source in options.sources:
        path = Path(source)
        if (path / "repo_info.jsonl").is_file():
            kinds.add("dataset")
            if options.repo_mirror is None:
                raise ConstructInputError(
                    f"{source}: a dataset's repositories need --repo-mirror (local clones)"
                )
            try:
                listed = read_repo_info(path)
            except (OSError, ValueError) as exc:
                raise ConstructInputError(f"{source}: {exc}") from None
            for repository, revision in sorted(listed.items()):
                _add_upstream(found, options, previous, repository, revision, progress)
        elif (named := _named_repository(source, path, options.repo_mirror)) is not None:
            # OWNER/NAME[@REVISION]: a repository the mirror holds, no repo_info.jsonl needed.
            kinds.add("dataset")
            _add_upstream(found, options, previous, *named, progress)
        elif path.is_dir():
            kinds.add("folder")
            repository = f"{options.owner}/{path.resolve().name}"
            try:
                repo_key(repository)
            except ValueError:
                raise ConstructInputError(
                    f"{source}: the folder's name {path.resolve().name!r} cannot name a "
                    "repository: expected letters, digits, '.', '_' and '-'"
                ) from None
            found.revisions[repository], found.prepared[repository] = snapshot_folder(
                path, repository, local_mirror
            )
        else:
            raise ConstructInputError(
                f"{source}: expected a repository folder or a dataset folder with repo_info.jsonl"
            )
    if kinds == {"dataset", "folder"} and options.repo_mirror:
        raise ConstructInputError("give either repository folders or datasets with --repo-mirror")
    return found


def _add_upstream(
    found: Sources,
    options: ConstructOptions,
    previous: dict[str, RepoOutcome],
    repository: str,
    revision: str,
    progress: Progress,
) -> None:
    """``repository`` at ``revision`` from ``--repo-mirror``, snapshotted into ``OUT/mirror``
    (or the snapshot a resumed run made from the same revision)."""
    from ..sandbox.repo import describe_absent

    if options.repo_mirror is None:
        raise ConstructInputError(f"{repository}: a repository needs --repo-mirror (local clones)")
    local_mirror = options.out / MIRROR
    found.upstream[repository] = revision
    old = previous.get(repository)
    git_dir = local_mirror / repository.replace("/", "+") / "repo"
    # Only an accepted one: a refused repository is tried again with today's rules.
    if old is not None and old.accepted and old.upstream_revision == revision and git_dir.is_dir():
        try:
            # old.revision is read back from the run's own report, a file on disk.
            _git(
                git_dir,
                "cat-file",
                "-e",
                "--end-of-options",
                f"{old.revision}^{{commit}}",
            )
        except ConstructError:
            pass
        else:
            found.revisions[repository] = old.revision
            found.prepared[repository] = list(old.prepared)
            found.absent[repository] = list(old.absent_files)
            found.absent_count[repository] = old.absent_count
            return
    progress(f"{repository}: snapshotting {revision[:12]} from {options.repo_mirror}")
    absent: list[str] = []
    found.revisions[repository], found.prepared[repository] = snapshot_revision(
        repository, revision, options.repo_mirror, local_mirror, absent=absent
    )
    if absent:
        # The snapshot, its reference and its instances all go without these files.
        progress(
            f"{repository}: the upstream snapshot lacks "
            + describe_absent(absent, "snapshotted without them")
        )
        found.absent[repository] = absent[:ABSENT_FILES_KEPT]
        found.absent_count[repository] = len(absent)


_NAMED = re.compile(
    r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*)(?:@(?P<rev>[0-9a-fA-F]{7,40}))?$"
)


def names_a_repository(source: str) -> bool:
    """Whether ``source`` is written ``OWNER/NAME[@REVISION]`` and is no path here."""
    return bool(_NAMED.match(source)) and ".." not in source and not Path(source).exists()


def _named_repository(source: str, path: Path, repo_mirror: Path | None) -> tuple[str, str] | None:
    """(owner/name, revision) for a source written ``OWNER/NAME[@REVISION]`` that is no folder
    here; the revision is the mirror's ``HEAD`` commit when none is given. None for other
    sources; an error when the mirror is missing or does not hold it."""
    from ..sandbox.mirrors import mirror_candidates

    match = _NAMED.match(source)
    if match is None or not names_a_repository(source) or path.exists():
        return None
    repository = match.group("repo")
    if repo_mirror is None:
        raise ConstructInputError(f"{source}: a named repository needs --repo-mirror")
    wanted = match.group("rev") or "HEAD"
    for candidate in mirror_candidates(repo_mirror, f"https://github.com/{repository}"):
        if not candidate.is_dir():
            continue
        try:
            head = _git(
                candidate, "rev-parse", "--verify", "--end-of-options", f"{wanted}^{{commit}}"
            )
        except ConstructError:
            continue
        if re.fullmatch(r"[0-9a-f]{40}", head):
            return repository, head
    raise ConstructInputError(
        f"{source}: {repo_mirror} holds no git repository for {repository} with {wanted}"
    )
