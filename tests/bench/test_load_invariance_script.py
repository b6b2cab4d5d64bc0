"""scripts/load_invariance.py: the scripted agent's commands, its responder and the budgeted case
copies (no Docker, no pytest runs)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pytest_enconda.agents.prompts import SUBMIT
from pytest_enconda.cases.loader import load_case

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "load_invariance", ROOT / "scripts/load_invariance.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["load_invariance"] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module


def request(case_id: str, answers: int) -> dict:
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": f"# Task {case_id}\n"},
    ]
    for _ in range(answers):
        messages += [{"role": "assistant", "content": "x"}, {"role": "tool", "content": "out"}]
    return {"messages": messages}


def test_a_diagnosis_case_is_scripted_as_the_oracle_answers(
    script: ModuleType, tmp_path: Path
) -> None:
    (case,) = script.load_cases(["confmerge-e1"])
    commands = script.agent_script(case, units=2, loops=1000)
    assert commands[-1] == f"echo {SUBMIT}"
    assert all("cpu-unit-done" in command for command in commands[:2])
    # The heredocs write, in a real shell, exactly the golden setup and the golden diagnosis.
    out = tmp_path / "output"
    for command in commands[2:]:
        if command.startswith("mkdir"):
            fixed = command.replace(script.OUTPUT, str(out))
            subprocess.run(["bash", "-c", fixed], check=True)
    assert (out / "setup.sh").read_text() == case.golden_setup_text.rstrip() + "\n"
    written = json.loads((out / "diagnosis.json").read_text())["detected_errors"]
    assert [(e["error_type"], e["fix_suggestion"]) for e in written] == [
        (error.error_type, error.golden_answer) for error in case.golden.errors
    ]
    assert not (out / "test_command").exists()


def test_an_aec_case_writes_its_reference_test_command(script: ModuleType) -> None:
    (case,) = script.load_cases(["aec-python-pyunits"])
    commands = script.agent_script(case)
    assert case.spec.aec.reference.test_command in commands[-2]
    assert "test_command" in commands[-2] and not any("diagnosis.json" in c for c in commands)


def test_a_cpu_unit_runs_and_says_so(script: ModuleType) -> None:
    done = subprocess.run(["bash", "-c", script.cpu_unit(1000)], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "cpu-unit-done"


def test_the_responder_answers_step_k_with_command_k_then_submits(script: ModuleType) -> None:
    responder = script.Responder({"a": ["first", "second", "last"]})
    answers = [responder(request("a", k)) for k in range(5)]
    commands = [
        json.loads(body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])[
            "command"
        ]
        for _, body in answers
    ]
    assert commands == ["first", "second", "last", "last", "last"]
    assert answers[0][1]["usage"]["prompt_tokens"] == script.PROMPT_TOKENS
    assert responder.calls == {"a": 5}
    status, body = responder(request("unknown", 0))
    assert status == 400 and "unknown" in body["error"]["message"]


def test_budgeted_copies_load_with_their_new_budget(script: ModuleType, tmp_path: Path) -> None:
    cases = script.load_cases(["confmerge-e1", "aec-python-pyunits"])
    copied = script.budgeted_copy(
        cases, tmp_path / "cases", {"confmerge-e1": 41, "aec-python-pyunits": 77}
    )
    loaded = {
        case.id: case
        for case in (
            load_case(path, roots=[copied]) for path in sorted(copied.glob("*/*/case.toml"))
        )
    }
    assert {cid: c.spec.budgets.agent_seconds for cid, c in loaded.items()} == {
        "confmerge-e1": 41,
        "aec-python-pyunits": 77,
    }
    # pytest collects the cases there, not the copied repositories' own tests.
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-p", "no:enconda", str(copied)],
        capture_output=True, text=True, cwd=copied,
    )  # fmt: skip
    assert collected.returncode == 5 and "error" not in collected.stdout.lower(), collected.stdout
    # Only the budget changed.
    assert loaded["confmerge-e1"].golden_setup_text == cases[0].golden_setup_text
    assert loaded["confmerge-e1"].spec.budgets.setup_seconds == cases[0].spec.budgets.setup_seconds
