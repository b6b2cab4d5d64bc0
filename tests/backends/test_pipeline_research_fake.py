"""The research pyramid on the fake backend: which interpreter is graded, and what the stages
say about it (issue 19). No Docker: the fake backend's boxes are folders on this host."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.probing.interpreter import candidates, environments_in
from pytest_enconda.records import CaseDir
from pytest_enconda.settings import EncondaSettings

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))
from casefactory import write_research_case

# The README's literal steps: a venv in the repository, the dependency installed into it only.
VENV_IN_REPO = (
    "python3 -m venv --without-pip .venv\n"
    "source .venv/bin/activate\n"
    "printf 'VALUE = 1\\n' > \"$(echo .venv/lib/python3*/site-packages)/helper_mod.py\"\n"
)


def _research_case(root: Path, setup: str, **options: Any) -> Case:
    case_dir = write_research_case(root, "tiny", setup=setup, **options)
    return load_case(case_dir / "case.toml", [root / "cases"])


def _pipeline(tmp_path: Path, messages: list[str] | None = None) -> CasePipeline:
    sink = messages if messages is not None else []
    return CasePipeline(
        EncondaSettings(run_dir=tmp_path / "run"),
        progress=sink.append,
        backend=FakeBackend(tmp_path / "fake"),
    )


def test_environments_named_by_a_script_last_one_first() -> None:
    script = (
        "python3 -m venv --prompt x /opt/first && uv venv\n"
        "conda create -y -n work python=3.11; source ~/envs/last/bin/activate # done\n"
    )
    found = [c.expression for c in environments_in(script, "setup-script")]
    assert found == [
        '"$HOME"/envs/last/bin/python',
        '"$(conda info --base 2>/dev/null || echo /opt/conda)"/envs/work/bin/python',
        "/data/project/.venv/bin/python",
        "/opt/first/bin/python",
    ]


def test_the_report_comes_first_then_the_script_then_path() -> None:
    found = candidates({"python_path": "/opt/venv/bin/python"}, "virtualenv env\n", "")
    assert [c.found_by for c in found] == ["report", "setup-script", "path", "path"]


def test_a_venv_the_agent_made_without_a_report_is_graded(tmp_path: Path) -> None:
    case = _research_case(tmp_path, VENV_IN_REPO)
    messages: list[str] = []
    pipeline = _pipeline(tmp_path, messages)
    c1 = pipeline.stage(case, "C1")
    assert c1.outcome == "passed", c1.message
    assert "graded python: /data/project/.venv/bin/python" in c1.message
    assert "venv activated by 'source .venv/bin/activate'" in c1.message
    assert c1.numbers["interpreter_found_by"] == "setup-script"
    saved = json.loads(CaseDir(tmp_path / "run", "tiny").interpreter.read_text())
    assert saved["path"] == "/data/project/.venv/bin/python"
    assert any("graded python" in message for message in messages)


def test_a_reported_path_that_does_not_exist_is_passed_over(tmp_path: Path) -> None:
    report = (
        "mkdir -p /enconda/output\n"
        'echo \'{"python_path": "/nonexistent/bin/python"}\' > /enconda/output/report.json\n'
    )
    case = _research_case(tmp_path, VENV_IN_REPO + report)
    pipeline = _pipeline(tmp_path)
    graded = pipeline.interpreter(case)
    assert graded.found_by == "setup-script"
    assert graded.rejected == ["report.json's python_path: /nonexistent/bin/python does not exist"]


def test_without_any_environment_the_path_python_is_graded_and_said(tmp_path: Path) -> None:
    case = _research_case(tmp_path, "true\n")
    c1 = _pipeline(tmp_path).stage(case, "C1")
    # The host's python3 lacks helper_mod: the failure names the interpreter it happened in.
    assert c1.outcome == "failed"
    assert "helper_mod" in c1.message
    assert "on the final state's PATH" in c1.message


@pytest.mark.parametrize("stage", ["C3"])
def test_a_skipped_stage_names_no_interpreter(tmp_path: Path, stage: str) -> None:
    case = _research_case(tmp_path, "true\n", research_extra="supports_single_gpu = false")
    result = _pipeline(tmp_path).stage(case, stage)
    assert result.outcome == "skipped"
    assert "graded python" not in result.message


def test_a_setup_past_its_budget_is_said_by_every_stage_and_heartbeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_enconda.pipeline as pipeline_module

    monkeypatch.setattr(pipeline_module, "HEARTBEAT_SECONDS", 0.3)
    case = _research_case(tmp_path, VENV_IN_REPO + "sleep 30\n", setup_seconds=1.5)
    messages: list[str] = []
    pipeline = _pipeline(tmp_path, messages)
    c1 = pipeline.stage(case, "C1")
    assert c1.message.startswith("setup timed out after 2 s; ")
    assert c1.numbers["setup_timed_out"] is True
    beats = [m for m in messages if "running the setup script" in m]
    assert beats and beats[0].endswith("s of its 2 s budget")


def test_the_case_section_of_the_report_names_the_interpreter_and_the_timeout(
    tmp_path: Path,
) -> None:
    from pytest_enconda.report.review import evidence_html
    from pytest_enconda.report.runrecords import load_case as load_evidence

    case = _research_case(tmp_path, VENV_IN_REPO + "sleep 30\n", setup_seconds=1)
    _pipeline(tmp_path).stage(case, "C1")
    evidence = load_evidence(tmp_path / "run", "tiny")
    html = evidence_html(evidence, "C1", lambda path: str(path), stage_name="C1")
    assert "setup timed out after 1 s" in html
    assert "graded python: <code>/data/project/.venv/bin/python</code>" in html


def test_research_setups_get_a_budget_a_torch_install_fits(tmp_path: Path) -> None:
    from pytest_enconda.cases.models import RESEARCH_SETUP_SECONDS

    case_dir = write_research_case(tmp_path, "defaulted")
    toml = (case_dir / "case.toml").read_text().replace("setup_seconds = 120\n", "")
    (case_dir / "case.toml").write_text(toml)
    case = load_case(case_dir / "case.toml", [tmp_path / "cases"])
    assert case.spec.budgets.setup_seconds == RESEARCH_SETUP_SECONDS == 2400
    # A case that names its budget keeps it.
    assert _research_case(tmp_path, "true\n").spec.budgets.setup_seconds == 120


def test_c5_checks_every_package_the_report_names(tmp_path: Path) -> None:
    report = {
        "python_path": "/usr/bin/python3",
        "python_version": None,
        "torch_version": None,
        "cuda_available": None,
        "gpu_count": None,
        "ddp_expected_ok": None,
        "env_tool": "venv",
        "env_name": ".venv",
        "notes": None,
        "installed_packages": [{"name": "Made_Up-Package", "version": "1.0"}],
    }
    write_report = (
        f"mkdir -p /enconda/output\necho '{json.dumps(report)}' > /enconda/output/report.json\n"
    )
    case = _research_case(tmp_path, VENV_IN_REPO + write_report)
    c5 = _pipeline(tmp_path).stage(case, "C5")
    assert c5.outcome == "failed"
    assert "version: Made_Up-Package is not installed" in c5.message
    fields = [h["field"] for h in c5.numbers["hallucinations"]]
    assert fields == ["installed_packages[Made_Up-Package]"]
