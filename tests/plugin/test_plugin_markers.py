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
