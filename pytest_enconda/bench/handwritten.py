"""A judge's agreement with hand-written labels on pairs that no rule of ours generated.

    python -m pytest_enconda.bench judge-handwritten [--data DIR] [--judge offline|llm:<model>]
                                                     [--pairs PATH] [--json PATH]

``benchmark_cases/judge_pairs/pairs.jsonl`` holds description and fix pairs written by hand from
the dev split (criteria: ``benchmark_cases/judge_pairs/CRITERIA.md``): rewordings in varied
styles (positives) and near misses (negatives). A pair stores only a *reference* to its golden
error (the instance folder relative to the dataset root and the error's index) plus the hand-written
candidate, the label, a style tag and a reason; the golden text is read from the dataset here, at
run time. The set is for measurement only: no judge rule is tuned on it, unlike the rule-made set
of ``python -m pytest_enconda.bench judge``, which its own judge can learn.

Each pair is judged with the request grading builds (``grading.diagnosis``: the golden error's
text, its correction candidates and the error type with the other aspect as context). Prints
accuracy and balanced accuracy per aspect, per error type and per style. ``--json`` writes the
figures (never the pairs); ``--json pytest_enconda/grading/judges/offline_agreement.json`` (run
with the offline judge, after pairs are added) refreshes the figures a run's report quotes when
the offline judge graded it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from .. import textio
from ..cases.loader import load_golden
from ..cases.models import GoldenError
from ..errors import CaseFormatError
from ..grading.judges import Judge, JudgeRequest, Verdict, create_judge
from .confusion import Confusion
from .grading import DEFAULT_DATA
from .judge_set import print_table

PAIRS_DIR = Path(__file__).resolve().parents[2] / "benchmark_cases" / "judge_pairs"
DEFAULT_PAIRS = PAIRS_DIR / "pairs.jsonl"
# The tuning sets: the offline judge's constants are chosen on these, never on pairs.jsonl.
TUNING_GLOB = "tuning-*.jsonl"
# Shipped with the package: a run's report quotes it when the offline judge graded the run.

Aspect = Literal["description", "fix"]
MAX_PAIRS_BYTES = 16 << 20
# One set's confusion per key, its skipped pairs and the seconds its verdicts took.
SetFigures = tuple[dict[str, Confusion], int, float]
ErrorTypeName = Literal["E1", "E2", "E4", "E6", "E7", "E8"]


class HandPair(BaseModel):
    """One hand-written pair: a reference to a golden error, a candidate text and its label."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    instance: str = Field(
        description="instance folder relative to the dataset root (instances/<repo>/<instance>)"
    )
    error: int = Field(ge=0, description="index of the golden error in the instance's errors")
    error_type: ErrorTypeName
    aspect: Aspect
    candidate: str = Field(
        default="", description="the hand-written description or fix (or empty: candidate_from)"
    )
    candidate_from: int | None = Field(
        default=None,
        validate_default=True,
        ge=0,
        description="instead of a text: the golden error's own correction candidate of this "
        "index, read from the dataset (its text is never stored here)",
    )
    label: bool = Field(description="true: it matches the golden one (CRITERIA.md)")
    style: str = Field(pattern=r"^[a-z][a-z-]*$", description="how it is written / near-miss kind")
    reason: str = Field(min_length=1, description="one line: why the label")

    @field_validator("instance")
    @classmethod
    def _relative(cls, value: str) -> str:
        parts = value.split("/")
        if len(parts) != 3 or parts[0] != "instances" or any(p in ("", ".", "..") for p in parts):
            raise ValueError(f"expected instances/<repo folder>/<instance folder>, got {value!r}")
        return value

    @field_validator("reason")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("candidate_from")
    @classmethod
    def _one_candidate(cls, value: int | None, info: ValidationInfo) -> int | None:
        text = info.data.get("candidate")
        if text is not None and (text.strip() == "") == (value is None):
            raise ValueError(
                "expected exactly one of candidate (a non-blank text) and candidate_from"
            )
        return value


