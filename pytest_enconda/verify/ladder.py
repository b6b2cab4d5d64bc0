"""The attempt ladder of ``pytest-enconda verify``: execution ground truth for an imported dataset.

For each repository at its pinned revision: discover the test command, build a reference
environment from the repository's *original* README (an agent, ``readme`` by default) and, if that
fails, from a recipe that installs the repository from source with its test extras (``recipes``);
then run the test command twice, each in a fresh box of the set-up environment, and keep as the
PASS set the tests that passed in both runs (``attempt``). A repository whose reference cannot be
built, or whose PASS set is empty, is recorded as unverified with the reason. The sidecar is
rewritten after each repository.

Like the session, this package runs a pipeline (cases → sandbox → agents → probing) and writes
data for a later run: it is imported by the CLI only. Its boxes and images come from a
``Backend`` (Docker unless one is given).
"""

from __future__ import annotations

import functools
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..cases.enconda_import import load_dataset
from ..cases.models import RepoSource
from ..cases.sidecar import RepoVerification, Sidecar, read_sidecar, timing_tag
from ..errors import EncondaError, InputError
from ..repo.ci_services import service_packages
from ..repo.facts import RepoFacts, read_repository
from ..repo.readme import repository_readme
from .attempt import attempt
from .checkout import judge_checkout
from .context import Progress, VerifyContext, VerifyOptions, verify_case
from .own_tools import project_requirements, without_own_tools
from .recipes import AS_OF, as_of_script, ci_file_steps, recipe_script, with_file_steps
from .runner import run_repositories
from .sidecar_writer import now

if TYPE_CHECKING:
    from ..backends.base import Backend
    from ..sandbox.recipes import BaseChoice
    from .removed_apis import Removal
    from .wheel_pythons import Unbuilt

__all__ = [
    "checkout_repository",
    "repositories_of",
    "selected",
    "verify_dataset",
    "verify_repository",
]


def repositories_of(dataset: Path) -> list[tuple[str, str]]:
    """(owner/name, revision) of every repository folder of the dataset that ``repo_info.jsonl``
    names, those without instances too (each case's repository is one of them)."""
    return sorted(load_dataset(dataset).repositories.items())


def selected(options: VerifyOptions) -> list[tuple[str, str]]:
    """(owner/name, revision) of the dataset's repositories that ``--repo`` names (all of them
    without it)."""
    listed = repositories_of(options.dataset)
    # GitHub's names ignore case, and so does --repo; one naming no repository is a typo.
    wanted = {name.lower(): name for name in options.only}
    unknown = sorted(set(wanted) - {name.lower() for name, _ in listed})
    if unknown:
        raise InputError(
            f"--repo {', '.join(wanted[name] for name in unknown)}: no such repository "
            f"in {options.dataset} (owner/name as repo_info.jsonl writes it)"
        )
    return [(name, rev) for name, rev in listed if not wanted or name.lower() in wanted]


def verify_dataset(
    options: VerifyOptions, progress: Progress = print, *, backend: Backend | None = None
) -> Sidecar:
    """Verify every repository of the dataset; the sidecar is rewritten after each one. Boxes
    and images come from ``backend`` (Docker's by default), which is closed at the end."""
    sidecar = read_sidecar(options.out) if options.out.is_file() else Sidecar()
    todo = [
        (name, revision)
        for name, revision in selected(options)
        if options.redo or sidecar.record(name, revision) is None
    ]
    progress(f"verify: {len(todo)} repositories to verify, writing {options.out}")

    def said(record: RepoVerification) -> str:
        word = "verified" if record.verified else f"unverified: {record.why_unverified}"
        return f"{record.repository}: {word} ({len(record.pass_set)} tests in PASS set)"

    return run_repositories(options, progress, sidecar, todo, verify_repository, said, backend)


