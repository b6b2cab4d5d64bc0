"""Collection: case folders and imported datasets become one pytest item per graded aspect."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .aspects import ASPECTS, TASK_KINDS, aspect_names
from .cases.loader import load_case
from .discovery import CASE_FILE, is_research_dataset_dir
from .errors import NOT_FINISHED, CaseFormatError, EncondaError, RunStopped
from .state import session_of

if TYPE_CHECKING:
    from .cases.models import Case

# A safety net above the per-step budgets: image builds on a cold machine take minutes.
BUILD_ALLOWANCE_SECONDS = 1800


class AspectFailed(Exception):
    """The agent got this aspect wrong; the message explains how."""


def _variant(config: pytest.Config, case: Case) -> Case:
    """The README the agent is shown. ``--readme-variant=original``: the case's original README,
    else (a dataset without the file) the repository's own README at the pinned revision, read
    when the repository is materialised; never the erroneous one silently."""
    if config.getoption("readme_variant") != "original":
        return case
    if not TASK_KINDS.get(case.spec.suite).readme_has_injected_errors:
        return case
    if case.original_readme_text is not None:
        return case.with_original_readme()
    return case.with_repository_readme()


def case_timeout(case: Case, scale: float = 1.0) -> float:
    """A safety net for one item, above every budget the case's steps can get, so that a budget,
    never pytest-timeout, ends a slow step: the agent's budget stretched as far as it can be
    (``scale`` x ``agents.clock.MAX_FACTOR``: the slowdown is measured when the agent starts,
    after collection), the setup and tests with ``scale`` (``--budget-scale``) and, where the
    replay is calibrated on the golden setup (a diagnosis case), the worst the calibration allows
    (the first replay, the golden measured with ``CALIBRATION_FACTOR`` x its budget, the replay
    again with ``CALIBRATION_FACTOR`` x the golden's time), then the pyramid's stages (each stage
    of the case's kind that declares a budget: ``Stage.budget``), scaled too."""
    from .agents.clock import MAX_FACTOR
    from .probing.execution import CALIBRATION_FACTOR
    from .stages import STAGES

    budgets = case.spec.budgets
    kind = TASK_KINDS.get(case.spec.suite)
    if kind.graded_by_probes:
        execution = budgets.setup_seconds * scale  # a research setup is not calibrated
    elif case.spec.aec is not None:
        # Not calibrated either; the agent's recorded test command, then the reference one.
        execution = (budgets.setup_seconds + 2 * budgets.test_seconds) * scale
    else:
        factor = 1 + CALIBRATION_FACTOR + CALIBRATION_FACTOR**2
        execution = (budgets.setup_seconds + budgets.test_seconds) * scale * factor
    total = budgets.agent_seconds * scale * MAX_FACTOR + execution
    for stage in STAGES.values():
        if stage.task_kind == case.spec.suite and stage.has_budget:
            total += stage.budget(case) * scale
    return total + BUILD_ALLOWANCE_SECONDS


def _budget_scale(config: pytest.Config) -> float:
    return session_of(config).settings.budget_scale


def make_items(parent: pytest.Collector, case: Case) -> Iterator[pytest.Item | pytest.Collector]:
    """The case's probes (pyramid stages, user probes), then its kind's graded aspects."""
    case = _variant(parent.config, case)
    parent.case = case  # type: ignore[attr-defined]  # probes' fixtures find their case here
    parent.extra_keyword_matches.update(case.keywords())
    timeout = case_timeout(case, _budget_scale(parent.config))
    yield from probe_modules(parent, case)
    # A kind graded by probes alone (research) has no aspects of its own.
    kind = TASK_KINDS.get(case.spec.suite)
    for aspect in aspect_names(kind):
        item = CaseItem.from_parent(parent, name=aspect, case=case, aspect=aspect)
        item.extra_keyword_matches.update(case.keywords())
        register_marker(parent.config, kind.marker, kind.description or kind.name)
        item.add_marker(kind.marker)
        if ASPECTS.get(aspect).needs_gpu:
            item.add_marker("gpu")
        # Signal method: the thread method kills xdist workers.
        item.add_marker(pytest.mark.timeout(timeout, method="signal"))
        yield item


def case_roots(config: pytest.Config, case_file: Path) -> list[Path]:
    """Folders a case may name files in, besides its own: where it was collected from.

    The folders given on the command line (or ``testpaths``) that hold it, the project's root
    when an ini file configures pytest there (a bare ``pyproject.toml`` found further up, in a
    home folder say, does not count), and ``--allow-path`` folders.
    """
    from .discovery import collection_roots

    here = case_file.resolve()
    roots = [root for root in collection_roots(config) if root in here.parents]
    if _configures_pytest(config.inipath) and config.rootpath.resolve() in here.parents:
        roots.append(config.rootpath.resolve())
    roots.extend(config.getoption("allow_path") or ())
    return roots


def _configures_pytest(inipath: Path | None) -> bool:
    """Whether pytest's ini file really configures it: pytest also takes a ``pyproject.toml``
    without a ``[tool.pytest]`` table as the root's marker."""
    if inipath is None:
        return False
    if inipath.name != "pyproject.toml":
        return True
    from .textio import parse_toml

    try:
        tool = parse_toml(inipath.read_text(encoding="utf-8")).get("tool", {})
    except (OSError, ValueError):
        return False
    return isinstance(tool, dict) and bool(tool.get("pytest"))


def check_collectable(config: pytest.Config, case: Case, source: str) -> list[tuple[str, str]]:
    """What collection refuses beyond the file format: an unknown base image, a duplicate id."""
    from .sandbox.recipes import BASE_RECIPES

    problems: list[tuple[str, str]] = []
    if case.spec.base_image not in BASE_RECIPES:
        known = ", ".join(sorted(BASE_RECIPES))
        problems.append(
            ("base_image", f"unknown base image recipe {case.spec.base_image!r}; known: {known}")
        )
    if case.spec.research is not None:
        from .stages import STAGES

        for name in case.spec.research.skip_reasons:
            if name not in STAGES:
                known = ", ".join(STAGES.names())
                problems.append(
                    ("research.skip_reasons", f"unknown pyramid stage {name!r}; known: {known}")
                )
    problems += _stage_budget_problems(case)
    earlier = session_of(config).claim_case_id(case.id, source)
    if earlier is not None:
        problems.append(("id", f"{case.id!r} is already the id of {earlier}"))
    return problems


def _stage_budget_problems(case: Case) -> list[tuple[str, str]]:
    """A ``[budgets]`` key no stage of the case's kind declares (``Stage.budget_field``): a
    typo, or a plugin not loaded, would otherwise leave the stage on its default unnoticed."""
    from .cases.models import ResearchSpec
    from .stages import STAGES

    suite = case.spec.suite
    fields = {s.budget_field for s in STAGES.values() if s.task_kind == suite and s.budget_field}
    # C0-C4's budgets are [research] fields: the same key in [budgets] would be read nowhere.
    declared = sorted(fields - set(ResearchSpec.model_fields))
    problems: list[tuple[str, str]] = []
    for key in case.spec.budgets.stage_seconds():
        if key in ResearchSpec.model_fields:
            problems.append((f"budgets.{key}", "a [research] field: write it there"))
        elif key not in declared:
            known = ", ".join(declared) or "none"
            why = f"no pyramid stage of suite {suite!r} declares this budget; declared: {known}"
            problems.append((f"budgets.{key}", why))
    return problems


def probe_files(config: pytest.Config, case: Case) -> list[tuple[str, Path]]:
    """(label, file) of every probe module for ``case``: the shipped pyramid for research
    cases, the case folder's own ``probe_*.py``, and ``--probes DIR`` folders'."""
    from .cases.loader import contained

    found: list[tuple[str, Path]] = []
    if TASK_KINDS.get(case.spec.suite).graded_by_probes:
        found += [(path.name, path) for path in sorted(probes_dir().glob("probe_*.py"))]
    for path in sorted(case.case_dir.glob("probe_*.py")):
        # A case's probe is code run on the host: it must be the case's own file.
        if contained(path, [case.case_dir]) is None:
            raise CaseFormatError(
                str(case.case_dir / "case.toml"),
                [("probes", f"{path} resolves to {path.resolve()}, outside the case's folder")],
            )
        found.append((path.name, path))
    for folder in config.getoption("probes") or ():
        files = sorted(folder.glob("probe_*.py"))
        found += [(f"{folder.name}/{path.name}", path) for path in files]
    labels: set[str] = set()
    unique = []
    for label, path in found:
        while label in labels:
            label = f"{label}+"
        labels.add(label)
        unique.append((label, path))
    return unique


def probes_dir() -> Path:
    """The shipped probes: a source checkout's own ``probes/`` (a worktree beside an editable
    install must run its own), else the installed package ``pytest_enconda.probes``."""
    import importlib.util

    checkout = Path(__file__).resolve().parents[1] / "probes"
    if (checkout / "probe_pyramid.py").is_file():
        return checkout
    spec = importlib.util.find_spec("pytest_enconda.probes")
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return checkout


def probe_modules(parent: pytest.Collector, case: Case) -> Iterator[ProbeModule]:
    for label, path in probe_files(parent.config, case):
        yield ProbeModule.from_parent(
            parent, path=path, name=label, nodeid=f"{parent.nodeid}::{label}"
        )


class ProbeModule(pytest.Module):
    """A probe file collected under one case: its test functions run against that case.

    Imported by its path under a name of its own (``importlib`` mode), so two cases' probe
    files with the same name never collide, and the same shipped file serves every case.
    """

    def _getobj(self) -> Any:
        from _pytest.pathlib import ImportMode, import_path

        _rewrite_asserts(self.path, self.config.rootpath)
        module = import_path(
            self.path,
            mode=ImportMode.importlib,
            root=self.config.rootpath,
            consider_namespace_packages=False,
        )
        self.config.pluginmanager.consider_module(module)
        return module

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        case: Case = self.parent.case  # type: ignore[union-attr]
        return _probe_nodes(self, super().collect(), case, self.name)


class ProbeClass(pytest.Class):
    """A test class in a probe file: pytest makes a class's items only when it collects the
    class, so they are marked as the case's probes here."""

    probe_case: Case
    probe_label: str

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        return _probe_nodes(self, super().collect(), self.probe_case, self.probe_label)


def _probe_nodes(
    parent: pytest.Collector,
    nodes: Iterable[pytest.Item | pytest.Collector],
    case: Case,
    label: str,
) -> list[pytest.Item | pytest.Collector]:
    """A probe module's (or class's) children: its test functions marked as ``case``'s probes,
    its test classes made ``ProbeClass``es that mark theirs (labelled ``label::Class``)."""
    out: list[pytest.Item | pytest.Collector] = []
    for node in nodes:
        if isinstance(node, pytest.Class):
            probe_class = ProbeClass.from_parent(parent, name=node.name, obj=node.obj)
            probe_class.probe_case, probe_class.probe_label = case, f"{label}::{node.name}"
            node = probe_class
        elif isinstance(node, pytest.Item):
            _mark_probe(node, case, label)
        out.append(node)
    return out


def _rewrite_asserts(path: Path, root: Path) -> None:
    """A probe's plain ``assert`` says what it compared, as a test file's does: probe_*.py is not
    in python_files, so pytest rewrites it only when asked to, by the names ``import_path`` gives
    it (its package's, else one from its path)."""
    from _pytest.pathlib import (
        CouldNotResolvePathError,
        module_name_from_path,
        resolve_pkg_root_and_module_name,
    )

    names = [module_name_from_path(path, root)]
    with contextlib.suppress(CouldNotResolvePathError):
        names.append(resolve_pkg_root_and_module_name(path)[1])
    with warnings.catch_warnings():
        # "already imported": a file another case collected first, already rewritten.
        warnings.simplefilter("ignore", pytest.PytestAssertRewriteWarning)
        pytest.register_assert_rewrite(*names)


def _mark_probe(item: pytest.Item, case: Case, label: str) -> None:
    marker = item.get_closest_marker("pyramid")
    stage = str(marker.args[0]) if marker and marker.args else None
    item.enconda_item = True  # type: ignore[attr-defined]
    item.case = case  # type: ignore[attr-defined]  # what the report hooks read, as on CaseItem
    item.aspect = stage or item.name  # type: ignore[attr-defined]
    item.user_properties.append(("enconda_case", case.id))
    item.user_properties.append(("enconda_item", f"{label}::{item.name}"))
    item.user_properties.append(("enconda_level", case.level))
    if stage is not None:
        item.user_properties.append(("enconda_stage", stage))
        item.extra_keyword_matches.add(stage)
        _mark_gpu_stage(item, stage)
    kind = TASK_KINDS.get(case.spec.suite)
    register_marker(item.config, kind.marker, kind.description or kind.name)
    item.add_marker(kind.marker)
    timeout = case_timeout(case, _budget_scale(item.config))
    item.add_marker(pytest.mark.timeout(timeout, method="signal"))


def register_marker(config: pytest.Config, name: str, description: str) -> None:
    """Registers a task kind's marker when its first case is collected (a plugin's kind too,
    before ``--strict-markers`` checks it): the plugin's configure registers only the built-in
    ones, so a run that collects no case never reads the task-kind registry."""
    if not any(
        line.split(":", 1)[0].split("(", 1)[0].strip() == name for line in config.getini("markers")
    ):
        config.addinivalue_line("markers", f"{name}: {description}")


def _mark_gpu_stage(item: pytest.Item, stage: str) -> None:
    """A GPU stage's probe carries ``gpu`` for ``-m``, but the stage, not the marker, decides
    whether it runs: it skips with its own reason on a host without GPUs, and C4 runs on CPU
    processes under ``--ddp-cpu`` (``plugin.pytest_runtest_setup`` leaves it to the stage)."""
    from .stages import STAGES

    if stage not in STAGES or not STAGES.get(stage).needs_gpu:
        return
    if item.get_closest_marker("gpu") is None:
        item.add_marker("gpu")
        item.enconda_gpu_by_stage = True  # type: ignore[attr-defined]


class CaseFile(pytest.File):
    """A shipped case: ``<suite>/<case-id>/case.toml``."""

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        try:
            case = load_case(self.path, case_roots(self.config, self.path))
            problems = check_collectable(self.config, case, str(self.path))
            if problems:
                raise CaseFormatError(str(self.path), problems)
            return list(make_items(self, case))
        except CaseFormatError:
            # One bad case must not stop the others: pytest aborts on collection errors. Set
            # only here, where a benchmark case is collected, never for other test suites.
            self.config.option.continue_on_collection_errors = True
            raise

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:
        if isinstance(excinfo.value, CaseFormatError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class SpecialCaseDir(pytest.Directory):
    """A folder whose ``case.toml`` is a FIFO, a device or a link to one: pytest's own folder
    collector passes it over, so it is collected here and refused by name (not waited on)."""

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        # What pytest.Dir collects (it is final: not for subclassing), then the case file.
        from _pytest.pathlib import scandir

        for entry in scandir(self.path):
            path = Path(entry.path)
            if entry.is_dir():
                if not self.session.isinitpath(path, with_parents=True) and (
                    self.ihook.pytest_ignore_collect(collection_path=path, config=self.config)
                ):
                    continue
                collector = self.ihook.pytest_collect_directory(path=path, parent=self)
                if collector is not None:
                    yield collector
            elif entry.is_file():
                if not self.session.isinitpath(path) and (
                    self.ihook.pytest_ignore_collect(collection_path=path, config=self.config)
                ):
                    continue
                yield from self.ihook.pytest_collect_file(file_path=path, parent=self)
        yield CaseFile.from_parent(self, path=self.path / CASE_FILE)


class DatasetCase(pytest.Collector):
    """One imported instance inside a dataset directory."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def collect(self) -> Iterable[pytest.Item | pytest.Collector]:
        return list(make_items(self, self.case))


class Dataset(pytest.Directory):
    """A released dataset given with ``--cases``: EnConda-Bench's layout or ResearchEnvBench's."""

    def collect(self) -> Iterable[pytest.Collector]:
        from .cases.enconda_import import ImportProblem, load_dataset

        if is_research_dataset_dir(self.path):
            from .cases.research_import import load_research_dataset

            loaded = load_research_dataset(self.path)
        else:
            loaded = load_dataset(
                self.path, verification=session_of(self.config).settings.verification
            )
        problems = list(loaded.problems)
        cases = []
        for case in loaded.cases:
            refused = check_collectable(self.config, case, f"{self.path}::{case.id}")
            if refused:
                reason = "; ".join(f"{field}: {message}" for field, message in refused)
                problems.append(ImportProblem(file=str(case.case_dir), reason=reason))
            else:
                cases.append(case)
        session_of(self.config).record_import_problems(problems)
        return [
            DatasetCase.from_parent(
                self, name=case.id, case=case, nodeid=f"{self.nodeid}::{case.id}"
            )
            for case in cases
        ]


class CaseItem(pytest.Item):
    # The plugin's report hooks look for this instead of importing this module in every run.
    enconda_item = True

    def __init__(self, *, case: Case, aspect: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case
        self.aspect = aspect
        # Set by make_items; a skip marker would not do (pytest wants a line number for it).
        self.skip_reason: str | None = None
        self.user_properties.append(("enconda_case", case.id))
        self.user_properties.append(("enconda_item", aspect))
        self.user_properties.append(("enconda_level", case.level))

    def setup(self) -> None:
        # Harness work and grading happen here: an exception in setup is an *error* outcome,
        # which is what a harness failure (image, repository, judge) must be.
        if self.skip_reason is not None:
            pytest.skip(self.skip_reason)
        session = session_of(self.config)
        failure = stopped = None
        try:
            self.verdict = session.pipeline.verdict(self.case, self.aspect)
        except RunStopped as exc:  # the cost ceiling: neither failed nor the harness's error
            stopped = str(exc)
        except EncondaError as exc:
            failure = str(exc)
        if stopped is not None:
            # Counted apart as not finished, never failed; --resume runs the case again.
            self.user_properties.append(("enconda_not_finished", True))
            pytest.skip(f"{self.case.id}::{self.aspect}: {NOT_FINISHED}: {stopped}")
        if failure is not None:
            # Outside the except block, so pytest shows the message alone, not a chained
            # traceback; pytrace=False because the message already names the step.
            pytest.fail(f"{self.case.id}::{self.aspect}: {failure}", pytrace=False)
        for key, value in self.verdict.numbers.items():
            self.user_properties.append((key, value))
        if self.verdict.timed_out:
            self.user_properties.append(("enconda_timed_out", True))
        if self.verdict.outcome == "skipped":
            pytest.skip(self.verdict.message)
        if self.verdict.outcome == "error":
            pytest.fail(f"{self.case.id}::{self.aspect}: {self.verdict.message}", pytrace=False)

    def runtest(self) -> None:
        if self.verdict.outcome != "passed":
            raise AspectFailed(self.verdict.message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, AspectFailed):
            from .records import failure_message

            return failure_message(self.case.id, self.aspect, str(excinfo.value))
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.case.id}::{self.aspect}"
