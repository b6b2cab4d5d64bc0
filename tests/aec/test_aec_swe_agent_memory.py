"""swe-agent on an AEC case with a memory file, through the case pipeline on the fake backend and
a local scripted OpenAI-compatible server (litellm's real HTTP path): the request the model gets
carries the codebase profile's AEC JSON and the triples retrieved from memory, with the case's
own repository's triples withheld (the leakage guard), and the case records what it was given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scripted_llm import ScriptedServer, prompt_text, step_of, tool_call

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.memory.store import MemoryStore, Provenance, Triple
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.settings import EncondaSettings

pytest.importorskip("minisweagent")

PYPROJECT = """\
[project]
name = "calcpkg"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["attrs"]
[project.optional-dependencies]
test = ["pytest"]
"""
CASE = """\
id = "calc-aec"
suite = "aec"
[repository]
kind = "folder"
path = "../repos/calcpkg"
[aec]
language = "python"
[budgets]
agent_seconds = 60
setup_seconds = 30
test_seconds = 30
"""
WRITE = (
    "mkdir -p /enconda/output && echo 'true' > /enconda/output/setup.sh && "
    "echo 'python3 -m pytest -rA' > /enconda/output/test_command"
)


def _memory(path: Path) -> None:
    with MemoryStore(path) as store:
        store.add(
            Triple(
                "`pip install -e .[test]` fails: No module named pytest",
                "Root cause: the test extra was not installed. Fix: install it",
                'pip install -e ".[test]"',
                "ModuleNotFoundError: No module named 'pytest'",
            ),
            Provenance("other-e1", "r1", "heuristic", "", "../../repos/otherpkg"),
        )
        # Learnt on this case's own repository (a fork's URL names the same project).
        store.add(
            Triple(
                "`python -m pytest` fails: No module named attrs",
                "Root cause: a dependency was not installed. Fix: pip install attrs",
                "pip install attrs-from-own-repository",
                "ModuleNotFoundError: No module named 'attrs'",
            ),
            Provenance("own", "r0", "heuristic", "", "https://github.com/someone/calcpkg.git"),
        )


def test_the_aec_request_carries_the_profile_json_and_guarded_memory(tmp_path: Path) -> None:
    repo = tmp_path / "bench" / "repos" / "calcpkg"
    (repo / "tests").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "tests" / "test_calc.py").write_text("def test_one():\n    assert 1\n")
    (repo / "README.md").write_text("# calcpkg\n\n```bash\npip install -e .\n```\n")
    case_dir = tmp_path / "bench" / "calc-aec"
    case_dir.mkdir()
    (case_dir / "case.toml").write_text(CASE)
    case = load_case(case_dir / "case.toml", [tmp_path / "bench"])
    memory = tmp_path / "memory.db"
    _memory(memory)

    server = ScriptedServer()
    server.responder = lambda request: (
        200,
        tool_call(WRITE if step_of(request) == 0 else "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
                  call_id=f"c{step_of(request)}"),
    )  # fmt: skip
    server.start()
    try:
        pipeline = CasePipeline(
            EncondaSettings(
                run_dir=tmp_path / "run",
                agent="swe-agent",
                model="scripted",
                api_base=server.api_base,
                # The template queries (tests/memory/test_memory_aec_queries.py: the model's).
                agent_options={"memory": str(memory), "memory_queries": "templates"},
            ),
            progress=[].append,
            backend=FakeBackend(tmp_path / "fake"),
        )
        outcome = pipeline.agent_outcome(case)
    finally:
        server.stop()
    assert outcome.status == "completed", outcome.message
    assert outcome.test_command == "python3 -m pytest -rA"
    text = prompt_text(server.requests[0])
    # The profile slot is the profile prompt's JSON.
    block = text.split("## Codebase profile", 1)[1].split("```json\n", 1)[1].split("\n```", 1)[0]
    profile = json.loads(block)
    assert profile["language"] == {"name": "Python", "version_constraint": ">=3.10"}
    assert profile["package_manager"]["config_file"] == "pyproject.toml"
    assert profile["test_framework"] == ["pytest"]
    # The prior-knowledge slot: the other repository's triple, never the case's own.
    knowledge = text.split("## Prior knowledge", 1)[1].split("## What to leave behind", 1)[0]
    assert 'Action: pip install -e ".[test]"' in knowledge
    assert "attrs-from-own-repository" not in text
    record = json.loads((tmp_path / "run" / "cases" / "calc-aec" / "agent" / "memory.json")
                        .read_text())  # fmt: skip
    assert [hit["action"] for hit in record["given"]] == ['pip install -e ".[test]"']
    assert record["excluded_projects"] == ["calcpkg"] and record["memory"] == str(memory)
