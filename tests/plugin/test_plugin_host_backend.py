"""The host backend (``--python``/``--repo``) as the README shows it (issue 19)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from casefactory import write_research_case


def test_no_case_collected_is_a_usage_error_with_a_hint(pytester: pytest.Pytester) -> None:
    repo = pytester.mkdir("repo")
    result = pytester.runpytest(
        "--python", sys.executable, "--repo", str(repo), "-p", "no:cacheprovider"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*no case was collected: name the case's folder*"])


def test_one_environment_against_several_cases_is_refused(pytester: pytest.Pytester) -> None:
    first = write_research_case(pytester.path, "alpha")
    write_research_case(pytester.path, "beta")
    result = pytester.runpytest(
        "cases", "--python", sys.executable, "--repo", str(first / "repo"), "-k", "C1"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(["*but 2 cases were collected (alpha, beta): name exactly one*"])


def test_a_host_run_is_labelled_with_its_environment_not_the_oracle(
    pytester: pytest.Pytester,
) -> None:
    import json

    case = write_research_case(pytester.path, "alpha")
    run = pytester.path / "run"
    result = pytester.runpytest(
        "cases",
        "--python",
        sys.executable,
        "--repo",
        str(case / "repo"),
        "-k",
        "C5",
        "--run-dir",
        str(run),
    )
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["agent"] == f"existing environment {sys.executable} (host backend)"


_COV_CONFIGS = {
    "pyproject.toml": '[tool.pytest.ini_options]\naddopts = "--cov=pkg --strict-markers"\n',
    "pytest.ini": "[pytest]\naddopts = --cov=pkg --strict-markers\n",
    "setup.cfg": "[tool:pytest]\naddopts = --cov=pkg --strict-markers\n",
    "tox.ini": "[pytest]\naddopts = --cov=pkg --strict-markers\n",
}


def _case_whose_repo_configures_pytest(pytester: pytest.Pytester, config_file: str) -> Path:
    """A research case whose repository's own pytest configuration adds ``--cov`` (pytest-cov
    is not installed here: were that configuration read, the run would stop on it), and whose
    entry point runs with any Python."""
    case = write_research_case(pytester.path, "alpha")
    repo = case / "repo"
    (repo / "train.py").write_text("print('one step')\n")
    (repo / config_file).write_text(_COV_CONFIGS[config_file])
    # The environment is the repository's own .venv, as a README would make it.
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "python").symlink_to(sys.executable)
    return case


@pytest.mark.parametrize("config_file", sorted(_COV_CONFIGS))
def test_the_graded_repositorys_pytest_config_is_not_pytests(
    pytester: pytest.Pytester, config_file: str
) -> None:
    # pytest picks its configuration before the plugin loads, taking --python's and --repo's
    # values for paths to collect: both point into the repository here.
    case = _case_whose_repo_configures_pytest(pytester, config_file)
    repo = case / "repo"
    result = pytester.runpytest(
        "cases/alpha",
        "--python",
        str(repo / ".venv" / "bin" / "python"),
        "--repo",
        str(repo),
        "-k",
        "C1",
        "--run-dir",
        str(pytester.path / "run"),
    )
    result.assert_outcomes(passed=1)
    assert "unrecognized arguments" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines([f"rootdir: {pytester.path}"])
    assert "configfile:" not in result.stdout.str()
    assert not (repo / ".pytest_cache").exists()  # the repository is not pytest's rootdir


@pytest.mark.slow
def test_from_inside_the_repository_under_xdist(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Run from inside the repository (relative --repo .) with -n 2: the workers parse the same
    # command line again and must agree with the controller on the rootdir.
    case = _case_whose_repo_configures_pytest(pytester, "pyproject.toml")
    repo = case / "repo"
    monkeypatch.chdir(repo)
    result = pytester.runpytest_subprocess(
        str(case), "--python", ".venv/bin/python", "--repo", ".", "-k", "C1", "-n", "2"
    )
    result.assert_outcomes(passed=1)
    assert "configfile:" not in result.stdout.str()
    assert not (repo / ".pytest_cache").exists()


def test_several_cases_under_xdist_is_a_usage_error_not_an_internal_error(
    pytester: pytest.Pytester,
) -> None:
    first = write_research_case(pytester.path, "alpha")
    write_research_case(pytester.path, "beta")
    result = pytester.runpytest_subprocess(
        "cases", "--python", sys.executable, "--repo", str(first / "repo"), "-k", "C1", "-n", "2"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in output
    result.stdout.fnmatch_lines(["*but 2 cases were collected (alpha, beta): name exactly one*"])


def test_no_case_under_xdist_is_a_usage_error_not_an_internal_error(
    pytester: pytest.Pytester,
) -> None:
    repo = pytester.mkdir("repo")
    pytester.mkdir("empty")
    result = pytester.runpytest_subprocess(
        "empty", "--python", sys.executable, "--repo", str(repo), "-n", "2"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*no case was collected: name the case's folder*"])


_FAILING_PROBES = """import pytest


