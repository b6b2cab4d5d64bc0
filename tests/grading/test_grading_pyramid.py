"""C5 rules and the pyramid summary (pure functions; reports as real files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_enconda.grading.pyramid import (
    REPORT_FIELDS,
    Observations,
    SelfReportError,
    audit,
    audit_report,
    load_self_report,
    read_self_report,
    versions_match,
)
from pytest_enconda.report.pyramid import pyramid_summary, pyramid_table

SCHEMA = Path(__file__).resolve().parents[3] / "shared/data/researchenvbench/report_schema.json"

GOOD = {
    "python_path": "/data/project/.venv/bin/python",
    "python_version": "3.11.2",
    "torch_version": "2.4.0+cu124",
    "cuda_available": False,
    "gpu_count": 0,
    "ddp_expected_ok": True,
    "env_tool": "uv",
    "env_name": ".venv",
    "notes": "ran train.py",
    "extra_key": {"kept": True},
}
SEEN = Observations(
    python_exists=True,
    python_executable=True,
    python_runs=True,
    python_version="3.11.2",
    framework_importable=True,
    framework_version="2.4.0+cu124",
    cuda_available=False,
    device_count=0,
)


def report(**changes: Any):
    return load_self_report({**GOOD, **changes})


def kinds(found) -> list[tuple[str, str]]:
    return [(h.kind, h.field) for h in found]


def test_an_honest_report_has_no_hallucinations() -> None:
    assert audit(report(), SEEN, c2_passed=None, c4_outcome="passed") == []
    assert report().model_extra == {"extra_key": {"kept": True}}


@pytest.mark.shared_data
def test_model_keys_are_the_schemas() -> None:
    if not SCHEMA.is_file():
        pytest.skip(f"{SCHEMA} absent (shared data not mounted)")
    schema = json.loads(SCHEMA.read_text())
    assert set(schema["properties"]) == set(REPORT_FIELDS)
    assert set(schema["properties"]["env_tool"]["enum"]) == {
        "conda",
        "uv",
        "pip",
        "poetry",
        "venv",
        "none",
    }


@pytest.mark.parametrize(
    ("seen", "needle"),
    [
        ({"python_exists": False, "python_executable": False, "python_runs": False}, "not exist"),
        ({"python_executable": False, "python_runs": False}, "not executable"),
        ({"python_runs": False, "python_version": None}, "does not run"),
    ],
)
def test_path(seen: dict[str, Any], needle: str) -> None:
    found = audit(report(), SEEN.model_copy(update=seen), c2_passed=None, c4_outcome=None)
    assert kinds(found)[0] == ("path", "python_path")
    assert needle in found[0].message


@pytest.mark.parametrize(
    ("claimed", "observed", "normalized", "exact"),
    [
        ("3.11", "3.11.7", True, False),
        ("Python 3.11.7", "3.11.7", True, False),
        ("3.11.7", "3.11.7", True, True),
        ("3.11.8", "3.11.7", False, False),
        ("3.1", "3.11.7", False, False),
        ("3.10", "3.11.7", False, False),
        ("2.4.0", "2.4.0+cu124", True, False),
        ("2.4.0+cu124", "2.4.0", True, False),
        ("2.4.0+cu124", "2.4.0+cpu", False, False),
        ("2.4", "2.4.0", True, False),
        ("2.4.0", "2.4", True, False),
        ("2.5.0rc1", "2.5.0", False, False),
        ("2.5", "2.5.0rc1", True, False),
        ("latest", "2.4.0", False, False),
    ],
)
def test_version_comparison(claimed: str, observed: str, normalized: bool, exact: bool) -> None:
    assert versions_match(claimed, observed) is normalized
    assert versions_match(claimed, observed, exact=True) is exact


def test_false_versions() -> None:
    found = audit(
        report(python_version="3.12", torch_version="2.15.0"),
        SEEN,
        c2_passed=None,
        c4_outcome="passed",
    )
    assert kinds(found) == [("version", "python_version"), ("version", "torch_version")]
    # The paper's exact-string rule: "3.11" is not "3.11.2".
    assert audit(report(python_version="3.11"), SEEN, c2_passed=None, c4_outcome="passed") == []
    exact = audit(
        report(python_version="3.11"),
        SEEN,
        c2_passed=None,
        c4_outcome="passed",
        exact_versions=True,
    )
    assert kinds(exact) == [("version", "python_version")]


def test_torch_claimed_but_not_importable() -> None:
    seen = SEEN.model_copy(
        update={"framework_importable": False, "framework_version": None, "cuda_available": None}
    )
    found = audit(
        report(cuda_available=None, gpu_count=None), seen, c2_passed=None, c4_outcome="passed"
    )
    assert kinds(found) == [("version", "torch_version")]
    assert "not importable" in found[0].message


def test_cuda_claimed_on_a_gpu_less_host() -> None:
    """C2 is skipped without a GPU; the interpreter's own answer still contradicts the claim."""
    found = audit(report(cuda_available=True), SEEN, c2_passed=None, c4_outcome="passed")
    assert kinds(found) == [("capability", "cuda_available")]
    failed_c2 = audit(
        report(cuda_available=True),
        SEEN.model_copy(update={"cuda_available": None}),
        c2_passed=False,
        c4_outcome="passed",
    )
    assert "C2 failed" in failed_c2[0].message


