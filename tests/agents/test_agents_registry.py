"""Agents are listed once (issue 44): the built-in records in ``agents/registry.py``, with the
facts the run checks (``needs_model``); the entry-point group is for third parties only."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from pytest_enconda.agents import registry
from pytest_enconda.agents.registry import AGENTS, BUILTIN, AgentRecord

pytest_plugins = ["pytester"]

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_builtins_are_not_listed_again_as_entry_points() -> None:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert registry.ENTRY_POINT_GROUP not in project.get("entry-points", {})
    assert [record.name for record in BUILTIN] == AGENTS.names()[: len(BUILTIN)]


def test_records_load_their_agent_and_say_which_need_a_model() -> None:
    from pytest_enconda.agents.oracle import OracleAgent

    assert registry.factory_of("oracle") is OracleAgent
    assert {record.name for record in BUILTIN if record.needs_model} == {"swe-agent", "zero-shot"}
    assert "--model anthropic/claude-sonnet-4-5" in (registry.needs_model("swe-agent") or "")
    assert registry.needs_model("oracle") is None
    assert registry.needs_model("nosuchagent") is None
    assert registry.is_builtin("heuristic") and not registry.is_builtin("nosuchagent")


def test_a_registered_record_loads_only_when_used() -> None:
    """Third-party records (an entry point's value, or one a conftest.py registers) are listed
    without importing their agent; the plugin test loads one from an entry point."""
    AGENTS.register(AgentRecord("absent", "no_such_module_anywhere:Agent"))
    try:
        assert "absent" in registry.available()
        assert registry.needs_model("absent") is None
        with pytest.raises(ModuleNotFoundError):
            registry.factory_of("absent")
    finally:
        AGENTS.unregister("absent")


def test_agent_help_names_every_builtin(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    help_text = " ".join(result.stdout.str().split())
    names = ", ".join(record.name for record in BUILTIN)
    assert f"agent to benchmark (built-ins: {names}; default: oracle)" in help_text
