"""The ``construct`` pipeline: repositories in, a validated EnConda-Bench-layout dataset out.

Per repository: the original README is verified (``verify``, literal ``readme`` agent, no recipe
fallback) or the repository is refused with the reason; errors are injected (rules or a model),
filtered offline (and by a judge where one is given), validated one by one in Docker; the
effective ones are split and merged into levels, merged READMEs are validated again, written,
and audited (an instance the label audit flags is removed). ``construct-report.json`` records
every injection and instance, kept or dropped with the reason, and is rewritten after each step:
a second run with the same options redoes nothing already done.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..artifacts import atomic_write_text
from ..cases.sidecar import ABSENT_FILES_KEPT
from ..errors import EncondaError, InputError
from .facts import command_lines, read_facts
from .filters import judge_filter, offline_filter
from .injectors import inject
from .levels import compose, labels, plan_levels
from .models import CONSTRUCT_TYPES, ConstructReport, InstanceRecord, RepoOutcome, apply_edits
from .writer import (
    REPORT_NAME,
    golden_json,
    instance_dir,
    read_repo_info,
    repo_key,
    short_name,
    write_instance,
    write_original,
    write_repo_info,
)

Progress = Callable[[str], None]
MIRROR = "mirror"
_GIT_ENV = {
    "GIT_AUTHOR_NAME": "pytest-enconda construct",
    "GIT_AUTHOR_EMAIL": "construct@example.invalid",
    "GIT_COMMITTER_NAME": "pytest-enconda construct",
    "GIT_COMMITTER_EMAIL": "construct@example.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}


class ConstructError(EncondaError):
    pass


class ConstructInputError(ConstructError, InputError):
    """The sources, OUT or the options are not what ``construct`` can work from: the user's
    to fix (the command line exits 2), found before anything runs in Docker."""


class ConstructOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    sources: tuple[str, ...]
    out: Path
    types: tuple[str, ...] = CONSTRUCT_TYPES
    per_readme: int = Field(default=2, ge=1)
    per_type: int = Field(default=2, ge=1)
    levels: tuple[int, ...] = (1, 2, 3, 5)
    injector: str = "rules"
    llm_api_base: str | None = None
    judge: str | None = None
    judge_api_base: str | None = None
    judge_cache: Path | None = None
    seed: int = 0
    owner: str = "local"
    repo_mirror: Path | None = None
    workers: int = Field(default=2, ge=1)
    setup_seconds: float = 900
    test_seconds: float = 600
    logs: Path | None = None


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
    from ..pipeline import repository_readme
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
    keeps that snapshot: its validations stay valid even if the preparation rules changed since."""
    from ..sandbox.repo import describe_absent

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
                found.upstream[repository] = revision
                old = previous.get(repository)
                git_dir = local_mirror / repository.replace("/", "+") / "repo"
                # Only an accepted one: a refused repository is tried again with today's rules.
                if (
                    old is not None
                    and old.accepted
                    and old.upstream_revision == revision
                    and git_dir.is_dir()
                ):
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
                        continue
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


def read_report(path: Path) -> ConstructReport:
    from .. import textio

    if not (path.exists() or path.is_symlink()):
        return ConstructReport()
    try:
        return ConstructReport.model_validate_json(textio.read_text(path, 64 << 20))
    except (OSError, ValueError) as exc:
        raise ConstructInputError(f"{path}: not a construct report: {str(exc)[:300]}") from None


