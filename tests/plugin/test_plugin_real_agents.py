"""``--agent=swe-agent`` end to end: mini-swe-agent's loop, litellm's real HTTP path to a scripted
OpenAI-compatible server on 127.0.0.1, real commands in a real task container of a shipped case,
graded like any agent. No API key, no mocks.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from scripted_llm import ScriptedServer, prompt_text, step_of, tool_call

from pytest_enconda.records import RunDir

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("base_image")]

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-enconda-test-secret-4242"
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"

E1_DIAGNOSIS = {
    "detected_errors": [
        {
            "error_type": "E1",
            "error_description": "The installation command installs only the `test` extra and "
            "omits the `yaml` extra, so PyYAML is missing and the YAML tests fail.",
            "fix_suggestion": 'pip install -e ".[yaml,test]"',
        }
    ]
}
E2_DIAGNOSIS = {
    "detected_errors": [
        {
            "error_type": "E2",
            "error_description": "The install command `pip install -e .[yaml, test]` has a space "
            "inside the unquoted extras list, so the shell splits it and pip rejects it.",
            "fix_suggestion": 'pip install -e ".[yaml,test]"',
        }
    ]
}
SETUP = '#!/usr/bin/env bash\nset -euo pipefail\npip install -e ".[yaml,test]"\n'


def write_outputs(diagnosis: dict, setup: str = SETUP) -> str:
    return (
        "mkdir -p /enconda/output && cat > /enconda/output/diagnosis.json <<'JSON'\n"
        f"{json.dumps(diagnosis, indent=2)}\nJSON\n"
        f"cat > /enconda/output/setup.sh <<'SH'\n{setup}SH\n"
    )


# The scripted model of each case: reads the README, looks around (environment and what the
# container holds), runs the README's failing install, repairs it, writes the outputs, submits.
SCRIPTS = {
    "confmerge-e1": [
        "cat README.md",
        "env | sort; echo '--- /enconda:'; ls -A /enconda; echo '--- golden files:'; "
        "find / -xdev \\( -name 'golden*' -o -name 'probe_*.py' -o -name case.toml \\) "
        "-not -path '/proc/*' 2>/dev/null; echo '--- end'",
        'pip install -q -e ".[test]" && python -m pytest -q tests',
        'pip install -q -e ".[yaml,test]" && python -m pytest -q tests',
        write_outputs(E1_DIAGNOSIS),
        SUBMIT,
    ],
    "confmerge-e2-e4-e8": [
        "cat README.md",
        "pip install -q -e .[yaml, test]",
        'pip install -q -e ".[yaml,test]" && python -m pytest -q tests',
        write_outputs(E2_DIAGNOSIS),
        SUBMIT,
    ],
}


def scripted_agent(request: dict) -> tuple[int, dict]:
    text = prompt_text(request)
    case = next(case for case in sorted(SCRIPTS, key=len, reverse=True) if f"# Task {case}" in text)
    step = step_of(request)
    commands = SCRIPTS[case]
    command = commands[min(step, len(commands) - 1)]
    # Different token counts per step, so the sum in summary.json means something.
    return 200, tool_call(
        command,
        thought=f"step {step} of {case}",
        prompt_tokens=1000 + 100 * step,
        completion_tokens=30 + step,
        call_id=f"call_{case}_{step}",
    )


def copy_cases(root: Path, *case_ids: str) -> Path:
    """The shipped cases and their repository, in the layout they were shipped in."""
    bench = root / "bench"
    for case_id in case_ids:
        shutil.copytree(
            ROOT / "benchmark_cases" / "diagnosis" / case_id, bench / "diagnosis" / case_id
        )
    shutil.copytree(ROOT / "benchmark_cases" / "repos" / "confmerge", bench / "repos" / "confmerge")
    return bench


def outcomes(run_dir: Path) -> dict[tuple[str, str], str]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {(row["case"], row["item"]): row["outcome"] for row in rows}


def leftover_containers(run_dir: Path) -> list[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=io.enconda.run={RunDir(run_dir).run_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def trajectory(run_dir: Path, case_id: str) -> list[dict]:
    path = run_dir / "cases" / case_id / "agent" / "trajectory.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def run_swe_agent(pytester: pytest.Pytester, server: ScriptedServer, run_dir: Path, *extra: str):
    return pytester.runpytest_subprocess(
        "bench/diagnosis",
        "--allow-path",
        "bench/repos",
        "--agent",
        "swe-agent",
        "--model",
        "scripted-agent",
        "--api-base",
        server.api_base,
        "--run-dir",
        str(run_dir),
        "-p",
        "no:cacheprovider",
        *extra,
    )


@pytest.mark.slow
def test_swe_agent_repairs_a_shipped_case_and_is_graded(
    pytester: pytest.Pytester, llm_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("ENCONDA_TEST_HOST_ONLY", "host-variable-value")
    llm_server.responder = scripted_agent
    copy_cases(pytester.path, "confmerge-e1")
    run_dir = pytester.path / "run"
    result = run_swe_agent(pytester, llm_server, run_dir)
    text = result.stdout.str()
    result.assert_outcomes(passed=4)
    assert outcomes(run_dir) == {
        ("confmerge-e1", item): "passed"
        for item in ("execution", "error_types", "descriptions", "fixes")
    }

    # Every request went through litellm's OpenAI client with the bash tool.
    assert len(llm_server.requests) == len(SCRIPTS["confmerge-e1"])
    assert all(r["tools"][0]["function"]["name"] == "bash" for r in llm_server.requests)
    assert llm_server.requests[0]["temperature"] == 0
    # Our prompt, with the codebase profile filled in.
    first = prompt_text(llm_server.requests[0])
    assert "CI configuration" in first and "Do not modify the repository's tests" in first
    assert 'install command suggested by the manifests: pip install -e ".[test]"' in first
    assert "optional extras: test, yaml" in first

    steps = trajectory(run_dir, "confmerge-e1")
    assert [s["command"] for s in steps] == SCRIPTS["confmerge-e1"]
    assert [s["exit_code"] for s in steps] == [0, 0, 1, 0, 0, 0]
    assert "YAML support needs PyYAML" in steps[2]["output"]  # the failing install, for real
    assert "passed" in steps[3]["output"]
    # Isolation, seen from inside the container: no API key, no host variable, no golden file.
    look = steps[1]["output"]
    assert SECRET not in look and "OPENAI_API_KEY" not in look
    assert "ENCONDA_TEST_HOST_ONLY" not in look
    assert look.split("--- /enconda:")[1].split("---")[0].split() == ["output"]
    assert look.split("--- golden files:")[1].split("--- end")[0].strip() == ""

    outcome = json.loads(
        (run_dir / "cases" / "confmerge-e1" / "agent" / "outcome.json").read_text()
    )
    assert outcome["status"] == "completed" and outcome["message"] == "submitted"
    assert outcome["setup_script"] == SETUP
    assert outcome["output_problems"] == {}
    served = llm_server.usage_served
    assert (
        outcome["usage"]["prompt_tokens"]
        == served["prompt_tokens"]
        == sum(1000 + 100 * i for i in range(6))
    )
    # Tokens in summary.json equal what the server reported; a local model has no price.
    summary = json.loads((run_dir / "summary.json").read_text())
    usage = summary["agent_usage"]
    assert usage["prompt_tokens"] == served["prompt_tokens"]
    assert usage["completion_tokens"] == served["completion_tokens"]
    assert usage["total_tokens"] == served["total_tokens"]
    assert usage["calls"] == 6 and usage["cost_usd"] is None
    assert usage["cases_with_unknown_cost"] == 1
    assert f"= {served['total_tokens']}, cost unknown" in text
    assert (run_dir / "cases" / "confmerge-e1" / "agent" / "profile.json").is_file()
    info = json.loads((run_dir / "run.json").read_text())
    assert info["agent"]["model"] == "scripted-agent"
    assert info["agent"]["config"]["mini_swe_agent"] == "2.4.6"
    assert info["agent"]["config"]["cost_limit"] == 3.0
    assert leftover_containers(run_dir) == []

    # --resume never re-runs a finished agent.
    before = len(llm_server.requests)
    resumed = run_swe_agent(pytester, llm_server, run_dir, "--resume", str(run_dir))
    resumed.assert_outcomes(passed=4)
    assert len(llm_server.requests) == before


@pytest.mark.slow
def test_swe_agent_under_xdist_two_cases(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    llm_server.responder = scripted_agent
    copy_cases(pytester.path, "confmerge-e1", "confmerge-e2-e4-e8")
    run_dir = pytester.path / "run"
    result = run_swe_agent(pytester, llm_server, run_dir, "-n", "2")
    got = outcomes(run_dir)
    assert got[("confmerge-e1", "execution")] == "passed", result.stdout.str()[-3000:]
    assert got[("confmerge-e2-e4-e8", "execution")] == "passed"
    assert got[("confmerge-e1", "error_types")] == "passed"
    # Found one of three errors: the type multiset differs, so error_types fails.
    assert got[("confmerge-e2-e4-e8", "error_types")] == "failed"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["agent_usage"]["cases"] == 2
    assert summary["agent_usage"]["prompt_tokens"] == llm_server.usage_served["prompt_tokens"]
    assert summary["agent_usage"]["calls"] == len(llm_server.requests) == 6 + 5
    assert leftover_containers(run_dir) == []


def test_swe_agent_without_model_is_a_usage_error(pytester: pytest.Pytester) -> None:
    copy_cases(pytester.path, "confmerge-e1")
    result = pytester.runpytest_subprocess(
        "bench/diagnosis", "--allow-path", "bench/repos", "--agent", "swe-agent"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--agent=swe-agent needs --model MODEL" in result.stderr.str()
    assert "collected" not in result.stdout.str()
    bad = pytester.runpytest_subprocess(
        "bench/diagnosis",
        "--allow-path",
        "bench/repos",
        "--agent",
        "swe-agent",
        "--model",
        "m",
        "--agent-option",
        "step_limit=zero",
    )
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    assert "--agent-option step_limit=...: Input should be a valid integer" in bad.stderr.str()
