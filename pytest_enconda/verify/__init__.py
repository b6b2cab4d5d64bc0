"""``pytest-enconda verify``: execution ground truth for an imported dataset.

For each repository at its pinned revision: discover the test command, build a reference
environment from the repository's *original* README (an agent, ``readme`` by default) and, if that
fails, from a recipe that installs the repository from source with its test extras; then run the
test command twice, each in a fresh container of the set-up environment, and keep as the PASS set
the tests that passed in both runs (from pytest's JUnit XML report). A repository whose reference
cannot be built, or whose PASS set is empty, is recorded as unverified with the reason.

Like the session, this module runs a pipeline (cases → sandbox → agents → probing) and writes
data for a later run: it is imported by the CLI only.
"""

from __future__ import annotations

import contextlib
import functools
import queue
import re
import shlex
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__, textio
from ..cases.checkout import CheckoutProof, checkout_packages, judge_checkout
from ..cases.enconda_import import load_dataset
from ..cases.models import Case, CaseSpec, RepoSource
from ..cases.operands import option_shaped
from ..cases.sidecar import (
    MIN_PASS_SHARE,
    RepoVerification,
    Sidecar,
    TestRun,
    now,
    read_sidecar,
    timing_tag,
    write_sidecar,
)
from ..errors import EncondaError, InputError
from ..pipeline import heartbeat, repository_readme
from ..probing.junit import (
    CURRENT_TEST,
    JUNIT_PATH,
    JUnitError,
    first_error,
    read_junit,
    run_tests_command,
    why_no_tests,
)
from ..probing.shell import in_setup_env, setup_command
from ..repo.ci_services import ci_services, service_packages
from ..repo.test_commands import (
    AS_OF,
    as_of_script,
    ci_file_steps,
    discover_test_command,
    recipe_script,
    test_tools,
    with_file_steps,
)
from ..repo.test_deps import ci_job_requirements, declared_test_requirements, depends_on_pip

if TYPE_CHECKING:
    from ..cases.removed_apis import Removal
    from ..cases.wheel_pythons import ReleaseFile, Unbuilt
    from ..sandbox.recipes import BaseChoice

Progress = Callable[[str], None]
SETUP_SCRIPT = "/tmp/enconda/setup.sh"


class VerifyOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    dataset: Path
    out: Path
    logs: Path
    agent: str = "readme"
    agent_options: dict[str, Any] = Field(default_factory=dict)
    recipe_fallback: bool = True
    # A recipe that fails on today's dependency releases is tried once more with those of its
    # revision's day (pip's upload-time cutoff): nevergrad imports what bayes_opt 2 removed.
    recipe_as_of: bool = True
    # A re-run may start at a later attempt when the earlier ones' failures are on record
    # (meerkat: the agent's and the plain recipe's test runs took an hour each before the dated
    # recipe, the one that got furthest); the attempts skipped are said in the record.
    first_attempt: Literal["agent", "recipe", "as-of"] = "agent"
    repo_mirror: Path | None = None
    workers: int = 1
    # A torch-size install on a loaded machine takes more than 15 minutes: 900 s verified two
    # held-out repositories only on a second try with 2,400 s.
    setup_seconds: float = 2400
    # The agent's attempt follows the repository's own README, which often ends by starting a
    # server or a notebook in the foreground (pyftpdlib's `python -m pyftpdlib`): such a setup
    # never exits and held a repository for the whole 2,400 s. The recipe, tried next, gets
    # setup_seconds; with no recipe to fall back on, the agent gets setup_seconds too.
    agent_setup_seconds: float = 900
    test_seconds: float = 900
    min_pass_share: float = MIN_PASS_SHARE
    # The default: a repository whose declared Python range excludes its interpreter gets the
    # recipe whose interpreter the range allows (sandbox.recipes.choose_base).
    base_image: str = "bookworm-py3.11"
    only: tuple[str, ...] = ()
    redo: bool = False