def verify_repository(ctx: VerifyContext, name: str, revision: str) -> RepoVerification:
    record = RepoVerification(
        repository=name,
        revision=revision,
        status="unverified",
        harness_version=__version__,
        verified_at=now(),
    )
    started = time.monotonic()
    try:
        _verify(ctx, record)
    except EncondaError as exc:
        record.reason = str(exc)
    except Exception as exc:  # one repository's surprise must not end the others' verification
        record.reason = f"harness failure: {type(exc).__name__}: {exc}"
    record.timings["total_s"] = round(time.monotonic() - started, 1)
    if record.pass_set:
        record.status, record.reason = "verified", ""
    elif not record.reason:
        record.reason = record.attempts[-1] if record.attempts else "nothing was tried"
    return record


Strategy = tuple[str, Callable[[], str]]


@dataclass
class _Ladder:
    """What one repository's attempts share: the task image (built again on an older base), the
    Debian packages of programs the tests called (the recipes install them too), and the
    attempts still to make, in order."""

    build: Callable[[], str]
    image: str
    programs: list[str] = field(default_factory=list)
    strategies: list[Strategy] = field(default_factory=list)


def _verify(ctx: VerifyContext, record: RepoVerification) -> None:
    from ..sandbox.git_deps import describe as describe_git_deps
    from ..sandbox.git_deps import mirrored_dependencies

    options = ctx.options
    source = RepoSource(
        kind="url", url=f"https://github.com/{record.repository}", revision=record.revision
    )
    logs = options.logs / record.repository.replace("/", "__")
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="enconda-verify-") as tmp:
        repo_dir = Path(tmp) / "repo"
        phase = time.monotonic()
        digest = checkout_repository(ctx, record, source, Path(tmp), repo_dir)
        if digest is None:
            return
        facts = _describe(ctx, record, repo_dir)
        packages = facts.packages
        if not packages and not facts.name:
            # No setup could be proven to use the checkout: none is tried.
            record.checkout_proof = judge_checkout([], None)
            record.reason = f"checkout proof: {record.checkout_proof.detail}"
            return
        readme_name, readme_text = repository_readme(repo_dir)
        git_deps = mirrored_dependencies(repo_dir, options.repo_mirror)
        record.git_dependencies = [dep.url for dep in git_deps]
        if git_deps:
            ctx.progress(f"{record.repository}: {describe_git_deps(git_deps)}")
        ctx.progress(f"{record.repository}: building its image")

        def task_image() -> str:
            return ctx.task_image(record, repo_dir, tree_hash=digest, git_deps=git_deps)

        ladder = _Ladder(task_image, task_image())
        record.timings["image_s"] = round(time.monotonic() - phase, 1)
        ladder.strategies = _strategies(
            ctx, record, facts, ladder, repo_dir, readme_name, readme_text, logs
        )
        _climb(ctx, record, facts, ladder, logs, packages)


def checkout_repository(
    ctx: VerifyContext, record: RepoVerification, source: RepoSource, tmp: Path, repo_dir: Path
) -> str | None:
    """The repository at its revision in ``repo_dir``, its submodules, commit date and absent
    files on the record; its tree hash, or None with the reason on the record."""
    from ..errors import RepositoryUnavailable
    from ..sandbox.repo import describe_absent, materialize

    ctx.progress(f"{record.repository}: fetching {record.revision[:12]}")
    absent: list[str] = []
    committed: list[str] = []
    submodules: list[str] = []
    try:
        digest = materialize(
            source,
            tmp,
            repo_dir,
            mirror_dir=ctx.options.repo_mirror,
            cache_dir=ctx.settings.cache_dir,
            absent=absent,
            committed=committed,
            submodules=submodules,
        )
    except RepositoryUnavailable as exc:
        record.reason = str(exc)
        return None
    record.submodules = submodules[:100]
    for line in submodules:
        ctx.progress(f"{record.repository}: submodule {line}")
    record.revision_date = committed[0] if committed else ""
    if absent:
        # A fetched snapshot may lack its largest files; the reference is measured on the
        # same partial tree the agents get, so its PASS set stays comparable.
        record.record_absent(absent)
        ctx.progress(
            f"{record.repository}: the snapshot lacks "
            + describe_absent(absent, "checked out without them")
        )
    return digest