class _Run:
    def __init__(self, options: ConstructOptions, progress: Progress) -> None:
        self.options = options
        self.progress = progress
        self.report_path = options.out / REPORT_NAME
        self.report = read_report(self.report_path)
        self.report.harness_version = __version__
        wanted = {
            "types": list(options.types),
            "per_readme": options.per_readme,
            "per_type": options.per_type,
            "levels": list(options.levels),
            "injector": options.injector,
            "seed": options.seed,
            "judge": options.judge,
        }
        if self.report.repositories and self.report.options != wanted:
            changed = sorted(k for k in wanted if self.report.options.get(k) != wanted[k])
            raise ConstructInputError(
                f"{self.report_path} was made with other options ({', '.join(changed)}): "
                "resume with the same options, or write to another --out"
            )
        self.report.options = wanted
        self.judge = None
        if options.judge:
            from ..grading.judges import create_judge

            try:
                self.judge = create_judge(
                    options.judge, api_base=options.judge_api_base, cache_dir=options.judge_cache
                )
            except ValueError as exc:
                reason = str(exc)
                raise ConstructInputError(
                    reason if reason.startswith("--judge") else f"--judge {options.judge}: {reason}"
                ) from None
        self.llm = None
        if options.injector.startswith("llm:"):
            from .llm import LlmInjector

            self.llm = LlmInjector(options.injector[4:], api_base=options.llm_api_base)
        elif options.injector != "rules":
            raise ConstructInputError(
                f"--injector {options.injector}: expected rules or llm:<model>"
            )

    def save(self) -> None:
        atomic_write_text(self.report_path, self.report.model_dump_json(indent=1) + "\n")


def construct(
    options: ConstructOptions,
    progress: Progress = print,
    validator_factory: Callable[..., object] | None = None,
) -> ConstructReport:
    """Construct the dataset; ``validator_factory`` replaces the Docker validator (tests)."""
    from ..cases.sidecar import SIDECAR_NAME, Sidecar, SidecarError, read_sidecar, write_sidecar
    from .validate import Validator

    options.out.mkdir(parents=True, exist_ok=True)
    run = _Run(options, progress)
    sources = resolve_sources(options, progress, run.report)
    revisions, mirror = sources.revisions, options.out / MIRROR
    sidecar_path = options.out / SIDECAR_NAME
    try:
        sidecar = read_sidecar(sidecar_path) if sidecar_path.is_file() else Sidecar()
    except SidecarError as exc:
        raise ConstructInputError(str(exc)) from None
    sidecar.dataset = str(options.out)
    sidecar.harness_version = __version__
    logs = options.logs or options.out / "construct-logs"
    validator = (validator_factory or Validator)(
        logs=logs,
        repo_mirror=mirror,
        progress=progress,
        setup_seconds=options.setup_seconds,
        test_seconds=options.test_seconds,
    )
    try:
        total = len(revisions)
        for number, (repository, revision) in enumerate(sorted(revisions.items()), 1):
            progress(f"[{number}/{total}] {repository}@{revision[:12]}")
            record = sidecar.record(repository, revision)
            if record is None:
                progress(f"{repository}: verifying the original README")
                record = validator.reference(repository, revision)  # type: ignore[attr-defined]
                sidecar.repositories[repository] = record
                write_sidecar(sidecar_path, sidecar)
            outcome = run.report.repositories.get(repository)
            if outcome is None or outcome.revision != revision:
                outcome = RepoOutcome(repository=repository, revision=revision, accepted=False)
                run.report.repositories[repository] = outcome
            outcome.upstream_revision = sources.upstream.get(repository, "")
            outcome.prepared = sources.prepared.get(repository, [])
            outcome.absent_files = sources.absent.get(repository, [])
            outcome.absent_count = sources.absent_count.get(repository, 0)
            if not record.verified:
                outcome.accepted = False
                outcome.reason = f"the original README does not verify: {record.why_unverified}"
                progress(f"{repository}: refused: {outcome.reason}")
                run.save()
                continue
            outcome.accepted, outcome.reason = True, ""
            # Before the instances: the audit loads them, and the importer needs the revision.
            known = read_repo_info(options.out)
            known[repository] = revision
            write_repo_info(options.out, known)
            _construct_repository(run, validator, record, outcome)
            run.save()
    finally:
        validator.close()  # type: ignore[attr-defined]
    return run.report


