"""What model-driven agents share: litellm (imported on first use), token and cost accounting,
the run-wide cost ledger and the trajectory file.

litellm takes seconds to import and the plugin loads in every pytest run, so nothing here
imports it at module level.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..lazy import litellm
from .base import Step, TokenUsage

# Provider keys a model-driven agent may need on the host; never passed into a container.


def model_for(model: str, api_base: str | None) -> str:
    """An OpenAI-compatible server needs litellm's ``openai/`` provider prefix."""
    return model if (api_base is None or "/" in model) else f"openai/{model}"


def api_key_for(api_base: str | None) -> str | None:
    """The key for ``api_base``: ``ENCONDA_AGENT_API_KEY`` if set, else a placeholder that local
    servers ignore; ``None`` (the provider's usual variable) for hosted models."""
    key = os.environ.get("ENCONDA_AGENT_API_KEY")
    if key:
        return key
    return "no-key" if api_base else None


def response_cost(response: Any, model: str) -> float | None:
    """The call's cost in USD, or ``None`` when litellm has no price for the model."""
    try:
        cost = litellm().completion_cost(completion_response=response, model=model)
    except Exception:
        return None
    if cost is None:
        return None
    cost = float(cost)
    # litellm answers 0.0 for models it has no price for (local servers): unknown, not free.
    return cost if cost > 0 else None


def response_usage(response: Any) -> tuple[int, int]:
    """Prompt and completion tokens of a litellm response (an object or a dumped dict)."""
    usage = (
        response.get("usage") if isinstance(response, dict) else getattr(response, "usage", None)
    )
    if usage is None:
        return 0, 0

    def field(name: str) -> int:
        value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, 0)
        try:
            return int(value or 0)
        except (TypeError, ValueError):
            return 0

    return field("prompt_tokens"), field("completion_tokens")


def call_usage(prompt_tokens: int, completion_tokens: int, cost: float | None) -> TokenUsage:
    return TokenUsage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
        cost_usd=cost or 0.0,
        calls=1,
        cost_unknown=cost is None,
    )


class LedgerState(BaseModel):
    spent_usd: float = 0.0
    calls: int = 0
    unpriced_calls: int = 0


# A cluster run (``--dispatch ray``) sets this on its nodes: (run_dir, max_cost) -> a ledger with
# CostLedger's methods, answered by the run's one ledger on the driver.
LEDGER_FACTORY: Callable[[Path, float | None], Any] | None = None


def cost_ledger(run_dir: Path, max_cost: float | None) -> Any:
    """The run's cost ledger: the run directory's file, or the cluster's (``LEDGER_FACTORY``)."""
    if LEDGER_FACTORY is not None:
        return LEDGER_FACTORY(run_dir, max_cost)
    return CostLedger(run_dir, max_cost)


class CostLedger:
    """Run-wide spending in ``<run_dir>/cost-ledger.json``, shared by xdist workers under an
    exclusive file lock (``--max-cost``); mini-swe-agent's own global limit is per process."""

    def __init__(self, run_dir: Path, max_cost: float | None) -> None:
        from ..records import RunDir

        self.path = RunDir(run_dir).cost_ledger
        self.lock_path = self.path.with_name(f".{self.path.name}.lock")
        self.max_cost = max_cost

    @contextlib.contextmanager
    def _locked(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.lock_path.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _read(self) -> LedgerState:
        try:
            return LedgerState.model_validate_json(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return LedgerState()

    def state(self) -> LedgerState:
        with self._locked():
            return self._read()

    def add(self, cost: float | None) -> LedgerState:
        with self._locked():
            state = self._read()
            state.calls += 1
            if cost is None:
                state.unpriced_calls += 1
            else:
                state.spent_usd += cost
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
            tmp.write_text(state.model_dump_json(indent=2) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)
            return state

    def exhausted(self) -> str | None:
        """Why no further call may be made, or ``None``."""
        if self.max_cost is None:
            return None
        spent = self.state().spent_usd
        if spent >= self.max_cost:
            return (
                f"run-wide cost limit reached: ${spent:.6f} spent of --max-cost ${self.max_cost:g}"
            )
        return None


class TrajectoryWriter:
    """Appends steps to the case's ``trajectory.jsonl`` as they happen (a killed run keeps them)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.steps: list[Step] = []
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")  # a re-run agent starts a fresh trajectory

    def add(self, step: Step) -> Step:
        self.steps.append(step)
        if self.path is not None:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(step.model_dump(mode="json"), sort_keys=True) + "\n")
        return step