class PairsFormatError(textio.JsonLinesError):
    """A pairs file that does not validate; the message names each line and field."""

    what = "pairs file"


def load_pairs(path: Path) -> list[HandPair]:
    """Every line of ``path`` as a ``HandPair``; all problems are reported together."""
    pairs: list[HandPair] = []
    problems: list[str] = []
    seen: dict[tuple[str, int, str, str], int] = {}
    try:
        text = textio.decode_utf8(textio.read_input(path, MAX_PAIRS_BYTES))
    except (OSError, ValueError) as exc:
        raise PairsFormatError(path, [f"<file>: cannot be read: {exc}"]) from None
    for number, pair in textio.validated_lines(text, HandPair, problems):
        text = " ".join(pair.candidate.split()) or f"#{pair.candidate_from}"
        key = (pair.instance, pair.error, pair.aspect, text)
        if key in seen:
            problems.append(f"line {number}: candidate: the same pair as line {seen[key]}")
        seen.setdefault(key, number)
        pairs.append(pair)
    if problems:
        raise PairsFormatError(path, problems)
    return pairs


@dataclass
class Resolved:
    pairs: list[tuple[HandPair, GoldenError]] = field(default_factory=list)
    skipped: list[tuple[HandPair, str]] = field(default_factory=list)


def resolve(pairs: Sequence[HandPair], data: Path) -> Resolved:
    """The golden error of each pair, read from ``data``; a pair that cannot be is skipped."""
    out = Resolved()
    cache: dict[str, list[GoldenError] | str] = {}
    for pair in pairs:
        if pair.instance not in cache:
            path = data / pair.instance / "README.json"
            if not path.is_file():
                cache[pair.instance] = f"instance not in the data: {pair.instance}"
            else:
                try:
                    cache[pair.instance] = list(load_golden(path).errors)
                except CaseFormatError as exc:
                    if [f for f, _ in exc.problems] == ["level"]:
                        # The generator caps levelN at 10: the errors themselves are readable.
                        raw = textio.read_json(path, MAX_PAIRS_BYTES)
                        cache[pair.instance] = [
                            GoldenError.model_validate(e) for e in raw.get("errors", [])
                        ]
                    else:
                        cache[pair.instance] = f"unreadable golden file: {exc}"
        errors = cache[pair.instance]
        if isinstance(errors, str):
            out.skipped.append((pair, errors))
        elif pair.error >= len(errors):
            out.skipped.append(
                (pair, f"{pair.instance} has {len(errors)} errors, no index {pair.error}")
            )
        elif errors[pair.error].error_type != pair.error_type:
            out.skipped.append(
                (
                    pair,
                    f"{pair.instance} error {pair.error} is {errors[pair.error].error_type}, "
                    f"the pair says {pair.error_type}",
                )
            )
        elif pair.candidate_from is not None:
            candidates = errors[pair.error].correction_candidates
            if pair.candidate_from >= len(candidates):
                out.skipped.append(
                    (
                        pair,
                        f"{pair.instance} error {pair.error} has {len(candidates)} correction "
                        f"candidates, no index {pair.candidate_from}",
                    )
                )
            else:
                text = candidates[pair.candidate_from]
                out.pairs.append((pair.model_copy(update={"candidate": text}), errors[pair.error]))
        else:
            out.pairs.append((pair, errors[pair.error]))
    return out


def request(pair: HandPair, golden: GoldenError) -> JudgeRequest:
    """The request grading builds for this golden error and this candidate (same context)."""
    from ..agents.base import PredictedError
    from ..grading.diagnosis import _requests

    predicted = PredictedError(
        error_type=golden.error_type,
        error_description=pair.candidate if pair.aspect == "description" else "",
        fix_suggestion=pair.candidate if pair.aspect == "fix" else "",
    )
    return _requests(golden, predicted)[pair.aspect]


