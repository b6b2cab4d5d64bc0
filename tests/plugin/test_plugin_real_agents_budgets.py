"""zero-shot and command agents, and budget overruns, end to end on small cases in real
containers; models are a scripted OpenAI-compatible server on 127.0.0.1 reached by litellm."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from casefactory import write_case
from scripted_llm import ScriptedServer, completion, prompt_text, step_of, tool_call

from pytest_enconda.records import RunDir

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("base_image")]

SECRET = "sk-enconda-test-secret-9191"
DIAG = {
    "detected_errors": [
        {
            "error_type": "E4",
            "error_description": "the README has an E4 error in `pip install foo`",
            "fix_suggestion": "pip install foo-e4",
        }
    ]
}


def outcomes(run_dir: Path) -> dict[tuple[str, str], str]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {(row["case"], row["item"]): row["outcome"] for row in rows}


def messages(run_dir: Path) -> dict[tuple[str, str], str]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    return {(row["case"], row["item"]): row["message"] for row in rows}


def outcome_of(run_dir: Path, case_id: str) -> dict:
    return json.loads((run_dir / "cases" / case_id / "agent" / "outcome.json").read_text())


def outcome_path(run_dir: Path, case_id: str) -> Path | None:
    path = run_dir / "cases" / case_id / "agent" / "outcome.json"
    return path if path.is_file() else None


def leftover_containers(run_dir: Path) -> list[str]:
    out = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=io.enconda.run={RunDir(run_dir).run_id}"],
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def case_in(request: dict) -> str:
    text = prompt_text(request)
    return text.split("# Task ", 1)[1].split()[0]


# ----------------------------------------------------------------------------- zero-shot

ZERO_SHOT_ANSWERS = {
    "good": f"Two blocks.\n```JSON\n{json.dumps(DIAG)}\n```\nThen:\n```Bash\ntouch ok\n```\n",
    "nofence": f"The errors: {json.dumps(DIAG['detected_errors'])}. I cannot write a script.",
    "badjson": '```json\n{"detected_errors": [\n  {"error_type": "E4",}\n]}\n```\n'
    "```sh\ntouch ok\n```",
    "prose": "Sorry, I am not sure what to do here.",
}


@pytest.mark.slow
def test_zero_shot_parses_answers_and_fails_what_is_missing(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    for case_id in ZERO_SHOT_ANSWERS:
        write_case(pytester.path, case_id)

    def answer(request: dict) -> tuple[int, dict]:
        case_id = case_in(request)
        return 200, completion(ZERO_SHOT_ANSWERS[case_id], 500 + len(case_id), 50)

    llm_server.responder = answer
    run_dir = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "zero-shot",
        "--model",
        "scripted",
        "--api-base",
        llm_server.api_base,
        "--run-dir",
        str(run_dir),
        "-k",
        "execution or error_types",
    )
    got = outcomes(run_dir)
    why = messages(run_dir)
    assert got == {
        ("good", "execution"): "passed",
        ("good", "error_types"): "passed",
        ("nofence", "execution"): "failed",
        ("nofence", "error_types"): "passed",
        ("badjson", "execution"): "passed",
        ("badjson", "error_types"): "failed",
        ("prose", "execution"): "failed",
        ("prose", "error_types"): "failed",
    }, result.stdout.str()[-3000:]
    assert (
        "no setup script: the response has no ```bash (or sh/shell) block"
        in why[("nofence", "execution")]
    )
    assert "the response's ```json block: line 2 column" in why[("badjson", "error_types")]
    assert "no ```json block and no JSON object" in why[("prose", "error_types")]
    # One call per case, with the file tree, the README and the base environment.
    assert len(llm_server.requests) == 4
    prompt = prompt_text(llm_server.requests[0])
    assert (
        "hello.txt" in prompt and "OS: Debian GNU/Linux 12" in prompt and "uv: available" in prompt
    )
    assert "tools" not in llm_server.requests[0]
    # The raw response is kept; never a placeholder script.
    prose = outcome_of(run_dir, "prose")
    assert prose["setup_script"] == ""
    assert (run_dir / "cases" / "prose" / "agent" / "response.md").read_text() == (
        ZERO_SHOT_ANSWERS["prose"]
    )
    assert "Sorry, I am not sure" in prose["message"]
    usage = json.loads((run_dir / "summary.json").read_text())["agent_usage"]
    assert usage["prompt_tokens"] == llm_server.usage_served["prompt_tokens"]
    assert usage["completion_tokens"] == 4 * 50 and usage["calls"] == 4
    assert leftover_containers(run_dir) == []


# ----------------------------------------------------------------------------- command

HOST_AGENT = """#!/usr/bin/env bash
set -eu
env | grep '^ENCONDA_' | sort > "$RECORD"
echo "host sees key: ${OPENAI_API_KEY:-none}" >> "$RECORD"
head -c 200 "$ENCONDA_PROMPT_FILE" > "$RECORD.prompt"
docker exec -w "$ENCONDA_REPO_DIR" "$ENCONDA_CONTAINER_ID" bash -c '
  cat > /enconda/output/diagnosis.json <<JSON
