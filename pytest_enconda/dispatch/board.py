"""The run's board under ``--dispatch ray``: one actor on the driver's node holds the run's cost
ledger and what each case's task reported (started, finished, on which node), and what a task on
a node calls it through.

``ray`` is imported inside functions only.
"""

from __future__ import annotations

import concurrent.futures
from pathlib import Path
from typing import Any


class RunBoard:
    """The run's cost ledger and progress board (a Ray actor on the driver's node)."""

    def __init__(self, run_dir: str, max_cost: float | None) -> None:
        from ..agents.llm import CostLedger

        self.ledger = CostLedger(Path(run_dir), max_cost)
        self.running: dict[str, str] = {}
        self.attempts: dict[str, list[str]] = {}
        self.done: set[str] = set()
        # The most cases each node ran at once (what its declared resources must bound).
        self.peak: dict[str, int] = {}

    def started(self, case_id: str, node: str) -> None:
        self.running[case_id] = node
        self.attempts.setdefault(case_id, []).append(node)
        self.done.discard(case_id)
        here = sum(1 for other in self.running.values() if other == node)
        self.peak[node] = max(self.peak.get(node, 0), here)

    def finished(self, case_id: str) -> None:
        if self.running.pop(case_id, None) is not None:
            self.done.add(case_id)

    def snapshot(self) -> tuple[dict[str, str], dict[str, list[str]]]:
        return dict(self.running), {key: list(value) for key, value in self.attempts.items()}

    def finished_cases(self) -> list[str]:
        return sorted(self.done)

    def peaks(self) -> dict[str, int]:
        return dict(self.peak)

    def ledger_add(self, cost: float | None) -> Any:
        return self.ledger.add(cost)

    def ledger_state(self) -> Any:
        return self.ledger.state()

    def ledger_exhausted(self) -> str | None:
        return self.ledger.exhausted()


class BoardLedger:
    """``CostLedger``'s interface on a node, answered by the run's one ledger on the driver."""

    def __init__(self, board: Any, max_cost: float | None) -> None:
        self.board = board
        self.max_cost = max_cost

    def add(self, cost: float | None) -> Any:
        return wait_in_thread(self.board.ledger_add.remote(cost))

    def state(self) -> Any:
        return wait_in_thread(self.board.ledger_state.remote())

    def exhausted(self) -> str | None:
        return wait_in_thread(self.board.ledger_exhausted.remote())  # type: ignore[no-any-return]


def wait_in_thread(ref: Any) -> Any:
    """``ray.get`` in a helper thread: Ray releases a task's CPU only while its main thread is
    blocked in ``ray.get``, and a case must keep its CPU (a node declared for one case runs one)."""
    import ray

    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="enconda-board") as pool:
        return pool.submit(ray.get, ref).result()
