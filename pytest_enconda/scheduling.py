"""xdist scheduling: one case, one worker; xdist's own ``load`` when no case is collected.

``--dist loadgroup`` is broken on pytest 9.2 (pytest-xdist #1386), so the plugin supplies its own
scheduler for benchmark runs: loadscope keyed on the *case node* of each item, every other test
its own scope. The controller collects nothing and sees only node ids, so the case node is read
from the id's structure, not from item names: ``<case.toml>::…`` belongs to that case file, and
``<dataset>::<case>::…`` to that instance of the dataset. An item's own name (an aspect, a probe
module and function, a user's probe) never decides where it runs, so every item of a case, and
the agent behind them, share one worker.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScheduling, LoadScopeScheduling

from .discovery import is_case_file, is_dataset_dir, is_research_dataset_dir
from .kinds import kind_of


@functools.lru_cache(maxsize=4096)
def _kind_of(path: Path) -> str | None:
    """``case`` for a case file, ``dataset`` for a dataset folder, else ``None`` (cached: the
    controller asks once per item, and a case file's head is read to decide)."""
    if is_case_file(path):
        return "case"
    if path.is_dir() and (is_dataset_dir(path) or is_research_dataset_dir(path)):
        return "dataset"
    return None


def case_scope(nodeid: str, rootdir: Path) -> str | None:
    """The node id of the case an item belongs to, or ``None`` for a test that is no case's."""
    parts = nodeid.split("::")
    if len(parts) < 2:
        return None
    kind = _kind_of(rootdir / parts[0])
    if kind == "case":
        return parts[0]
    if kind == "dataset" and len(parts) >= 3:
        return "::".join(parts[:2])
    return None


def is_case_nodeid(nodeid: str, rootdir: Path) -> bool:
    return case_scope(nodeid, rootdir) is not None


class CaseScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        return case_scope(nodeid, self.config.rootpath) or nodeid


class CaseAwareScheduling:
    """Holds the workers until the first collection arrives, then hands off to one scheduler."""

    def __init__(self, config: pytest.Config, log: Any) -> None:
        self.config = config
        self.log = log
        self.chosen: Any = None
        self._waiting: list[Any] = []

    def _choose(self, collection: Sequence[str]) -> Any:
        """The scheduler for this collection, made once; the workers that waited join it."""
        rootdir = self.config.rootpath
        benchmark = any(is_case_nodeid(nodeid, rootdir) for nodeid in collection)
        scheduling = CaseScheduling if benchmark else LoadScheduling
        self.chosen = scheduling(self.config, self.log)
        for node in self._waiting:
            self.chosen.add_node(node)
        self._waiting = []
        return self.chosen

    # --- xdist's Scheduling protocol -------------------------------------------------------

    @property
    def nodes(self) -> list[Any]:
        return self.chosen.nodes if self.chosen else list(self._waiting)

    @property
    def collection_is_completed(self) -> bool:
        return bool(self.chosen and self.chosen.collection_is_completed)

    @property
    def tests_finished(self) -> bool:
        return bool(self.chosen and self.chosen.tests_finished)

    @property
    def has_pending(self) -> bool:
        return bool(self.chosen and self.chosen.has_pending)

    def add_node(self, node: Any) -> None:
        if self.chosen:
            self.chosen.add_node(node)
        else:
            self._waiting.append(node)

    def add_node_collection(self, node: Any, collection: Sequence[str]) -> None:
        chosen = self._choose(collection) if self.chosen is None else self.chosen
        chosen.add_node_collection(node, collection)

    def remove_node(self, node: Any) -> str | None:
        if self.chosen:
            return self.chosen.remove_node(node)
        self._waiting.remove(node)
        return None

    def __getattr__(self, name: str) -> Any:
        # schedule, mark_test_complete, mark_test_pending, remove_pending_tests_from_node: only
        # called once collections have arrived, so a scheduler has been chosen.
        if name.startswith("_") or self.__dict__.get("chosen") is None:
            raise AttributeError(name)
        return getattr(self.chosen, name)


def research_case_names(nodeids: Sequence[str], rootdir: Path) -> set[str]:
    """The research cases among the collected node ids, as the controller can tell them: a case
    file whose ``suite`` is a kind graded by probes (research; by its ``id``, else its folder),
    and every instance of a ResearchEnvBench dataset (by its name)."""
    names: set[str] = set()
    for scope in {case_scope(nodeid, rootdir) for nodeid in nodeids} - {None}:
        assert scope is not None
        parts = scope.split("::")
        path = rootdir / parts[0]
        if len(parts) == 2:
            if is_research_dataset_dir(path):
                names.add(parts[1])
            continue
        spec = _case_head(path)
        kind = kind_of(spec.get("suite"))
        if kind is not None and kind.graded_by_probes:
            names.add(str(spec.get("id") or path.parent.name))
    return names


def _case_head(path: Path) -> dict[str, Any]:
    from . import textio
    from .discovery import MAX_CASE_BYTES

    try:
        return textio.parse_toml(textio.decode_utf8(textio.read_bounded(path, MAX_CASE_BYTES)))
    except (OSError, ValueError):
        return {}
