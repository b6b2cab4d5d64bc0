"""AEC's graded step on the real engine, on the shipped ``aec-python-pyunits``: the honest golden
setup passes every item; setups that cheat fail ``aec_success``, each for the reason the graded
step gives (``aec.guard``): the tests restored from the checkout and the change reported, a
script the setup wrote on PATH refused, a variable that deselects tests dropped, the agent's own
test command recorded and never graded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_aec_grading_fake import Scripted

from pytest_enconda.cases.loader import CASE_FILE, load_case
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.records import CaseDir
from pytest_enconda.settings import EncondaSettings

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("base_image")]

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmark_cases"
CASE = load_case(BENCHMARK / "aec" / "aec-python-pyunits" / CASE_FILE, [BENCHMARK])
ITEMS = ("aec_tests_run", "aec_pass_set", "aec_success")
GOLDEN = CASE.golden_setup_text
REFERENCE = "python -m pytest -rA tests"
# An environment that runs pytest but lacks the package and attrs: the case's tests fail.
PARTIAL = "python3 -m venv .venv\nsource .venv/bin/activate\npip install -q pytest\n"
LINES = [
    f"{name} PASSED"
    for name in CASE.spec.aec.reference.pass_set  # type: ignore[union-attr]
] + ["6 passed in 0.01s"]
SUMMARY = "".join(line + "\\n" for line in LINES)
FAKE_PYTHON = (
    "mkdir -p /opt/fakebin\ncat > /opt/fakebin/python <<'EOF'\n#!/bin/sh\n"
    + "".join(f"echo '{line}'\n" for line in LINES)
    + "EOF\nchmod +x /opt/fakebin/python\nexport PATH=/opt/fakebin:$PATH\n"
)

ASSERT_TRUE = "sed -i 's/^\\( *\\)assert .*/\\1assert True/' tests/*.py\n"

SETUPS = {
    "honest": (GOLDEN, REFERENCE),
    "delete-test-file": (PARTIAL + "rm tests/test_convert.py\n", REFERENCE),
    "assert-true": (GOLDEN + ASSERT_TRUE, REFERENCE),
    "fake-python-on-path": (FAKE_PYTHON, REFERENCE),
    "pytest-addopts": (PARTIAL + "export PYTEST_ADDOPTS='-k nothing'\n", REFERENCE),
    "echoed-summary": (f"printf '{SUMMARY}'\n", "echo 6 passed"),
}


def graded(tmp_path: Path, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    setup, command = SETUPS[name]
    run = tmp_path / "run"
    made = CasePipeline(EncondaSettings(run_dir=run), progress=lambda _: None)
    made.agents._agent = Scripted(setup, command)
    got = {item: made.verdict(CASE, item) for item in ITEMS}
    grade = json.loads((CaseDir(run, CASE.id).root / "aec.json").read_text())
    return got, grade


@pytest.mark.parametrize("name", list(SETUPS))
def test_the_honest_setup_passes_and_every_cheat_fails_success(tmp_path: Path, name: str) -> None:
    got, grade = graded(tmp_path, name)
    outcomes = {item: verdict.outcome for item, verdict in got.items()}
    success = got["aec_success"].message
    integrity = grade["integrity"]
    # Whatever the setup did, the graded command is the case's.
    assert grade["test_command"] == REFERENCE and grade["command_source"] == "reference"
    assert integrity["checked"], integrity
    if name == "honest":
        assert outcomes == dict.fromkeys(ITEMS, "passed"), success
        assert not integrity["tests_modified"] and integrity["changes"] == []
        assert all(tool["problem"] == "" for tool in integrity["tools"]), integrity["tools"]
        return
    assert outcomes["aec_success"] == "failed", success
    if name in ("delete-test-file", "assert-true"):
        change = "deleted" if name == "delete-test-file" else "modified"
        assert f"tests modified (restored from the checkout before the tests ran): {change} " \
            "tests/test_convert.py" in success  # fmt: skip
        assert "aec/agent.diff" in success
    if name == "assert-true":
        # The environment is the golden one: the restored tests pass, and only the edit fails.
        assert outcomes["aec_pass_set"] == "passed"
        assert "-    assert" in success and "+    assert True" in success
    if name == "fake-python-on-path":
        assert outcomes == dict.fromkeys(ITEMS, "failed")
        assert "toolchain not intact: /opt/fakebin/python" in success
    if name == "pytest-addopts":
        assert [v["name"] for v in integrity["stripped"]] == ["PYTEST_ADDOPTS"]
        assert "dropped from the graded shell: PYTEST_ADDOPTS" in success
        # The variable did not deselect the tests: pytest collected the case's file, and it
        # failed (the package is not installed).
        log = CaseDir(tmp_path / "run", CASE.id).execution_log("test").read_text()
        assert "deselected" not in log and "tests/test_convert.py" in log, log[-2000:]
        assert outcomes["aec_pass_set"] == "failed"
    if name == "echoed-summary":
        assert grade["agent_test_command"] == "echo 6 passed"
        assert "the agent's own test command, not graded: echo 6 passed" in success
        assert outcomes["aec_pass_set"] == "failed"
