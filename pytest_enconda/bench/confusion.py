"""A judge's verdicts against labels: confusion counts and the figures read from them, shared by
the grading bench, the judge set and the hand-written pairs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Confusion:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    errors: int = 0

    def add(self, label: bool, verdict: bool | None) -> None:
        if verdict is None:
            self.errors += 1
        elif label and verdict:
            self.tp += 1
        elif label:
            self.fn += 1
        elif verdict:
            self.fp += 1
        else:
            self.tn += 1

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    def figures(self) -> dict[str, float | int | None]:
        def ratio(a: int, b: int) -> float | None:
            return a / b if b else None

        return {
            "n": self.n,
            "accuracy": ratio(self.tp + self.tn, self.n),
            "precision": ratio(self.tp, self.tp + self.fp),
            "recall": ratio(self.tp, self.tp + self.fn),
            "f1": ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn),
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
            "judge_errors": self.errors,
        }