class _Context:
    def __init__(self, options: VerifyOptions, progress: Progress) -> None:
        from ..sandbox.containers import Sandbox, new_run_id
        from ..sandbox.images import ImageBuilder
        from ..sandbox.settings import SandboxSettings

        self.options = options
        self.progress = progress
        settings = SandboxSettings.from_env()
        run_id = f"verify-{new_run_id()}"
        self.sandbox = Sandbox(settings, run_id=run_id)
        self.images = ImageBuilder(settings, run_id=run_id)
        self.lock = threading.Lock()
        # Set when verify is interrupted: a worker stops before its next container.
        self.stopping = threading.Event()

    def download_cache(self, base_image: str) -> str:
        """The base image's tag: the pip and uv caches a benchmark run on that base shares."""
        return self.images.base_tag(self.images.recipe(base_image))

    def pypi_files(self, name: str) -> dict[str, list[ReleaseFile]]:
        """PyPI's files of project ``name`` (``wheel_pythons.PyPIError`` when it cannot say)."""
        from ..cases.wheel_pythons import fetch_release_files

        return fetch_release_files(name)


def repositories_of(dataset: Path) -> list[tuple[str, str]]:
    """(owner/name, revision) of every repository folder of the dataset that ``repo_info.jsonl``
    names, those without instances too (each case's repository is one of them)."""
    return sorted(load_dataset(dataset).repositories.items())


def verify_dataset(options: VerifyOptions, progress: Progress = print) -> Sidecar:
    """Verify every repository of the dataset; the sidecar is rewritten after each one."""
    sidecar = read_sidecar(options.out) if options.out.is_file() else Sidecar()
    sidecar.dataset = str(options.dataset)
    sidecar.harness_version = __version__
    todo = []
    listed = repositories_of(options.dataset)
    # GitHub's names ignore case, and so does --repo; one naming no repository is a typo.
    wanted = {name.lower(): name for name in options.only}
    unknown = sorted(set(wanted) - {name.lower() for name, _ in listed})
    if unknown:
        raise InputError(
            f"--repo {', '.join(wanted[name] for name in unknown)}: no such repository "
            f"in {options.dataset} (owner/name as repo_info.jsonl writes it)"
        )
    for name, revision in listed:
        if wanted and name.lower() not in wanted:
            continue
        if not options.redo and sidecar.record(name, revision) is not None:
            continue
        todo.append((name, revision))
    progress(f"verify: {len(todo)} repositories to verify, writing {options.out}")
    ctx = _Context(options, progress)
    ctx.sandbox.reap_orphans()
    restore = _terminate_as_interrupt()
    try:
        for record in _verify_all(ctx, todo):
            with ctx.lock:
                sidecar.repositories[record.repository] = record
                write_sidecar(options.out, sidecar)
            word = "verified" if record.verified else f"unverified: {record.why_unverified}"
            progress(f"{record.repository}: {word} ({len(record.pass_set)} tests in PASS set)")
    except BaseException:
        # Ctrl-C or SIGTERM: queued repositories are not started; removing the open containers
        # ends the running ones' commands; the recorded ones stay in the sidecar.
        ctx.stopping.set()
        progress("verify: interrupted: queued repositories cancelled, containers removed")
        raise
    finally:
        restore()
        ctx.sandbox.close()
    return sidecar


def _verify_all(ctx: _Context, todo: list[tuple[str, str]]) -> Iterator[RepoVerification]:
    """Each repository's record as it is ready, verified on ``workers`` daemon threads.

    Not a ThreadPoolExecutor: the interpreter joins its threads at exit, so an interrupted verify
    still waited for each running repository, whose setup may take 2,400 s (a blocked Docker
    call, a fetch, longer), before the process ended. A daemon thread is abandoned at exit; what
    it leaves is removed with the sandbox's containers, or reaped at the next start."""
    pending: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
    for item in todo:
        pending.put(item)
    done: queue.SimpleQueue[RepoVerification | BaseException] = queue.SimpleQueue()

    def work() -> None:
        while not ctx.stopping.is_set():
            try:
                name, revision = pending.get_nowait()
            except queue.Empty:
                return
            try:
                done.put(verify_repository(ctx, name, revision))
            except BaseException as exc:  # KeyboardInterrupt in a worker ends the whole run
                done.put(exc)
                return

    for index in range(min(max(1, ctx.options.workers), len(todo))):
        threading.Thread(target=work, name=f"enconda-verify-{index}", daemon=True).start()
    for _ in todo:
        outcome = done.get()
        if isinstance(outcome, BaseException):
            raise outcome
        yield outcome


