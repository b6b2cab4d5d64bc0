"""The agent's wall clock follows this machine's load (issue 48 item 1): the case's
``agent_seconds`` x ``--budget-scale`` x the slowdown measured when the agent starts, never below
1 and capped; steps unscaled; recorded in the agent's outcome. The load is simulated by the
probe's figures (``agents.clock.probe_in_box``); one test runs the real probe in a fake box, one
under CPU burners. The agent is the ``command`` agent on the fake backend, sleeping on the host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_enconda.agents import clock
from pytest_enconda.agents.base import AgentOutcome, AgentTask
from pytest_enconda.agents.clock import MAX_FACTOR, ClockProbe, measure
from pytest_enconda.backends.fake import FakeBackend, canned
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.items import BUILD_ALLOWANCE_SECONDS, case_timeout
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.records import CaseDir
from pytest_enconda.sandbox.exec_result import ExecResult
from pytest_enconda.settings import EncondaSettings

AGENT_SECONDS = 2


def _case(root: Path, *, agent_seconds: int = AGENT_SECONDS, steps: int = 7) -> Case:
    case_dir = root / "bench" / "cases" / "toy"
    (case_dir / "repo").mkdir(parents=True)
    (case_dir / "repo" / "hello.txt").write_text("hi\n")
    (case_dir / "README.md").write_text("# toy\n\n```bash\ntouch ok\n```\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 0, "errors": []}))
    (case_dir / "case.toml").write_text(
        'id = "toy"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
        'test_command = "test -f ok"\n[repository]\nkind = "folder"\npath = "repo"\n'
        f"[budgets]\nagent_seconds = {agent_seconds}\nagent_steps = {steps}\n"
        "setup_seconds = 30\ntest_seconds = 30\n"
    )
    return load_case(case_dir / "case.toml", [root / "bench"])


def _slowdown(monkeypatch: pytest.MonkeyPatch, wall: float, cpu: float = 0.5) -> None:
    """The probe reports a machine where a runnable process gets ``cpu / wall`` of a CPU."""
    found = ClockProbe(wall_seconds=wall, cpu_seconds=cpu)
    monkeypatch.setattr(clock, "probe_cpu_share", lambda *a, **k: found)
    monkeypatch.setattr(clock, "probe_in_box", lambda *a, **k: found)


def _run_agent(
    tmp_path: Path, command: str, *, scale: float = 1.0, backend: FakeBackend | None = None
) -> AgentOutcome:
    case = _case(tmp_path)
    settings = EncondaSettings(
        run_dir=tmp_path / "run",
        agent="command",
        agent_options={"command": command},
        budget_scale=scale,
    )
    backend = backend or FakeBackend(tmp_path / "f")
    pipeline = CasePipeline(settings, progress=lambda _m: None, backend=backend)
    try:
        return pipeline.agent_outcome(case)
    finally:
        pipeline.close()


# 80 % of the idle budget, on a machine that makes it take ``factor`` times as long.
def _work(factor: float) -> str:
    return f"sleep {0.8 * AGENT_SECONDS * factor:g} && echo done"


def test_an_agent_using_80_percent_of_its_budget_on_a_slow_machine_is_not_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _slowdown(monkeypatch, wall=1.25)  # 2.5 x slower
    outcome = _run_agent(tmp_path, _work(2.5))
    assert outcome.status == "completed", outcome.message
    assert outcome.wall_time >= 0.8 * AGENT_SECONDS * 2.5
    recorded = AgentOutcome.model_validate_json(
        CaseDir(tmp_path / "run", "toy").agent_outcome.read_text()
    ).clock
    assert recorded is not None
    assert (recorded.factor, recorded.measured, recorded.capped) == (2.5, 2.5, False)
    assert recorded.seconds == AGENT_SECONDS * 2.5 and recorded.case_seconds == AGENT_SECONDS
    assert recorded.probe == ClockProbe(wall_seconds=1.25, cpu_seconds=0.5)
    assert recorded.method == "box"


def test_the_same_work_on_an_unstretched_clock_is_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: with the slowdown unmeasured (an idle machine), the same sleep is cut at the
    case's budget, so the test above passes because of the factor."""
    _slowdown(monkeypatch, wall=0.5)
    began = time.monotonic()
    outcome = _run_agent(tmp_path, _work(2.5))
    assert outcome.status == "timeout", outcome.message
    assert outcome.clock is not None and outcome.clock.factor == 1.0
    assert time.monotonic() - began < 0.8 * AGENT_SECONDS * 2.5


def test_budget_scale_multiplies_the_stretched_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _slowdown(monkeypatch, wall=0.75)  # 1.5 x
    outcome = _run_agent(tmp_path, 'echo "$ENCONDA_TIMEOUT"', scale=2.0)
    assert outcome.clock is not None
    assert outcome.clock.seconds == AGENT_SECONDS * 2.0 * 1.5
    # The command agent's timeout is the clock's, as the agent read it from its task.
    assert outcome.trajectory[0].output.strip() == "6"


