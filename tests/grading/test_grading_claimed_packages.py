"""C5's package claims: every package the self-report names is checked (issue 19)."""

from __future__ import annotations

from typing import Any

from pytest_enconda.grading.pyramid import (
    Observations,
    ReportRead,
    audit_report,
    load_self_report,
)

BASE: dict[str, Any] = {
    "python_path": "/opt/venv/bin/python",
    "python_version": None,
    "torch_version": None,
    "cuda_available": None,
    "gpu_count": None,
    "ddp_expected_ok": None,
    "env_tool": "venv",
    "env_name": "venv",
    "notes": None,
}


def _audit(packages: list[dict[str, Any]], installed: dict[str, str] | None) -> Any:
    report = load_self_report({**BASE, "installed_packages": packages})
    seen = Observations(
        python_exists=True, python_executable=True, python_runs=True, packages=installed
    )
    read = ReportRead(outcome="ok", report=report)
    return audit_report(read, seen, c2_passed=None, c4_outcome=None)


def test_a_claimed_package_that_is_not_installed_is_a_hallucination() -> None:
    audit = _audit([{"name": "flash_attn", "version": "2.5.0"}], {"torch": "2.3.0"})
    assert [(h.kind, h.message) for h in audit.hallucinations] == [
        ("version", "flash_attn is not installed")
    ]


def test_names_compare_as_pep_503_and_versions_as_pep_440() -> None:
    audit = _audit(
        [{"name": "Flash_Attn", "version": "2.5"}, {"package": "einops", "version": "0.8"}],
        {"flash-attn": "2.5.0", "einops": "0.7.0"},
    )
    assert [h.message for h in audit.hallucinations] == ["reported einops 0.8, installed is 0.7.0"]


def test_packages_not_listed_are_inconclusive_not_hallucinated() -> None:
    audit = _audit([{"name": "einops"}], None)
    assert audit.hallucinations == []
    assert audit.inconclusive == ["installed_packages: the interpreter's packages were not listed"]