def _construct_repository(run: _Run, validator: object, record: object, outcome: RepoOutcome):
    from ..pipeline import repository_readme

    options, progress = run.options, run.progress
    repository = outcome.repository
    with validator.workspace(repository, outcome.revision) as ws:  # type: ignore[attr-defined]
        readme_name, original = repository_readme(ws.repo_dir)
        write_original(options.out, repository, original, readme_name)
        facts = read_facts(ws.repo_dir)
        if not outcome.injected:
            cmds = command_lines(original, readme_name)
            if run.llm is None:
                outcome.injected = inject(
                    repository,
                    original,
                    cmds,
                    facts,
                    list(options.types),
                    options.per_type,
                    options.seed,
                )
            else:
                for error_type in options.types:
                    for attempt in range(options.per_type):
                        proposal = run.llm.propose(repository, original, facts, error_type, attempt)
                        if isinstance(proposal, str):
                            outcome.failed_proposals.append(f"{error_type}#{attempt}: {proposal}")
                        elif proposal.key not in {i.key for i in outcome.injected}:
                            outcome.injected.append(proposal)
            run.save()
        progress(f"{repository}: {len(outcome.injected)} errors injected by {options.injector}")
        todo = []
        for injection in outcome.injected:
            key = injection.key
            if key in outcome.dropped or key in outcome.validations:
                continue
            why = offline_filter(injection, original, facts, readme_name)
            if why is None and run.judge is not None:
                why = judge_filter(injection, original, run.judge)
            if why is not None:
                outcome.dropped[key] = f"filter: {why}"
                progress(f"{repository}: {injection.error_type} {injection.rule}: dropped ({why})")
                continue
            todo.append(injection)
        run.save()

        def validate_one(injection):
            started = time.monotonic()
            text = apply_edits(original, list(injection.edits))
            result = validator.run_readme(  # type: ignore[attr-defined]
                ws, record, original, text, f"error-{injection.key}", readme_name
            )
            return injection, result, time.monotonic() - started

        done = 0
        with ThreadPoolExecutor(max_workers=options.workers) as pool:
            for injection, result, seconds in pool.map(validate_one, todo):
                done += 1
                outcome.validations[injection.key] = result
                if result.verdict != "effective":
                    outcome.dropped[injection.key] = f"{result.verdict}: {result.detail}"
                progress(
                    f"{repository}: validated {done}/{len(todo)} {injection.error_type} "
                    f"{injection.rule}: {result.verdict} ({seconds:.0f} s)"
                )
                run.save()
        kept = [i for i in outcome.injected if i.key not in outcome.dropped]
        key = repo_key(repository)
        planned, notes = plan_levels(
            key, kept, options.per_readme, list(options.levels), options.seed
        )
        outcome.notes = notes
        previous = {r.instance: r for r in outcome.instances}
        # An instance written by an earlier run that this plan no longer makes (the levels rules
        # changed) would stay in the dataset unrecorded, or duplicate a planned one: removed.
        planned_names = {plan.instance for plan in planned}
        repo_folder = options.out / "instances" / f"error_gen_{key}"
        if repo_folder.is_dir():
            for stale in sorted(repo_folder.iterdir()):
                if stale.is_dir() and not stale.is_symlink() and stale.name not in planned_names:
                    shutil.rmtree(stale)
                    progress(f"{repository}: instance {stale.name}: no longer planned, removed")
        records: list[InstanceRecord] = []
        todo_plans = []
        for plan in planned:
            keys = [e.key for e in plan.errors]
            old = previous.get(plan.instance)
            folder = instance_dir(options.out, repository, plan.instance)
            # One the audit dropped is made again: what it duplicated may be gone.
            audited = old is not None and old.reason.startswith("audit flags")
            if (
                old is not None
                and old.error_keys == keys
                and not audited
                and (not old.kept or (folder / "README.json").is_file())
            ):
                records.append(old)  # resume: an existing instance is not redone
                golden = folder / "README.json"
                text = golden_json(repository, plan.instance, labels(list(plan.errors)))
                if old.kept and golden.read_text(encoding="utf-8") != text:
                    atomic_write_text(golden, text)  # labels only: no validation depends on them
                continue
            todo_plans.append(plan)

        def validate_plan(plan):
            if plan.level == 1:
                return plan, outcome.validations[plan.errors[0].key]
            old = previous.get(plan.instance)
            if (
                old is not None
                and old.validation is not None
                and old.reason.startswith("audit")
                and old.error_keys == [e.key for e in plan.errors]
            ):
                return plan, old.validation  # the same README: its validation stands
            text = compose(original, list(plan.errors))
            return plan, validator.run_readme(  # type: ignore[attr-defined]
                ws, record, original, text, plan.instance, readme_name
            )

        with ThreadPoolExecutor(max_workers=options.workers) as pool:
            for plan, result in pool.map(validate_plan, todo_plans):
                keys = [e.key for e in plan.errors]
                kept_now = result.verdict == "effective"
                if kept_now:
                    write_instance(
                        options.out,
                        repository,
                        plan.instance,
                        compose(original, list(plan.errors)),
                        labels(list(plan.errors)),
                        readme_name,
                    )
                records.append(
                    InstanceRecord(
                        instance=plan.instance,
                        repository=repository,
                        level=plan.level,
                        error_keys=keys,
                        error_types=[e.error_type for e in plan.errors],
                        kept=kept_now,
                        reason="" if kept_now else f"merged README {result.verdict}",
                        validation=result,
                    )
                )
                progress(
                    f"{repository}: instance {plan.instance} (level {plan.level}): "
                    + ("kept" if kept_now else f"dropped: {result.verdict}")
                )
        outcome.instances = sorted(records, key=lambda r: r.instance)
        outcome.instances = _audit(options.out, repository, outcome.instances, progress)
        run.save()


