"""pytest-enconda's hooks: a switchboard handing off to one ``EncondaSession`` in ``config.stash``.

Imports here stay cheap: the plugin loads in every pytest run where it is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from . import settings as settings_mod
from .items import SESSION_KEY, CaseFile, CaseItem, Dataset, is_case_file, is_dataset_dir

MARKERS = {
    "diagnosis": "an EnConda-Bench diagnosis task item",
    "research": "a ResearchEnvBench research task item",
    "gpu": "needs a GPU; skipped with a reason when none is present",
    "slow": "takes minutes",
}
WORKER_RUN_DIR = "enconda_run_dir"


def pytest_addoption(parser: pytest.Parser) -> None:
    settings_mod.add_options(parser)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    for name, description in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
    workerinput = getattr(config, "workerinput", None)
    run_dir = Path(workerinput[WORKER_RUN_DIR]) if workerinput else None
    settings = settings_mod.from_config(config, run_dir=run_dir)
    if workerinput is None:
        _check_run_dir(settings)
        _add_dataset_args(config, settings)
    from .session import EncondaSession

    config.stash[SESSION_KEY] = EncondaSession(config, settings)
    if workerinput is None:
        config.pluginmanager.register(_ResultsRecorder(config), "enconda-results")


def _check_run_dir(settings: settings_mod.EncondaSettings) -> None:
    if not settings.resume and (settings.run_dir / "results.jsonl").exists():
        raise pytest.UsageError(
            f"{settings.run_dir} already holds a run: use --resume {settings.run_dir} "
            "to continue it, or another --run-dir"
        )
    info = settings.run_dir / "run.json"
    if settings.resume and info.is_file():
        import json

        before = json.loads(info.read_text(encoding="utf-8")).get("settings", {})
        for key in ("agent", "model", "judge", "readme_variant"):
            if before.get(key) != getattr(settings, key):
                raise pytest.UsageError(
                    f"{info}: the run was made with {key}={before.get(key)!r}; "
                    f"resume it with the same {key} (got {getattr(settings, key)!r})"
                )


def _add_dataset_args(config: pytest.Config, settings: settings_mod.EncondaSettings) -> None:
    """``--cases PATH`` collects PATH, instead of testpaths when no paths were given."""
    if not settings.cases:
        return
    paths = [str(path) for path in settings.cases]
    if config.args_source == pytest.Config.ArgsSource.ARGS:
        config.args.extend(paths)
    else:
        config.args[:] = paths


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist controller: every worker writes into the controller's run directory."""
    node.workerinput[WORKER_RUN_DIR] = str(node.config.stash[SESSION_KEY].run_dir)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """All items of a case go to one worker, so the agent runs once per case."""
    if config.getoption("dist") != "load":
        return None
    from .scheduling import CaseScheduling

    return CaseScheduling(config, log)


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_dataset_dir(path):
        return Dataset.from_parent(parent, path=path)
    return None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if is_case_file(file_path):
        return CaseFile.from_parent(parent, path=file_path)
    return None


class _ResultsRecorder:
    """Controller-side hook object: ``pytest_runtest_logreport`` receives no config."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.config.stash[SESSION_KEY].record_report(report)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if isinstance(item, CaseItem) and report.when == "call":
        item.config.stash[SESSION_KEY].add_html_extras(item, report)
    return report


def pytest_sessionfinish(session: pytest.Session) -> None:
    session.config.stash[SESSION_KEY].finish()


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    from .report.terminal import write_terminal_summary

    write_terminal_summary(terminalreporter, config.stash[SESSION_KEY])
