"""Agents by name: the built-in records below, plus the ``pytest_enconda.agents`` entry-point
group for third parties (built-ins are listed here only, not as entry points too)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import EntryPoint
from typing import Any

from ..registry import Registry

# Declared here, not in ``base``: option parsing reads this module in every pytest run, and
# ``base`` imports pydantic.
ENTRY_POINT_GROUP = "pytest_enconda.agents"


@dataclass(frozen=True)
class AgentRecord:
    """An agent as the registry knows it, before anything of it is imported.

    ``target`` is an entry-point value (``module:attr``): listing agents imports none of them.
    ``needs_model`` says what ``--model`` takes for an agent that calls a model; without it the
    run stops at configure time.
    """

    name: str
    target: str
    needs_model: str | None = None

    def load(self) -> Any:
        """The agent's factory (its class); imports its module."""
        return EntryPoint(self.name, self.target, ENTRY_POINT_GROUP).load()


BUILTIN: tuple[AgentRecord, ...] = (
    AgentRecord("oracle", "pytest_enconda.agents.oracle:OracleAgent"),
    AgentRecord("readme", "pytest_enconda.agents.readme:ReadmeAgent"),
    AgentRecord("replay", "pytest_enconda.agents.replay:ReplayAgent"),
    AgentRecord(
        "swe-agent",
        "pytest_enconda.agents.swe_agent:SweAgent",
        needs_model="a litellm model string, e.g. --model anthropic/claude-sonnet-4-5, or "
        "--model NAME --api-base http://127.0.0.1:8000/v1 for an OpenAI-compatible server",
    ),
    AgentRecord(
        "zero-shot",
        "pytest_enconda.agents.zero_shot:ZeroShotAgent",
        needs_model="a litellm model string, e.g. --model openai/gpt-4o, or --model NAME "
        "--api-base URL for an OpenAI-compatible server",
    ),
    AgentRecord("command", "pytest_enconda.agents.command:CommandAgent"),
    AgentRecord("heuristic", "pytest_enconda.agents.heuristic:HeuristicAgent"),
)

# An entry point's record is made from its value alone: third-party agents stay unimported
# until chosen, as built-ins do.
AGENTS: Registry[AgentRecord] = Registry(
    "agent",
    ENTRY_POINT_GROUP,
    from_entry_point=lambda entry_point: AgentRecord(entry_point.name, entry_point.value),
)
for _record in BUILTIN:
    AGENTS.register(_record)


def is_builtin(name: str) -> bool:
    """Whether ``name`` is a built-in agent; reads no entry point (option parsing asks this
    for the default in every pytest run)."""
    return any(record.name == name for record in BUILTIN)


def available() -> list[str]:
    return sorted(AGENTS.names())


def needs_model(name: str) -> str | None:
    """What ``--model`` takes for agent ``name``, if it calls a model (None for unknown names:
    those are reported where the agent is made)."""
    return AGENTS.get(name).needs_model if name in AGENTS else None


def factory_of(name: str) -> Any:
    return AGENTS.get(name).load()


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
