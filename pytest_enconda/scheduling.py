"""xdist scheduling: one case, one worker; xdist's own ``load`` when no case is collected.

``--dist loadgroup`` is broken on pytest 9.2 (pytest-xdist #1386), so the plugin supplies its own
scheduler for benchmark runs: loadscope keyed on the case for our items, each other test its own
scope. The controller collects nothing, so which one applies is decided from the first
collection a worker reports: a suite without benchmark cases gets xdist's ``LoadScheduling``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScheduling, LoadScopeScheduling

from .aspects import all_aspect_names
from .discovery import is_case_file, is_dataset_dir


class CaseScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        head, sep, last = nodeid.rpartition("::")
        if sep and last in all_aspect_names():
            return head
        return nodeid


def is_case_nodeid(nodeid: str, rootdir: Path) -> bool:
    """``<case.toml>::<aspect>`` or ``<dataset>::<case>::<aspect>``."""
    first, sep, _rest = nodeid.partition("::")
    if not sep or nodeid.rpartition("::")[2] not in all_aspect_names():
        return False
    path = rootdir / first
    return is_case_file(path) or is_dataset_dir(path)


class CaseAwareScheduling:
    """Holds the workers until the first collection arrives, then hands off to one scheduler."""

    def __init__(self, config: pytest.Config, log: Any) -> None:
        self.config = config
        self.log = log
        self.chosen: Any = None
        self._waiting: list[Any] = []

    def _choose(self, collection: Sequence[str]) -> None:
        rootdir = self.config.rootpath
        benchmark = any(is_case_nodeid(nodeid, rootdir) for nodeid in collection)
        scheduling = CaseScheduling if benchmark else LoadScheduling
        self.chosen = scheduling(self.config, self.log)
        for node in self._waiting:
            self.chosen.add_node(node)
        self._waiting = []

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
        if self.chosen is None:
            self._choose(collection)
        self.chosen.add_node_collection(node, collection)

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
