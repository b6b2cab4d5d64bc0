"""Agents by name: built-ins plus the ``pytest_enconda.agents`` entry-point group."""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import Any

# Declared here, not in ``base``: option parsing reads this module in every pytest run, and
# ``base`` imports pydantic.
ENTRY_POINT_GROUP = "pytest_enconda.agents"

BUILTIN: dict[str, str] = {
    "oracle": "pytest_enconda.agents.oracle:OracleAgent",
    "readme": "pytest_enconda.agents.readme:ReadmeAgent",
    "replay": "pytest_enconda.agents.replay:ReplayAgent",
}


def _load(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def available() -> list[str]:
    names = set(BUILTIN)
    names.update(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    return sorted(names)


def create(name: str, **options: Any) -> Any:
    """Instantiate the agent called ``name`` (built-ins win over entry points of the same name)."""
    if name in BUILTIN:
        factory = _load(BUILTIN[name])
    else:
        matches = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
        if not matches:
            raise KeyError(f"unknown agent {name!r}; available: {', '.join(available())}")
        factory = matches[0].load()
    return factory(**options)
