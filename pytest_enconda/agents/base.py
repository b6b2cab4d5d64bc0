"""The agent protocol, its input and its outcome.

An agent gets a ``AgentTask`` and returns an ``AgentOutcome``; the harness never looks inside it.
Third parties register agents under the entry-point group ``pytest_enconda.agents``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ..cases.models import Budgets, Case
from .clock import AgentClock
from .registry import ENTRY_POINT_GROUP

__all__ = ["ENTRY_POINT_GROUP", "Agent", "AgentOutcome", "AgentTask"]


class PredictedError(BaseModel):
    """One diagnosed error. ``error_type`` stays a string: a bad type is graded, not rejected."""

    model_config = ConfigDict(extra="ignore")

    error_type: str
    error_description: str = ""
    fix_suggestion: str = ""


class Step(BaseModel):
    """One step of a trajectory: a model turn (thought, tokens) and/or a command and its output."""

    command: str
    output: str = ""
    exit_code: int | None = None
    started_at: float | None = None
    duration: float = 0.0
    thought: str = ""
    kind: str = "command"
    timed_out: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


class TokenUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    cost_unknown: bool = Field(
        default=False,
        description="some call had no price (litellm does not know the model), or the agent's "
        "calls are not the harness's to count (the command agent): cost_usd counts only the "
        "priced calls, and the cost is reported as unknown",
    )

    def add(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            calls=self.calls + other.calls,
            cost_unknown=self.cost_unknown or other.cost_unknown,
        )


AgentStatus = Literal["completed", "budget_exhausted", "timeout", "crashed", "no_prediction"]


class AgentOutcome(BaseModel):
    case_id: str
    agent: str
    model: str | None = None
    diagnosis: list[PredictedError] = Field(default_factory=list)
    setup_script: str = ""
    test_command: str = Field(
        default="", description="AEC: how the agent ran the tests (/enconda/output/test_command)"
    )
    self_report: dict[str, Any] | None = None
    trajectory: list[Step] = Field(default_factory=list)
    usage: TokenUsage = Field(default_factory=TokenUsage)
    wall_time: float = Field(
        default=0.0,
        description="the agent's seconds, from its container being ready (its budget's clock)",
    )
    harness_seconds: float = Field(
        default=0.0,
        description="the harness's seconds around the agent: building the task image, starting "
        "and removing its container; never counted against the agent's budget",
    )
    status: AgentStatus = "completed"
    message: str = ""
    problems: list[str] = Field(
        default_factory=list, description="what was wrong with the prediction (kept, not fatal)"
    )
    output_problems: dict[str, str] = Field(
        default_factory=dict,
        description="output-contract files (diagnosis.json, setup.sh, report.json) that were "
        "missing or malformed, with the reason; each fails the aspects it feeds",
    )
    config: dict[str, Any] = Field(
        default_factory=dict, description="the agent's settings for this run (model, limits)"
    )
    clock: AgentClock | None = Field(
        default=None,
        description="how the harness set the agent's wall-clock budget on this machine (the "
        "case's agent_seconds, --budget-scale and the measured slowdown); None: the case's",
    )


class AgentTask(BaseModel):
    """What an agent may see: never the golden answer (the oracle reads ``case`` on purpose)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    case: Case
    readme_text: str
    readme_name: str
    repo_dir: Path | None = Field(default=None, description="host copy of the repository")
    workdir: str = "/data/project"
    log_path: Path | None = None
    trajectory_path: Path | None = Field(
        default=None, description="JSONL file the agent appends its steps to as they happen"
    )
    run_dir: Path | None = None
    max_cost: float | None = Field(
        default=None, description="run-wide cost ceiling in USD (--max-cost), over all workers"
    )
    model_price: tuple[float, float] | None = Field(
        default=None,
        description="--model-price: USD per million prompt and completion tokens, for models "
        "litellm cannot price",
    )
    # Starts the agent's container lazily; agents that need none never call it. Its task image
    # is built before the agent runs: an agent's clock starts once the container is up.
    start_container: Callable[[], Any] | None = None
    clock: AgentClock | None = Field(
        default=None,
        description="the agent's wall-clock budget on this machine (``agents.clock``), once "
        "measured; None: not measured (yet), the case's agent_seconds as written",
    )
    # Measures ``clock`` the first time an agent reads its budgets: an agent that never does
    # (the oracle, a replay) has no clock to stretch and needs no box to measure one in.
    measure_clock: Callable[[], AgentClock] | None = None

    @property
    def budgets(self) -> Budgets:
        """The case's budgets, ``agent_seconds`` being the wall clock the agent has here: the
        case's stretched by ``--budget-scale`` and this machine's slowdown (``clock``, measured
        now if it was not yet). Read them before starting the clock."""
        budgets = self.case.spec.budgets
        if self.clock is None and self.measure_clock is not None:
            self.clock = self.measure_clock()
        if self.clock is None:
            return budgets
        return budgets.model_copy(update={"agent_seconds": self.clock.seconds})

    @property
    def packages_before(self) -> str:
        """The instance's package cutoff (``package_cutoff``): its task says it, its box has
        it set; empty where the reference needed none."""
        from ..package_cutoff import cutoff_of

        return cutoff_of(self.case)


@runtime_checkable
class Agent(Protocol):
    """An agent strategy. One that sets the environment up by acting in its task container
    also sets the class attribute ``acts_in_container = True``: for a research case the harness
    then freezes that container as the final state the probes grade (as ResearchEnvBench does),
    instead of replaying the agent's setup script in a fresh one."""

    name: str

    def run(self, task: AgentTask) -> AgentOutcome: ...
