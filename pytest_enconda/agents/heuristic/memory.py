"""What the heuristic agent takes from a memory file, and two judgements about README text.

A failing command's error signature is looked up in the memory (BM25, leakage guard on); a
triple whose stored signature says the same thing has its action tried before any rule. Every
lookup is recorded (``agent/memory.json``): which triples were given, which used, which helped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...memory.normalise import concrete, generalise, project_key, signature, tokens

__all__ = ["MemoryConsult", "expected_to_fail", "signature"]

# Share of the failure's words a stored signature must share: BM25 ranks, it does not decide
# whether two errors are the same one.
MATCH = 0.5


def _words(text: str) -> set[str]:
    return {t.lower() for t in tokens(text) if len(t) > 2}


def overlap(failure: str, stored: str) -> float:
    mine, theirs = _words(failure), _words(stored)
    return len(mine & theirs) / len(mine | theirs) if mine and theirs else 0.0


def case_repository(task: Any) -> str:
    return task.case.spec.repository.name or task.case.id


class MemoryConsult:
    def __init__(self, store: Any, names: Sequence[str], repository: str, guard: bool) -> None:
        self.store = store
        self.names = [n for n in names if n]
        self.name = self.names[0] if self.names else project_key(repository)
        self.exclude = [repository, *self.names] if guard else []
        self.events: list[dict[str, Any]] = []
        self.tried: set[str] = set()

    @classmethod
    def open(
        cls, path: str, task: Any, names: Sequence[str], same_repository: bool
    ) -> MemoryConsult:
        from ...memory.store import MemoryStore

        store = MemoryStore(path, readonly=True)
        return cls(store, names, case_repository(task), guard=not same_repository)

    def action_for(self, command: str, output: str) -> tuple[str | None, Any]:
        """The action of the best triple for this failure, if its signature matches."""
        failure = generalise(signature(output), self.names)
        if not failure:
            return None, None
        hits = self.store.search(failure, k=3, exclude_repositories=self.exclude)
        event: dict[str, Any] = {
            "command": command,
            "signature": failure,
            "given": [hit.id for hit in hits],
            "used": None,
            "helped": None,
        }
        self.events.append(event)
        for hit in hits:
            action = concrete(hit.action, self.name)
            if action in self.tried or action.strip() == command.strip():
                continue
            if overlap(failure, hit.signature) < MATCH:
                continue
            self.tried.add(action)
            event["used"] = hit.id
            event["action"] = action
            return action, hit
        return None, None

    def outcome(self, hit: Any, action: str, helped: bool) -> None:
        for event in reversed(self.events):
            if event.get("used") == hit.id:
                event["helped"] = helped
                break

    def save(self, path: Path | None) -> None:
        self.store.close()
        if path is None:
            return
        given = sorted({i for e in self.events for i in e["given"]})
        summary = {
            "memory": str(self.store.path),
            "excluded": self.exclude,
            "given": given,
            "used": sorted({e["used"] for e in self.events if e["used"] is not None}),
            "helped": sorted({e["used"] for e in self.events if e["helped"]}),
            "events": self.events,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")


# Phrases with which a README announces that the command it shows fails on purpose ("if this
# fails, install X" is advice, not an announcement, hence no bare "fails").
_EXPECTED = re.compile(
    r"\b(?:expected to fail|fails with|(?:this|it|which|that) (?:fails|errors out|is rejected)|"
    r"(?:raises|prints|shows|reports|gives) an? (?:\w+ )?error|exits? with an? (?:\w+ )?error|"
    r"is rejected|on purpose|deliberately|intentionally)\b",
    re.IGNORECASE,
)


def expected_to_fail(readme: str, command: str) -> bool:
    """The README says, right before or right after ``command``'s block, that it fails."""
    at = readme.find(command)
    if at < 0:
        return False
    before = readme[:at].rsplit("```", 1)[0].rstrip().rsplit("\n\n", 1)[-1]
    rest = readme[at + len(command) :].split("```", 1)
    after = rest[1].lstrip().split("\n\n", 1)[0] if len(rest) > 1 else ""
    return bool(_EXPECTED.search(before) or _EXPECTED.search(after))