DIAGNOSIS
JSON
  printf "touch ok\\n" > /enconda/output/setup.sh'
echo "agent done for $ENCONDA_CASE_ID"
"""

IN_CONTAINER = (
    "env | sort > /enconda/output/env.txt; pwd >> /enconda/output/env.txt; "
    "head -c 100 \"$ENCONDA_PROMPT_FILE\" >> /enconda/output/env.txt; printf 'touch ok\\n' > "
    "/enconda/output/setup.sh; echo '[]' > /enconda/output/diagnosis.json; echo in-container"
)


@pytest.mark.slow
def test_command_agent_on_the_host_and_inside_the_container(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    write_case(pytester.path, "cmd")
    agent = pytester.path / "agent.sh"
    agent.write_text(HOST_AGENT.replace("DIAGNOSIS", json.dumps(DIAG)))
    agent.chmod(0o755)
    record = pytester.path / "record.txt"
    monkeypatch.setenv("RECORD", str(record))
    run_dir = pytester.path / "host"
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "command",
        "--agent-option",
        f"command={agent}",
        "--run-dir",
        str(run_dir),
        "-k",
        "execution or error_types",
    )
    result.assert_outcomes(passed=2)
    seen = record.read_text()
    assert "ENCONDA_CASE_ID=cmd" in seen and "ENCONDA_REPO_DIR=/data/project" in seen
    assert "ENCONDA_OUTPUT_DIR=/enconda/output" in seen and "ENCONDA_SUITE=diagnosis" in seen
    assert "ENCONDA_README=README.md" in seen and "ENCONDA_CONTAINER_ID=" in seen
    assert f"host sees key: {SECRET}" in seen  # the user's CLI runs in the user's environment
    assert "autonomous software engineer" in Path(f"{record}.prompt").read_text()
    steps = [
        json.loads(line)
        for line in (run_dir / "cases" / "cmd" / "agent" / "trajectory.jsonl")
        .read_text()
        .splitlines()
    ]
    assert steps[0]["exit_code"] == 0 and "agent done for cmd" in steps[0]["output"]

    run_dir = pytester.path / "inside"
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "command",
        "--agent-option",
        f"command={IN_CONTAINER}",
        "--agent-option",
        "in_container=true",
        "--run-dir",
        str(run_dir),
        "-k",
        "execution or error_types",
    )
    # An empty diagnosis for a case with one E4 error: error_types fails, execution passes.
    assert outcomes(run_dir) == {("cmd", "execution"): "passed", ("cmd", "error_types"): "failed"}
    env = (run_dir / "cases" / "cmd" / "agent" / "output" / "env.txt").read_text()
    assert "ENCONDA_CASE_ID=cmd" in env and "/data/project" in env
    assert "ENCONDA_PROMPT_FILE=/enconda/input/prompt.md" in env and "autonomous" in env
    assert SECRET not in env and "OPENAI_API_KEY" not in env and "RECORD=" not in env
    assert leftover_containers(run_dir) == []


def test_command_agent_timeout_ends_cleanly(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "slow")
    run_dir = pytester.path / "run"
    started = time.monotonic()
    pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "command",
        "--agent-option",
        "command=sleep 347 & sleep 200; echo never",
        "--agent-option",
        "timeout=3",
        "--run-dir",
        str(run_dir),
        "-k",
        "execution",
    )
    # Killed, not waited for: the command alone would take 200 s (the bound leaves room for a
    # loaded machine's image and container overhead).
    assert time.monotonic() - started < 200
    outcome = outcome_of(run_dir, "slow")
    assert outcome["status"] == "timeout"
    assert outcome["message"] == "the command ran past its 3 s and was killed"
    assert outcomes(run_dir) == {("slow", "execution"): "failed"}
    assert "no setup script written" in messages(run_dir)[("slow", "execution")]
    assert leftover_containers(run_dir) == []
    # A duration no other test uses: pgrep sees every process on the host.
    assert subprocess.run(["pgrep", "-f", "sleep 347"], capture_output=True).returncode == 1


# ----------------------------------------------------------------------------- swe-agent budgets


def looping_agent(command: str, prompt_tokens: int = 300):
    """A model that never submits: it runs ``command`` forever."""

    def answer(request: dict) -> tuple[int, dict]:
        return 200, tool_call(command, "again", prompt_tokens=prompt_tokens, completion_tokens=10)

    return answer


def run_swe(pytester: pytest.Pytester, server: ScriptedServer, run_dir: Path, *extra: str):
    return pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "swe-agent",
        "--api-base",
        server.api_base,
        "--run-dir",
        str(run_dir),
        "-k",
        "execution",
        *extra,
    )


@pytest.mark.slow
def test_step_limit_ends_the_agent_and_grading_uses_what_it_left(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    write_case(pytester.path, "steps")
    # It writes its setup script on every step, but never submits.
    llm_server.responder = looping_agent(
        "mkdir -p /enconda/output && printf 'touch ok\\n' > /enconda/output/setup.sh"
    )
    run_dir = pytester.path / "run"
    result = run_swe(
        pytester, llm_server, run_dir, "--model", "scripted", "--agent-option", "step_limit=3"
    )
    result.assert_outcomes(passed=1)
    outcome = outcome_of(run_dir, "steps")
    assert outcome["status"] == "budget_exhausted"
    assert outcome["message"] == "step limit reached (3 model calls)"
    assert len(llm_server.requests) == 3
    assert leftover_containers(run_dir) == []


@pytest.mark.slow
def test_wall_clock_limit_kills_a_long_command(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    write_case(pytester.path, "wall")
    llm_server.responder = looping_agent("sleep 120")
    run_dir = pytester.path / "run"
    started = time.monotonic()
    result = run_swe(
        pytester, llm_server, run_dir, "--model", "scripted", "--agent-option", "wall_seconds=4"
    )
    # Cut, not waited for: the command alone takes 120 s.
    assert time.monotonic() - started < 120
    result.assert_outcomes(failed=1)
    outcome = outcome_of(run_dir, "wall")
    assert outcome["status"] == "timeout" and outcome["message"] == "wall-clock limit reached (4 s)"
    step = outcome["trajectory"][0]
    assert step["timed_out"] is True and step["duration"] < 15
    assert "no setup script written" in messages(run_dir)[("wall", "execution")]
    assert leftover_containers(run_dir) == []


@pytest.mark.slow
def test_cost_limit_per_case_with_a_priced_model(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    write_case(pytester.path, "cost")
    # 100k prompt tokens of gpt-4o-mini at litellm's bundled price: about $0.015 a call.
    llm_server.responder = looping_agent("true", prompt_tokens=100_000)
    run_dir = pytester.path / "run"
    run_swe(
        pytester,
        llm_server,
        run_dir,
        "--model",
        "gpt-4o-mini",
        "--agent-option",
        "cost_limit=0.02",
    )
    outcome = outcome_of(run_dir, "cost")
    assert outcome["status"] == "budget_exhausted"
    assert outcome["message"].startswith("cost limit reached ($0.03")
    assert len(llm_server.requests) == 2
    assert outcome["usage"]["cost_unknown"] is False and outcome["usage"]["cost_usd"] > 0.02
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["agent_usage"]["cost_usd"] == pytest.approx(outcome["usage"]["cost_usd"])


@pytest.mark.slow
def test_run_wide_max_cost_holds_across_xdist_workers(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    for index in range(4):
        write_case(pytester.path, f"spend{index}")
    llm_server.responder = looping_agent("sleep 1", prompt_tokens=100_000)
    run_dir = pytester.path / "run"
    result = run_swe(
        pytester, llm_server, run_dir, "--model", "gpt-4o-mini", "--max-cost", "0.04", "-n", "2"
    )
    ledger = json.loads((run_dir / "cost-ledger.json").read_text())
    calls = len(llm_server.requests)
    # Each call costs ~$0.015 and reserves the costliest call so far before it starts: no call
    # starts that would pass $0.04 at that size. Only the workers' first calls have no
    # estimate yet, so the overshoot is at most one call.
    assert ledger["calls"] == calls and 2 <= calls <= 3, result.stdout.str()[-2000:]
    assert ledger["spent_usd"] < 0.04 + 0.016 and ledger["reserved_usd"] == 0
    # The cases in flight were cut and the others never started: all are not finished (skipped,
    # counted apart), none failed, and no outcome was kept for any.
    assert not [case for case in (f"spend{i}" for i in range(4)) if outcome_path(run_dir, case)]
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(row.get("not_finished") for row in rows), rows
    why = [row["message"] for row in rows]
    assert any("cut after" in message for message in why), why
    assert all("run-wide cost limit reached" in message for message in why), why
    output = result.stdout.str() + result.stderr.str()
    assert "cost ceiling reached" in output
    assert result.ret == 2 and "stopped the run short: 4 item(s) of 4 case(s)" in output
    assert leftover_containers(run_dir) == []
    # A higher ceiling: --resume runs every one of them, and the model now solves each case.
    llm_server.responder = solving_agent()
    llm_server.requests.clear()
    resumed = run_swe(
        pytester, llm_server, run_dir, "--model", "gpt-4o-mini", "--max-cost", "5", "-n", "2",
        "--resume", str(run_dir),
    )  # fmt: skip
    assert resumed.ret == 0, resumed.stdout.str()[-2000:]
    assert set(outcomes(run_dir).values()) == {"passed"} and len(outcomes(run_dir)) == 4
    assert len(llm_server.requests) == 8
    assert leftover_containers(run_dir) == []


def solving_agent():
    """A model that writes a setup script that passes the case's test, then submits."""

    def answer(request: dict) -> tuple[int, dict]:
        if step_of(request) == 0:
            command = "mkdir -p /enconda/output && printf 'touch ok\\n' > /enconda/output/setup.sh"
        else:
            command = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
        return 200, tool_call(command, call_id=f"call_{step_of(request)}", prompt_tokens=1000)

    return answer


