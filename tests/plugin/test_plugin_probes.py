"""Probes as pytest test functions under each case: collection, fixtures, backends (issue 10)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from casefactory import write_case, write_research_case

from pytest_enconda.probing.environment import host_gpu_count

pytest_plugins = ["pytester"]

USER_PROBE = """
import pytest

@pytest.mark.pyramid("C1")
def test_interpreter_is_the_reported_one(enconda_env, enconda_report):
    run = enconda_env.run("python -c 'import sys; print(sys.prefix)'")
    assert run.ok, run.output
    assert enconda_report["python_path"].startswith(run.output.strip()), run.output

def test_case_fixture(enconda_case, enconda_outcome):
    assert enconda_outcome.case_id == enconda_case.id
"""


def _rows(run: Path) -> dict[tuple[str, str], dict]:
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    return {(row["case"], row["item"]): row for row in rows}


def _collected(result: pytest.RunResult) -> list[str]:
    return [line for line in result.outlines if "::" in line and not line.startswith("ERROR")]


def test_probes_are_collected_under_each_case_with_keywords(pytester: pytest.Pytester) -> None:
    write_research_case(pytester.path, "alpha", probes={"probe_mine.py": USER_PROBE})
    write_research_case(pytester.path, "beta")
    write_case(pytester.path, "diag")
    result = pytester.runpytest("cases", "--collect-only", "-q")
    items = _collected(result)
    assert "cases/alpha/case.toml::probe_pyramid.py::test_c3_entry_point_on_one_gpu" in items
    assert "cases/alpha/case.toml::probe_mine.py::test_case_fixture" in items
    assert not any("beta/case.toml::probe_mine.py" in item for item in items)
    assert not any("diag/case.toml::probe_pyramid.py" in item for item in items)
    c3 = _collected(pytester.runpytest("cases", "--collect-only", "-q", "-k", "C3"))
    assert c3 == [
        f"cases/{case}/case.toml::probe_pyramid.py::test_c3_entry_point_on_one_gpu"
        for case in ("alpha", "beta")
    ]
    mine = _collected(pytester.runpytest("cases", "--collect-only", "-q", "-k", "alpha and C1"))
    assert mine == [
        "cases/alpha/case.toml::probe_pyramid.py::test_c1_entry_point_on_cpu",
        "cases/alpha/case.toml::probe_mine.py::test_interpreter_is_the_reported_one",
    ]


def test_probes_from_a_folder_of_ones_own(pytester: pytest.Pytester) -> None:
    write_research_case(pytester.path, "alpha")
    write_case(pytester.path, "diag")
    mine = pytester.mkdir("my-probes")
    (mine / "probe_extra.py").write_text("def test_extra(enconda_case):\n    assert enconda_case\n")
    result = pytester.runpytest("cases", "--collect-only", "-q", "--probes", str(mine))
    items = _collected(result)
    assert "cases/alpha/case.toml::my-probes/probe_extra.py::test_extra" in items
    assert "cases/diag/case.toml::my-probes/probe_extra.py::test_extra" in items


def test_a_probe_class_is_collected_as_probes_of_the_case(pytester: pytest.Pytester) -> None:
    # pytest makes a class's items only when it collects the class: marked there as probes.
    write_case(pytester.path, "diag")
    mine = pytester.mkdir("my-probes")
    (mine / "probe_grouped.py").write_text(
        "class TestGroup:\n"
        "    def test_in_class(self, enconda_case):\n"
        "        assert enconda_case\n"
    )
    args = ["cases", "--collect-only", "-q", "--probes", str(mine), "-m", "diagnosis"]
    result = pytester.runpytest(*args, "-k", "TestGroup")
    assert _collected(result) == [
        "cases/diag/case.toml::my-probes/probe_grouped.py::TestGroup::test_in_class"
    ]


def test_enconda_fixtures_outside_a_case_say_so(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(enconda_case):\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "the enconda fixtures serve probes collected under a benchmark case" in (
        result.stdout.str()
    )


def test_a_case_probe_symlinked_outside_is_refused(pytester: pytest.Pytester) -> None:
    outside = pytester.path / "elsewhere.py"
    outside.write_text("def test_x():\n    pass\n")
    case_dir = write_research_case(pytester.path, "alpha")
    (case_dir / "probe_link.py").symlink_to(outside)
    result = pytester.runpytest("cases", "--collect-only", "-q")
    assert "outside the case's folder" in result.stdout.str()
    result.assert_outcomes(errors=1)


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.usefixtures("base_image")
def test_pyramid_oracle_passes_readme_fails_with_the_missing_module(
    pytester: pytest.Pytester,
) -> None:
    # The setup looks for what must never be in the agent's environment, from inside.
    guard = (
        "! find / -xdev \\( -name 'probe_*.py' -o -name 'golden.json' -o -name 'setup.sh' "
        "-o -name 'README.original.md' \\) -not -path '/tmp/enconda/*' 2>/dev/null | grep .\n"
    )
    from casefactory import VENV_SETUP

    write_research_case(
        pytester.path, "alpha", setup=guard + VENV_SETUP, probes={"probe_mine.py": USER_PROBE}
    )
    run = pytester.path / "oracle"
    result = pytester.runpytest("cases", "-k", "C1 or C3 or fixture", "--run-dir", str(run))
    result.assert_outcomes(passed=3, skipped=1)
    rows = _rows(run)
    assert rows[("alpha", "probe_pyramid.py::test_c1_entry_point_on_cpu")]["stage"] == "C1"
    c3 = rows[("alpha", "probe_pyramid.py::test_c3_entry_point_on_one_gpu")]
    assert c3["outcome"] == "skipped" and "no GPU on this host" in c3["message"]
    state = json.loads((run / "cases" / "alpha" / "environment" / "state.json").read_text())
    assert state["setup_exit_code"] == 0 and state["image"].startswith("enconda/snapshot:")

    readme = pytester.path / "readme"
    result = pytester.runpytest("cases", "-k", "C1", "--agent", "readme", "--run-dir", str(readme))
    result.assert_outcomes(failed=2)
    stage = json.loads((readme / "cases" / "alpha" / "pyramid" / "C1.json").read_text())
    assert "ModuleNotFoundError: No module named 'helper_mod'" in stage["message"]
    assert "ModuleNotFoundError: No module named 'helper_mod'" in result.stdout.str()


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.usefixtures("base_image")
def test_probes_under_xdist_match_serial(pytester: pytest.Pytester) -> None:
    for name in ("alpha", "beta"):
        write_research_case(pytester.path, name, probes={"probe_mine.py": USER_PROBE})
    serial, parallel = pytester.path / "serial", pytester.path / "parallel"
    pytester.runpytest_subprocess("cases", "-k", "C1 or fixture", "--run-dir", str(serial))
    result = pytester.runpytest_subprocess(
        "cases", "-k", "C1 or fixture", "-n", "2", "--run-dir", str(parallel)
    )
    result.assert_outcomes(passed=6)
    outcomes = {key: row["outcome"] for key, row in _rows(serial).items()}
    assert outcomes == {key: row["outcome"] for key, row in _rows(parallel).items()}
    for name in ("alpha", "beta"):  # one final state (setup run) per case, however many items
        runs = (parallel / "cases" / name / "agent" / "runs.jsonl").read_text().splitlines()
        assert len(runs) == 1


def test_host_backend_grades_an_existing_environment(pytester: pytest.Pytester) -> None:
    """No Docker: the interpreter running these tests is the environment under test."""
    case_dir = write_research_case(pytester.path, "alpha", probes={"probe_mine.py": USER_PROBE})
    repo = case_dir / "repo"
    (repo / "helper_mod.py").write_text("VALUE = 2\n")
    report = pytester.path / "report.json"
    report.write_text(json.dumps({"python_path": sys.executable, "env_tool": "pip"}))
    run = pytester.path / "host"
    result = pytester.runpytest(
        "cases",
        "-k",
        "C1 or C3 or fixture",
        "--python",
        sys.executable,
        "--repo",
        str(repo),
        "--report",
        str(report),
        "--run-dir",
        str(run),
    )
    result.assert_outcomes(passed=3, skipped=1)
    stage = json.loads((run / "cases" / "alpha" / "pyramid" / "C1.json").read_text())
    assert "exited 0" in stage["message"]
    assert not (run / "cases" / "alpha" / "environment").exists()  # no image, no container


def test_python_and_repo_go_together(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--python", sys.executable)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--python and --repo go together" in result.stderr.str()


LYING_REPORT = """mkdir -p /enconda/output
cat > /enconda/output/report.json <<JSON
{"python_path": "/opt/nowhere/bin/python", "python_version": "3.11", "torch_version": "2.4.0",
 "cuda_available": true, "gpu_count": 8, "ddp_expected_ok": null, "env_tool": "venv",
 "env_name": "venv", "notes": ""}