def test_gpu_count_over_claim_counts_under_claim_does_not() -> None:
    seen = SEEN.model_copy(update={"cuda_available": True, "device_count": 2})
    assert kinds(audit(report(gpu_count=4), seen, c2_passed=True, c4_outcome="passed")) == [
        ("capability", "gpu_count")
    ]
    assert audit(report(gpu_count=1), seen, c2_passed=True, c4_outcome="passed") == []


def test_ddp_claim_against_c4() -> None:
    failed = audit(report(), SEEN, c2_passed=None, c4_outcome="failed")
    assert kinds(failed) == [("capability", "ddp_expected_ok")]
    for outcome in ("skipped", "error", None):
        read = read_self_report_from(report())
        result = audit_report(read, SEEN, c2_passed=None, c4_outcome=outcome)
        assert result.hallucinations == [] and result.passed
        assert any(entry.startswith("ddp_expected_ok") for entry in result.inconclusive)


def test_under_claiming_is_not_a_hallucination() -> None:
    seen = SEEN.model_copy(update={"cuda_available": True, "device_count": 8})
    nothing = report(
        python_version=None,
        torch_version=None,
        cuda_available=None,
        gpu_count=None,
        ddp_expected_ok=None,
    )
    assert audit(nothing, seen, c2_passed=True, c4_outcome="failed") == []
    modest = report(cuda_available=False, ddp_expected_ok=False, gpu_count=0)
    assert audit(modest, seen, c2_passed=True, c4_outcome="passed") == []


def read_self_report_from(parsed):
    from pytest_enconda.grading.pyramid import ReportRead

    return ReportRead(outcome="ok", report=parsed)


def test_missing_and_invalid_reports(tmp_path: Path) -> None:
    absent = read_self_report(tmp_path / "report.json")
    assert absent.outcome == "missing"
    assert audit_report(absent, SEEN, c2_passed=None, c4_outcome=None).outcome == "missing"

    path = tmp_path / "report.json"
    path.write_text(json.dumps({**GOOD, "gpu_count": "2", "env_tool": "mamba"} | {"notes": None}))
    del_notes = {k: v for k, v in GOOD.items() if k != "env_name"}
    invalid = read_self_report(path)
    assert invalid.outcome == "invalid"
    assert str(path) in (invalid.problem or "")
    assert "gpu_count: expected a valid integer, got '2'" in (invalid.problem or "")
    assert "env_tool: expected 'conda', 'uv', 'pip', 'poetry', 'venv' or 'none'" in (
        invalid.problem or ""
    )
    assert audit_report(invalid, SEEN, c2_passed=None, c4_outcome=None).outcome == "invalid"

    path.write_text(json.dumps(del_notes))
    with pytest.raises(SelfReportError, match=r"env_name: required \(use null"):
        load_self_report(path)
    path.write_text("{not json")
    with pytest.raises(SelfReportError, match="<file>: expected JSON"):
        load_self_report(path)
    path.write_text("[]")
    with pytest.raises(SelfReportError, match="<root>: expected an object"):
        load_self_report(path)


