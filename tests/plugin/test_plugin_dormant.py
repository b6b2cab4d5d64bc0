"""The plugin where no benchmark runs (dormant), and where one does under xdist (issue 7.5, 8.1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from casefactory import golden_error, write_case

pytest_plugins = ["pytester"]

SCHEDULER_PROBE = """
import pytest

@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    dsession = session.config.pluginmanager.getplugin("dsession")
    sched = getattr(dsession, "sched", None) if dsession else None
    if sched is not None:
        chosen = getattr(sched, "chosen", sched)
        with open("scheduler.txt", "w") as handle:
            handle.write(type(chosen).__name__)
    with open("continue.txt", "w") as handle:
        handle.write(str(session.config.option.continue_on_collection_errors))
"""


def write_dataset(root: Path, instances: dict[str, str]) -> Path:
    """A dataset in EnConda-Bench's layout: instance name -> its one error type."""
    folder = root / "instances" / "error_gen_acme_widget"
    for name, error_type in instances.items():
        (folder / name).mkdir(parents=True)
        (folder / name / "README.md").write_text("# widget\n")
        golden = {"level": "level1", "errors": [golden_error(error_type)]}
        (folder / name / "README.json").write_text(json.dumps(golden))
    (root / "repo_info.jsonl").write_text('{"repository": "acme/widget", "revision": "abc123"}\n')
    return root


def test_another_tools_case_toml_is_not_collected(pytester: pytest.Pytester) -> None:
    (pytester.path / "fixtures").mkdir()
    (pytester.path / "fixtures" / "case.toml").write_text('[input]\nvalue = "x"\n')
    pytester.makepyfile("def test_plain():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert "invalid case" not in result.stdout.str()


def test_bad_python_file_still_stops_an_unrelated_run(pytester: pytest.Pytester) -> None:
    """The plugin does not turn on continue_on_collection_errors for other people's suites."""
    pytester.makepyfile(test_a="def test_a():\n    pass\n", test_b="import no_such_module_xyz\n")
    pytester.makeconftest(SCHEDULER_PROBE)
    result = pytester.runpytest("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert (pytester.path / "continue.txt").read_text() == "False"


def test_unrelated_suite_keeps_xdist_load_scheduling(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(**{f"test_{n}": f"def test_{n}():\n    pass\n" for n in range(4)})
    pytester.makeconftest(SCHEDULER_PROBE)
    result = pytester.runpytest_subprocess("-n", "2", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    assert (pytester.path / "scheduler.txt").read_text() == "LoadScheduling"


@pytest.mark.slow
def test_benchmark_under_xdist_groups_items_by_case(pytester: pytest.Pytester) -> None:
    for name in ("one", "two", "three"):
        write_case(pytester.path, name, errors=[golden_error("E4")])
    pytester.makeconftest(SCHEDULER_PROBE)
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases", "-n", "2", "-k", "not execution", "--run-dir", str(run)
    )
    result.assert_outcomes(passed=9)
    assert (pytester.path / "scheduler.txt").read_text() == "CaseScheduling"
    runs = list((run / "cases").glob("*/agent/runs.jsonl"))
    assert len(runs) == 3
    assert all(len(path.read_text().splitlines()) == 1 for path in runs)


def test_loading_the_plugin_imports_no_pydantic() -> None:
    code = (
        "import sys, pytest_enconda.plugin, pytest_enconda.options, pytest_enconda.discovery\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'docker', 'scipy', 'litellm', 'rich')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_plain_run_creates_no_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    pass\n")
    pytester.makeconftest(
        "import sys\n"
        "def pytest_sessionfinish(session):\n"
        "    with open('modules.txt', 'w') as handle:\n"
        "        handle.write(str('pytest_enconda.session' in sys.modules))\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert (pytester.path / "modules.txt").read_text() == "False"


@pytest.mark.slow
@pytest.mark.parametrize("where", ["empty", "project"])
def test_cases_reach_every_xdist_worker(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, where: str
) -> None:
    """``--cases DATA -n 2`` runs DATA's instances, from an empty folder or a project's root."""
    data = write_dataset(
        tmp_path_factory.mktemp("elsewhere") / "data",
        {f"acme_widget_error_readme_{n}": "E4" for n in range(1, 4)},
    )
    if where == "project":  # the project's own tests must not run instead of DATA
        pytester.makeini("[pytest]\ntestpaths = tests\n")
        (pytester.path / "tests").mkdir()
        (pytester.path / "tests" / "test_own.py").write_text("def test_own():\n    pass\n")
    run = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "--cases", str(data), "-n", "2", "-k", "error_types", "--run-dir", str(run)
    )
    result.assert_outcomes(passed=3)
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert sorted(row["item"] for row in rows) == ["error_types"] * 3


def test_repositories_that_cases_name_are_not_collected(pytester: pytest.Pytester) -> None:
    """A copy of a benchmark folder: the cases' repositories carry tests that are not ours."""
    root = pytester.path / "my-cases"
    repo = root / "repos" / "widget"
    (repo / "tests").mkdir(parents=True)
    (repo / "tests" / "test_widget.py").write_text("import widget_not_installed\n")
    case_dir = write_case(root, "one", suite_dir="diagnosis")
    toml = (
        (case_dir / "case.toml").read_text().replace('path = "repo"', 'path = "../../repos/widget"')
    )
    (case_dir / "case.toml").write_text(toml)
    run = pytester.path / "run"
    result = pytester.runpytest("my-cases", "-k", "error_types", "--run-dir", str(run))
    result.assert_outcomes(passed=1)
    assert "widget_not_installed" not in result.stdout.str()
