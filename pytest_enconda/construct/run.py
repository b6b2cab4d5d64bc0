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

import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from .. import __version__
from ..artifacts import atomic_write_text
from .absent_types import not_injected
from .filters import judge_filter, offline_filter
from .injection_facts import command_lines, read_facts
from .injectors import inject
from .levels import compose, labels, plan_levels
from .models import ConstructReport, InstanceRecord, RepoOutcome, apply_edits
from .options import ConstructError, ConstructInputError, ConstructOptions, Progress
from .sources import MIRROR, Sources, resolve_sources, snapshot_folder, snapshot_revision
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


def read_report(path: Path) -> ConstructReport:
    from .. import textio

    if not (path.exists() or path.is_symlink()):
        return ConstructReport()
    try:
        return ConstructReport.model_validate_json(textio.read_text(path, 64 << 20))
    except (OSError, ValueError) as exc:
        raise ConstructInputError(f"{path}: not a construct report: {str(exc)[:300]}") from None


# The options, errors and sources are declared beside the run; imported from here as before.
__all__ = [
    "ConstructError",
    "ConstructInputError",
    "ConstructOptions",
    "Progress",
    "Sources",
    "construct",
    "read_report",
    "resolve_sources",
    "snapshot_folder",
    "snapshot_revision",
    "summary_lines",
]


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
    from ..cases.sidecar import SIDECAR_NAME, Sidecar, SidecarError, read_sidecar
    from ..verify.sidecar_writer import write_sidecar
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
    """One accepted repository: errors injected, filtered, validated one by one, planned into
    levels, the instances written and audited; the report is saved after each step."""
    from ..repo.readme import repository_readme

    options = run.options
    with validator.workspace(outcome.repository, outcome.revision) as ws:  # type: ignore[attr-defined]
        readme_name, original = repository_readme(ws.repo_dir)
        write_original(options.out, outcome.repository, original, readme_name)
        facts = read_facts(ws.repo_dir)
        _inject(run, outcome, original, readme_name, facts)
        todo = _filter(run, outcome, original, readme_name, facts)
        readme = _Readme(validator, ws, record, original, readme_name)
        _validate_injections(run, outcome, readme, todo)
        _plan_instances(run, outcome, readme)
        outcome.instances = _audit(options.out, outcome.repository, outcome.instances, run.progress)
        run.save()


class _Readme(NamedTuple):
    """The repository's original README in its validation workspace."""

    validator: Any
    ws: Any
    record: Any
    original: str
    name: str

    def validate(self, text: str, label: str) -> Any:
        return self.validator.run_readme(
            self.ws, self.record, self.original, text, label, self.name
        )


def _inject(run: _Run, outcome: RepoOutcome, original: str, readme_name: str, facts: Any) -> None:
    """The errors injected into the original README (once: a resumed run keeps them)."""
    options, repository = run.options, outcome.repository
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
    run.progress(f"{repository}: {len(outcome.injected)} errors injected by {options.injector}")
    if run.llm is None:
        outcome.not_injected = not_injected(
            repository,
            original,
            command_lines(original, readme_name),
            facts,
            list(options.types),
            {injection.error_type for injection in outcome.injected},
        )
    else:
        made = {injection.error_type for injection in outcome.injected}
        outcome.not_injected = {
            t: "the model's proposals were not valid injections (failed_proposals)"
            for t in options.types
            if t not in made
        }
    for error_type, why in outcome.not_injected.items():
        run.progress(f"{repository}: no {error_type}: {why}")


def _filter(
    run: _Run, outcome: RepoOutcome, original: str, readme_name: str, facts: Any
) -> list[Any]:
    """The injections still to validate: those the offline filter (and the judge) keep."""
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
            run.progress(
                f"{outcome.repository}: {injection.error_type} {injection.rule}: dropped ({why})"
            )
            continue
        todo.append(injection)
    run.save()
    return todo


def _validate_injections(run: _Run, outcome: RepoOutcome, readme: _Readme, todo: list[Any]) -> None:
    """Each injection alone in Docker: one that is not effective is dropped with the verdict."""

    def validate_one(injection):
        started = time.monotonic()
        text = apply_edits(readme.original, list(injection.edits))
        result = readme.validate(text, f"error-{injection.key}")
        return injection, result, time.monotonic() - started

    done = 0
    with ThreadPoolExecutor(max_workers=run.options.workers) as pool:
        for injection, result, seconds in pool.map(validate_one, todo):
            done += 1
            outcome.validations[injection.key] = result
            if result.verdict != "effective":
                outcome.dropped[injection.key] = f"{result.verdict}: {result.detail}"
            run.progress(
                f"{outcome.repository}: validated {done}/{len(todo)} {injection.error_type} "
                f"{injection.rule}: {result.verdict} ({seconds:.0f} s)"
            )
            run.save()


def _plan_instances(run: _Run, outcome: RepoOutcome, readme: _Readme) -> None:
    """The kept errors planned into levels; each instance kept from an earlier run, or its
    README validated (merged ones again in Docker) and written when effective."""
    options, progress, repository = run.options, run.progress, outcome.repository
    original = readme.original
    kept = [i for i in outcome.injected if i.key not in outcome.dropped]
    key = repo_key(repository)
    planned, notes = plan_levels(key, kept, options.per_readme, list(options.levels), options.seed)
    outcome.notes = notes
    previous = {r.instance: r for r in outcome.instances}
    _remove_unplanned(options.out, repository, key, {plan.instance for plan in planned}, progress)
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
        return plan, readme.validate(compose(original, list(plan.errors)), plan.instance)

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
                    readme.name,
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


def _remove_unplanned(
    out: Path, repository: str, key: str, planned: set[str], progress: Progress
) -> None:
    # An instance written by an earlier run that this plan no longer makes (the levels rules
    # changed) would stay in the dataset unrecorded, or duplicate a planned one: removed.
    repo_folder = out / "instances" / f"error_gen_{key}"
    if repo_folder.is_dir():
        for stale in sorted(repo_folder.iterdir()):
            if stale.is_dir() and not stale.is_symlink() and stale.name not in planned:
                shutil.rmtree(stale)
                progress(f"{repository}: instance {stale.name}: no longer planned, removed")


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
        for error_type, why in sorted(outcome.not_injected.items()):
            lines.append(f"construct: {outcome.repository}: no {error_type}: {why}")
    cells = ", ".join(f"level {k}: {v}" for k, v in sorted(levels.items())) or "none"
    lines.append(f"construct: {sum(levels.values())} instances kept ({cells})")
    return lines
