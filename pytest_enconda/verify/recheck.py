"""``pytest-enconda verify --recheck``: the null-setup check alone, on records verified before it
existed or before the graded test step last changed.

A full ``verify`` of one repository takes minutes to half an hour (the reference's setup and two
test runs); the null-setup check needs only the task image of the checkout and one run of the
graded test step after an empty setup script (``attempt.null_setup``). The recheck runs that on
each verified record and writes the result into the record, leaving its reference, PASS set and
proof as they were: it says whether an empty setup reaches the PASS set, not whether the
reference still does.

A record whose null setup was measured by this harness version with the graded step as it is now
(its digest) is skipped unless ``--redo``: an interrupted recheck resumes where it stopped.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..cases.models import RepoSource
from ..cases.sidecar import RepoVerification, Sidecar, read_sidecar
from ..errors import EncondaError, InputError
from .attempt import null_setup, step_digest
from .context import Progress, VerifyContext, VerifyOptions
from .ladder import checkout_repository, selected
from .runner import run_repositories

if TYPE_CHECKING:
    from ..backends.base import Backend

__all__ = ["fresh", "recheck_dataset", "recheck_repository", "recheck_summary"]


def fresh(record: RepoVerification) -> bool:
    """Whether the record's null setup was measured by this harness version with the graded
    test step the record now gives."""
    found = record.null_setup
    return found is not None and found.step_sha256 == step_digest(record)


def recheck_dataset(
    options: VerifyOptions, progress: Progress = print, *, backend: Backend | None = None
) -> Sidecar:
    """The null-setup check on every verified record of ``options.out`` that ``--repo`` names
    and that is not ``fresh`` (all of them with ``redo``); the sidecar is rewritten after each."""
    if not options.out.is_file():
        raise InputError(f"--recheck: {options.out}: no sidecar to recheck (verify writes it)")
    sidecar = read_sidecar(options.out)
    chosen = [sidecar.record(name, revision) for name, revision in selected(options)]
    verified = [record for record in chosen if record is not None and record.verified]
    todo = [record for record in verified if options.redo or not fresh(record)]
    progress(
        f"verify --recheck: {len(todo)} of {len(verified)} verified repositories to recheck "
        f"({len(verified) - len(todo)} already measured with this graded step), writing "
        f"{options.out}"
    )
    records = {record.repository: record for record in todo}
    failures: dict[str, str] = {}

    def work(ctx: VerifyContext, name: str, _revision: str) -> RepoVerification:
        record, failure = recheck_repository(ctx, records[name])
        if failure:
            failures[name] = failure
        return record

    def said(record: RepoVerification) -> str:
        failure = failures.get(record.repository)
        if failure:
            return f"{record.repository}: not rechecked: {failure}"
        found = record.null_setup
        if found is None:  # not reached: a recheck without failure measures it
            return f"{record.repository}: not rechecked"
        word = "trivial" if found.trivial else "not trivial"
        return (
            f"{record.repository}: {word}: an empty setup passes {found.passed} of "
            f"{found.pass_set} PASS-set tests ({found.share:.0%})"
        )

    pairs = [(record.repository, record.revision) for record in todo]
    return run_repositories(options, progress, sidecar, pairs, work, said, backend)


def recheck_repository(ctx: VerifyContext, old: RepoVerification) -> tuple[RepoVerification, str]:
    """``old`` with its null setup measured on a fresh task image of its checkout, and why it
    could not be ("" when it was); a record that could not be rechecked is returned as it was."""
    record = old.model_copy(deep=True)
    started = time.monotonic()
    logs = ctx.options.logs / record.repository.replace("/", "__")
    logs.mkdir(parents=True, exist_ok=True)
    try:
        _measure(ctx, record, logs)
    except EncondaError as exc:
        return old, str(exc)
    except Exception as exc:  # one repository's surprise must not end the others' recheck
        return old, f"harness failure: {type(exc).__name__}: {exc}"
    # Said in the record: its null setup came later than its reference, which was not made again.
    record.timings["recheck_s"] = round(time.monotonic() - started, 1)
    return record, ""


def _measure(ctx: VerifyContext, record: RepoVerification, logs: Path) -> None:
    from ..repo.runtime_requirements import runtime_names, runtime_requirements
    from ..sandbox.git_deps import mirrored_dependencies

    source = RepoSource(
        kind="url", url=f"https://github.com/{record.repository}", revision=record.revision
    )
    with tempfile.TemporaryDirectory(prefix="enconda-recheck-") as tmp:
        repo_dir = Path(tmp) / "repo"
        # The checkout writes what it found (submodules, absent files, the commit's date) on the
        # record it is given: a scratch copy, so the verified record keeps its own.
        scratch = record.model_copy(deep=True)
        digest = checkout_repository(ctx, scratch, source, Path(tmp), repo_dir)
        if digest is None:
            raise EncondaError(scratch.reason)
        if record.runtime_requirements is None:
            # Made before verify read them: the graded step of such a record installs every
            # test requirement, the project's own runtime needs too, unless the record names
            # them. Read from the checkout as verify reads them now.
            python = ctx.recipe(record.base_image).python
            record.runtime_requirements = runtime_names(runtime_requirements(repo_dir), python)
        git_deps = mirrored_dependencies(repo_dir, ctx.options.repo_mirror)
        ctx.progress(f"{record.repository}: building its image")
        image = ctx.task_image(record, repo_dir, tree_hash=digest, git_deps=git_deps)
    null_setup(ctx, record, image, logs)


def recheck_summary(sidecar: Sidecar) -> str:
    """One line: how many verified records have a null setup, how many of those are trivial,
    and how their shares of the PASS set spread (none, under half, half or more, all)."""
    verified = [record for record in sidecar.repositories.values() if record.verified]
    measured = [record.null_setup for record in verified if record.null_setup is not None]
    spread = (
        f"none {sum(1 for found in measured if found.passed == 0)}, "
        f"under half {sum(1 for found in measured if 0 < 2 * found.passed < found.pass_set)}, "
        "half or more "
        f"{sum(1 for f in measured if f.pass_set <= 2 * f.passed and not f.trivial and f.passed)}, "
        f"all {sum(1 for found in measured if found.trivial)}"
    )
    return (
        f"verify --recheck: {len(measured)} of {len(verified)} verified repositories have a null "
        f"setup; {sum(1 for found in measured if found.trivial)} trivial (an empty setup passes "
        f"the whole PASS set); share of the PASS set an empty setup passes: {spread}"
    )
