"""pytest-enconda's hooks: a switchboard handing off to one ``EncondaSession`` in ``config.stash``.

The plugin loads in every pytest run where it is installed, and most of those collect no
benchmark: it stays dormant (no pydantic, no scheduler, no collection options) until a benchmark
option is given or a case is collected; the session is created then.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from . import discovery
from . import options as options_mod
from .state import STATE_KEY, WORKER_RUN_DIR, PluginState, active_session, session_of, workerinput

# The built-in task kinds' markers are here too: registering them needs no registry read, which
# loads every installed task-kind entry point (a run that collects no case must not pay for it).
MARKERS = {
    "pyramid(stage)": "a probe of runtime pyramid stage C0..C5 (adds the stage as a keyword)",
    "diagnosis": "an EnConda-Bench diagnosis task item",
    "research": "a ResearchEnvBench research task item",
    "aec": "an automated environment configuration (AEC) task item",
    "gpu": "a GPU stage's probe or a GPU aspect: skipped with a reason when no GPU is present",
    # Registered so that -m "aec and not slow" passes --strict-markers's check of -m names.
    "slow": "a test suite's long tests; no benchmark item carries it ('not slow' keeps them all)",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    options_mod.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
    state = config.stash[STATE_KEY] = PluginState(config)
    if state.requested or config.getoption("markers", False):
        # A plugin's task kinds: listed by --markers; otherwise each is registered when its
        # first case is collected (``items.register_marker``).
        from .kinds import TASK_KINDS

        for kind in TASK_KINDS.values():
            if kind.marker not in MARKERS:
                config.addinivalue_line(
                    "markers", f"{kind.marker}: {kind.description or kind.name}"
                )
    _add_dataset_args(config)
    if state.requested:
        state.get()  # usage errors surface now, before anything is collected
    if not workerinput(config):
        config.pluginmanager.register(_ResultsRecorder(config), "enconda-results")
        if config.pluginmanager.hasplugin("html"):
            from .report.html_hooks import register

            register(config, lambda: active_session(config))


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, args: list[str]) -> None:
    """A host run's ``--python``/``--repo`` values never choose pytest's configuration (the
    graded repository's own ``addopts`` would apply): see ``inifile``."""
    from .inifile import rechoose

    rechoose(early_config, args)


def _add_dataset_args(config: pytest.Config) -> None:
    """``--cases PATH`` collects PATH, instead of testpaths when no paths were given.

    xdist workers parse the command line again, so this runs there too: the controller's
    ``config.args`` do not reach them.
    """
    cases = config.getoption("cases")
    if not cases:
        return
    paths = [str(path) for path in cases]
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        config.args.extend(paths)
    else:
        config.args[:] = paths


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: every worker writes into the controller's run directory."""
    node.workerinput[WORKER_RUN_DIR] = str(session_of(node.config).run_dir)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """All items of a case go to one worker, so the agent runs once per case."""
    if config.getoption("dist") != "load":
        return None
    from .scheduling import CaseAwareScheduling

    return CaseAwareScheduling(config, log)


def pytest_collection(session: pytest.Session) -> None:
    state = session.config.stash[STATE_KEY]
    state.repo_dirs = discovery.case_repository_dirs(discovery.collection_roots(session.config))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Checks of what was collected, then ``--dispatch`` sends the selected cases (after
    ``-k``) to the cluster before any item runs."""
    _check_existing_environment(session)
    active = active_session(session.config)
    if active is not None and active.settings.dispatch is not None:
        active.dispatch(session.items)


def _check_existing_environment(session: pytest.Session) -> None:
    """``--python``/``--repo`` grade one existing environment: against no case there is nothing
    to grade (pytest's silent exit 5), against several each case would grade the same one.
    Under xdist the controller checks (``pytest_xdist_node_collection_finished``): a worker
    that exits is a crashed worker to it, reported as an INTERNALERROR."""
    config = session.config
    if config.getoption("python", None) is None or workerinput(config):
        return
    from .kinds import TASK_KINDS

    # Cases of a kind graded by probes only: those grade the environment itself.
    cases = {
        item.case.id  # type: ignore[attr-defined]
        for item in session.items
        if getattr(getattr(item, "case", None), "spec", None) is not None
        and TASK_KINDS.get(item.case.spec.suite).graded_by_probes  # type: ignore[attr-defined]
    }
    _one_case_or_exit(cases)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    """xdist controller: the host backend's one-case check on a worker's collection, before
    anything is scheduled; a usage error here ends the run as it does without xdist."""
    config = node.config
    if config.getoption("python", None) is None:
        return
    from .scheduling import research_case_names

    _one_case_or_exit(research_case_names(ids, config.rootpath))


def _one_case_or_exit(cases: set[str]) -> None:
    if len(cases) == 1:
        return
    example = "pytest benchmark_cases/research/tinylm --python PATH --repo DIR"
    if not cases:
        pytest.exit(
            "--python/--repo grade an existing environment against a research case, and no "
            f"case was collected: name the case's folder, e.g. `{example}`",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )
    listed = ", ".join(sorted(cases)[:5]) + (", ..." if len(cases) > 5 else "")
    pytest.exit(
        f"--python/--repo grade one environment, but {len(cases)} cases were collected "
        f"({listed}): name exactly one case (its folder, or -k), e.g. `{example}`",
        returncode=pytest.ExitCode.USAGE_ERROR,
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The repositories that cases point at carry tests of their own: not this run's."""
    if discovery.is_link_loop(collection_path):
        return True  # pytest follows folder links: one to an ancestor is walked forever
    repo_dirs = config.stash[STATE_KEY].repo_dirs
    if repo_dirs and collection_path.is_dir() and collection_path.resolve() in repo_dirs:
        return True
    return None


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    # pytest reaches ``DATA/instances`` through ``DATA``: were ``DATA`` a Dataset, whose
    # children are cases, ``instances`` would be "not found". A folder on the way to a
    # collected one stays a plain folder.
    dataset = discovery.is_dataset_dir(path) or discovery.is_research_dataset_dir(path)
    if dataset and not discovery.leads_to_argument(parent.config, path):
        from .items import Dataset

        return Dataset.from_parent(parent, path=path)
    if discovery.is_special_case_file(path / discovery.CASE_FILE):
        from .items import SpecialCaseDir

        return SpecialCaseDir.from_parent(parent, path=path)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if discovery.is_case_file(file_path):
        from .items import CaseFile

        return CaseFile.from_parent(parent, path=file_path)
    return None


def _is_case_report(report: pytest.TestReport) -> bool:
    return any(key == "enconda_case" for key, _value in report.user_properties)


class _ResultsRecorder:
    """Controller-side hook object (``pytest_runtest_logreport`` receives no config): results
    are kept by the process that sees every report, the controller or the only one."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if _is_case_report(report):
            session_of(self.config).record_report(report)


def pytest_runtest_setup(item: pytest.Item) -> None:
    # A GPU stage's probe is marked for selection only: the stage skips on its own terms.
    if item.get_closest_marker("gpu") is not None and not getattr(
        item, "enconda_gpu_by_stage", False
    ):
        from .probing.environment import gpu_skip_reason

        active = active_session(item.config)
        if reason := gpu_skip_reason(active.gpu_count() if active is not None else None):
            pytest.skip(reason)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if getattr(item, "enconda_item", False):
        session_of(item.config).add_html_extras(item, report)
        if report.when == "call" and report.passed:
            _stage_message(item, report)
        if call.excinfo is not None and _cost_stopped(call.excinfo):
            _not_finished(item, report, call.excinfo.value)
        elif call.excinfo is not None and _harness_error(call.excinfo):
            # The harness's message names the step and the remedy; its traceback is noise.
            report.longrepr = f"{item.nodeid}: {call.excinfo.value}"
            if call.when == "call":
                # A probe that hit a harness failure mid-call: results count it as an error.
                report.user_properties.append(("enconda_harness_error", True))
    return report


def _stage_message(item: pytest.Item, report: pytest.TestReport) -> None:
    """A stage's own probe that passed keeps the stage's message in its result row (a passed
    test has no longrepr): which interpreter was graded, and where C4 ran (cpu-gloo or
    gpu-nccl), reach results.csv and report.html, not only the stage's file."""
    from .report.summary import is_stage_probe

    props = dict(item.user_properties)
    if not is_stage_probe(props.get("enconda_item"), props.get("enconda_stage")):
        return
    case = getattr(item, "case", None)
    assert case is not None  # a stage probe carries its case (items._mark_probe)
    result = session_of(item.config).pipeline.stage(case, str(props["enconda_stage"]))
    report.user_properties.append(("enconda_message", str(result.message)))


def _cost_stopped(excinfo: pytest.ExceptionInfo[BaseException]) -> bool:
    errors = sys.modules.get("pytest_enconda.errors")
    return errors is not None and isinstance(excinfo.value, errors.RunStopped)


def _not_finished(item: pytest.Item, report: pytest.TestReport, stopped: BaseException) -> None:
    """A probe whose case the cost ceiling stopped: skipped and counted as not finished, as a
    graded item is (``CaseItem.setup``), never the harness's error."""
    from .errors import NOT_FINISHED

    report.outcome = "skipped"
    line = item.location[1]
    message = f"{item.nodeid}: {NOT_FINISHED}: {stopped}"
    report.longrepr = (str(item.path), line if line is not None else 0, message)
    report.user_properties.append(("enconda_not_finished", True))


def _harness_error(excinfo: pytest.ExceptionInfo[BaseException]) -> bool:
    errors = sys.modules.get("pytest_enconda.errors")
    return errors is not None and isinstance(excinfo.value, errors.EncondaError)


# ----------------------------------------------------------------------------- fixtures


def _case_of(node: pytest.Item) -> Any:
    for parent in reversed(node.listchain()):
        case = getattr(parent, "case", None)
        if case is not None:
            return case
    raise pytest.UsageError(
        f"{node.nodeid}: the enconda fixtures serve probes collected under a benchmark case "
        "(probe_*.py in a case folder, or --probes DIR)"
    )


@pytest.fixture
def enconda_case(request: pytest.FixtureRequest) -> Any:
    """The case this probe runs for (``Case``: spec, README, golden answer)."""
    return _case_of(request.node)


@pytest.fixture
def enconda_outcome(request: pytest.FixtureRequest, enconda_case: Any) -> Any:
    """The agent's outcome (``AgentOutcome``): diagnosis, setup script, self-report, usage.
    The agent runs once per case, whichever item asks first."""
    return session_of(request.config).pipeline.agent_outcome(enconda_case)


@pytest.fixture
def enconda_report(request: pytest.FixtureRequest, enconda_case: Any) -> dict[str, Any] | None:
    """The agent's self-report (``report.json``) as a dict, or ``None`` when it wrote none."""
    return session_of(request.config).pipeline.self_report(enconda_case)


@pytest.fixture
def enconda_env(request: pytest.FixtureRequest, enconda_case: Any) -> Any:
    """Runs commands on the agent's final state: ``enconda_env.run(cmd, gpus="none"|0|"all",
    timeout=600)`` returns a ``ProbeRun`` (``exit_code``, ``output``, ``ok``)."""
    return session_of(request.config).pipeline.environment(enconda_case)


@pytest.fixture
def enconda_stage(request: pytest.FixtureRequest, enconda_case: Any) -> Any:
    """The result of the stage named by the probe's ``pyramid`` marker (run once per case)."""
    marker = request.node.get_closest_marker("pyramid")
    if marker is None or not marker.args:
        raise pytest.UsageError(f"{request.node.nodeid}: enconda_stage needs @pytest.mark.pyramid")
    result = session_of(request.config).pipeline.stage(enconda_case, str(marker.args[0]))
    if result.outcome == "failed" and (result.numbers or {}).get("setup_timed_out"):
        # What failed is an unfinished setup: the records count the item as a timeout.
        request.node.user_properties.append(("enconda_timed_out", True))
    return result


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    # After the fixtures' teardown: the case's environment is no longer in use.
    if getattr(item, "enconda_item", False):
        active = active_session(item.config)
        if active is not None:
            active.item_done(item, nextitem)


def pytest_sessionfinish(session: pytest.Session) -> None:
    active = active_session(session.config)
    if active is not None:
        active.finish()
        if (
            active.worker_id is None
            and active.import_problems
            and session.exitstatus == pytest.ExitCode.OK
            and not active.settings.allow_import_problems
        ):
            # Instances that could not be read are input lost: the run must not look complete.
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        if active.worker_id is None and active.not_finished_cases():
            # The cost ceiling stopped the run short (said by ``finish``): not a complete run.
            session.exitstatus = pytest.ExitCode.INTERRUPTED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    active = active_session(config)
    if active is None:
        return
    from .report.terminal import write_terminal_summary

    write_terminal_summary(terminalreporter, active)
