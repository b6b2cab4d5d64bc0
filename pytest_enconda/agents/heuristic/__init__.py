"""The ``heuristic`` agent: an offline, deterministic baseline (see ``agent``)."""

from .agent import HeuristicAgent, HeuristicConfig

__all__ = ["HeuristicAgent", "HeuristicConfig"]
