"""One benchmark run: drives cases through sandbox → agent → probes → grading → report.

Kept in ``config.stash`` by the plugin; every hook hands off to it. Heavy libraries (docker,
scipy, litellm) are imported only when an item first needs them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from . import textio
from .agents.base import AgentOutcome, AgentTask
from .artifacts import append_jsonl, atomic_write_text, read_model, write_model
from .cases.models import README_FROM_REPOSITORY
from .errors import EncondaError, HarnessError, harness_step
from .grading.verdict import ItemVerdict
from .records import MESSAGE_CHARS, CaseDir, ResultRow, RunDir, efficiency, read_json_file
from .settings import EncondaSettings

if TYPE_CHECKING:
    from .cases.enconda_import import ImportProblem
    from .cases.models import Case
    from .probing.execution import ExecutionRecord

BUILD_HEADLINES = (
    "Step ",
    "building",
    "base image",
    "rootfs",
    "debootstrap",
    "pulling",
    "waiting",
    "task image",
)
BUILD_ECHO_SECONDS = 5.0
# A self-report is a small JSON object, a README a few pages: far larger is not one.
MAX_REPORT_BYTES = 1 << 20
MAX_README_BYTES = 8 << 20


def _read_report(path: Path) -> dict[str, Any] | None:
    """A self-report file's JSON object; its problems are graded by C5, not raised here."""
    try:
        # --report may name a FIFO or /dev/zero: bounded, regular files only.
        data = textio.read_json(path, MAX_REPORT_BYTES)
    except (OSError, ValueError) as exc:
        return {"__invalid__": f"{path}: {exc}"}
    if not isinstance(data, dict):
        return {"__invalid__": f"{path}: expected a JSON object, got {type(data).__name__}"}
    return data


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _interrupt_on_sigterm() -> None:
    """``kill PID`` unwinds like Ctrl-C, so containers are removed before the process exits."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _raise_interrupt)


class EncondaSession:
    def __init__(self, config: pytest.Config, settings: EncondaSettings) -> None:
        self.config = config
        self.settings = settings
        self.worker_id: str | None = getattr(config, "workerinput", {}).get("workerid")
        self._done: dict[tuple[str, str], Any] = {}
        self._failures: dict[tuple[str, str], BaseException] = {}
        self._agent: Any = None
        self._sandbox: Any = None
        self._images: Any = None
        self._repo_readmes: dict[str, tuple[str, str]] = {}
        self._judge: Any = None
        self._results: dict[tuple[str, str], dict[str, Any]] = {}
        self._results_loaded = False
        self._durations: dict[str, float] = {}
        self.import_problems: list[tuple[str, str]] = []
        self._case_sources: dict[str, str] = {}
        self.summary: dict[str, Any] | None = None
        self._last_echo = 0.0

    # ----------------------------------------------------------------- paths and logs

    @property
    def run_dir(self) -> Path:
        return self.settings.run_dir

    @property
    def run_paths(self) -> RunDir:
        return RunDir(self.settings.run_dir)

    def case_dir(self, case: Case) -> CaseDir:
        return CaseDir(self.run_dir, case.id)

    def progress(self, message: str, *, echo: bool = True) -> None:
        """Log harness progress; echo it outside pytest's capture (image builds take minutes)."""
        prefix = f"[{self.worker_id}] " if self.worker_id else ""
        line = f"{prefix}enconda: {message.rstrip()}"
        log = self.run_paths.harness_log
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as handle:
            handle.write(f"{time.strftime('%H:%M:%S')} {line}\n")
        capman = self.config.pluginmanager.getplugin("capturemanager")
        if not echo or capman is None:
            return
        self._last_echo = time.monotonic()
        reporter = self.config.pluginmanager.getplugin("terminalreporter")
        with capman.global_and_fixture_disabled():
            if reporter is not None and self.worker_id is None:
                # Breaks the progress dots' line only when one is open: no blank lines.
                reporter.ensure_newline()
                reporter.write_line(line)
            else:  # an xdist worker has no terminal of its own: its stderr reaches the user's
                sys.stderr.write(line + "\n")
                sys.stderr.flush()

    def build_progress(self, line: str) -> None:
        """Build logs run to thousands of lines: all go to the log, the terminal gets the steps
        and, during a long step, a line every few seconds so it never looks hung."""
        quiet_for = time.monotonic() - self._last_echo
        echo = line.startswith(BUILD_HEADLINES) or quiet_for >= BUILD_ECHO_SECONDS
        self.progress(line[:200], echo=echo)

    def claim_case_id(self, case_id: str, source: str) -> str | None:
        """Record where ``case_id`` was collected from; the earlier source if it was taken.

        Results, artifacts and resume are keyed by case id: two cases with one id would mix.
        """
        earlier = self._case_sources.setdefault(case_id, source)
        return None if earlier == source else earlier

    # ----------------------------------------------------------------- lazy strategies

    @property
    def agent(self) -> Any:
        if self._agent is None:
            from .agents import registry

            options: dict[str, Any] = dict(self.settings.agent_options)
            if self.settings.model:
                options["model"] = self.settings.model
            if self.settings.api_base:
                options["api_base"] = self.settings.api_base
            if self.settings.predictions:
                options["predictions"] = self.settings.predictions
            try:
                self._agent = registry.create(self.settings.agent, **options)
            except KeyError as exc:
                raise pytest.UsageError(str(exc.args[0])) from None
        return self._agent

    @property
    def judge(self) -> Any:
        if self._judge is None:
            from .grading.judges import create_judge

            self._judge = create_judge(
                self.settings.judge,
                api_base=self.settings.judge_api_base,
                cache_dir=self.cache_root() / "judge",
                concurrency=self.settings.judge_concurrency,
            )
        return self._judge

    def cache_root(self) -> Path:
        from .cache import default_cache_dir

        return default_cache_dir()

    def sandbox(self) -> Any:
        if self._sandbox is None:
            from .sandbox.containers import Sandbox
            from .sandbox.images import ImageBuilder
            from .sandbox.settings import SandboxSettings, has_credentials

            overrides: dict[str, Any] = {
                "network_mode": self.settings.network_mode,
                "keep_containers": self.settings.keep_containers,
                "gpus": self.settings.gpus
                if not self.settings.gpus.isdigit()
                else int(self.settings.gpus),
            }
            if self.settings.ca_bundle:
                overrides["ca_bundle"] = self.settings.ca_bundle
            if self.settings.base_image:
                overrides["pull_base"] = self.settings.base_image
            if self.settings.strip_proxy_credentials:
                overrides["strip_proxy_credentials"] = True
            _interrupt_on_sigterm()
            sandbox_settings = SandboxSettings.from_env(**overrides)
            if has_credentials(sandbox_settings.proxy_env):
                self.progress(
                    "warning: the proxy variables carry credentials, which every container (and "
                    "so the agent) can read; use --strip-proxy-credentials or a proxy on the host "
                    "side (README: Network and trust)"
                )
            self._sandbox = Sandbox(sandbox_settings, run_id=self.run_dir.name)
            reaped = self._sandbox.reap_orphans()
            if reaped:
                self.progress(f"removed {len(reaped)} containers left by dead runs")
            self._images = ImageBuilder(sandbox_settings, run_id=self.run_dir.name)
        return self._sandbox

    # ----------------------------------------------------------------- stages

    def _once(self, case: Case, stage: str, produce: Any) -> Any:
        """Run ``produce`` once per case and stage; its result or harness failure is kept."""
        key = (case.id, stage)
        if key in self._failures:
            raise self._failures[key]
        if key not in self._done:
            try:
                self._done[key] = produce()
            except EncondaError as exc:
                self._failures[key] = exc
                raise
        return self._done[key]

    def agent_outcome(self, case: Case) -> AgentOutcome:
        return self._once(case, "agent", lambda: self._run_agent(case))

    def _run_agent(self, case: Case) -> AgentOutcome:
        paths = self.case_dir(case)
        if self.settings.python is not None:
            # The host backend grades an environment that already exists: no agent runs.
            return AgentOutcome(
                case_id=case.id,
                agent="existing-environment",
                message=f"existing environment: {self.settings.python} in {self.settings.repo}",
            )
        if paths.agent_outcome.is_file():
            outcome = read_model(paths.agent_outcome, AgentOutcome)
        else:
            agent = self.agent
            readme_name, readme_text = self._agent_readme(case)
            task = AgentTask(
                case=case,
                readme_text=readme_text,
                readme_name=readme_name,
                log_path=paths.agent_log,
                trajectory_path=paths.trajectory,
                run_dir=self.run_dir,
                max_cost=self.settings.max_cost,
                start_container=lambda: self._agent_container(case),
            )
            append_jsonl(
                paths.agent_runs,
                {
                    "pid": os.getpid(),
                    "worker": self.worker_id,
                    "host": socket.gethostname(),
                    "agent": self.settings.agent,
                    "started": time.time(),
                },
            )
            started = time.monotonic()
            try:
                outcome = agent.run(task)
            except EncondaError:
                raise
            except Exception as exc:  # the agent's own bug counts against the agent
                outcome = AgentOutcome(
                    case_id=case.id,
                    agent=self.settings.agent,
                    status="crashed",
                    message="".join(traceback.format_exception(exc))[-4000:],
                    wall_time=time.monotonic() - started,
                )
            atomic_write_text(paths.setup_script, outcome.setup_script)
            write_model(paths.agent_outcome, outcome)
        return outcome

    def _agent_readme(self, case: Case) -> tuple[str, str]:
        """The README the agent is given: the case's, or the repository's own (imported research).

        An imported research case carries no README of its own; the repository's is only known
        once it is materialised, which building the task image does.
        """
        if README_FROM_REPOSITORY not in case.spec.tags:
            return Path(case.spec.readme_target).name, case.readme_text
        self.task_image(case)
        return self._repo_readmes.get(case.id, (Path(case.spec.readme_target).name, ""))

    @contextlib.contextmanager
    def _agent_container(self, case: Case) -> Iterator[Any]:
        image = self.task_image(case)
        with self.sandbox().container(image, case_id=case.id, role="agent") as box:
            yield box
            if case.spec.suite == "research" and getattr(self.agent, "acts_in_container", False):
                self._freeze_agent_container(case, box)

    def _freeze_agent_container(self, case: Case, box: Any) -> None:
        """The agent's container, as it left it, becomes the final state the probes grade."""
        from .probing.final_state import freeze

        self.progress(f"{case.id}: freezing the agent's container")
        paths = self.case_dir(case)
        state = freeze(box, case, paths, source="agent-container")
        write_model(paths.final_state, state)

    def task_image(self, case: Case) -> str:
        return self._once(case, "image", lambda: self._build_task_image(case))

    def _build_task_image(self, case: Case) -> str:
        from .sandbox.repo import materialize

        self.sandbox()  # creates the image builder beside it and reaps orphans first
        images = self._images
        spec = case.spec
        self.progress(f"{case.id}: preparing image (base {spec.base_image})")
        with tempfile.TemporaryDirectory(prefix="enconda-repo-") as tmp:
            repo_dir = Path(tmp) / "repo"
            # The repository first: an unavailable one should fail before minutes of building.
            digest = materialize(
                spec.repository,
                case.case_dir,
                repo_dir,
                mirror_dir=self.settings.repo_mirror,
                cache_dir=images.settings.cache_dir,
            )
            base = images.ensure_base(spec.base_image, progress=self.build_progress)
            env = images.ensure_environment(base, spec.environment, progress=self.build_progress)
            if README_FROM_REPOSITORY in spec.tags:
                # Nothing is written over the repository's own README; the agent reads it.
                overrides: dict[str, bytes] = {}
                self._repo_readmes[case.id] = _repository_readme(repo_dir, spec.readme_target)
            else:
                overrides = {spec.readme_target: case.readme_text.encode("utf-8")}
            return images.ensure_task_image(
                env, repo_dir, overrides, case.id, progress=self.build_progress, tree_hash=digest
            )

    def execution_record(self, case: Case) -> ExecutionRecord:
        from .probing.execution import ExecutionRecord, run_execution

        paths = self.case_dir(case)

        def produce() -> ExecutionRecord:
            if paths.execution_record.is_file():
                return read_model(paths.execution_record, ExecutionRecord)
            outcome = self.agent_outcome(case)
            image = self.task_image(case)
            with harness_step(f"execution of {case.id}"):
                record = run_execution(self.sandbox(), image, case, outcome.setup_script, paths)
            write_model(paths.execution_record, record)
            return record

        return self._once(case, "execution", produce)

    # ----------------------------------------------------------------- the agent's final state

    def final_state(self, case: Case) -> Any:
        """The snapshot image probes start from (made once per case, kept for ``--resume``)."""
        from .probing.final_state import FinalState, build_final_state

        path = self.case_dir(case).final_state

        def produce() -> FinalState:
            if path.is_file():
                state = read_model(path, FinalState)
                self.sandbox()
                if self._images.image_id(state.image) is not None:
                    return state
                self.progress(f"{case.id}: snapshot {state.image} is gone; rebuilding it")
            outcome = self.agent_outcome(case)
            image = self.task_image(case)
            self.progress(f"{case.id}: building the agent's final state")
            with harness_step(f"final state of {case.id}"):
                state = build_final_state(
                    self.sandbox(), image, case, outcome.setup_script, self.case_dir(case)
                )
            write_model(path, state)
            return state

        return self._once(case, "final_state", produce)

    def self_report(self, case: Case) -> dict[str, Any] | None:
        """The agent's self-report as it wrote it (``None`` when there is none)."""

        def produce() -> dict[str, Any] | None:
            if self.settings.python is not None:
                if self.settings.report is None:
                    return None
                return _read_report(self.settings.report)
            outcome = self.agent_outcome(case)
            if outcome.self_report is not None:
                return outcome.self_report
            state = self.final_state(case)
            if state.report_file is None:
                return None
            return _read_report(self.case_dir(case).root / state.report_file)

        return self._once(case, "self_report", produce)

    def environment(self, case: Case) -> Any:
        """The handle probes run commands with: host (``--python``) or fresh containers."""

        def produce() -> Any:
            from .probing.environment import DockerEnvironment, HostEnvironment

            report = self.self_report(case)
            if self.settings.python is not None:
                assert self.settings.repo is not None
                return HostEnvironment(self.settings.python, self.settings.repo)
            python = "python3"
            if isinstance(report, dict) and isinstance(report.get("python_path"), str):
                python = report["python_path"] or python
            state = self.final_state(case)
            return DockerEnvironment(
                self.sandbox(),
                state.image,
                case.id,
                python=python,
                gpu_count=self.gpu_count(),
                log_dir=self.case_dir(case).probes_dir,
            )

        return self._once(case, "environment", produce)

    def gpu_count(self) -> int:
        """GPUs task containers may use: none unless ``--gpus`` gives them and the host has them;
        with the host backend (``--python``), the host's own."""
        from .probing.environment import host_gpu_count

        if self.settings.python is not None:
            return host_gpu_count()
        if self.settings.gpus == "none":
            return 0

        visible = host_gpu_count()
        return visible if self.settings.gpus == "all" else min(visible, int(self.settings.gpus))

    def stage(self, case: Case, name: str) -> Any:
        """One pyramid stage's result, run once per case and saved for resume and re-grading."""
        from .probing.pyramid import StageResult

        path = self.case_dir(case).pyramid(name)

        def produce() -> StageResult:
            if path.is_file():
                return read_model(path, StageResult)
            try:
                result = self._run_stage(case, name)
            except EncondaError:
                raise
            except Exception as exc:
                message = f"stage {name} of {case.id} failed in the harness: {exc}"
                raise HarnessError(message) from exc
            write_model(path, result)
            return result

        return self._once(case, f"stage-{name}", produce)

    def _run_stage(self, case: Case, name: str) -> Any:
        from .stages import STAGES, StageContext

        # First, as before the stages had a registry: a harness failure here is the
        # environment's, whichever stage asked.
        self.environment(case)
        try:
            stage = STAGES.get(name)
        except KeyError as exc:
            raise HarnessError(f"unknown pyramid stage {name!r}: {exc.args[0]}") from None
        return stage.run(StageContext(self, case))

    def facts(self, case: Case) -> dict[str, Any] | None:
        """``python_facts.py`` run by the reported interpreter (GPUs visible if any); ``None``
        when that interpreter does not run."""
        from .stages.facts import python_facts

        return self._once(
            case, "facts", lambda: python_facts(self.environment(case), case, self.progress)
        )

    def report_read(self, case: Case) -> Any:
        """The self-report checked against ResearchEnvBench's schema (ok, missing or invalid)."""
        from .stages.c5 import report_read

        return report_read(self.self_report(case))

    def _efficiency(self, case: Case) -> dict[str, Any]:
        """The case's efficiency numbers for a stage's record (``records.efficiency``)."""
        outcome = self.agent_outcome(case)
        facts = self.facts(case)
        # The host backend grades an existing environment: there is no final state to size.
        state = self.final_state(case) if self.settings.python is None else None
        numbers = efficiency(
            outcome.model_dump(mode="json"),
            state=state.model_dump(mode="json") if state is not None else None,
            facts=facts,
        )
        return {name: value for name, value in numbers.items() if value is not None}

    def diagnosis_grade(self, case: Case) -> Any:
        def produce() -> Any:
            from .grading.diagnosis import grade_diagnosis

            outcome = self.agent_outcome(case)
            grade = grade_diagnosis(case.golden, outcome.diagnosis, self.judge)
            write_model(self.case_dir(case).diagnosis, grade)
            return grade

        return self._once(case, "diagnosis", produce)

    def verdict(self, case: Case, aspect: str) -> ItemVerdict:
        """Prepare what ``aspect`` needs and grade it; harness failures raise."""
        from .aspects import ASPECTS, AspectContext

        if aspect in ASPECTS:
            spec = ASPECTS.get(aspect)
            verdict = spec.grade(AspectContext(self, case, spec))
        else:
            verdict = ItemVerdict(outcome="skipped", message=f"aspect {aspect} is not graded yet")
        write_model(self.case_dir(case).grading(aspect), verdict)
        self._write_case_facts(case)
        return verdict

    def _write_case_facts(self, case: Case) -> None:
        """What re-grading and the review report need of the case (``case.json``), beside its
        grading: golden answer, level, error types and the execution reference."""
        path = self.case_dir(case).facts
        if path.exists():
            return
        facts = {
            "case_id": case.id,
            "level": case.golden.level,
            "error_types": [error.error_type for error in case.golden.errors],
            "golden": json.loads(case.golden.model_dump_json()),
            "reference": (json.loads(case.reference.model_dump_json()) if case.reference else None),
        }
        atomic_write_text(path, json.dumps(facts, indent=2, sort_keys=True) + "\n")

    def add_html_extras(self, item: Any, report: pytest.TestReport) -> None:
        """Links to the item's artifacts in pytest-html's report, when pytest-html is active, on
        the report that carries the item's outcome (a harness error or skip is decided in setup)."""
        outcome_report = report.when == "call" or (report.when == "setup" and not report.passed)
        if not outcome_report or not self.config.pluginmanager.hasplugin("html"):
            return
        from .report.html import html_extras

        verdict = getattr(item, "verdict", None)
        numbers = verdict.numbers if verdict is not None else {}
        extra = html_extras(self.case_dir(item.case), item.aspect, numbers)
        report.extras = [*getattr(report, "extras", []), *extra]

    # ----------------------------------------------------------------- results (controller)

    def _load_results(self) -> None:
        if self._results_loaded:
            return
        self._results_loaded = True
        results = self.run_paths.results_file
        if self.settings.resume and results.path.is_file():
            read = results.read()
            for problem in read.problems:
                # Resume rewrites the file below: say what it leaves out, line by line.
                self.progress(f"{problem}: unreadable result line dropped")
            self._results.update(read.rows)
            self._rewrite_results()

    def _rewrite_results(self) -> None:
        self.run_paths.results_file.rewrite(self._results.values())

    def subset_file(self) -> Path | None:
        """The verified-subset file the summary uses (``--subset`` or the audit's beside the
        dataset), recorded in ``run.json`` so ``regrade`` uses the same one."""
        from .report.subset import resolve_subset

        return resolve_subset(self.settings.subset, self.settings.cases)

    def write_run_info(self) -> None:
        info = self.run_paths.run_info
        if info.exists():
            return
        from . import __version__

        subset = self.subset_file()
        payload = {
            "tool": "pytest-enconda",
            "version": __version__,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "settings": json.loads(self.settings.model_dump_json()),
            "agent": self._agent_description(),
            "argv": sys.argv,
            "subset": None if subset is None else str(subset),
        }
        atomic_write_text(info, json.dumps(payload, indent=2) + "\n")

    def _agent_description(self) -> dict[str, Any]:
        """The agent's name, model and resolved configuration (limits with their defaults)."""
        description: dict[str, Any] = {
            "name": self.settings.agent,
            "model": self.settings.model,
            "api_base": self.settings.api_base,
            "max_cost": self.settings.max_cost,
            "options": dict(self.settings.agent_options),
        }
        try:
            describe = getattr(self.agent, "describe", None)
            if describe is not None:
                description["config"] = describe()
        except Exception as exc:  # run.json must still be written
            description["config_error"] = str(exc)
        return description

    def record_report(self, report: pytest.TestReport) -> None:
        props = dict(report.user_properties)
        case_id, item = props.get("enconda_case"), props.get("enconda_item")
        if case_id is None or item is None:
            return
        # The harness works in the item's setup: the item's duration is setup and call together.
        self._durations[report.nodeid] = self._durations.get(report.nodeid, 0.0) + report.duration
        if report.when == "call" or (report.when == "setup" and not report.passed):
            outcome = "error" if report.when == "setup" and report.failed else report.outcome
        elif report.when == "teardown" and report.failed:
            outcome = "error"
        else:
            return
        self._load_results()
        self.write_run_info()
        message = ""
        if report.skipped and isinstance(report.longrepr, tuple):
            message = str(report.longrepr[2])
        elif not report.passed:
            message = report.longreprtext
        if props.get("enconda_harness_error") and outcome == "failed":
            outcome = "error"
        row = ResultRow(
            case=case_id,
            item=item,
            level=props.get("enconda_level"),
            outcome=outcome,
            message=message[-MESSAGE_CHARS:],
            duration=round(self._durations.get(report.nodeid, report.duration), 3),
            nodeid=report.nodeid,
            stage=props.get("enconda_stage") or None,
        )
        replaced = row.key in self._results
        self._results[row.key] = row.to_json()
        if replaced:
            self._rewrite_results()
        else:
            self.run_paths.results_file.append(row)

    def record_import_problems(self, problems: list[ImportProblem]) -> None:
        """Keep what a dataset import could not read; xdist's controller reads it from the file."""
        self.import_problems.extend((problem.file, problem.reason) for problem in problems)
        if self.import_problems:
            rows = [{"file": file, "reason": reason} for file, reason in self.import_problems]
            atomic_write_text(self.run_paths.import_problems, json.dumps(rows, indent=2) + "\n")

    def _load_import_problems(self) -> None:
        path = self.run_paths.import_problems
        if self.import_problems or not path.is_file():
            return
        try:
            rows = read_json_file(path, root=self.run_paths.root)
            self.import_problems = [(str(row["file"]), str(row["reason"])) for row in rows]
        except (ValueError, TypeError, KeyError) as exc:  # an edited run directory
            self.progress(f"{path}: unreadable, its import problems are not reported: {exc!r}")

    def finish(self) -> None:
        """Every process removes its containers and saves its judge's stats; the controller
        then writes the summary."""
        if self._sandbox is not None:
            self._sandbox.close()
        if self._judge is not None:
            name = f"{self.worker_id or 'main'}-{os.getpid()}"
            write_model(self.run_paths.judge_stats(name), self._judge.stats())
        if self.worker_id is not None:
            return
        self._load_import_problems()
        if not self._results:
            return
        self._rewrite_results()
        from .report.summary import grade_run

        self.summary = grade_run(
            self.run_dir,
            self._results,
            agent=self.settings.agent,
            model=self.settings.model,
            judge=self.settings.judge,
            subset=self.subset_file(),
        )


_README_NAMES = ("README.md", "README.rst", "README.txt", "README")


def _repository_readme(repo_dir: Path, preferred: str) -> tuple[str, str]:
    """(name, text) of a repository's own README: ``preferred``, else the usual names, any case."""
    candidates = [repo_dir / preferred]
    by_lower = {entry.name.lower(): entry for entry in repo_dir.iterdir() if entry.is_file()}
    candidates += [by_lower[name.lower()] for name in _README_NAMES if name.lower() in by_lower]
    root = repo_dir.resolve()
    for path in candidates:
        # The repository is downloaded data: a README linking out of it must not read host files.
        if path.is_file() and not path.is_symlink() and root in path.resolve().parents:
            data = textio.read_bounded(path, MAX_README_BYTES, follow_links=False)
            return path.name, data.decode("utf-8", errors="replace")
    return Path(preferred).name, ""
