"""Whose fault a bad input is (issue 43): a case file's fault is refused at load, an agent's
absurd self-report is the agent's failure (C5), never the harness's error. C5 on the fake
backend: its boxes are folders on this host, no Docker."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.errors import CaseFormatError
from pytest_enconda.grading.pyramid import SelfReportError, load_self_report
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.settings import EncondaSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))
from casefactory import write_research_case

VENV = (
    "python3 -m venv --without-pip .venv\n"
    "source .venv/bin/activate\n"
    "printf 'VALUE = 1\\n' > \"$(echo .venv/lib/python3*/site-packages)/helper_mod.py\"\n"
)
REPORT = {
    "python_version": None,
    "torch_version": None,
    "cuda_available": None,
    "gpu_count": None,
    "ddp_expected_ok": None,
    "env_tool": "venv",
    "env_name": None,
    "notes": None,
}


def _reporting(python_path: str) -> str:
    """The venv's setup, then a report claiming ``python_path``. The fake backend rewrites the
    box's paths in a script to where that box lies on this host, and C5 looks in another box:
    the report's ``/data/project`` is spelled at run time (``@D@``), so it stays the box's."""
    spelled = python_path.replace("/data/project", "@D@/project")
    report = json.dumps({**REPORT, "python_path": spelled})
    return VENV + (
        "mkdir -p /enconda/output\nd=/data\n"
        f"cat > /enconda/output/report.in <<'EOF'\n{report}\nEOF\n"
        'sed "s|@D@|$d|g" /enconda/output/report.in > /enconda/output/report.json\n'
    )


def _stages(tmp_path: Path, setup: str, *names: str) -> dict[str, object]:
    case_dir = write_research_case(tmp_path, "tiny", setup=setup)
    case = load_case(case_dir / "case.toml", [tmp_path / "cases"])
    pipeline = CasePipeline(
        EncondaSettings(run_dir=tmp_path / "run"),
        progress=lambda _line: None,
        backend=FakeBackend(tmp_path / "fake"),
    )
    return {name: pipeline.stage(case, name) for name in names}


def test_the_venvs_interpreter_reported_passes_c5(tmp_path: Path) -> None:
    c5 = _stages(tmp_path, _reporting("/data/project/.venv/bin/python"), "C5")["C5"]
    assert c5.outcome == "passed", c5.message  # type: ignore[attr-defined]


def test_a_folder_reported_as_the_interpreter_fails_c5(tmp_path: Path) -> None:
    c5 = _stages(tmp_path, _reporting("/data/project/.venv"), "C5")["C5"]
    assert c5.outcome == "failed"  # type: ignore[attr-defined]
    assert "/data/project/.venv is not a file" in c5.message  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "python_path", ["/x" * 50_000, "/usr/bin/python3\x00", "/usr/bin/py\nthon"], ids=range(3)
)
def test_an_absurd_python_path_is_the_agents_failure_not_a_harness_error(
    tmp_path: Path, python_path: str
) -> None:
    stages = _stages(tmp_path, _reporting(python_path), "C1", "C5")
    c1, c5 = stages["C1"], stages["C5"]
    # The interpreter search passes the claim over: C1 grades the venv, and runs.
    assert c1.outcome == "passed", c1.message  # type: ignore[attr-defined]
    assert c5.outcome == "failed"  # type: ignore[attr-defined]
    assert "invalid self-report: python_path" in c5.message  # type: ignore[attr-defined]


def test_self_report_fields_are_bounded() -> None:
    for field, value in [
        ("python_path", "/p" * 3000),
        ("python_version", "3" * 2000),
        ("env_name", "a\x00b"),
        ("notes", "n" * 100_000),
        ("installed_packages", [{"name": "x"}] * 20_000),
        ("gpu_count", 10**12),
    ]:
        report = {**REPORT, "python_path": "/usr/bin/python3", field: value}
        with pytest.raises(SelfReportError, match=field):
            load_self_report(report)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("test_command", "pytest\\u0000 -x"),
        ("test_command", "pytest \\u001b[31m"),
        ("test_command", "pytest \\u007f"),
        ("test_command", "p" * 20_000),
        ("title", "t" * 5_000),
        ("readme", "README\\u0000.md"),
        ("id", "a" * 2_000),
    ],
    ids=["nul", "escape", "del", "long command", "long title", "nul path", "long id"],
)
def test_a_case_file_fault_is_refused_at_load_naming_the_field(
    tmp_path: Path, field: str, value: str
) -> None:
    case_dir = tmp_path / "case"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "README.md").write_text("# r\n")
    fields = {
        "id": "c",
        "suite": "diagnosis",
        "readme": "README.md",
        "test_command": "pytest",
        field: value,
    }
    lines = [f'{key} = "{text}"' for key, text in fields.items()]
    lines += ["[repository]", 'kind = "folder"', 'path = "repo"']
    (case_dir / "case.toml").write_text("\n".join(lines) + "\n")
    with pytest.raises(CaseFormatError) as refused:
        load_case(case_dir / "case.toml")
    assert [name for name, _ in refused.value.problems] == [field]
    assert str(case_dir / "case.toml") in str(refused.value)
