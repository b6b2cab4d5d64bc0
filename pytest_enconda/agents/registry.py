"""Agents by name: built-ins plus the ``pytest_enconda.agents`` entry-point group."""

from __future__ import annotations

import importlib
from importlib.metadata import EntryPoint
from typing import Any

from ..registry import Registry

# Declared here, not in ``base``: option parsing reads this module in every pytest run, and
# ``base`` imports pydantic.
ENTRY_POINT_GROUP = "pytest_enconda.agents"

BUILTIN: dict[str, str] = {
    "oracle": "pytest_enconda.agents.oracle:OracleAgent",
    "readme": "pytest_enconda.agents.readme:ReadmeAgent",
    "replay": "pytest_enconda.agents.replay:ReplayAgent",
    "swe-agent": "pytest_enconda.agents.swe_agent:SweAgent",
    "zero-shot": "pytest_enconda.agents.zero_shot:ZeroShotAgent",
    "command": "pytest_enconda.agents.command:CommandAgent",
    "heuristic": "pytest_enconda.agents.heuristic:HeuristicAgent",
}
# Agents that call a model: without ``--model`` the run stops at configure time.
NEEDS_MODEL: dict[str, str] = {
    "swe-agent": "a litellm model string, e.g. --model anthropic/claude-sonnet-4-5, or "
    "--model NAME --api-base http://127.0.0.1:8000/v1 for an OpenAI-compatible server",
    "zero-shot": "a litellm model string, e.g. --model openai/gpt-4o, or --model NAME "
    "--api-base URL for an OpenAI-compatible server",
}


def _resolve(target: str | EntryPoint) -> Any:
    """The agent's factory; imported only when that agent is used."""
    if isinstance(target, EntryPoint):
        return target.load()
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


# Entries are import targets, not factories: listing the agents imports none of them.
AGENTS: Registry[str | EntryPoint] = Registry(
    "agent", ENTRY_POINT_GROUP, from_entry_point=lambda entry_point: entry_point
)
for _name, _target in BUILTIN.items():
    AGENTS.register(_target, name=_name)


def available() -> list[str]:
    return sorted(AGENTS.names())


def factory_of(name: str) -> Any:
    return _resolve(AGENTS.get(name))


def check_options(name: str, **options: Any) -> None:
    """Validate an agent's options before anything runs; ``ValueError`` says what is wrong.

    Only agents with a ``check_options`` classmethod are checked (importing them must be cheap).
    """
    factory = factory_of(name)
    check = getattr(factory, "check_options", None)
    if check is not None:
        check(**options)


def create(name: str, **options: Any) -> Any:
    """Instantiate the agent called ``name`` (built-ins win over entry points of the same name)."""
    return factory_of(name)(**options)
