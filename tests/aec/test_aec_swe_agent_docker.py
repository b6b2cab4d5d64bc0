"""``--agent=swe-agent`` on AEC cases, end to end in Docker: a scripted OpenAI-compatible server
plays the agent (through litellm's real HTTP path) and the trajectory judge. One agent leaves a
real test command, the other one whose output is prose: both are recorded and never graded, the
case's reference command is, and its log decides both cases."""

from __future__ import annotations

import json

import pytest
from scripted_llm import ScriptedServer, completion, prompt_text, step_of, tool_call

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.usefixtures("base_image")]

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
CASE = """id = "{id}"
suite = "aec"
[repository]
kind = "folder"
path = "../repo"
[aec]
language = "python"
[aec.reference]
test_command = "python3 -m unittest -v test_calc"
pass_set = ["test_calc.T.test_add"]
"""


def leave(setup: str, test_command: str) -> str:
    return (
        "mkdir -p /enconda/output && printf '%s\\n' "
        f"{json.dumps(setup)} > /enconda/output/setup.sh && printf '%s\\n' "
        f"{json.dumps(test_command)} > /enconda/output/test_command"
    )


SCRIPTS = {
    "honest": [
        "cat README.md",
        "python3 -m unittest -v",
        leave("true", "python3 -m unittest -v"),
        SUBMIT,
    ],
    "prose": ["ls", leave("true", "echo all tests passed"), SUBMIT],
}


def responder(request: dict) -> tuple[int, dict]:
    text = prompt_text(request)
    if "You judge whether an AI agent succeeded" in text:
        verdict = {"success": False, "confidence": 0.9, "reason": "no test ran, only an echo"}
        return 200, completion(json.dumps(verdict), 200, 30)
    case = next(case for case in SCRIPTS if f"# Task {case}" in text)
    step = step_of(request)
    commands = SCRIPTS[case]
    return 200, tool_call(commands[min(step, len(commands) - 1)], call_id=f"c_{case}_{step}")


def test_swe_agent_on_aec_cases(
    pytester: pytest.Pytester, llm_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENCONDA_CACHE_DIR", str(pytester.path / "cache"))
    llm_server.responder = responder
    bench = pytester.path / "bench"
    (bench / "repo").mkdir(parents=True)
    (bench / "repo" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (bench / "repo" / "test_calc.py").write_text(
        "import unittest\n\nimport calc\n\n\nclass T(unittest.TestCase):\n"
        "    def test_add(self):\n        self.assertEqual(calc.add(1, 2), 3)\n"
    )
    (bench / "repo" / "README.md").write_text("# calc\n\n```bash\npython3 -m unittest -v\n```\n")
    for case_id in SCRIPTS:
        (bench / case_id).mkdir()
        (bench / case_id / "case.toml").write_text(CASE.format(id=case_id))
    # A memory file: one triple from another repository, one from this case's own ("repo").
    from pytest_enconda.memory.store import MemoryStore, Provenance, Triple

    memory = pytester.path / "memory.db"
    with MemoryStore(memory) as store:
        for action, repository in (
            ("apt-get install -y python3-venv", "elsewhere/widget"),
            ("pip install own-repository-fix", "../repo"),
        ):
            # Worded so the one template query this README-only repository's profile gives
            # ("Python build tools command not found") retrieves it.
            problem = "`python3 -m venv` fails: Python build tools missing, command not found"
            triple = Triple(problem, "install it", action, "command not found")
            store.add(triple, Provenance("c", "r", "heuristic", "", repository))
    run_dir = pytester.path / "run"
    pytester.runpytest_subprocess(
        str(bench), "--agent", "swe-agent", "--model", "scripted-agent",
        "--agent-option", f"memory={memory}", "--agent-option", "memory_queries=templates",
        "--api-base", llm_server.api_base, "--judge", "llm:judge-model",
        "--judge-api-base", llm_server.api_base, "--run-dir", str(run_dir),
        "-p", "no:cacheprovider",
    )  # fmt: skip
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    found = {(row["case"], row["item"]): row["outcome"] for row in rows}
    assert found[("honest", "aec_tests_run")] == "passed"
    assert found[("honest", "aec_pass_set")] == "passed"
    assert found[("honest", "aec_success")] == "passed"
    # The agent's echo is recorded, never run: the reference command grades this case too.
    assert found[("prose", "aec_tests_run")] == "passed"
    assert found[("prose", "aec_success")] == "passed"
    prose = json.loads((run_dir / "cases" / "prose" / "aec.json").read_text())
    assert prose["agent_test_command"] == "echo all tests passed"
    assert prose["command_source"] == "reference" and prose["decided_by"] == "log"
    honest = json.loads((run_dir / "cases" / "honest" / "aec.json").read_text())
    # The judge read the trajectory though the log decided: no cheating sign in it.
    assert honest["decided_by"] == "log" and honest["judge"] is not None
    assert honest["cheat_findings"] == []
    assert honest["command_source"] == "reference" and honest["tokens"] > 0
    assert honest["agent_test_command"] == "python3 -m unittest -v"
    first = prompt_text(llm_server.requests[0])
    assert "{{Codebase_Profile}}" not in first and "CI configuration" in first
    assert "test_command" in first and "diagnosis.json" not in first
    # The profile's AEC JSON and the other repository's triple, never the case's own.
    assert '"language": {' in first and '"system_dependencies": {' in first
    assert "apt-get install -y python3-venv" in first and "own-repository-fix" not in first
    given = json.loads((run_dir / "cases" / "honest" / "agent" / "memory.json").read_text())
    assert [hit["action"] for hit in given["given"]] == ["apt-get install -y python3-venv"]
    summary = json.loads((run_dir / "summary.json").read_text())["aec"]
    assert summary["overall"]["decided_by"] == {"log": 2, "judge": 0, "veto": 0, "neither": 0}
