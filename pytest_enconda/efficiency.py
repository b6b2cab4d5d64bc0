"""The one rule for a case's efficiency: time to ready, tokens, cost, environment size and
prefix size, read from its saved artifacts (the live run's summary, ``regrade`` and the review
report all call it, so they cannot disagree)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

EFFICIENCY_KEYS = ("time_to_ready_s", "tokens", "cost_usd", "env_size_bytes", "prefix_bytes")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _mapping(value: Any) -> Mapping[str, Any]:
    """A record's object, or an empty one when it is anything else."""
    return value if isinstance(value, Mapping) else {}


def efficiency(
    outcome: Mapping[str, Any] | None,
    *,
    state: Mapping[str, Any] | None = None,
    execution: Mapping[str, Any] | None = None,
    facts: Mapping[str, Any] | None = None,
) -> dict[str, float | None]:
    """A case's time to ready, tokens, cost, environment size and prefix size, from its saved
    artifacts: the agent's outcome, its final state (``environment/state.json``), the execution
    record and the interpreter's facts. ``None`` where the artifacts do not say.

    Time to ready is the agent's wall time plus the seconds its setup script took to replay: an
    agent that answers with a script in a millisecond has not set anything up yet. The script
    is replayed to build the final state (source ``setup-script``) or, for an execution case, as
    the execution's setup step.
    """
    out: dict[str, float | None] = dict.fromkeys(EFFICIENCY_KEYS)
    # Saved records of an edited run may hold anything: a value of the wrong type counts as
    # absent (0 or None), never as a crash of the summary.
    outcome, state, execution = _mapping(outcome), _mapping(state), _mapping(execution)
    facts = _mapping(facts)
    if outcome:
        usage = _mapping(outcome.get("usage"))
        ready = _number(outcome.get("wall_time")) or 0.0
        if state and state.get("source") == "setup-script":
            ready += _number(state.get("setup_seconds")) or 0.0
        else:
            steps = execution.get("steps")
            for step in steps if isinstance(steps, list) else []:
                if isinstance(step, Mapping) and step.get("name") == "setup":
                    ready += _number(step.get("duration")) or 0.0
        out["time_to_ready_s"] = round(ready, 3) if math.isfinite(ready) else None
        tokens = _number(usage.get("total_tokens")) or 0
        out["tokens"] = int(tokens) if math.isfinite(tokens) else None
        # A cost with unpriced calls in it is a lower bound, not the cost: unknown.
        cost = _number(usage.get("cost_usd")) or 0.0
        out["cost_usd"] = None if usage.get("cost_unknown") else float(cost)
    if state:
        out["env_size_bytes"] = _number(state.get("writable_bytes"))
    if facts:
        out["prefix_bytes"] = _number(facts.get("prefix_bytes"))
    return out


def recorded_facts(stages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The interpreter's facts as far as saved: they are not kept whole, but the prefix size
    they gave is recorded in the numbers of the pyramid stages that measured it (C0, C5)."""
    facts: dict[str, Any] = {}
    for stage in stages:
        numbers = _mapping(stage).get("numbers") or {}
        if isinstance(numbers, Mapping) and _number(numbers.get("prefix_bytes")) is not None:
            facts.setdefault("prefix_bytes", numbers["prefix_bytes"])
    return facts