def _describe(ctx: VerifyContext, record: RepoVerification, repo_dir: Path) -> RepoFacts:
    """The base image, test command, test tools, CI services and test requirements of the
    checkout, on the record."""
    choice = _choose_base(ctx, repo_dir)
    record.base_image = choice.name
    ctx.progress(f"{record.repository}: base {choice.name}: {choice.reason}")
    facts = read_repository(repo_dir)
    found = facts.test_command
    record.test_command = found.command
    record.test_command_source = found.source
    record.test_command_detail = found.detail
    record.test_tools = list(facts.test_tools)
    services, unknown_services = facts.ci_services
    record.services, record.unknown_services = list(services), list(unknown_services)
    if record.services or record.unknown_services:
        kinds = ", ".join(service.kind for service in record.services) or "none"
        unknown = f"; not known: {', '.join(record.unknown_services)}"
        ctx.progress(
            f"{record.repository}: CI services started beside the tests: {kinds}"
            + (unknown if record.unknown_services else "")
        )
    _declare_test_requirements(ctx, record, facts)
    return facts


def _strategies(
    ctx: VerifyContext,
    record: RepoVerification,
    facts: RepoFacts,
    ladder: _Ladder,
    repo_dir: Path,
    readme_name: str,
    readme_text: str,
    logs: Path,
) -> list[Strategy]:
    """The attempts in order: the agent on the original README, then (with the recipe
    fallback) the recipe and the recipe held to the revision's day."""
    options = ctx.options
    found = facts.test_command
    strategies: list[Strategy] = [
        (
            f"agent:{options.agent}",
            lambda: _agent_script(
                ctx, record, ladder.image, repo_dir, readme_name, readme_text, logs
            ),
        )
    ]
    if options.recipe_fallback:
        file_steps = ci_file_steps(repo_dir, found)

        @functools.cache
        def recipe_with(extra: tuple[str, ...]) -> str:
            script = recipe_script(
                repo_dir,
                [
                    *_system_packages(repo_dir, readme_name),
                    *service_packages(record.services),
                    *extra,
                ],
            )
            return with_file_steps(script, file_steps, found.detail)

        def recipe() -> str:
            return recipe_with(tuple(ladder.programs))

        strategies.append(("recipe", recipe))
        if options.recipe_as_of and record.revision_date:
            era_pip = facts.depends_on_pip
            strategies.append(
                (
                    AS_OF,
                    lambda: as_of_script(recipe(), record.revision_date, era_pip=era_pip),
                )
            )
    return strategies


def _climb(
    ctx: VerifyContext,
    record: RepoVerification,
    facts: RepoFacts,
    ladder: _Ladder,
    logs: Path,
    packages: list[str],
) -> None:
    """The attempts one after the other until one verifies: an attempt whose tests called
    missing programs is retried with them installed, and once the ladder is spent the last
    recipe runs again on an older base whose Python still has what the code used."""
    options = ctx.options
    strategies = ladder.strategies
    skipped = _skipped_attempts(strategies, options.first_attempt)
    if skipped:
        record.attempts.append(f"not tried (started at {options.first_attempt}): {skipped}")
    tried: list[str] = []
    older = False
    while strategies:
        label, make = strategies.pop(0)
        tried.append(label)
        ctx.progress(f"{record.repository}: {label}: writing the setup script")
        try:
            script = make()
        except EncondaError as exc:
            record.attempts.append(f"{label}: no script: {exc}")
            continue
        if not script.strip() or script.strip() == "#!/bin/bash":
            record.attempts.append(f"{label}: no setup commands")
            continue
        # The test step's installs are held to the same day as the setup's.
        record.packages_before = record.revision_date if label.startswith(AS_OF) else ""
        if attempt(ctx, record, ladder.image, label, script, logs, packages, facts.name):
            return
        record.packages_before = ""
        added = (
            _program_packages(ctx, record, facts, ladder.programs)
            if options.recipe_fallback
            else []
        )
        if added:
            ladder.programs += added
            ctx.progress(
                f"{record.repository}: the tests called programs the image lacks; "
                f"the recipe installs {', '.join(added)}"
            )
            retry = _programs_retry(label)
            if retry:
                strategies.insert(0, (retry, make))
        if strategies or older or not options.recipe_fallback:
            continue
        choice = _older_base(ctx, record, facts, logs, tried)
        if choice is None:
            continue
        # Once: the recipe that got furthest (the last) again, on the base whose Python
        # still has what the code used; its packages, requirements and image follow the base.
        older = True
        ctx.progress(f"{record.repository}: base {choice.name}: {choice.reason}")
        record.base_image = choice.name
        _declare_test_requirements(ctx, record, facts)
        ladder.image = ladder.build()
        ladder.programs.clear()
        last = label.partition(WITH_PROGRAMS)[0]
        strategies.append((f"{last}@{choice.name}", make))