@pytest.mark.pyramid("C1")
def test_tokenizer_loads(enconda_env, enconda_stage):
    run = enconda_env.run("echo loading; echo no tokenizer here", gpus="none", timeout=60)
    assert "ready" in run.output, "tokenizer missing: " + run.output.strip().splitlines()[-1]


def test_plain_assert():
    width = 3
    assert width == 4
"""


def test_a_failing_probes_assertion_reaches_the_csv_and_the_report(
    pytester: pytest.Pytester,
) -> None:
    import csv

    case = write_research_case(pytester.path, "alpha", probes={"probe_mine.py": _FAILING_PROBES})
    (case / "repo" / "train.py").write_text("print('one step')\n")
    run = pytester.path / "run"
    result = pytester.runpytest(
        "cases/alpha", "--python", sys.executable, "--repo", str(case / "repo"),
        "-k", "C1 or plain", "--run-dir", str(run),
    )  # fmt: skip
    result.assert_outcomes(passed=1, failed=2)
    rows = {row["item"]: row for row in csv.DictReader((run / "results.csv").open())}
    expected = {
        "probe_mine.py::test_tokenizer_loads": (
            "probe_mine.py:7: AssertionError: tokenizer missing: no tokenizer here"
        ),
        # A bare assert in a probe file is rewritten as in a test file: pytest's explanation.
        "probe_mine.py::test_plain_assert": "probe_mine.py:12: assert 3 == 4",
    }
    html = (run / "report.html").read_text()
    for item, message in expected.items():
        assert rows[item]["message"] == message
        assert f"<summary>{message}</summary>" in html
    # The stage itself passed beside its failing user probe.
    assert rows["probe_pyramid.py::test_c1_entry_point_on_cpu"]["outcome"] == "passed"


def test_a_failing_stage_keeps_its_own_one_line_message(pytester: pytest.Pytester) -> None:
    import csv

    case = write_research_case(pytester.path, "alpha")
    (case / "repo" / "train.py").write_text("import no_such_module_here\n")
    run = pytester.path / "run"
    result = pytester.runpytest(
        "cases/alpha", "--python", sys.executable, "--repo", str(case / "repo"),
        "-k", "C1", "--run-dir", str(run),
    )  # fmt: skip
    result.assert_outcomes(failed=1)
    rows = {row["item"]: row for row in csv.DictReader((run / "results.csv").open())}
    message = rows["probe_pyramid.py::test_c1_entry_point_on_cpu"]["message"]
    # The stage's words, not a location in the shipped probe file.
    assert message.startswith("C1: 'python train.py': exit 1: ModuleNotFoundError: "), message


def test_c4_on_cpu_gloo_is_said_in_the_csv_the_tables_and_the_report(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only summary.json's ``cpu_mode``: the passed C4 row's message, the pyramid table in
    the terminal and summary.md, and report.html say it ran as CPU processes on gloo."""
    import csv

    case = write_research_case(
        pytester.path,
        "alpha",
        research_extra='supports_multi_gpu = true\nddp_entry_point = "train.py"',
    )
    repo = case / "repo"
    (repo / "train.py").write_text(
        "import os\nprint('backend', os.environ['ENCONDA_DDP_BACKEND'])\n"
    )
    # torch is not installed here: a stand-in torch.distributed.run, importable by the graded
    # interpreter, runs the script once with what it was given. What is checked is where C4's
    # description reaches, not torch.
    bindir = repo / ".venv" / "bin"
    bindir.mkdir(parents=True)
    (bindir / "python").symlink_to(sys.executable)
    stand_in = pytester.path / "stand_in" / "torch" / "distributed"
    stand_in.mkdir(parents=True)
    for folder in (stand_in.parent, stand_in):
        (folder / "__init__.py").write_text("")
    (stand_in / "run.py").write_text(
        "import runpy, sys\n"
        "sys.argv = sys.argv[-1:]\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    monkeypatch.setenv("PYTHONPATH", str(stand_in.parent.parent))
    run = pytester.path / "run"
    result = pytester.runpytest(
        "cases/alpha", "--python", str(bindir / "python"), "--repo", str(repo),
        "-k", "C4", "--ddp-cpu", "--gpus", "none", "--run-dir", str(run),
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    label = "[cpu-gloo: 2 CPU processes on gloo, no GPU]"
    rows = {row["item"]: row for row in csv.DictReader((run / "results.csv").open())}
    message = rows["probe_pyramid.py::test_c4_distributed_run"]["message"]
    assert message.startswith(
        f"{label} 'python -m torch.distributed.run --standalone --nproc_per_node=2 train.py'"
    )
    assert "[graded python: " in message
    assert "| 1/1 (100.0%) [1 on cpu-gloo] |" in result.stdout.str()
    assert "| 1/1 (100.0%) [1 on cpu-gloo] |" in (run / "summary.md").read_text()
    html = (run / "report.html").read_text()
    assert f"<summary>{label}" in html
    assert "C4 DDP (1 on cpu-gloo: 2 CPU processes, not GPUs)" in html