def _terminate_as_interrupt() -> Callable[[], None]:
    """SIGTERM (``kill``, a CI timeout, a job scheduler) handled like Ctrl-C: Python's default
    ends the process at once, leaving the running setups' containers and the queued repositories'
    futures behind. Returns what restores the previous handler."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None

    def interrupt(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, interrupt)
    return lambda: signal.signal(signal.SIGTERM, previous)


def verify_repository(ctx: _Context, name: str, revision: str) -> RepoVerification:
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


def _verify(ctx: _Context, record: RepoVerification) -> None:
    from ..errors import RepositoryUnavailable
    from ..sandbox.git_deps import describe as describe_git_deps
    from ..sandbox.git_deps import mirrored_dependencies
    from ..sandbox.repo import describe_absent, materialize

    options = ctx.options
    source = RepoSource(
        kind="url", url=f"https://github.com/{record.repository}", revision=record.revision
    )
    logs = options.logs / record.repository.replace("/", "__")
    logs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="enconda-verify-") as tmp:
        repo_dir = Path(tmp) / "repo"
        phase = time.monotonic()
        ctx.progress(f"{record.repository}: fetching {record.revision[:12]}")
        absent: list[str] = []
        committed: list[str] = []
        submodules: list[str] = []
        try:
            digest = materialize(
                source,
                Path(tmp),
                repo_dir,
                mirror_dir=options.repo_mirror,
                cache_dir=ctx.images.settings.cache_dir,
                absent=absent,
                committed=committed,
                submodules=submodules,
            )
        except RepositoryUnavailable as exc:
            record.reason = str(exc)
            return
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
        choice = _choose_base(ctx, repo_dir)
        record.base_image = choice.name
        ctx.progress(f"{record.repository}: base {choice.name}: {choice.reason}")
        found = discover_test_command(repo_dir)
        record.test_command = found.command
        record.test_command_source = found.source
        record.test_command_detail = found.detail
        record.test_tools = test_tools(
            repo_dir, found.command, ci_job_requirements(repo_dir, found)
        )
        record.services, record.unknown_services = ci_services(repo_dir, found)
        if record.services or record.unknown_services:
            kinds = ", ".join(service.kind for service in record.services) or "none"
            unknown = f"; not known: {', '.join(record.unknown_services)}"
            ctx.progress(
                f"{record.repository}: CI services started beside the tests: {kinds}"
                + (unknown if record.unknown_services else "")
            )
        _declare_test_requirements(ctx, record, repo_dir)
        packages = checkout_packages(repo_dir)
        readme_name, readme_text = repository_readme(repo_dir)
        git_deps = mirrored_dependencies(repo_dir, options.repo_mirror)
        record.git_dependencies = [dep.url for dep in git_deps]
        if git_deps:
            ctx.progress(f"{record.repository}: {describe_git_deps(git_deps)}")
        ctx.progress(f"{record.repository}: building its image")
        case_id = f"verify/{record.repository}"

        def task_image() -> str:
            # A recipe's base missing on this machine is built here (minutes, once).
            base = ctx.images.ensure_base(record.base_image, progress=ctx.progress)
            return ctx.images.ensure_task_image(
                base,
                repo_dir,
                {},
                case_id,
                progress=lambda _line: None,
                tree_hash=digest,
                git_deps=git_deps,
            )

        image = task_image()
        record.timings["image_s"] = round(time.monotonic() - phase, 1)
        strategies: list[tuple[str, Callable[[], str]]] = [
            (
                f"agent:{options.agent}",
                lambda: _agent_script(ctx, record, image, repo_dir, readme_name, readme_text, logs),
            )
        ]
        # Debian packages of the programs an attempt's tests called and the image lacked: the
        # recipe written after that attempt installs them too.
        programs: list[str] = []
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
                return recipe_with(tuple(programs))

            strategies.append(("recipe", recipe))
            if options.recipe_as_of and record.revision_date:
                era_pip = depends_on_pip(repo_dir)
                strategies.append(
                    (
                        AS_OF,
                        lambda: as_of_script(recipe(), record.revision_date, era_pip=era_pip),
                    )
                )
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
            if _attempt(ctx, record, image, label, script, logs, packages):
                return
            record.packages_before = ""
            added = _program_packages(ctx, record, programs) if options.recipe_fallback else []
            if added:
                programs += added
                ctx.progress(
                    f"{record.repository}: the tests called programs the image lacks; "
                    f"the recipe installs {', '.join(added)}"
                )
                retry = _programs_retry(label)
                if retry:
                    strategies.insert(0, (retry, make))
            if strategies or older or not options.recipe_fallback:
                continue
            choice = _older_base(ctx, record, repo_dir, logs, tried)
            if choice is None:
                continue
            # Once: the recipe that got furthest (the last) again, on the base whose Python
            # still has what the code used; its packages, requirements and image follow the base.
            older = True
            ctx.progress(f"{record.repository}: base {choice.name}: {choice.reason}")
            record.base_image = choice.name
            _declare_test_requirements(ctx, record, repo_dir)
            image = task_image()
            programs.clear()
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


def _program_packages(ctx: _Context, record: RepoVerification, have: list[str]) -> list[str]:
    """Debian packages of the programs the last attempt's tests called and the image lacked
    (``record.undeclared_programs``), not yet installed by a recipe; none when the release's
    index cannot be had (said on the progress line)."""
    from ..sandbox.debian_programs import ContentsError, program_packages

    if not record.undeclared_programs:
        return []
    settings = ctx.images.settings
    try:
        release = ctx.images.recipe(record.base_image).release
        found = program_packages(
            record.undeclared_programs, release, settings.debian_mirror, settings.cache_dir
        )
    except (ContentsError, EncondaError) as exc:
        ctx.progress(f"{record.repository}: no Debian index of programs: {exc}")
        return []
    return [package for package in dict.fromkeys(found.values()) if package not in have]


def _declare_test_requirements(ctx: _Context, record: RepoVerification, repo_dir: Path) -> None:
    """The repository's test requirements as read for the Python of the record's base."""
    declared = declared_test_requirements(
        repo_dir, python=ctx.images.recipes[record.base_image].python
    )
    record.test_requirements = [req.spec for req in declared]
    record.test_requirement_sources = {req.spec: req.source for req in declared}


def _older_base(
    ctx: _Context, record: RepoVerification, repo_dir: Path, logs: Path, tried: list[str]
) -> BaseChoice | None:
    """An older base when the failed attempts' logs show the code using a standard-library name
    the base's Python removed (``cases.removed_apis``), or the last setup pinning a release PyPI
    has no build of for the base's Python (``cases.wheel_pythons``), said in the attempts; None
    otherwise."""
    from ..cases.removed_apis import removal_in_logs
    from ..cases.wheel_pythons import unbuilt_requirement
    from ..repo.python_range import declared_python
    from ..sandbox.recipes import older_base

    python = ctx.images.recipes[record.base_image].python_release
    paths = [logs / f"{timing_tag(label)}-{step}.log" for label in tried for step in _LOGGED]
    sign: Removal | Unbuilt | None = removal_in_logs(paths, python)
    if sign is None:
        # The last attempt's own cutoff: an as-of setup saw only the files of the revision's day.
        before = record.revision_date if tried[-1].startswith(AS_OF) else ""
        last_setup = logs / f"{timing_tag(tried[-1])}-setup.log"
        sign = unbuilt_requirement([last_setup], python, before, fetch=ctx.pypi_files)
    if sign is None:
        return None
    choice = older_base(
        record.base_image, sign.allows, declared_python(repo_dir), ctx.images.recipes
    )
    where = f"retried on {choice.name}" if choice else "no base has an older Python that fits"
    record.attempts.append(f"{tried[-1]}: {sign.describe()}; {where}")
    return choice


# The logs an attempt writes whose text can show what the code used.
_LOGGED = ("setup", "test1")


def _choose_base(ctx: _Context, repo_dir: Path) -> BaseChoice:
    """The base whose Python the repository's declared range allows (``recipes.choose_base``).
    A pulled base (``pull_base``) replaces every recipe's Debian tree, its interpreter too: the
    configured base is kept."""
    from ..sandbox.recipes import BaseChoice, choose_base

    pulled = ctx.images.settings.pull_base
    if pulled:
        return BaseChoice(ctx.options.base_image, f"the base is pulled ({pulled}), not chosen")
    return choose_base(repo_dir, ctx.options.base_image, ctx.images.recipes)


def _system_packages(repo_dir: Path, readme_name: str) -> list[str]:
    """Debian packages the recipe installs: those CI installs and those the dependencies need."""
    from ..agents.profile import build_profile

    profile = build_profile(repo_dir, readme_name)
    return list(dict.fromkeys(profile.ci_system_packages + profile.likely_system_packages))


def _agent_script(
    ctx: _Context,
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
    spec = CaseSpec(
        id=f"verify/{record.repository}",
        suite="diagnosis",
        title=f"reference setup of {record.repository}",
        repository=RepoSource(
            kind="url", url=f"https://github.com/{record.repository}", revision=record.revision
        ),
        readme=readme_name,
        readme_target=readme_name,
        test_command=record.test_command,
        base_image=record.base_image,
    )
    case = Case(spec=spec, case_dir=repo_dir, readme_text=readme_text)
    agent = registry.create(options.agent, **options.agent_options)
    task = AgentTask(
        case=case,
        readme_text=readme_text,
        readme_name=readme_name,
        repo_dir=repo_dir,
        log_path=logs / "agent.log",
        trajectory_path=logs / "trajectory.jsonl",
        run_dir=options.logs,
        start_container=lambda: _container(ctx, record, image, "agent", case_id=spec.id),
    )
    outcome = agent.run(task)
    if outcome.status not in ("completed",) and not outcome.setup_script.strip():
        raise _NoScript(f"agent {options.agent} ended {outcome.status}: {outcome.message}")
    return outcome.setup_script


class _NoScript(EncondaError):
    pass


class _Stopped(EncondaError):
    pass


@contextlib.contextmanager
def _container(
    ctx: _Context, record: RepoVerification, image: str, role: str, case_id: str = ""
) -> Iterator[Any]:
    """``ctx.sandbox.container`` that refuses once verify is interrupted: a worker abandoned at
    exit would otherwise go on to its next step (the recipe after the agent's attempt, a test run)
    in a new container that the sandbox, already closed, no longer removes. Checked after the
    container is made, so one made while the sandbox closes is removed here."""
    with ctx.sandbox.container(
        image,
        case_id=case_id or f"verify/{record.repository}",
        role=role,
        download_cache=ctx.download_cache(record.base_image),
    ) as box:
        if ctx.stopping.is_set():
            raise _Stopped("verify was interrupted")
        yield box


def setup_budget(options: VerifyOptions, label: str) -> float:
    """Seconds a strategy's setup may take: the agent's attempt is bounded apart when the
    recipe follows it."""
    if label.startswith("agent:") and options.recipe_fallback:
        return min(options.agent_setup_seconds, options.setup_seconds)
    return options.setup_seconds


def _attempt(
    ctx: _Context,
    record: RepoVerification,
    image: str,
    label: str,
    script: str,
    logs: Path,
    packages: list[str],
) -> bool:
    """Set up once, snapshot, run the tests twice in fresh containers; True when verified."""
    options = ctx.options
    tag = timing_tag(label)
    phase = time.monotonic()
    snapshot = None
    try:
        with _container(ctx, record, image, "verify-setup") as box:
            box.copy_in(script.encode(), SETUP_SCRIPT)
            step = f"{record.repository}: {label}: setup"
            ctx.progress(step)
            budget = setup_budget(options, label)
            with heartbeat(ctx.progress, step, budget):
                setup = box.exec(
                    setup_command(SETUP_SCRIPT),
                    timeout=budget,
                    log_path=logs / f"{tag}-setup.log",
                )
            record.timings[f"{tag}_setup_s"] = round(time.monotonic() - phase, 1)
            if setup.exit_code != 0:
                why = (
                    f"timed out after {budget:g} s"
                    if setup.timed_out
                    else f"exited with {setup.exit_code}"
                )
                record.attempts.append(f"{label}: setup {why}: {_failure_line(setup.output)}")
                # A build calling a program the image lacks fails the setup, not a test: its
                # package is retried as a test's would be.
                record.undeclared_programs = _missing_programs(logs / f"{tag}-setup.log")
                return False
            proof = _checkout_proof(box, packages, logs / f"{tag}-checkout.json")
            record.checkout_proof = proof
            if proof.refuses:
                record.attempts.append(f"{label}: not a reference of the checkout: {proof.detail}")
                return False
            snapshot = box.snapshot(f"verify-{record.repository}")
        deselected = 0
        while True:
            runs: list[dict[str, str]] = []
            record_runs: list[TestRun] = []
            missing: list[str] = []
            outgrown = ""
            for index in (1, 2):
                ctx.progress(f"{record.repository}: {label}: test run {index} of 2")
                outcomes, run, why, killed_in = _test_run(
                    ctx, record, snapshot, logs / f"{tag}-test{index}.log"
                )
                runs.append(outcomes)
                record_runs.append(run)
                missing.append(why)
                # The node id is read from the run's output: one beginning with '-' would be a
                # pytest option after --deselect, and is no test pytest could name anyway.
                if killed_in and not option_shaped(killed_in) and deselected < MAX_MEMORY_DESELECTS:
                    outgrown = killed_in
                    break
            if not outgrown:
                break
            # lifelines: one test outgrew the 4 GB box and the kernel's kill took the whole
            # run's report with it. The command goes on without that test, in grading too.
            deselected += 1
            record.test_command = f"{record.test_command} --deselect {shlex.quote(outgrown)}"
            record.attempts.append(
                f"{label}: {outgrown} outgrew the box's memory and took the run with it; "
                "the test command deselects it"
            )
            ctx.progress(f"{record.repository}: {label}: {outgrown} outgrew the box; deselected")
        record.timings[f"{tag}_tests_s"] = round(time.monotonic() - phase, 1)
        passed = sorted(
            test
            for test, outcome in runs[0].items()
            if outcome == "passed" and runs[1].get(test) == "passed"
        )
        summary = ", ".join(
            f"run {i}: {r.passed} passed {r.failed} failed {r.errors} errors {r.skipped} skipped"
            + (
                f" (no JUnit report: {why})"
                if not r.report
                else ""
                if not why
                else f" (no tests: {why})"
                if not r.passed + r.failed + r.errors
                else f" (first error: {why})"
            )
            for i, (r, why) in enumerate(zip(record_runs, missing, strict=True), 1)
        )
        ran = sum(1 for outcome in runs[0].values() if outcome != "skipped")
        share = len(passed) / ran if ran else 0.0
        record.pass_share = round(share, 4)
        record.min_pass_share = options.min_pass_share
        record.undeclared_programs = _missing_programs(logs / f"{tag}-test1.log")
        named = [n for n in record.undeclared_programs if _SONAME.fullmatch(n)]
        if snapshot is not None and named:
            # The loader names one missing library per failure (OpenPulse's VTK: libXrender,
            # then libGLU, then libXcursor, one recipe round each); ldd names them all at once.
            unresolved = _unresolved_libraries(
                ctx, record, snapshot, logs / f"{tag}-ldd.log", named
            )
            record.undeclared_programs += [
                name for name in unresolved if name not in record.undeclared_programs
            ][:40]
        if not passed:
            record.attempts.append(f"{label}: no test passed in both runs ({summary})")
            return False
        if share < options.min_pass_share:
            record.attempts.append(
                f"{label}: only {len(passed)} of {ran} tests passed in both runs ({share:.0%}, "
                f"below {options.min_pass_share:.0%}; {summary})"
            )
            return False
        record.attempts.append(
            f"{label}: {len(passed)} of {ran} tests passed in both runs ({share:.0%}; {summary})"
        )
        record.pass_set = passed
        record.runs = record_runs
        record.reference_setup = script
        record.reference_source = label
        return True
    finally:
        if snapshot is not None:
            with contextlib.suppress(Exception):
                ctx.sandbox.client.images.remove(snapshot, force=True)


MAX_MEMORY_DESELECTS = 3


def _test_run(
    ctx: _Context, record: RepoVerification, image: str, log: Path
) -> tuple[dict[str, str], TestRun, str, str]:
    """One test run's outcomes and counts, with why it left no JUnit report ("" if it did), and
    the test it was in when the box's memory limit killed it ("" if none)."""
    with _container(ctx, record, image, "verify-test") as box:
        command = in_setup_env(
            run_tests_command(
                record.test_command,
                record.test_tools,
                record.test_requirements,
                packages_before=record.packages_before,
                services=record.services,
            )
        )
        result = box.exec(command, timeout=ctx.options.test_seconds, log_path=log)
        junit = log.with_suffix(".xml")
        outcomes: dict[str, str] = {}
        report = True
        try:
            box.copy_out(JUNIT_PATH, junit)
            outcomes = dict(read_junit(junit))
        except (FileNotFoundError, JUnitError):
            report = False
        killed = 0 if report or result.timed_out else oom_kills(box)
        killed_in = _current_test(box) if killed else ""
    counted = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for outcome in outcomes.values():
        counted[outcome] += 1
    run = TestRun(
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        duration=round(result.duration, 1),
        passed=counted["passed"],
        failed=counted["failed"],
        errors=counted["error"],
        skipped=counted["skipped"],
        report=report,
    )
    # An empty report (pytest exits 4 on a test path that does not exist) says no more than none.
    why = "" if outcomes else why_no_tests(result.output, result.exit_code, result.timed_out)
    if killed:
        # paz: a model test outgrew the box twice, and both runs said only "no JUnit report".
        why = (
            f"out of memory: the box's {ctx.sandbox.settings.memory} limit killed {killed} "
            f"process(es) (ENCONDA_MEMORY raises it); {why}"
        )
    if outcomes and not counted["passed"] and counted["error"]:
        why = first_error(result.output)  # trafilatura: 13 modules errored, the log was lost
    if why and not counted["passed"]:
        opened = [path for path in record.absent_files if path in result.output]
        if opened:
            # cellrank's conftest opens an .h5ad its snapshot lacks: no setup could pass.
            why = f"the snapshot lacks {opened[0]}, which the tests open; {why}"
    return outcomes, run, why, killed_in


def _current_test(box: Any) -> str:
    """The id of the test the fixed-order plugin saw start last ("" if none or not one id)."""
    shown = box.exec(f"cat {CURRENT_TEST}", timeout=30)
    nodeid = (shown.output or "").strip()
    ok = shown.exit_code == 0 and "::" in nodeid and len(nodeid) < 1000 and "\n" not in nodeid
    return nodeid if ok else ""


_OOM_KILL = re.compile(r"^oom_kill (\d+)$", re.MULTILINE)


def oom_kills(box: Any) -> int:
    """How many processes the box's memory limit has killed: its memory cgroup's count
    (``memory.events`` under cgroup v2, ``memory.oom_control`` under v1); 0 where neither is
    readable. A test run's box is fresh, so the count is that run's."""
    events = "/sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control"
    result = box.exec(f"cat {events} 2>/dev/null", timeout=30)
    match = _OOM_KILL.search(result.output or "")
    return int(match.group(1)) if match else 0


def _checkout_proof(box: Any, packages: list[str], out: Path) -> CheckoutProof:
    """Run ``checkout_proof.py`` where the tests will run: the setup's environment, from the
    project folder."""
    import json

    from ..probing.scripts import probe_script

    if not packages:
        return judge_checkout(packages, None)
    target = "/tmp/enconda/checkout_proof.py"
    box.copy_in(probe_script("checkout_proof.py"), target)
    names = " ".join(shlex.quote(name) for name in packages)
    result = box.exec(
        # "--": the names come from the repository's metadata and stay operands.
        in_setup_env(f"python {target} --project /data/project -- {names} 2>/dev/null"),
        timeout=120,
    )
    report = None
    for line in reversed(result.output.strip().splitlines()):
        if line.startswith("{"):
            try:
                report = json.loads(line)
            except ValueError:
                report = None
            break
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return judge_checkout(packages, report)


# A test calling a program the image lacks: Python's FileNotFoundError and the shell's message.
_MISSING_PROGRAM = re.compile(
    r"No such file or directory: '([A-Za-z0-9_.+-]+)'"
    r"|(?:^|\s)([A-Za-z0-9_.+-]+): (?:command )?not found"
    # A build script's own words (tensorflow/model-analysis's setup.py: "protoc is not installed
    # nor found in ../src"); a name no Debian package installs as a program costs nothing.
    r"|(?:^|\s)([A-Za-z0-9_.+-]+) is not installed"
    # protoc's word for a plugin it cannot run (protoletariat: protoc-gen-mypy, mypy-protobuf's).
    r"|(?:^|\s)([A-Za-z0-9_.+-]+): program not found or is not executable"
)


# A shared library the loader did not find (datamol: RDKit's drawing needs libXrender.so.1).
_SONAME = re.compile(r"lib[\w.+-]*\.so(?:\.\d+)*")
_MISSING_LIBRARY = re.compile(rf"({_SONAME.pattern}): cannot open shared object file")


# For each Python extension (a ``*.so*`` under site-/dist-packages) that links against a library
# the box lacks: the extension and that library, one tab-separated pair a line. Bounded in files
# and lines.
LDD_SCAN = (
    "find / -xdev \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f "
    "-name '*.so*' -path '*-packages/*' -print 2>/dev/null | head -n 20000 "
    # /dev/null first: ldd names each file only when given two or more.
    "| xargs -r -d '\\n' ldd /dev/null 2>/dev/null "
    "| awk '/:$/ { file = $0 } /=> not found/ { print file \"\\t\" $1 }' | head -n 2000"
)


def unresolved_libraries(scan_output: str, named: Collection[str]) -> list[str]:
    """What the extensions that lack a library the loader ``named`` lack besides: the libraries
    those extensions need, not every optional plugin's (PyQt5's Qt plugins link to Qt3D and
    WebEngine, which no test loaded). Sorted, once each; a library bundled under a hashed name
    (``libXau-154567c4.so.6.0.0``, auditwheel's) is left out: no package has it."""
    lacks: dict[str, set[str]] = {}
    for line in scan_output.splitlines():
        extension, _, library = line.rpartition("\t")
        if extension and _SONAME.fullmatch(library) and not _BUNDLED.search(library):
            lacks.setdefault(extension, set()).add(library)
    wanted = set(named)
    found = {lib for libs in lacks.values() if libs & wanted for lib in libs}
    return sorted(found)


_BUNDLED = re.compile(r"-[0-9a-f]{8}\.so")


def _unresolved_libraries(
    ctx: _Context, record: RepoVerification, snapshot: str, log: Path, named: list[str]
) -> list[str]:
    """``LDD_SCAN`` in a fresh box of the attempt's snapshot; none if it cannot run."""
    try:
        with _container(ctx, record, snapshot, "verify-ldd") as box:
            result = box.exec(LDD_SCAN, timeout=300, workdir="/", log_path=log)
    except _Stopped:
        raise
    except EncondaError:
        return []
    return unresolved_libraries(result.output, named)


def _missing_programs(log: Path) -> list[str]:
    """Names the tests' log says are missing, a program the image lacks most often (a name with a
    dot or a slash is taken for a data file and left out), then shared libraries the loader did
    not find: a hint, listed in the sidecar, and what the next recipe installs packages for."""
    text = textio.tails_text([log], 2_000_000)
    names = {next(filter(None, groups), "") for groups in _MISSING_PROGRAM.findall(text)}
    programs = sorted(name for name in names if name and "." not in name)
    return (programs + sorted(set(_MISSING_LIBRARY.findall(text))))[:20]


def _failure_line(output: str) -> str:
    """The line saying what failed: pip's closing "note: This error originates from a
    subprocess" named 5 of 10 failed setups in the dev split's sidecar, never the cause above it."""
    from ..memory.normalise import signature

    return signature(output, limit=300) or _last_line(output)


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def shell_join(words: list[str]) -> str:
    return " ".join(shlex.quote(word) for word in words)