def judge_pairs(judge: Judge, resolved: Sequence[tuple[HandPair, GoldenError]]) -> list[Verdict]:
    """Verdicts as grading gets them: the same shortcuts (blank, identical), then the judge."""
    from ..grading.diagnosis import _shortcut

    verdicts: list[Verdict | None] = []
    pending: list[tuple[int, JudgeRequest]] = []
    for i, (pair, golden) in enumerate(resolved):
        req = request(pair, golden)
        short = _shortcut(req.aspect, req.golden, req.predicted)
        verdicts.append(short)
        if short is None:
            pending.append((i, req))
    for (i, _), verdict in zip(pending, judge.judge_many([r for _, r in pending]), strict=True):
        verdicts[i] = verdict
    return [v for v in verdicts if v is not None]


def keys(pair: HandPair) -> list[str]:
    a = pair.aspect
    return [a, f"{a} type {pair.error_type}", f"{a} style {pair.style}"]


def measure(
    judge: Judge, resolved: Sequence[tuple[HandPair, GoldenError]]
) -> tuple[dict[str, Confusion], list[tuple[HandPair, GoldenError, Verdict]]]:
    verdicts = judge_pairs(judge, resolved)
    table: dict[str, Confusion] = {}
    mistakes = []
    for (pair, golden), verdict in zip(resolved, verdicts, strict=True):
        for key in keys(pair):
            table.setdefault(key, Confusion()).add(pair.label, verdict.similar)
        if verdict.similar is not None and verdict.similar != pair.label:
            mistakes.append((pair, golden, verdict))
    return table, mistakes


def summary(table: dict[str, Confusion], judge: str, skipped: int) -> dict[str, Any]:
    """The figures a report quotes: per aspect accuracy, balanced accuracy and counts."""
    from .judge_set import figures

    every = figures(table)
    out: dict[str, Any] = {"judge": judge, "skipped": skipped, "aspects": {}}
    for aspect in ("description", "fix"):
        if aspect in every:
            f = every[aspect]
            out["aspects"][aspect] = {
                k: f[k]
                for k in ("n", "accuracy", "balanced_accuracy", "tpr", "tnr", "judge_errors")
            }
    out["pairs"] = sum(a["n"] + a["judge_errors"] for a in out["aspects"].values())
    out["by_key"] = every
    return out


def pair_files(patterns: Sequence[str], tuning: bool) -> list[Path]:
    """The pairs files named: paths or globs (relative ones also under ``PAIRS_DIR``), in order;
    ``tuning`` adds the tuning sets. Neither: the test set."""
    found: list[Path] = []
    for pattern in [*patterns, *([TUNING_GLOB] if tuning else [])]:
        path = Path(pattern)
        if any(ch in pattern for ch in "*?["):
            matches = sorted(path.parent.glob(path.name))
            if not matches and not path.is_absolute():
                matches = sorted(PAIRS_DIR.glob(pattern))
            if not matches:
                raise FileNotFoundError(f"--pairs {pattern!r}: no file matches")
            found += matches
        else:
            found.append(path)
    return list(dict.fromkeys(found)) or [DEFAULT_PAIRS]


def _show(mistakes: Sequence[tuple[HandPair, GoldenError, Verdict]], limit: int) -> None:
    for pair, golden, verdict in mistakes[:limit]:
        gold = golden.error_description if pair.aspect == "description" else golden.golden_answer
        print(f"\n  {pair.aspect} {pair.error_type} {pair.style} label={pair.label}")
        print(f"    golden:    {' '.join(gold.split())[:200]}")
        print(f"    candidate: {' '.join(pair.candidate.split())[:200]}")
        print(f"    judge:     {verdict.reason[:200]}")