def test_malformed_and_missing_output_files_fail_what_they_feed(pytester: pytest.Pytester) -> None:
    write_case(pytester.path, "broken")
    run_dir = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "command",
        "--agent-option",
        'command=printf \'{\\n "detected_errors": [\\n  {"error_type": "E4",,}\\n\' '
        "> /enconda/output/diagnosis.json",
        "--agent-option",
        "in_container=true",
        "--run-dir",
        str(run_dir),
    )
    result.assert_outcomes(failed=4)
    why = messages(run_dir)
    assert why[("broken", "execution")].endswith(
        "no setup script written (/enconda/output/setup.sh is missing)"
    )
    for item in ("error_types", "descriptions", "fixes"):
        assert "diagnosis.json: line 3 column 23: Expecting property name" in why[("broken", item)]
    assert leftover_containers(run_dir) == []


@pytest.mark.slow
def test_a_failing_model_is_a_harness_error_not_the_agents_failure(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    write_case(pytester.path, "denied")
    llm_server.default = (401, {"error": {"message": "invalid api key", "type": "auth"}})
    run_dir = pytester.path / "run"
    result = run_swe(pytester, llm_server, run_dir, "--model", "scripted")
    result.assert_outcomes(errors=1)
    # No outcome is saved: --resume runs the agent again.
    assert outcome_path(run_dir, "denied") is None
    assert len(llm_server.requests) == 1  # an authentication error is not retried
    why = messages(run_dir)[("denied", "execution")]
    assert "model scripted unavailable: HTTP 401" in why and "invalid api key" in why
    assert leftover_containers(run_dir) == []


@pytest.mark.slow
def test_zero_shot_server_errors_are_retried_then_a_harness_error(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    write_case(pytester.path, "down")
    llm_server.default = (500, b"upstream exploded")
    run_dir = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        "cases",
        "--agent",
        "zero-shot",
        "--model",
        "scripted",
        "--api-base",
        llm_server.api_base,
        "--agent-option",
        "retries=1",
        "--agent-option",
        "backoff=0",
        "--run-dir",
        str(run_dir),
        "-k",
        "execution or error_types",
    )
    result.assert_outcomes(errors=2)
    assert len(llm_server.requests) == 2
    assert outcome_path(run_dir, "down") is None
    assert "model scripted unavailable: HTTP 500" in messages(run_dir)[("down", "execution")]
    assert leftover_containers(run_dir) == []
