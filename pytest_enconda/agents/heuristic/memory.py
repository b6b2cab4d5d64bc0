"""What the heuristic agent takes from a memory file, and two judgements about README text.

A failing command's error signature is looked up in the memory: BM25 and, when the file holds
vectors, dense retrieval, fused by reciprocal rank (``memory/hybrid.py``), leakage guard on. The
best triple whose fused score reaches ``FUSED_MIN`` per list has its action tried before any
rule. Every lookup is recorded (``agent/memory.json``): which triples were given with their
ranks, which used, which helped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...memory.hybrid import RRF_K
from ...memory.normalise import concrete, generalise, project_key, signature

__all__ = ["MemoryConsult", "expected_to_fail", "signature"]

# The fused score a triple needs, per list the lookup fused (BM25 alone: one; hybrid: two), to
# have its action tried: the score of rank MATCH_RANK in each list. With two lists it exceeds
# anything one list alone gives (1 / (RRF_K + 1)), so a hybrid match needs both: the words and
# the meaning, the dense list holding only triples at cosine TRY_MIN_COSINE or more (stricter
# than retrieval's floor: a tried action costs a command). Chosen on the labelled pairs
# (scripts/memory_retrieval_bench.py; the 8 triples of 7 diagnosis cases' heuristic runs, the 42
# pairs whose action they hold): the relevant triple passes for 0.62 of the pairs, the best
# triple left when the memory lacks the relevant one for 0.07; the word-overlap rule it
# replaces passed 0.45 and 0.00.
MATCH_RANK = 2
TRY_MIN_COSINE = 0.90
FUSED_MIN = 1.0 / (RRF_K + MATCH_RANK)


def case_repository(task: Any) -> str:
    return task.case.spec.repository.name or task.case.id


class MemoryConsult:
    def __init__(
        self, store: Any, names: Sequence[str], repository: str, guard: bool, embedder: Any = None
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.names = [n for n in names if n]
        self.name = self.names[0] if self.names else project_key(repository)
        self.exclude = [repository, *self.names] if guard else []
        self.events: list[dict[str, Any]] = []
        self.tried: set[str] = set()

    @classmethod
    def open(
        cls,
        path: str,
        task: Any,
        names: Sequence[str],
        same_repository: bool,
        embedder: str | None = None,
        embedding_api_base: str | None = None,
    ) -> MemoryConsult:
        """The memory file and its embedder: ``embedder`` (``none``: BM25 alone), else the one
        the file was built with (a file without vectors: BM25 alone)."""
        from ...memory.hybrid import resolve_embedder
        from ...memory.store import MemoryStore

        store = MemoryStore(path, readonly=True)
        try:
            chosen = resolve_embedder(store, embedder, embedding_api_base)
        except BaseException:
            store.close()
            raise
        return cls(store, names, case_repository(task), not same_repository, chosen)

    def action_for(self, command: str, output: str) -> tuple[str | None, Any]:
        """The action of the best triple for this failure, if its fused score is enough."""
        from ...memory.hybrid import fuse

        failure = generalise(signature(output), self.names)
        if not failure:
            return None, None
        ranked = fuse(
            self.store, [failure], self.exclude, self.embedder, min_cosine=TRY_MIN_COSINE
        )[:3]
        lists = 1 if self.embedder is None else 2
        event: dict[str, Any] = {
            "command": command,
            "signature": failure,
            "method": "bm25" if self.embedder is None else "hybrid",
            "given": [entry.hit.id for entry in ranked],
            "ranks": [entry.to_json() for entry in ranked],
            "used": None,
            "helped": None,
        }
        self.events.append(event)
        for entry in ranked:
            hit = entry.hit
            action = concrete(hit.action, self.name)
            if action in self.tried or action.strip() == command.strip():
                continue
            if entry.fused < lists * FUSED_MIN:
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
            "embedder": None if self.embedder is None else self.embedder.name,
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