def _skipped_attempts(strategies: list[tuple[str, Callable[[], str]]], first: str) -> str:
    """Drop the attempts before ``first`` from ``strategies`` (in place); their labels, joined."""
    starts = {"agent": "agent:", "recipe": "recipe", "as-of": AS_OF}
    index = next(
        (i for i, (label, _) in enumerate(strategies) if label.startswith(starts[first])), None
    )
    if index is None:
        # Switched off, or no dated recipe: the snapshot gave no revision date.
        raise EncondaError(f"verify: no {first} attempt to start at")
    skipped = [label for label, _ in strategies[:index]]
    del strategies[:index]
    return ", ".join(skipped)


WITH_PROGRAMS = "+programs"
# The loader names one missing library at a time (datamol's RDKit: libXrender.so.1, then with it
# installed libXext.so.6): a recipe is retried while its tests name new ones, this many times.
# Libraries opened through ctypes at run time are invisible to the ldd scan and still come one a
# round (OpenPulse's VTK: libGLU, libXcursor, libXft after the scan's libXrender): three rounds
# ran out before they did. Each round needs a name not seen before, so the bound only caps cost.
MAX_PROGRAM_ROUNDS = 6


def _programs_retry(label: str) -> str:
    """The label of the next retry of a recipe attempt with more packages ("" for none):
    ``recipe`` → ``recipe+programs`` → ``recipe+programs2`` → ... → ``recipe+programs6``."""
    if not label.startswith("recipe"):
        return ""
    base, found, rounds = label.partition(WITH_PROGRAMS)
    done = (int(rounds) if rounds.isdigit() else 1) if found else 0
    if done >= MAX_PROGRAM_ROUNDS:
        return ""
    return f"{base}{WITH_PROGRAMS}{done + 1 if done else ''}"


def _program_packages(
    ctx: VerifyContext, record: RepoVerification, facts: RepoFacts, have: list[str]
) -> list[str]:
    """Debian packages of the programs the last attempt's tests called and the image lacked
    (``record.undeclared_programs``), not yet installed by a recipe; none when the release's
    index cannot be had (said on the progress line). A program the project's own Python
    requirements provide (pytest, tox, nox) is pip's to install, never Debian's."""
    from ..sandbox.debian_programs import ContentsError, program_packages

    programs = without_own_tools(record.undeclared_programs, project_requirements(record, facts))
    if not programs:
        return []
    settings = ctx.settings
    try:
        release = ctx.recipe(record.base_image).release
        found = program_packages(programs, release, settings.debian_mirror, settings.cache_dir)
    except (ContentsError, EncondaError) as exc:
        ctx.progress(f"{record.repository}: no Debian index of programs: {exc}")
        return []
    return [package for package in dict.fromkeys(found.values()) if package not in have]


