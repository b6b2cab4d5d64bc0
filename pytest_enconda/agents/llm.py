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

from ..errors import ModelUnavailable
from ..lazy import litellm
from ..textio import read_bounded
from .base import Step, TokenUsage

# The provider's usual key variable, for a server given with --api-base (litellm reads these
# itself for hosted models, but not when the call names an api_base and no key).
PROVIDER_KEYS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "azure": "AZURE_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
}
# (USD per million prompt tokens, USD per million completion tokens), from --model-price.
Price = tuple[float, float]


def model_for(model: str, api_base: str | None) -> str:
    """An OpenAI-compatible server needs litellm's ``openai/`` provider prefix."""
    return model if (api_base is None or "/" in model) else f"openai/{model}"


def api_key_for(api_base: str | None, model: str | None = None) -> str | None:
    """The key for a call: ``ENCONDA_AGENT_API_KEY`` if set; with ``api_base``, else the
    provider's usual variable (``OPENAI_API_KEY`` for ``openai/`` and bare names), else a
    placeholder that local servers ignore; ``None`` for hosted models (litellm reads the usual
    variable itself)."""
    key = os.environ.get("ENCONDA_AGENT_API_KEY")
    if key:
        return key
    if not api_base:
        return None
    provider = model_for(model or "", api_base).partition("/")[0] or "openai"
    usual = os.environ.get(PROVIDER_KEYS.get(provider, ""), "")
    return usual or "no-key"


def litellm_prices(model: str) -> bool:
    """Whether litellm's (bundled) price list has a non-zero price for ``model``."""
    try:
        info = litellm().get_model_info(model)
    except Exception:
        return False
    return bool(info.get("input_cost_per_token") or info.get("output_cost_per_token"))


def response_cost(response: Any, model: str, price: Price | None = None) -> float | None:
    """The call's cost in USD (the user's ``price`` first), or ``None`` when unpriced."""
    if price is not None:
        prompt_tokens, completion_tokens = response_usage(response)
        return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000
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


def model_failure(exc: BaseException, model: str) -> ModelUnavailable | None:
    """``exc`` as the provider's failure (litellm's and its HTTP clients' errors, an unreadable
    reply), or ``None`` when it is something else (the agent's own bug)."""
    if isinstance(exc, ModelUnavailable):
        return exc
    module = type(exc).__module__.partition(".")[0]
    if module not in ("litellm", "openai", "httpx", "httpcore") and not isinstance(
        exc, json.JSONDecodeError | TimeoutError | ConnectionError
    ):
        return None
    malformed = _malformed_json(exc)
    if malformed is not None:
        # litellm reports a reply it could not parse as its own HTTP 500, whatever the server
        # answered: the server's fault is the unreadable body, not an internal error.
        return ModelUnavailable(model, f"the response was malformed JSON ({malformed})"[:1500])
    status = getattr(exc, "status_code", None)
    message = str(getattr(exc, "message", None) or exc) or type(exc).__name__
    return ModelUnavailable(
        model,
        f"{type(exc).__name__}: {message}"[:1500],
        status if isinstance(status, int) else None,
    )


def _malformed_json(exc: BaseException) -> str | None:
    """The JSON decoding error behind ``exc`` (its causes and contexts), if there is one."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 16:
        if isinstance(current, json.JSONDecodeError):
            return str(current)
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def empty_reply(response: Any) -> bool:
    """A reply with neither text nor a tool call (a dumped dict or litellm's object)."""
    try:
        if isinstance(response, dict):
            message = response["choices"][0]["message"]
            content, calls = message.get("content"), message.get("tool_calls")
        else:
            message = response.choices[0].message
            content, calls = message.content, getattr(message, "tool_calls", None)
    except (AttributeError, IndexError, KeyError, TypeError):
        return True
    return not (content or "").strip() and not calls


class LedgerState(BaseModel):
    spent_usd: float = 0.0
    calls: int = 0
    unpriced_calls: int = 0
    reserved_usd: float = 0.0
    costliest_call_usd: float = 0.0


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
            # The run directory's ledger: small, a regular file, never a link.
            data = read_bounded(self.path, 1 << 20, follow_links=False)
            return LedgerState.model_validate_json(data)
        except (OSError, ValueError):
            return LedgerState()

    def state(self) -> LedgerState:
        with self._locked():
            return self._read()

    def add(self, cost: float | None) -> LedgerState:
        """A call made without a reservation (the judge's)."""
        return self.settle(0.0, cost)

    def _write(self, state: LedgerState) -> None:
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(state.model_dump_json(indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)

    def _refusal(self, state: LedgerState, estimate: float) -> str | None:
        if self.max_cost is None:
            return None
        committed = state.spent_usd + state.reserved_usd
        if committed >= self.max_cost or (estimate > 0 and committed + estimate > self.max_cost):
            return (
                f"run-wide cost limit reached: ${state.spent_usd:.6f} spent"
                + (f" (+${state.reserved_usd:.6f} in flight)" if state.reserved_usd else "")
                + f" of --max-cost ${self.max_cost:g}"
            )
        return None

    def reserve(self) -> tuple[float, str | None]:
        """Reserve a call's estimated cost before making it: (the estimate, why the call may not
        start). The estimate is the costliest call seen so far in the run, so calls in flight
        together cannot pass the ceiling by more than each exceeds that estimate."""
        with self._locked():
            state = self._read()
            estimate = state.costliest_call_usd
            reason = self._refusal(state, estimate)
            if reason is None and self.max_cost is not None:
                state.reserved_usd += estimate
                self._write(state)
            return estimate, reason

    def settle(self, estimate: float, cost: float | None, *, called: bool = True) -> LedgerState:
        """Replace a reservation with the call's cost (``called=False``: the call failed)."""
        with self._locked():
            state = self._read()
            if self.max_cost is not None:
                state.reserved_usd = max(0.0, state.reserved_usd - estimate)
            if called:
                state.calls += 1
                if cost is None:
                    state.unpriced_calls += 1
                else:
                    state.spent_usd += cost
                    state.costliest_call_usd = max(state.costliest_call_usd, cost)
            self._write(state)
            return state

    def exhausted(self) -> str | None:
        """Why no further call may be made, or ``None``."""
        if self.max_cost is None:
            return None
        state = self.state()
        # The same rule as ``reserve``: a call the size of the costliest so far would pass it.
        return self._refusal(state, state.costliest_call_usd)


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
