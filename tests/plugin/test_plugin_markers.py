"""Markers select benchmark items: each item carries its task kind's marker (read from the kind
record) and ``gpu`` where its stage or aspect needs one, under ``--strict-markers`` (issue 44).

Collection only (``--co``): nothing runs, so no Docker is needed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from casefactory import write_case, write_research_case

pytest_plugins = ["pytester"]

AEC_CASE = """\
id = "tiny-aec"
suite = "aec"
golden_setup = "setup.sh"

[repository]
kind = "folder"
path = "repo"

[aec]
language = "python"
"""

STAGE_PROBES = {
    "C0": "test_c0_imports_resolve",
    "C1": "test_c1_entry_point_on_cpu",
    "C2": "test_c2_gpu_visible",
    "C3": "test_c3_entry_point_on_one_gpu",
    "C4": "test_c4_distributed_run",
    "C5": "test_c5_report_matches_reality",
}
DIAGNOSIS_ITEMS = {"diag::error_types", "diag::descriptions", "diag::fixes", "diag::execution"}
AEC_ITEMS = {"tiny-aec::aec_tests_run", "tiny-aec::aec_pass_set", "tiny-aec::aec_success"}


def write_aec_case(root: Path) -> None:
    case_dir = root / "cases" / "tiny-aec"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "hello.txt").write_text("hi\n")
    (case_dir / "setup.sh").write_text("true\n")
    (case_dir / "case.toml").write_text(AEC_CASE)


def selected(pytester: pytest.Pytester, expression: str) -> set[str]:
    """The items ``-m expression`` selects, as ``case::item`` (probes by their stage)."""
    result = pytester.runpytest_subprocess(
        "cases", "--co", "-q", "--strict-markers", "-m", expression
    )
    assert result.ret == 0, result.stdout.str()
    probes = {probe: stage for stage, probe in STAGE_PROBES.items()}
    found = set()
    for line in result.stdout.lines:
        if "::" not in line or " " in line.strip():
            continue
        case = Path(line.split("::")[0]).parent.name
        name = line.rsplit("::", 1)[1]
        found.add(f"{case}::{probes.get(name, name)}")
    return found


@pytest.fixture
def benchmark(pytester: pytest.Pytester) -> pytest.Pytester:
    write_case(pytester.path, "diag")
    write_research_case(pytester.path, "tiny")
    write_aec_case(pytester.path)
    return pytester


def test_each_item_carries_its_kinds_marker(benchmark: pytest.Pytester) -> None:
    # Before: a research case's items are its probes, and they carried ``pyramid`` alone.
    assert selected(benchmark, "research") == {f"tiny::{stage}" for stage in STAGE_PROBES}
    assert selected(benchmark, "diagnosis") == DIAGNOSIS_ITEMS
    # Nothing in a case is slow by its records today: ``not slow`` deselects none of them.
    assert selected(benchmark, "aec and not slow") == AEC_ITEMS


def test_gpu_selects_the_stages_that_declare_gpus(benchmark: pytest.Pytester) -> None:
    assert selected(benchmark, "gpu") == {"tiny::C2", "tiny::C3", "tiny::C4"}
    cpu_stages = {"tiny::C0", "tiny::C1", "tiny::C5"}
    assert selected(benchmark, "not gpu") == cpu_stages | DIAGNOSIS_ITEMS | AEC_ITEMS


def test_the_markers_are_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--markers")
    for marker in ("diagnosis", "research", "aec", "gpu", "slow"):
        result.stdout.fnmatch_lines([f"@pytest.mark.{marker}:*"])
    # ``slow`` says what it selects among benchmark items (issue 48: it said "takes minutes",
    # and -m slow selected nothing).
    result.stdout.fnmatch_lines(["@pytest.mark.slow:*no benchmark item carries it*"])


def test_slow_is_no_benchmark_marker(benchmark: pytest.Pytester) -> None:
    """``-m slow`` selects no benchmark item (as its description says), under --strict-markers,
    and ``not slow`` keeps every item."""
    result = benchmark.runpytest_subprocess("cases", "--co", "-q", "--strict-markers", "-m", "slow")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()
    assert "13 deselected" in result.stdout.str()


def test_a_plugin_kinds_marker_is_registered_when_its_case_is_collected(
    pytester: pytest.Pytester,
) -> None:
    """A dormant run registers the built-in kinds' markers only; a kind a conftest.py adds gets
    its marker registered as its first case is collected, so ``--strict-markers`` accepts it."""
    pytester.makeconftest(TOY_KIND_CONFTEST)
    case_dir = pytester.path / "cases" / "toy-1"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "hello.txt").write_text("hi\n")
    (case_dir / "case.toml").write_text(TOY_CASE)
    result = pytester.runpytest_subprocess("cases", "--co", "-q", "--strict-markers", "-m", "toy")
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    result.stdout.fnmatch_lines(["*toy-1/case.toml::toy_aspect", "1 test collected*"])
    dormant = pytester.runpytest_subprocess("--markers")
    assert "@pytest.mark.toy:" in dormant.stdout.str()  # --markers lists every kind


TOY_KIND_CONFTEST = """
from pytest_enconda.aspects import ASPECTS, Aspect
from pytest_enconda.grading.verdict import ItemVerdict
from pytest_enconda.kinds import TASK_KINDS, TaskKind

TASK_KINDS.register(TaskKind("toy", "a toy kind", needs_readme=False, outputs=("setup.sh",)))
ASPECTS.register(
    Aspect(
        "toy_aspect",
        lambda ctx: ItemVerdict(outcome="passed", message="ok"),
        task_kind="toy",
    )
)
"""
TOY_CASE = """\
id = "toy-1"
suite = "toy"

[repository]
kind = "folder"
path = "repo"
"""


SHIPPED = Path(__file__).resolve().parents[2] / "benchmark_cases"


def _shipped(expression: str | None) -> list[str]:
    """Node ids ``pytest benchmark_cases --co`` collects (with ``-m expression``)."""
    import subprocess
    import sys

    marks = ["-m", expression] if expression is not None else ["-m", ""]
    out = subprocess.run(
        [sys.executable, "-m", "pytest", str(SHIPPED), "--co", "-q", "--strict-markers",
         "-p", "no:cacheprovider", *marks],
        capture_output=True, text=True, check=False, cwd=SHIPPED.parent,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if "::" in line and " " not in line]


@pytest.mark.slow  # five collections of the shipped cases: ~30 s on a loaded machine
def test_the_documented_selections_over_the_shipped_cases() -> None:
    """README and docs/reference/pytest-options.md: ``-m research``, ``-m gpu`` and
    ``-m "aec and not slow"`` (issue 48: each selected nothing)."""
    every = _shipped(None)

    def suite(node: str) -> str:
        return Path(node.split("::")[0]).relative_to(SHIPPED.name).parts[0]

    for name in ("research", "diagnosis"):
        chosen = _shipped(name)
        assert chosen and chosen == [node for node in every if suite(node) == name]
    aec = _shipped("aec and not slow")
    assert aec and aec == [node for node in every if suite(node) == "aec"]
    gpu = _shipped("gpu")
    stages = ("test_c2_gpu_visible", "test_c3_entry_point_on_one_gpu", "test_c4_distributed_run")
    research_cases = {node.split("::")[0] for node in every if suite(node) == "research"}
    assert gpu == [node for node in every if node.endswith(stages)]
    assert len(gpu) == 3 * len(research_cases)
