"""Judge test doubles, ``--judge verdict-yes`` and ``--judge verdict-no``: each says its word of
every AEC trajectory it is asked about, and grades descriptions and fixes as the offline judge
does.

Registered from a run's conftest.py (``register()``) and, for ``regrade``, in the test's own
process: the same record both times, as a third party's judge would be."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_enconda.grading.judges import JUDGES, JudgeOptions, JudgeRecord
from pytest_enconda.grading.judges.base import JudgeRequest, JudgeStats, Verdict
from pytest_enconda.grading.judges.offline import OfflineJudge

WORDS = ("yes", "no")


class VerdictJudge:
    def __init__(self, says: str) -> None:
        self.name = f"verdict-{says}"
        self.says = says
        self._offline = OfflineJudge()
        self.asked = 0

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        return self._offline.judge_many(requests)

    def ask(self, messages: list[dict[str, Any]]) -> Verdict:
        """``aec.judge.judge_trajectory``'s question: answered by ARG, with a reason naming it."""
        self.asked += 1
        return Verdict(
            similar=self.says == "yes",
            confidence=0.75,
            reason=f"the test double says {self.says}",
            prompt_tokens=11,
            completion_tokens=3,
            cost_usd=0.0,
        )

    def stats(self) -> JudgeStats:
        return JudgeStats(name=self.name, calls=self.asked)


def _record(says: str) -> JudgeRecord:
    def make(arg: str | None, options: JudgeOptions) -> VerdictJudge:
        return VerdictJudge(says)

    return JudgeRecord(
        f"verdict-{says}",
        make,
        argument="none",
        description=f"a test double: says {says} of every trajectory",
    )


def register() -> None:
    for says in WORDS:
        JUDGES.register(_record(says), replace=True)


def unregister() -> None:
    for says in WORDS:
        JUDGES.unregister(f"verdict-{says}")