def _one_set(path: Path, judge: Judge, data: Path, show: int) -> SetFigures | None:
    """Print one set's figures; its table, skipped count and seconds (``None``: nothing to do)."""
    resolved = resolve(load_pairs(path), data)
    for pair, why in resolved.skipped:
        print(f"skipped pair ({pair.aspect}, {pair.style}): {why}", file=sys.stderr)
    if not resolved.pairs:
        print(f"skipped {path.name}: none of its pairs' instances is in the data", file=sys.stderr)
        return None
    started = time.perf_counter()
    table, mistakes = measure(judge, resolved.pairs)
    seconds = time.perf_counter() - started
    counts = Counter((p.aspect, p.label) for p, _ in resolved.pairs)
    repos = {p.instance.split("/")[1] for p, _ in resolved.pairs}
    print(
        f"\n{path.name}: {len(resolved.pairs)} pairs ({len(resolved.skipped)} skipped) from "
        f"{len({(p.instance, p.error) for p, _ in resolved.pairs})} golden errors in "
        f"{len(repos)} repositories, judged by {judge_label(judge)} in {seconds:.2f} s"
    )
    for (aspect, label), count in sorted(counts.items()):
        print(f"  {aspect:11s} {'positive' if label else 'negative':8s} {count}")
    print_table(table, "\n(acc = accuracy, bal = balanced accuracy = (TPR + TNR) / 2)")
    _show(mistakes, show)
    return table, len(resolved.skipped), seconds


def judge_label(judge: Judge) -> str:
    """The judge's name, version and embedder, as its statistics say them."""
    stats = judge.stats()
    label = f"{stats.name} version {stats.version}" if stats.version else stats.name
    return f"{label} (embedder {stats.embedder})" if stats.embedder else label


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench judge-handwritten")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="enconda-dev folder")
    parser.add_argument(
        "--pairs",
        action="append",
        default=[],
        help="a pairs file or glob (repeatable; default: the test set pairs.jsonl)",
    )
    parser.add_argument("--tuning", action="store_true", help=f"the tuning sets ({TUNING_GLOB})")
    parser.add_argument("--judge", default="offline", help="offline, offline-rules, llm:<model>")
    parser.add_argument("--judge-api-base", default=None)
    parser.add_argument("--show", type=int, default=0, help="print up to N disagreements")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(list(argv) if argv is not None else None)
    try:
        files = pair_files(args.pairs, args.tuning)
        for path in files:
            load_pairs(path)
    except (OSError, PairsFormatError) as exc:
        print(str(exc), file=sys.stderr)
        return 2
    if not (args.data / "instances").is_dir():
        print(
            f"skipped: no EnConda-Bench data at {args.data} (expected instances/ inside); "
            "the pairs hold references only, their golden text is read from the data",
            file=sys.stderr,
        )
        return 0
    try:
        judge = create_judge(args.judge, api_base=args.judge_api_base)
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    per_set: dict[str, SetFigures] = {}
    for path in files:
        done = _one_set(path, judge, args.data, args.show)
        if done is not None:
            per_set[path.name] = done
    if not per_set:
        return 0
    if args.json:
        args.json.write_text(json.dumps(report(judge, per_set), indent=2) + "\n", encoding="utf-8")
        print(f"\nfigures written to {args.json}")
    return 0


def report(
    judge: Judge, per_set: dict[str, tuple[dict[str, Confusion], int, float]]
) -> dict[str, Any]:
    """The figures ``--json`` writes: every set's pairs together, and each set apart."""
    stats = judge.stats()
    total: dict[str, Confusion] = {}
    for table, _, _ in per_set.values():
        for key, confusion in table.items():
            into = total.setdefault(key, Confusion())
            for count in ("tp", "fp", "fn", "tn", "errors"):
                setattr(into, count, getattr(into, count) + getattr(confusion, count))
    skipped = sum(s for _, s, _ in per_set.values())
    out = summary(total, judge.name, skipped)
    out.update(version=stats.version, embedder=stats.embedder, set=" + ".join(per_set))
    out["seconds"] = round(sum(t for _, _, t in per_set.values()), 3)
    if len(per_set) > 1:
        out["sets"] = {name: summary(t, judge.name, s) for name, (t, s, _) in per_set.items()}
    return out


if __name__ == "__main__":
    sys.exit(main())
