"""One benchmark run under pytest: the coordinator every hook hands off to (``config.stash``).

What happens to a case (agent, final state, checks, grading) is the ``CasePipeline``'s; this
object only makes it, answers the items and fixtures through it, and records what pytest
reports: results, run information and, at the end, the summary.
"""

from __future__ import annotations

import json
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from .artifacts import atomic_write_text
from .pipeline import CasePipeline
from .records import (
    MESSAGE_CHARS,
    CaseDir,
    ResultRow,
    Results,
    RunDir,
    failure_headline,
    read_json_file,
)
from .settings import EncondaSettings

if TYPE_CHECKING:
    from _pytest.capture import CaptureManager

    from .cases.enconda_import import ImportProblem
    from .cases.models import Case
    from .report.runrecords import RunRecords

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
        self.pipeline = CasePipeline(
            settings,
            progress=self.progress,
            build_progress=self.build_progress,
            worker_id=self.worker_id,
            dispatcher=self._dispatcher(settings),
        )
        _interrupt_on_sigterm()
        if self.worker_id is None and settings.max_cost is not None:
            for warning in (self.pipeline.pricing_warning(), self.pipeline.judge_pricing_warning()):
                if warning:
                    self.progress(warning)
        self._results: Results = {}
        self._results_loaded = False
        self._durations: dict[str, float] = {}
        self.import_problems: list[tuple[str, str]] = []
        # Input read past without costing a case (``file:line: reason``): reported, not fatal.
        self.input_warnings: list[str] = []
        self._case_sources: dict[str, str] = {}
        self.summary: dict[str, Any] | None = None
        # The run's records as the summary read them (pytest-html's summary shows them too).
        self.records: RunRecords | None = None
        self._last_echo = 0.0

    def _dispatcher(self, settings: EncondaSettings) -> Any:
        """``--dispatch ray``: the controller's dispatcher (connecting now, so an unreachable
        cluster stops the run before collection)."""
        if settings.dispatch is None:
            return None
        # Refused on the controller, before xdist starts a worker (each would fail apart).
        if self.worker_id is not None or self.config.getoption("numprocesses", None):
            raise pytest.UsageError("--dispatch ray replaces xdist's workers: drop -n")
        try:
            from .dispatch.ray import RayDispatcher
        except ImportError as exc:  # pragma: no cover - the import of the module itself is cheap
            raise pytest.UsageError(f"--dispatch ray: {exc}") from None
        try:
            import ray  # noqa: F401
        except ImportError:
            raise pytest.UsageError(
                "--dispatch ray needs Ray: pip install 'pytest-enconda[ray]'"
            ) from None
        return RayDispatcher(settings, self.progress)

    def dispatch(self, items: list[pytest.Item]) -> None:
        """Submit the collected (and selected) cases to the cluster, before any item runs, so
        nodes work while the items wait in order."""
        dispatcher = self.pipeline.dispatcher
        if dispatcher is None or self.config.option.collectonly:
            return
        cases: dict[str, tuple[Case, list[str]]] = {}
        for item in items:
            case = getattr(item, "case", None)
            aspect = getattr(item, "aspect", None)
            if case is None or aspect is None:
                continue
            cases.setdefault(case.id, (case, []))[1].append(str(aspect))
        dispatcher.submit(cases.values())

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
        # What pytest registers under these names (getplugin returns them untyped).
        capman = cast(
            "CaptureManager | None", self.config.pluginmanager.getplugin("capturemanager")
        )
        if not echo or capman is None:
            return
        self._last_echo = time.monotonic()
        reporter = cast(
            "pytest.TerminalReporter | None",
            self.config.pluginmanager.getplugin("terminalreporter"),
        )
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

    def gpu_count(self) -> int:
        return self.pipeline.gpu_count()

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
        # pytest-html reads an attribute TestReport does not declare (reports take any: their
        # __init__ stores extra keywords in __dict__).
        report.extras = [*getattr(report, "extras", []), *extra]  # pyright: ignore[reportAttributeAccessIssue]

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
                self.input_warnings.append(f"{problem} (--resume dropped the line)")
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
            "name": self.settings.agent_label,
            "model": self.settings.model,
            "api_base": self.settings.api_base,
            "max_cost": self.settings.max_cost,
            "options": dict(self.settings.agent_options),
        }
        try:
            describe = getattr(self.pipeline.agent, "describe", None)
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
        message = str(props.get("enconda_message") or "") if report.passed else ""
        headline = ""
        if report.skipped and isinstance(report.longrepr, tuple):
            message = str(report.longrepr[2])
        elif not report.passed:
            message = report.longreprtext
            if headline := failure_headline(report) or "":
                # The report shows a message's last line: the assertion's own words, not the
                # traceback's closing ``file:line: AssertionError``.
                message = f"{message}\n{headline}"
        if props.get("enconda_harness_error") and outcome == "failed":
            outcome = "error"
        # User properties are untyped (they cross from xdist workers): the row validates them.
        row = ResultRow.model_validate(
            {
                "case": case_id,
                "item": item,
                "level": props.get("enconda_level"),
                "outcome": outcome,
                "message": message[-MESSAGE_CHARS:],
                "headline": headline,
                "duration": round(self._durations.get(report.nodeid, report.duration), 3),
                "nodeid": report.nodeid,
                "stage": props.get("enconda_stage") or None,
                "timed_out": bool(props.get("enconda_timed_out")) and outcome == "failed",
                "not_finished": bool(props.get("enconda_not_finished")) and outcome == "skipped",
            }
        )
        replaced = row.key in self._results
        self._results[row.key] = row
        if replaced:
            self._rewrite_results()
        else:
            self.run_paths.results_file.append(row)

    def item_done(self, item: pytest.Item, nextitem: pytest.Item | None) -> None:
        """After a case's last item in this process (the scheduler keeps a case's items on one
        worker, in a row), its snapshot is released."""
        case: Case | None = getattr(item, "case", None)
        if case is None:
            return
        following: Case | None = getattr(nextitem, "case", None) if nextitem is not None else None
        if following is None or following.id != case.id:
            self.pipeline.release_snapshot(case)

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

    def _record_input_warnings(self) -> None:
        """The replayed predictions' records that name no case or cannot be read (each is a
        warning even when every case found its own), with what ``--resume`` dropped: in the
        run directory and, by ``write_terminal_summary``, on the terminal."""
        if self.settings.agent == "replay" and self.settings.predictions:
            try:
                # The graded cases: a torn line naming another is said here, or nowhere.
                graded = {case for case, _item in self._results}
                self.input_warnings.extend(self.pipeline.agent.input_warnings(graded))
            except Exception as exc:  # the summary is still written
                self.input_warnings.append(f"{self.settings.predictions}: cannot be read: {exc}")
        if self.input_warnings:
            text = json.dumps({"warnings": self.input_warnings}, indent=2) + "\n"
            atomic_write_text(self.run_paths.input_warnings, text)
        else:
            self.run_paths.input_warnings.unlink(missing_ok=True)

    def not_finished_cases(self) -> set[str]:
        """The cases the cost ceiling kept from finishing (their items are ``not_finished``)."""
        return {row.case for row in self._results.values() if row.label == "not_finished"}

    def _say_not_finished(self) -> None:
        cases = self.not_finished_cases()
        if not cases:
            return
        items = sum(row.label == "not_finished" for row in self._results.values())
        ceiling = self.settings.max_cost
        self.progress(
            f"the cost ceiling stopped the run short: {items} item(s) of {len(cases)} case(s) "
            "not finished (--max-cost"
            + (f" ${ceiling:g}" if ceiling is not None else "")
            + f"; counted apart, not failed); `--resume {self.run_dir}` with a higher --max-cost "
            "runs them; exit status 2"
        )

    def finish(self) -> None:
        """Every process removes its containers and saves its judge's stats; the controller
        then writes the summary."""
        self.pipeline.close()
        if self.worker_id is not None:
            return
        self._load_import_problems()
        if not self._results:
            return
        self._say_not_finished()
        self._record_input_warnings()
        self._rewrite_results()
        from .report.runrecords import RunRecords
        from .report.summary import grade_run

        self.records = RunRecords.load(self.run_dir, self._results)
        self.summary = grade_run(
            self.records,
            agent=self.settings.agent_label,
            model=self.settings.model,
            judge=self.settings.judge,
            subset=self.subset_file(),
        )
