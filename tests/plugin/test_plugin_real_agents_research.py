"""``--agent=swe-agent`` on research cases, end to end: a scripted OpenAI-compatible server on
127.0.0.1 through litellm's real HTTP path; the agent installs the repository in its task
container and writes its self-report; the container is frozen and the pyramid's probes grade it.

Two cases over one small repository (no torch: the pyramid's logic is the same, and C2-C4 skip
without a GPU): one agent reports honestly, the other claims CUDA and another Python version.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from scripted_llm import ScriptedServer, prompt_text, step_of, tool_call

from pytest_enconda.records import RunDir

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("base_image")]

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
SETUP = "#!/usr/bin/env bash\nset -euo pipefail\npip install -e .\n"
CASE = """id = "{id}"
suite = "research"
readme = "../repo/README.md"
[repository]
kind = "folder"
path = "../repo"
[research]
entry_point = "python -m tiny.train"
supports_cpu = true
supports_single_gpu = false
supports_multi_gpu = false
"""


def report_command(**overrides: object) -> str:
    """Writes report.json from what the container's interpreter says, with ``overrides``."""
    fields = {
        "torch_version": None,
        "cuda_available": False,
        "gpu_count": 0,
        "ddp_expected_ok": None,
        "env_tool": "pip",
        "env_name": None,
        "notes": "system interpreter, package installed in editable mode",
        **overrides,
    }
    code = (
        "import json, platform, sys; "
        f"fields = json.loads({json.dumps(json.dumps(fields))}); "
        "report = {'python_path': sys.executable, 'python_version': platform.python_version()}; "
        "report.update(fields); "
        "json.dump(report, open('/enconda/output/report.json', 'w'))"
    )
    return f"mkdir -p /enconda/output && python -c {json.dumps(code)}"


SCRIPTS = {
    "honest": [
        "cat README.md",
        "pip install -q -e . && python -m tiny.train",
        f"cat > /enconda/output/setup.sh <<'SH'\n{SETUP}SH\n{report_command()}",
        SUBMIT,
    ],
    "boastful": [
        "pip install -q -e .",
        f"mkdir -p /enconda/output && cat > /enconda/output/setup.sh <<'SH'\n{SETUP}SH\n"
        + report_command(cuda_available=True, gpu_count=2, python_version="3.9.7"),
        SUBMIT,
    ],
}


def scripted_agent(request: dict) -> tuple[int, dict]:
    text = prompt_text(request)
    case = next(case for case in SCRIPTS if f"# Task {case}" in text)
    step = step_of(request)
    commands = SCRIPTS[case]
    return 200, tool_call(
        commands[min(step, len(commands) - 1)],
        thought=f"step {step} of {case}",
        prompt_tokens=500,
        completion_tokens=25,
        call_id=f"call_{case}_{step}",
    )


def make_bench(root: Path) -> Path:
    repo = root / "bench" / "repo"
    (repo / "tiny").mkdir(parents=True)
    (repo / "tiny" / "__init__.py").write_text("")
    (repo / "tiny" / "train.py").write_text(
        "import json\nimport tiny\n\nprint(json.dumps({'loss': 0.5}))\n"
    )
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "tiny"\nversion = "0.1"\n[build-system]\n'
        'requires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (repo / "README.md").write_text("# tiny\n\n```bash\npip install -e .\n```\n")
    for case_id in SCRIPTS:
        (root / "bench" / case_id).mkdir()
        (root / "bench" / case_id / "case.toml").write_text(CASE.format(id=case_id))
    return root / "bench"


@pytest.mark.slow
def test_swe_agent_on_research_cases_is_graded_by_the_pyramid(
    pytester: pytest.Pytester, llm_server: ScriptedServer
) -> None:
    llm_server.responder = scripted_agent
    bench = make_bench(pytester.path)
    run_dir = pytester.path / "run"
    result = pytester.runpytest_subprocess(
        str(bench), "--agent", "swe-agent", "--model", "scripted-agent",
        "--api-base", llm_server.api_base, "--run-dir", str(run_dir), "-p", "no:cacheprovider",
    )  # fmt: skip
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    found = {(row["case"], row["stage"]): row for row in rows}
    for case_id in SCRIPTS:
        # The installed package's imports resolve and the entry point runs: the frozen
        # container is what the agent left, not a replay of its script.
        assert found[(case_id, "C0")]["outcome"] == "passed", found[(case_id, "C0")]
        assert found[(case_id, "C1")]["outcome"] == "passed", found[(case_id, "C1")]
        for stage in ("C2", "C3", "C4"):
            assert found[(case_id, stage)]["outcome"] == "skipped"
    assert found[("honest", "C5")]["outcome"] == "passed", found[("honest", "C5")]
    boast = found[("boastful", "C5")]
    assert boast["outcome"] == "failed"
    assert "capability" in boast["message"] and "version" in boast["message"]
    result.assert_outcomes(passed=5, failed=1, skipped=6)

    # The prompt asked for the research outputs, not a diagnosis.
    first = prompt_text(llm_server.requests[0])
    assert "report.json" in first and "diagnosis.json" not in first
    state = json.loads((run_dir / "cases" / "honest" / "environment" / "state.json").read_text())
    assert state["source"] == "agent-container"
    pyramid = json.loads((run_dir / "summary.json").read_text())["pyramid"]
    assert (pyramid["C1"]["passed"], pyramid["C1"]["applicable"]) == (2, 2)
    assert pyramid["C5"]["capability"] >= 1 and pyramid["C5"]["version"] == 1
    assert pyramid["C5"]["with_hallucinations"] == 1
    assert pyramid["efficiency"]["tokens"]["mean"] == pytest.approx((4 * 525 + 3 * 525) / 2)
    # The frozen container holds what the agent did; its script was never replayed.
    assert not (run_dir / "cases" / "honest" / "environment" / "setup.log").exists()
    report = json.loads((run_dir / "cases" / "honest" / "environment" / "report.json").read_text())
    assert report["env_tool"] == "pip" and report["cuda_available"] is False
    leftovers = subprocess.run(
        ["docker", "ps", "-aq", "--filter", f"label=io.enconda.run={RunDir(run_dir).run_id}"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert leftovers == []