JSON
"""
FALSE_CLAIMS_REPORT = """python3 -m venv /opt/venv
printf 'VALUE = 1\\n' > /opt/venv/lib/python3.11/site-packages/helper_mod.py
mkdir -p /enconda/output
cat > /enconda/output/report.json <<JSON
{"python_path": "/opt/venv/bin/python", "python_version": "3.11", "torch_version": "2.4.0",
 "cuda_available": true, "gpu_count": 1, "ddp_expected_ok": null, "env_tool": "venv",
 "env_name": "venv", "notes": ""}
JSON
"""


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.usefixtures("base_image")
def test_c0_counts_the_missing_module_and_c5_catches_false_claims(
    pytester: pytest.Pytester,
) -> None:
    write_research_case(pytester.path, "noreport")  # the readme agent installs nothing
    write_research_case(pytester.path, "nopath", setup=LYING_REPORT)
    write_research_case(pytester.path, "claims", setup=FALSE_CLAIMS_REPORT)
    readme = pytester.path / "readme"
    pytester.runpytest(
        "cases/noreport", "-k", "C0 or C5", "--agent", "readme", "--run-dir", str(readme)
    )
    c0 = json.loads((readme / "cases" / "noreport" / "pyramid" / "C0.json").read_text())
    assert c0["outcome"] == "failed"
    assert c0["numbers"]["missing"] == ["helper_mod"] and c0["numbers"]["total"] == 2
    c5 = json.loads((readme / "cases" / "noreport" / "pyramid" / "C5.json").read_text())
    assert c5["outcome"] == "failed" and c5["numbers"]["report_outcome"] == "missing"

    oracle = pytester.path / "oracle"
    result = pytester.runpytest(
        "cases/nopath", "cases/claims", "-k", "C5", "--run-dir", str(oracle)
    )
    result.assert_outcomes(failed=2)
    nopath = json.loads((oracle / "cases" / "nopath" / "pyramid" / "C5.json").read_text())
    kinds = [h["kind"] for h in nopath["numbers"]["hallucinations"]]
    # The reported interpreter does not exist: a path hallucination. The environment is graded
    # with the interpreter found instead (the image's python3), which has no torch and no GPU,
    # so the report's torch version and CUDA claims are false there too.
    assert kinds[0] == "path" and {"version", "capability"} <= set(kinds), kinds
    claims = json.loads((oracle / "cases" / "claims" / "pyramid" / "C5.json").read_text())
    kinds = sorted(h["kind"] for h in claims["numbers"]["hallucinations"])
    assert "version" in kinds and "capability" in kinds  # torch claimed, CUDA claimed: neither
    summary = json.loads((oracle / "summary.json").read_text())["pyramid"]
    assert summary["C5"]["with_hallucinations"] == 2


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.usefixtures("base_image")
def test_c4_on_gloo_passes_for_the_shipped_case_and_fails_when_broken(
    pytester: pytest.Pytester,
) -> None:
    """A real torch (the CUDA build from PyPI, through the uv cache) on 2 CPU processes."""
    import shutil

    bench = Path(__file__).resolve().parents[2] / "benchmark_cases"
    shutil.copytree(bench / "repos" / "tinylm", pytester.path / "bench" / "repos" / "tinylm")
    case_dir = pytester.path / "bench" / "research" / "tinylm"
    shutil.copytree(bench / "research" / "tinylm", case_dir)
    run = pytester.path / "good"
    result = pytester.runpytest("bench", "-k", "C4 or C1", "--ddp-cpu", "--run-dir", str(run))
    result.assert_outcomes(passed=2)
    c4 = json.loads((run / "cases" / "tinylm" / "pyramid" / "C4.json").read_text())
    assert c4["numbers"]["mode"] == "cpu-gloo" and c4["numbers"]["nproc"] == 2
    # Broken: the environment's torch removed after setup.
    setup = case_dir / "golden_setup.sh"
    setup.write_text(
        setup.read_text() + "\nrm -rf /data/project/.venv/lib/python3.11/site-packages/torch\n"
    )
    run = pytester.path / "broken"
    result = pytester.runpytest("bench", "-k", "C4", "--ddp-cpu", "--run-dir", str(run))
    result.assert_outcomes(failed=1)


GPU_PROBE = """
import pytest

