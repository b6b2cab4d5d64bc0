"""xdist scheduling: one case, one worker.

``--dist loadgroup`` is broken on pytest 9.2 (pytest-xdist #1386), so the plugin supplies its own
scheduler: loadscope keyed on the case for our items, and each other test its own scope (plain
``load`` behaviour for the rest of a suite).
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

from .items import ALL_ASPECTS


class CaseScheduling(LoadScopeScheduling):
    def _split_scope(self, nodeid: str) -> str:
        head, sep, last = nodeid.rpartition("::")
        if sep and last in ALL_ASPECTS:
            return head
        return nodeid
