"""swe-agent and zero-shot through the case pipeline on the fake backend, driven by the scripted
OpenAI-compatible server on 127.0.0.1 (litellm's real HTTP path): the agent's clock starts with
its container, provider failures are harness errors that ``--resume`` retries, and the run-wide
cost ceiling works for a model priced by the user."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import ScriptedServer, completion, step_of, tool_call

from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.loader import load_case
from pytest_enconda.cases.models import Case
from pytest_enconda.errors import HarnessError, ModelUnavailable, RunStopped
from pytest_enconda.pipeline import CasePipeline
from pytest_enconda.records import CaseDir
from pytest_enconda.settings import EncondaSettings

pytest.importorskip("minisweagent")

E4 = {
    "error_type": "E4",
    "error_description": "the README runs `python tools/run.py`, but the file is scripts/run.py",
    "correction_candidates": ["python scripts/run.py"],
    "golden_answer": "python scripts/run.py",
}
WRITE_OUTPUTS = (
    "printf 'echo built > built.txt\\n' > /enconda/output/setup.sh && "
    'printf \'[{"error_type": "E4"}]\' > /enconda/output/diagnosis.json'
)
SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"


def _case(root: Path, case_id: str = "toy", *, agent_seconds: int = 60) -> Case:
    case_dir = root / "bench" / "cases" / case_id
    (case_dir / "repo" / "scripts").mkdir(parents=True)
    (case_dir / "repo" / "scripts" / "run.py").write_text("print('ok')\n")
    (case_dir / "README.md").write_text("# toy\n\n```bash\npython tools/run.py\n```\n")
    (case_dir / "golden.json").write_text(json.dumps({"level": 1, "errors": [E4]}))
    (case_dir / "case.toml").write_text(
        f'id = "{case_id}"\nsuite = "diagnosis"\nreadme = "README.md"\ngolden = "golden.json"\n'
        'test_command = "test -f built.txt"\n'
        '[repository]\nkind = "folder"\npath = "repo"\n'
        f"[budgets]\nagent_seconds = {agent_seconds}\nsetup_seconds = 30\ntest_seconds = 30\n"
    )
    return load_case(case_dir / "case.toml", [root / "bench"])


class SlowBuild(FakeBackend):
    """A cold image build: seconds pass before the task image exists."""

    def __init__(self, root: Path, delay: float) -> None:
        super().__init__(root)
        self.delay = delay

    def task_image(self, *args: Any, **kwargs: Any) -> str:
        time.sleep(self.delay)
        return super().task_image(*args, **kwargs)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    scripted = ScriptedServer()
    scripted.start()
    yield scripted
    scripted.stop()


def _solver(request: dict) -> tuple[int, Any]:
    """A model that writes both files, then submits."""
    if step_of(request) == 0:
        return 200, tool_call(WRITE_OUTPUTS)
    return 200, tool_call(SUBMIT, call_id="call_2")


def _pipeline(
    tmp_path: Path,
    backend: FakeBackend,
    server: ScriptedServer,
    *,
    agent: str = "swe-agent",
    messages: list[str] | None = None,
    **options: str,
) -> CasePipeline:
    settings: dict[str, Any] = {}
    for name in ("max_cost", "model_price"):
        if name in options:
            settings[name] = options.pop(name)
    return CasePipeline(
        EncondaSettings(
            run_dir=tmp_path / "run",
            agent=agent,
            model="scripted",
            api_base=server.api_base,
            agent_options=options,
            **settings,
        ),
        progress=(messages if messages is not None else []).append,
        backend=backend,
    )


@pytest.mark.slow
def test_a_slow_image_build_does_not_eat_the_agents_budget(
    tmp_path: Path, server: ScriptedServer
) -> None:
    server.responder = _solver
    outcomes = {}
    # A budget of 10 s: the agent's few scripted turns fit in it even on a loaded machine (3 s
    # did not, with a verify run and other tests on the same 2 cores).
    for delay in (0.0, 11.0):
        root = tmp_path / f"delay-{delay:g}"
        case = _case(root)
        pipeline = _pipeline(root, SlowBuild(root / "fake", delay), server, wall_seconds="10")
        outcomes[delay] = pipeline.agent_outcome(case)
    fast, slow = outcomes[0.0], outcomes[11.0]
    # The build took longer than the agent's whole budget, and the agent still had all of it.
    assert slow.status == fast.status == "completed", slow.message
    assert slow.setup_script == fast.setup_script == "echo built > built.txt\n"
    assert slow.diagnosis == fast.diagnosis
    assert slow.wall_time < 10
    assert slow.harness_seconds >= 11
    saved = json.loads(CaseDir(tmp_path / "delay-11" / "run", "toy").agent_outcome.read_text())
    assert saved["harness_seconds"] >= 11


def test_an_agent_with_valid_replies_that_writes_nothing_fails(
    tmp_path: Path, server: ScriptedServer
) -> None:
    server.default = (200, tool_call(SUBMIT))
    case = _case(tmp_path)
    pipeline = _pipeline(tmp_path, FakeBackend(tmp_path / "fake"), server)
    verdict = pipeline.verdict(case, "execution")
    assert verdict.outcome == "failed"
    assert "no setup script written" in verdict.message


CONTEXT = {
    "error": {
        "message": "This model's maximum context length is 4096 tokens, your messages had 9000",
        "type": "invalid_request_error",
        "code": "context_length_exceeded",
    }
}
MISBEHAVIOURS = {
    "http-500": ((500, {"error": {"message": "backend exploded"}}), ["500", "backend exploded"]),
    "malformed": ((200, b"{this is not json"), []),
    "empty": ((200, completion("")), ["empty repl"]),
    "context-length": ((400, CONTEXT), ["400", "maximum context length"]),
}


@pytest.mark.parametrize("agent", ["swe-agent", "zero-shot"])
@pytest.mark.parametrize("kind", sorted(MISBEHAVIOURS))
def test_a_misbehaving_server_is_a_harness_error(
    tmp_path: Path, server: ScriptedServer, kind: str, agent: str
) -> None:
    answer, named = MISBEHAVIOURS[kind]
    server.default = answer
    case = _case(tmp_path)
    options = {"model_retries": "1"} if agent == "swe-agent" else {"retries": "0"}
    pipeline = _pipeline(tmp_path, FakeBackend(tmp_path / "fake"), server, agent=agent, **options)
    with pytest.raises(ModelUnavailable) as raised:
        pipeline.agent_outcome(case)
    message = str(raised.value)
    assert message.startswith("model scripted unavailable: "), message
    for part in named:
        assert part in message, message
    # No outcome is saved, so --resume runs the agent again; the items are errors (a
    # HarnessError), and the case's other items do not call the model again.
    assert not CaseDir(tmp_path / "run", "toy").agent_outcome.exists()
    calls = len(server.requests)
    with pytest.raises(HarnessError):
        pipeline.verdict(case, "execution")
    assert len(server.requests) == calls


@pytest.mark.parametrize("agent", ["swe-agent", "zero-shot"])
def test_a_hung_server_is_given_up_within_the_agents_budget(
    tmp_path: Path, server: ScriptedServer, agent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_enconda.agents import clock

    # An idle machine's clock: the bound below is the case's 3 s, not 3 s times the load.
    idle = clock.ClockProbe(wall_seconds=0.5, cpu_seconds=0.5)
    monkeypatch.setattr(clock, "probe_in_box", lambda *a, **k: idle)
    server.delay = 60
    case = _case(tmp_path, agent_seconds=3)
    pipeline = _pipeline(tmp_path, FakeBackend(tmp_path / "fake"), server, agent=agent)
    began = time.monotonic()
    with pytest.raises(ModelUnavailable) as raised:
        pipeline.agent_outcome(case)
    # The budget (3 s) bounds each request; the rest is mini-swe-agent's pause before its
    # retry (4 s) and, on the first run in a process, importing it (seconds, before the clock).
    assert time.monotonic() - began < 20
    # The request timed out, or (a loaded machine: the prompt's build took some of the 3 s) the
    # retry found no time left; both say the model, not the agent, ended it.
    why = str(raised.value)
    assert "Timeout" in why or "no time left in the agent's wall clock" in why, why


def test_resume_runs_the_agent_again_after_an_outage(
    tmp_path: Path, server: ScriptedServer
) -> None:
    server.default = (500, {"error": {"message": "down for maintenance"}})
    case = _case(tmp_path)
    backend = FakeBackend(tmp_path / "fake")
    with pytest.raises(ModelUnavailable):
        _pipeline(tmp_path, backend, server, model_retries="1").agent_outcome(case)
    server.responder = _solver
    resumed = _pipeline(tmp_path, backend, server, model_retries="1")
    assert resumed.verdict(case, "execution").outcome == "passed"
    runs = CaseDir(tmp_path / "run", "toy").agent_runs.read_text().splitlines()
    assert len(runs) == 2


def test_an_interrupted_step_is_not_started_again(tmp_path: Path) -> None:
    pipeline = CasePipeline(
        EncondaSettings(run_dir=tmp_path / "run"), progress=lambda _: None, backend=None
    )
    case = _case(tmp_path)
    runs: list[int] = []

    def agent() -> None:
        runs.append(1)
        pytest.fail("Timeout >2820.0s")  # what pytest-timeout's signal method raises

    with pytest.raises(pytest.fail.Exception):
        pipeline.once(case, "agent", agent)
    with pytest.raises(HarnessError, match="agent of toy was interrupted: Failed: Timeout"):
        pipeline.once(case, "agent", agent)
    assert runs == [1]


def test_a_user_priced_model_stops_at_the_ceiling_and_its_cases_are_not_finished(
    tmp_path: Path, server: ScriptedServer
) -> None:
    # 300 + 40 tokens at $0.5 per million each: $0.00017 a call; litellm has no price for it.
    server.default = (200, tool_call("echo thinking", prompt_tokens=300, completion_tokens=40))
    first, second = _case(tmp_path, "first"), _case(tmp_path, "second")
    messages: list[str] = []
    pipeline = _pipeline(
        tmp_path,
        FakeBackend(tmp_path / "fake"),
        server,
        messages=messages,
        max_cost=0.0005,
        model_price=(0.5, 0.5),
    )
    # Cut mid-run: not the agent's result, so no outcome is kept and --resume runs it again.
    with pytest.raises(RunStopped, match=r"cut after 2 model call\(s\): run-wide cost limit"):
        pipeline.agent_outcome(first)
    assert not CaseDir(tmp_path / "run", "first").agent_outcome.exists()
    ledger = json.loads((tmp_path / "run" / "cost-ledger.json").read_text())
    assert ledger["spent_usd"] == pytest.approx(2 * 0.00017)
    # The third call was refused before it was made: it would have passed the ceiling.
    assert ledger["spent_usd"] <= 0.0005
    assert ledger["reserved_usd"] == 0
    assert len(server.requests) == 2
    with pytest.raises(RunStopped, match="not run: run-wide cost limit reached"):
        pipeline.verdict(second, "execution")
    assert not CaseDir(tmp_path / "run", "second").agent_runs.exists()
    assert any(line.startswith("cost ceiling reached") for line in messages), messages


def test_an_unpriced_model_under_a_ceiling_is_warned_about(
    tmp_path: Path, server: ScriptedServer
) -> None:
    backend = FakeBackend(tmp_path / "fake")
    unpriced = _pipeline(tmp_path, backend, server, max_cost=1.0)
    warning = unpriced.pricing_warning()
    assert warning is not None and "cannot be enforced" in warning and "--model-price" in warning
    priced = _pipeline(tmp_path, backend, server, max_cost=1.0, model_price=(1.0, 2.0))
    assert priced.pricing_warning() is None