@pytest.mark.gpu
def test_needs_a_gpu(enconda_env):
    assert enconda_env.run("nvidia-smi -L", gpus=0).ok
"""


@pytest.mark.skipif(host_gpu_count() > 0, reason="checks the skip on a host without a GPU")
def test_gpu_marker_skips_with_the_reason_where_no_gpu_is_present(
    pytester: pytest.Pytester,
) -> None:
    # A plain test outside any benchmark run.
    pytester.makepyfile("import pytest\n\n@pytest.mark.gpu\ndef test_x():\n    assert False\n")
    plain = pytester.runpytest("-rs")
    plain.assert_outcomes(skipped=1)
    plain.stdout.fnmatch_lines(["*no GPU on this host (nvidia-smi lists none)*"])
    # A user's probe in a case folder, through the host backend (no Docker).
    case_dir = write_research_case(pytester.path, "alpha", probes={"probe_gpu.py": GPU_PROBE})
    report = pytester.path / "report.json"
    report.write_text(json.dumps({"python_path": sys.executable, "env_tool": "pip"}))
    probe = pytester.runpytest(
        "cases", "-k", "needs_a_gpu", "-rs", "--python", sys.executable,
        "--repo", str(case_dir / "repo"), "--report", str(report),
        "--run-dir", str(pytester.path / "run"),
    )  # fmt: skip
    probe.assert_outcomes(skipped=1)
    probe.stdout.fnmatch_lines(["*no GPU on this host*gpu marker needs one*"])