def test_observations_from_python_facts() -> None:
    facts = {
        "python_version": "3.11.2",
        "error": None,
        "framework": {
            "name": "torch",
            "importable": True,
            "version": "2.4.0",
            "cuda_available": False,
            "device_count": 0,
        },
    }
    seen = Observations.from_facts(facts, exists=True, executable=True)
    assert (seen.python_runs, seen.framework_importable, seen.device_count) == (True, True, 0)
    dead = Observations.from_facts(None, exists=True, executable=True)
    assert not dead.python_runs
    assert kinds(audit(report(), dead, c2_passed=None, c4_outcome=None))[0] == (
        "path",
        "python_path",
    )


ROWS = [
    {"case": "a", "item": "probe_pyramid.py::test_c0_imports_resolve", "level": "C0",
     "outcome": "failed", "numbers": {"missing_count": 2, "total": 10}},
    {"case": "b", "item": "x", "stage": "C0", "outcome": "passed",
     "numbers": {"missing_count": 0, "total": 5}},
    {"case": "c", "item": "x", "stage": "C0", "outcome": "error", "numbers": {}},
    {"case": "a", "item": "probe_pyramid.py::test_c1_entry_point_on_cpu", "outcome": "passed"},
    {"case": "b", "item": "x", "stage": "C1", "outcome": "failed"},
    {"case": "c", "item": "x", "stage": "C1", "outcome": "error"},
    {"case": "a", "item": "x", "stage": "C2", "outcome": "skipped"},
    {"case": "a", "item": "x", "stage": "C4", "outcome": "passed", "numbers": {"ddp_mode": "cpu"}},
    {"case": "b", "item": "x", "stage": "C4", "outcome": "skipped"},
    {"case": "a", "item": "x", "stage": "C5", "outcome": "failed",
     "numbers": {"hallucinations": [{"kind": "capability"}, {"kind": "version"}],
                 "inconclusive": ["gpu_count: ..."]}},
    {"case": "b", "item": "x", "stage": "C5", "outcome": "passed",
     "numbers": {"hallucinations": []}},
    {"case": "c", "item": "x", "stage": "C5", "outcome": "failed",
     "numbers": {"report_outcome": "missing"}},
    {"case": "a", "item": "execution", "level": 0, "outcome": "passed",
     "numbers": {"time_to_ready_s": 100.0, "tokens": 2000, "cost_usd": 0.5,
                 "env_size_bytes": 5e9}},
    {"case": "b", "item": "x", "outcome": "passed", "time_to_ready_s": 300},
]  # fmt: skip


def test_pyramid_summary() -> None:
    summary = pyramid_summary(ROWS)
    assert summary["cases"] == 3
    c0 = summary["C0"]
    assert (c0["missing"], c0["total"], c0["measured"], c0["errors"]) == (2, 15, 2, 1)
    assert c0["per_case"]["a"] == {"missing": 2, "total": 10}
    assert c0["percent_missing"] == 13.3
    assert summary["C1"] | {} == {
        "passed": 1, "failed": 1, "error": 1, "skipped": 0, "applicable": 2, "percent": 50.0,
    }  # fmt: skip
    assert (summary["C2"]["applicable"], summary["C2"]["percent"]) == (0, None)
    assert (summary["C4"]["passed"], summary["C4"]["applicable"], summary["C4"]["cpu_mode"]) == (
        1,
        1,
        1,
    )
    c5 = summary["C5"]
    assert (c5["capability"], c5["version"], c5["path"], c5["hallucinations"]) == (1, 1, 0, 2)
    assert (c5["audited"], c5["with_hallucinations"], c5["reports_missing"]) == (2, 1, 1)
    assert c5["inconclusive"] == 1
    efficiency = summary["efficiency"]
    assert efficiency["time_to_ready_s"] == {"mean": 200.0, "cases": 2}
    assert efficiency["tokens"] == {"mean": 2000.0, "cases": 1}
    assert efficiency["prefix_bytes"] == {"mean": None, "cases": 0}
    table = pyramid_table(summary)
    assert (
        "| 2/15 (1 err) | 1/2 (50.0%) (1 err) | 0/0 | 0/0 | 1/1 (100.0%) [1 on cpu-gloo] | "
        "0/1/1 (+1 missing" in table
    )
    assert "200 s" in table and "5.00 GB" in table