def _audit(
    out: Path, repository: str, records: list[InstanceRecord], progress: Progress
) -> list[InstanceRecord]:
    """The label audit over this repository's written instances: a flagged one is removed."""
    from ..agents.readme_commands import extract_commands
    from ..cases.audit import audit_cases
    from ..cases.enconda_import import load_dataset

    folder = out / "instances" / f"error_gen_{repo_key(repository)}"
    if not folder.is_dir():
        return records
    load = load_dataset(folder)
    if load.problems:
        first = load.problems[0]
        raise ConstructError(f"the written instances do not load: {first.file}: {first.reason}")
    report = audit_cases(load.cases, extract_commands)
    flagged = {r.case_id.split("/")[-1]: r.flags for r in report.records if r.flags}
    out_records = []
    for record in records:
        flags = flagged.get(short_name(repository, record.instance))
        if record.kept and flags:
            shutil.rmtree(instance_dir(out, repository, record.instance), ignore_errors=True)
            progress(f"{repository}: instance {record.instance}: dropped by the audit ({flags})")
            record = record.model_copy(
                update={"kept": False, "reason": f"audit flags: {', '.join(flags)}"}
            )
        out_records.append(record)
    return out_records


def summary_lines(report: ConstructReport) -> list[str]:
    """Kept share per injector and type, instances per level, refused repositories."""
    lines = []
    for injector, rows in sorted(report.kept_share().items()):
        cells = ", ".join(f"{t} {row['kept']}/{row['injected']}" for t, row in sorted(rows.items()))
        lines.append(f"construct: {injector}: injected errors kept by validation: {cells}")
    levels: dict[int, int] = {}
    for outcome in report.repositories.values():
        for record in outcome.instances:
            if record.kept:
                levels[record.level] = levels.get(record.level, 0) + 1
        if not outcome.accepted:
            lines.append(f"construct: {outcome.repository} refused: {outcome.reason}")
    cells = ", ".join(f"level {k}: {v}" for k, v in sorted(levels.items())) or "none"
    lines.append(f"construct: {sum(levels.values())} instances kept ({cells})")
    return lines