def test_the_probe_runs_in_a_box_of_the_task_image_before_the_agent(tmp_path: Path) -> None:
    """Unpatched: the probe runs (for real, the fake box runs it on this host) in a box of the
    case's task image that is gone before the agent's own box starts."""
    backend = FakeBackend(tmp_path / "f")
    outcome = _run_agent(tmp_path, "true", backend=backend)
    starts = [call.detail["role"] for call in backend.ops("start")]
    assert starts[:2] == ["clock", "agent"], starts
    [probe] = [c for c in backend.ops("exec") if "thread_time" in str(c.detail["command"])]
    assert str(probe.detail["command"]).startswith("python3 -c ")
    measured = outcome.clock
    assert measured is not None and measured.method == "box" and measured.probe is not None
    assert measured.probe.cpu_seconds >= clock.PROBE_CPU_SECONDS or measured.capped
    assert 1.0 <= measured.factor <= MAX_FACTOR
    assert measured.seconds == pytest.approx(AGENT_SECONDS * measured.factor, abs=0.01)


def test_an_agent_that_reads_no_budget_is_not_clocked(tmp_path: Path) -> None:
    """The oracle never reads its budgets: no box is started to measure a clock it has not, so
    an item that needs no box (error types) still builds no image."""
    backend = FakeBackend(tmp_path / "f")
    settings = EncondaSettings(run_dir=tmp_path / "run", agent="oracle")
    pipeline = CasePipeline(settings, progress=lambda _m: None, backend=backend)
    outcome = pipeline.agent_outcome(_case(tmp_path))
    pipeline.close()
    assert outcome.clock is None
    assert backend.ops("start") == [] and backend.ops("task_image") == []


def test_a_box_without_python_leaves_the_budget_and_says_why(tmp_path: Path) -> None:
    def no_python(_box: object, command: str, *_rest: object) -> ExecResult | None:
        if command.startswith("python3 -c "):
            return canned("sh: 1: python3: not found", exit_code=127)
        return None

    outcome = _run_agent(tmp_path, "true", backend=FakeBackend(tmp_path / "f", responder=no_python))
    assert outcome.status == "completed"
    measured = outcome.clock
    assert measured is not None
    assert (measured.factor, measured.method, measured.seconds) == (1.0, "none", AGENT_SECONDS)
    assert "the probe exited 127: sh: 1: python3: not found" in measured.note


def test_factor_is_never_below_one_and_is_capped() -> None:
    assert clock.bounded(0.4) == (1.0, False)
    assert clock.bounded(3.25) == (3.25, False)
    assert clock.bounded(MAX_FACTOR * 4) == (MAX_FACTOR, True)


def test_a_capped_slowdown_is_recorded_as_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    _slowdown(monkeypatch, wall=20.0)  # 40 x: the machine is swamped
    measured = measure(600)
    assert measured.factor == MAX_FACTOR and measured.capped and measured.measured == 40.0
    assert measured.seconds == 600 * MAX_FACTOR
    assert "capped at 10" in measured.note and "(capped)" in measured.describe()


def test_a_probe_that_cannot_run_leaves_the_budget_and_says_why(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_a: object, **_k: object) -> ClockProbe:
        raise OSError("no interpreter")

    monkeypatch.setattr(clock, "probe_cpu_share", broken)
    measured = measure(600, 2.0)
    assert (measured.factor, measured.method, measured.seconds) == (1.0, "none", 1200.0)
    assert "could not be measured (no interpreter)" in measured.note


def test_steps_are_not_scaled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _slowdown(monkeypatch, wall=2.0)
    case = _case(tmp_path, agent_seconds=100, steps=7)
    task = AgentTask(case=case, readme_text="", readme_name="README.md", clock=measure(100))
    assert task.budgets.agent_seconds == 400.0
    assert task.budgets.agent_steps == 7
    assert case.spec.budgets.agent_seconds == 100  # the case itself is unchanged
    assert AgentTask(case=case, readme_text="", readme_name="R").budgets.agent_seconds == 100


def test_the_item_limit_outlasts_the_most_stretched_agent(tmp_path: Path) -> None:
    case = _case(tmp_path, agent_seconds=600)
    for scale in (1.0, 3.0):
        most = 600 * scale * MAX_FACTOR
        assert case_timeout(case, scale) > most + BUILD_ALLOWANCE_SECONDS


def test_the_real_probe_sees_cpu_burners() -> None:
    """Three CPU-bound processes per CPU this process may use: the probe gets about a quarter
    of a CPU, so its slowdown is well above 1 (on an idle machine it is about 1)."""
    cpus = len(os.sched_getaffinity(0))
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3 * cpus)
    ]
    try:
        time.sleep(0.3)  # the burners are running before the probe starts
        probe = clock.probe_cpu_share()
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()
    assert probe.cpu_seconds > 0 and probe.wall_seconds >= probe.cpu_seconds
    assert probe.slowdown > 1.5, probe