def _declare_test_requirements(
    ctx: VerifyContext, record: RepoVerification, facts: RepoFacts
) -> None:
    """The repository's test requirements as read for the Python of the record's base, less
    its runtime requirements (``repo.runtime_requirements``): the graded test step installs what
    only the tests need, never what the setup should have installed."""
    from ..repo.runtime_requirements import graded_requirements, runtime_names, runtime_requirements

    python = ctx.recipes[record.base_image].python
    declared = facts.test_requirements(python=python)
    record.runtime_requirements = runtime_names(runtime_requirements(facts.root), python)
    kept, left = graded_requirements(
        [req.spec for req in declared], record.runtime_requirements, facts.name
    )
    if left:
        ctx.progress(
            f"{record.repository}: test requirements left to the setup (runtime requirements "
            f"of the project): {', '.join(left)}"
        )
    record.test_requirements = kept
    record.test_requirement_sources = {req.spec: req.source for req in declared if req.spec in kept}


def _older_base(
    ctx: VerifyContext, record: RepoVerification, facts: RepoFacts, logs: Path, tried: list[str]
) -> BaseChoice | None:
    """An older base when the failed attempts' logs show the code using a standard-library name
    the base's Python removed (``verify.removed_apis``), or the last setup pinning a release PyPI
    has no build of for the base's Python (``verify.wheel_pythons``), said in the attempts; None
    otherwise."""
    from ..sandbox.recipes import older_base
    from .removed_apis import removal_in_logs
    from .wheel_pythons import unbuilt_requirement

    python = ctx.recipes[record.base_image].python_release
    paths = [logs / f"{timing_tag(label)}-{step}.log" for label in tried for step in _LOGGED]
    sign: Removal | Unbuilt | None = removal_in_logs(paths, python)
    if sign is None:
        # The last attempt's own cutoff: an as-of setup saw only the files of the revision's day.
        before = record.revision_date if tried[-1].startswith(AS_OF) else ""
        last_setup = logs / f"{timing_tag(tried[-1])}-setup.log"
        sign = unbuilt_requirement([last_setup], python, before, fetch=ctx.pypi_files)
    if sign is None:
        return None
    choice = older_base(record.base_image, sign.allows, facts.python, ctx.recipes)
    where = f"retried on {choice.name}" if choice else "no base has an older Python that fits"
    record.attempts.append(f"{tried[-1]}: {sign.describe()}; {where}")
    return choice


# The logs an attempt writes whose text can show what the code used.
_LOGGED = ("setup", "test1")


def _choose_base(ctx: VerifyContext, repo_dir: Path) -> BaseChoice:
    """The base whose Python the repository's declared range allows (``recipes.choose_base``).
    A pulled base (``pull_base``) replaces every recipe's Debian tree, its interpreter too: the
    configured base is kept."""
    from ..sandbox.recipes import BaseChoice, choose_base

    pulled = ctx.settings.pull_base
    if pulled:
        return BaseChoice(ctx.options.base_image, f"the base is pulled ({pulled}), not chosen")
    return choose_base(repo_dir, ctx.options.base_image, ctx.recipes)


def _system_packages(repo_dir: Path, readme_name: str) -> list[str]:
    """Debian packages the recipe installs: those CI installs and those the dependencies need."""
    from ..agents.profile import build_profile

    profile = build_profile(repo_dir, readme_name)
    return list(dict.fromkeys(profile.ci_system_packages + profile.likely_system_packages))


def _agent_script(
    ctx: VerifyContext,
    record: RepoVerification,
    image: str,
    repo_dir: Path,
    readme_name: str,
    readme_text: str,
    logs: Path,
) -> str:
    from ..agents import registry
    from ..agents.base import AgentTask

    options = ctx.options
    case = verify_case(record, repo_dir, readme_name, readme_text)
    agent = registry.create(options.agent, **options.agent_options)
    task = AgentTask(
        case=case,
        readme_text=readme_text,
        readme_name=readme_name,
        repo_dir=repo_dir,
        log_path=logs / "agent.log",
        trajectory_path=logs / "trajectory.jsonl",
        run_dir=options.logs,
        start_container=lambda: ctx.box(record, image, "agent", case_id=case.id),
    )
    outcome = agent.run(task)
    if outcome.status not in ("completed",) and not outcome.setup_script.strip():
        raise _NoScript(f"agent {options.agent} ended {outcome.status}: {outcome.message}")
    return outcome.setup_script


class _NoScript(EncondaError):
    pass
