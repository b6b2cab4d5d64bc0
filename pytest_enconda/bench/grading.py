"""Grading figures on EnConda-Bench's golden files.

    python -m pytest_enconda.bench grading [--data DIR] [--every 5] [--judge offline]
                                           [--labelled-limit N] [--show N] [--json PATH]

1. Golden replay: every golden file, predicted as itself, graded with the offline judge and
   aggregated; prints the time taken and both definitions' scores (all must be 1.0).
2. Perturbed replays whose scores follow from counting, printed beside what grading gives:
   *swap* exchanges the types of the first two differently-typed errors of each instance;
   *drop* removes the last error of every k-th instance.
3. The judge on a labelled set built from the golden files (see ``build_labelled_set``):
   accuracy, precision, recall and F1 for descriptions and for fixes, confusion counts, and the
   same per kind of pair and per half of the repositories. The offline judge's thresholds were
   chosen looking at the ``dev`` half only; ``holdout`` is the figure to quote.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
import zlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..agents.base import PredictedError
from ..cases.loader import load_golden
from ..cases.models import GoldenAnswer
from ..errors import CaseFormatError
from ..grading.aggregate import CaseResult, aggregate
from ..grading.diagnosis import grade_diagnosis
from ..grading.judges import Judge, JudgeRequest, create_judge
from .confusion import Confusion

DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "enconda-dev"


@dataclass
class Instance:
    id: str
    repo: str
    golden: GoldenAnswer


@dataclass
class Loaded:
    instances: list[Instance] = field(default_factory=list)
    level_from_errors: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def load_instances(data: Path) -> Loaded:
    """Every ``instances/*/*/README.json`` through ``load_golden``.

    A file whose only problem is a ``level`` that disagrees with its number of errors (the
    generator caps ``levelN`` at 10) is read with the level taken from the errors, as the dataset
    importer does, and listed in ``level_from_errors``; other unreadable files are skipped.
    """
    loaded = Loaded()
    for path in sorted((data / "instances").glob("*/*/README.json")):
        instance_id = f"{path.parent.parent.name}/{path.parent.name}"
        try:
            golden = load_golden(path)
        except CaseFormatError as exc:
            if [field for field, _ in exc.problems] != ["level"]:
                loaded.skipped.append((instance_id, str(exc).replace("\n", " ")))
                continue
            try:
                data_json = json.loads(path.read_text(encoding="utf-8"))
                data_json.pop("level", None)
                golden = GoldenAnswer.model_validate(data_json)
            except (ValueError, ValidationError) as inner:
                loaded.skipped.append((instance_id, str(inner).splitlines()[0]))
                continue
            loaded.level_from_errors.append(instance_id)
        loaded.instances.append(Instance(instance_id, path.parent.parent.name, golden))
    return loaded


def golden_predictions(golden: GoldenAnswer) -> list[PredictedError]:
    return [
        PredictedError(
            error_type=e.error_type,
            error_description=e.error_description,
            fix_suggestion=e.golden_answer,
        )
        for e in golden.errors
    ]


def grade_all(
    instances: Sequence[Instance],
    predictions: Sequence[Sequence[PredictedError]],
    judge: Judge,
) -> list[CaseResult]:
    return [
        CaseResult(
            case_id=instance.id,
            level=len(instance.golden.errors),
            diagnosis=grade_diagnosis(instance.golden, preds, judge),
        )
        for instance, preds in zip(instances, predictions, strict=True)
    ]


# --- perturbations with scores that follow from counting ---------------------------------------


def swap_pair(golden: GoldenAnswer) -> tuple[list[PredictedError], tuple[int, int] | None]:
    """Golden predictions with the types of the first two differently-typed errors exchanged."""
    preds = golden_predictions(golden)
    for i in range(len(preds)):
        for j in range(i + 1, len(preds)):
            if preds[i].error_type != preds[j].error_type:
                a, b = preds[i].error_type, preds[j].error_type
                preds[i] = preds[i].model_copy(update={"error_type": b})
                preds[j] = preds[j].model_copy(update={"error_type": a})
                return preds, (i, j)
    return preds, None


def drop_last(golden: GoldenAnswer) -> list[PredictedError]:
    return golden_predictions(golden)[:-1]


def expected_swap(goldens: Sequence[GoldenAnswer]) -> dict[str, float | None]:
    """Scores of the swap replay if the judge rejects the text of one error for another's.

    Type multisets are unchanged, and so are type sets: type P/R/F1 stay 1.0 under both
    definitions. In a swapped instance with n errors, the two swapped predictions can only be
    matched to the other golden error of their new type, whose text is not theirs: 2 of the n
    golden errors lose their accepted description and fix (per-error), and 2 of the n matched
    pairs are rejected (paper share (n - 2) / n).
    """
    golden_errors = sum(len(g.errors) for g in goldens)
    lost = 0
    shares = []
    for golden in goldens:
        n = len(golden.errors)
        if not n:
            continue
        swapped = swap_pair(golden)[1] is not None
        lost += 2 if swapped else 0
        shares.append((n - 2) / n if swapped else 1.0)
    accuracy = (golden_errors - lost) / golden_errors if golden_errors else None
    return {
        "type_f1_paper": 1.0,
        "type_f1_per_error": 1.0,
        "description_acc_paper": sum(shares) / len(shares) if shares else None,
        "description_acc_per_error": accuracy,
        "fix_acc_paper": sum(shares) / len(shares) if shares else None,
        "fix_acc_per_error": accuracy,
    }


def expected_drop(goldens: Sequence[GoldenAnswer], every: int) -> dict[str, float | None]:
    """Scores of the drop replay (the last error of every k-th instance removed; exact).

    Per-error: each dropped error is one FN and one golden error without an accepted text.
    Paper: FN only when the dropped error's type no longer occurs among the predictions; the
    per-instance share stays 1 (all matched pairs are accepted) unless nothing is left (0).
    """
    tp_set = fn_set = tp_multi = fn_multi = golden_errors = dropped = 0
    shares = []
    for index, golden in enumerate(goldens):
        types = golden.error_types
        n = len(types)
        golden_errors += n
        drop = index % every == 0 and n > 0
        kept = types[:-1] if drop else types
        dropped += int(drop)
        tp_multi += len(kept)
        fn_multi += n - len(kept)
        tp_set += len(set(kept))
        fn_set += len(set(types) - set(kept))
        if n:
            shares.append(1.0 if kept else 0.0)
    return {
        "type_f1_paper": 2 * tp_set / (2 * tp_set + fn_set) if tp_set + fn_set else None,
        "type_recall_paper": tp_set / (tp_set + fn_set) if tp_set + fn_set else None,
        "type_f1_per_error": 2 * tp_multi / (2 * tp_multi + fn_multi)
        if tp_multi + fn_multi
        else None,
        "type_recall_per_error": tp_multi / (tp_multi + fn_multi) if tp_multi + fn_multi else None,
        "description_acc_paper": sum(shares) / len(shares) if shares else None,
        "description_acc_per_error": (golden_errors - dropped) / golden_errors
        if golden_errors
        else None,
        "fix_acc_paper": sum(shares) / len(shares) if shares else None,
        "fix_acc_per_error": (golden_errors - dropped) / golden_errors if golden_errors else None,
        "dropped": dropped,
    }


def observed(summary: dict[str, Any]) -> dict[str, float | None]:
    return {
        "type_f1_paper": summary["paper"]["type_f1"],
        "type_recall_paper": summary["paper"]["type_recall"],
        "type_f1_per_error": summary["per_error"]["type_f1"],
        "type_recall_per_error": summary["per_error"]["type_recall"],
        "description_acc_paper": summary["paper"]["description_acc"],
        "description_acc_per_error": summary["per_error"]["description_acc"],
        "fix_acc_paper": summary["paper"]["fix_acc"],
        "fix_acc_per_error": summary["per_error"]["fix_acc"],
    }


# --- labelled set for the judge ----------------------------------------------------------------


@dataclass(frozen=True)
class LabelledPair:
    aspect: str
    kind: str
    golden: str
    predicted: str
    similar: bool
    split: str
    candidates: tuple[str, ...] = ()
    error_type: str = ""


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"])")


def _is_command(text: str) -> bool:
    """A one-line golden fix without prose: the only kind "Replace `X` with `Y`" suits."""
    return (
        "`" not in text
        and "\n" not in text.strip()
        and not text.rstrip().endswith(".")
        and len(text.split()) <= 15
    )


def _normal(text: str) -> str:
    return " ".join(text.replace("`", "").split()).strip(" .").lower()


def build_labelled_set(instances: Iterable[Instance]) -> list[LabelledPair]:
    """Pairs (golden text, predicted text, label) derived from the golden files.

    Fixes: each error's ``golden_answer`` against its ``correction_candidates`` that differ
    from it (plausible wrong fixes, negative); "Replace `wrong` with `golden`" (positive) and
    "Replace `golden` with `wrong`" (negative) for one-line command fixes; the golden command
    in a fenced code block (positive). Descriptions: each description against the descriptions
    of the other errors of the same README (negative; same-type ones separately, as grading
    only ever compares same-type pairs), and against its own first sentence when it has several
    (positive: a terser statement of the same error). Positives are synthetic by necessity:
    the data holds one description per error. Pairs are deduplicated; ``split`` halves the
    repositories by a hash of their name.
    """
    pairs: list[LabelledPair] = []
    seen: set[tuple[str, str, str]] = set()

    error_type = ""

    def add(aspect: str, kind: str, golden: str, predicted: str, label: bool, split: str, cands=()):
        key = (aspect, golden, predicted)
        if key not in seen:
            seen.add(key)
            pairs.append(
                LabelledPair(
                    aspect, kind, golden, predicted, label, split, tuple(cands), error_type
                )
            )

    for instance in instances:
        split = "dev" if zlib.crc32(instance.repo.encode()) % 2 == 0 else "holdout"
        errors = instance.golden.errors
        for i, error in enumerate(errors):
            error_type = error.error_type
            sentences = _SENTENCE.split(error.error_description.strip())
            if len(sentences) >= 2 and len(sentences[0].split()) >= 5:
                add(
                    "description",
                    "first-sentence",
                    error.error_description,
                    sentences[0],
                    True,
                    split,
                )
            for j, other in enumerate(errors):
                if j == i or other.error_description == error.error_description:
                    continue
                if other.golden_answer == error.golden_answer:
                    continue
                kind = (
                    "other-error-same-type"
                    if other.error_type == error.error_type
                    else ("other-error-other-type")
                )
                add(
                    "description",
                    kind,
                    error.error_description,
                    other.error_description,
                    False,
                    split,
                )
            golden = error.golden_answer
            cands = error.correction_candidates
            for candidate in cands:
                if _normal(candidate) == _normal(golden):
                    continue
                add("fix", "wrong-candidate", golden, candidate, False, split, cands)
                if _is_command(golden) and _is_command(candidate):
                    add(
                        "fix",
                        "replace-wrong-with-golden",
                        golden,
                        f"Replace `{candidate}` with `{golden}`.",
                        True,
                        split,
                        cands,
                    )
                    add(
                        "fix",
                        "replace-golden-with-wrong",
                        golden,
                        f"Replace `{golden}` with `{candidate}`.",
                        False,
                        split,
                        cands,
                    )
            if _is_command(golden):
                add(
                    "fix",
                    "golden-in-code-block",
                    golden,
                    f"Run the corrected command:\n```bash\n{golden}\n```",
                    True,
                    split,
                    cands,
                )
    return pairs


def evaluate_judge(
    judge: Judge, pairs: Sequence[LabelledPair]
) -> tuple[dict[str, Confusion], list[tuple[LabelledPair, str]]]:
    """Confusion counts keyed ``aspect``, ``aspect/split`` and ``aspect/kind``; the mistakes."""
    requests = [
        JudgeRequest(
            aspect=p.aspect,  # type: ignore[arg-type]
            golden=p.golden,
            candidates=list(p.candidates),
            predicted=p.predicted,
        )
        for p in pairs
    ]
    verdicts = judge.judge_many(requests)
    table: dict[str, Confusion] = {}
    mistakes = []
    for pair, verdict in zip(pairs, verdicts, strict=True):
        for key in (pair.aspect, f"{pair.aspect}/{pair.split}", f"{pair.aspect}/{pair.kind}"):
            table.setdefault(key, Confusion()).add(pair.similar, verdict.similar)
        if verdict.similar is not None and verdict.similar != pair.similar:
            mistakes.append((pair, verdict.reason))
    return table, mistakes


# --- output ------------------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def _print_scores(title: str, summary: dict[str, Any]) -> None:
    print(title)
    for key in ("paper", "per_error"):
        block = summary[key]
        print(
            f"  {key:9s}  type P {_fmt(block['type_precision'])}  R {_fmt(block['type_recall'])}"
            f"  F1 {_fmt(block['type_f1'])}  description ACC {_fmt(block['description_acc'])}"
            f"  fix ACC {_fmt(block['fix_acc'])}"
        )


def _print_comparison(title: str, expected: dict[str, Any], seen: dict[str, Any]) -> None:
    print(title)
    for key, value in expected.items():
        if key in seen:
            mark = "ok" if value is not None and abs(value - (seen[key] or 0.0)) < 1e-9 else "≠"
            print(f"  {key:27s} expected {_fmt(value)}  graded {_fmt(seen[key])}  {mark}")
        else:
            print(f"  {key:27s} {_fmt(value)}")


def _load(data: Path, figures: dict[str, Any]) -> list[Instance]:
    started = time.perf_counter()
    loaded = load_instances(data)
    load_time = time.perf_counter() - started
    instances = loaded.instances
    print(
        f"loaded {len(instances)} golden files in {load_time:.2f} s "
        f"({len(loaded.level_from_errors)} with level taken from the number of errors, "
        f"{len(loaded.skipped)} skipped)"
    )
    for instance_id, reason in loaded.skipped[:10]:
        print(f"  skipped {instance_id}: {reason}")
    figures["loaded"] = len(instances)
    figures["skipped"] = loaded.skipped
    figures["level_from_errors"] = len(loaded.level_from_errors)
    return instances


def _golden_replay(instances: list[Instance], judge: Judge, figures: dict[str, Any]) -> None:
    """1. The golden answers graded as predictions: every score is 1 unless grading is wrong."""
    goldens = [i.golden for i in instances]
    predictions = [golden_predictions(g) for g in goldens]
    started = time.perf_counter()
    results = grade_all(instances, predictions, judge)
    summary = aggregate(results).to_summary_json("golden-replay", None, judge.stats())
    replay_time = time.perf_counter() - started
    errors = sum(len(g.errors) for g in goldens)
    print(
        f"\ngolden replay: graded and aggregated {len(results)} instances ({errors} errors) in "
        f"{replay_time:.2f} s with the offline judge ({judge.stats().calls} judge verdicts)"
    )
    _print_scores("golden replay scores", summary)
    not_passed = [
        (r.case_id, name, item.message)
        for r in results
        if r.diagnosis is not None
        for name, item in r.diagnosis.items.items()
        if item.outcome != "passed"
    ]
    print(f"  items not passed: {len(not_passed)}")
    for case_id, name, message in not_passed[:5]:
        print(f"    {case_id}::{name}: {message.splitlines()[0]}")
    figures["golden_replay"] = {"seconds": replay_time, **observed(summary)}


def _swap_replay(instances: list[Instance], judge: Judge, figures: dict[str, Any]) -> None:
    """2a. The types of one pair exchanged, against the scores that exchange should give."""
    goldens = [i.golden for i in instances]
    swapped = [swap_pair(g)[0] for g in goldens]
    swap_results = grade_all(instances, swapped, judge)
    swap_summary = aggregate(swap_results).to_summary_json("swap", None)
    n_swapped = sum(1 for g in goldens if swap_pair(g)[1] is not None)
    print()
    _print_comparison(
        f"swap replay: types of one pair exchanged in {n_swapped} instances "
        "(expected assumes the judge rejects one error's text for another's)",
        expected_swap(goldens),
        observed(swap_summary),
    )
    cross = Counter()
    for result in swap_results:
        assert result.diagnosis is not None
        for pair in result.diagnosis.per_error.matched:
            if pair.golden_index != pair.predicted_index:
                cross["pairs"] += 1
                cross["descriptions"] += int(bool(pair.description_similar))
                cross["fixes"] += int(bool(pair.fix_similar))
    print(
        f"  the judge accepted {cross['descriptions']} descriptions and {cross['fixes']} fixes "
        f"of {cross['pairs']} matched pairs of different errors (the difference above)"
    )
    figures["swap"] = {"expected": expected_swap(goldens), "graded": observed(swap_summary)}


def _drop_replay(
    instances: list[Instance], judge: Judge, every: int, figures: dict[str, Any]
) -> None:
    """2b. The last error left out of every ``every``-th instance: the scores are exact."""
    goldens = [i.golden for i in instances]
    dropped = [
        drop_last(g) if i % every == 0 else golden_predictions(g) for i, g in enumerate(goldens)
    ]
    drop_summary = aggregate(grade_all(instances, dropped, judge)).to_summary_json("drop", None)
    print()
    _print_comparison(
        f"drop replay: last error removed in every {every}th instance (exact)",
        expected_drop(goldens, every),
        observed(drop_summary),
    )
    figures["drop"] = {
        "expected": expected_drop(goldens, every),
        "graded": observed(drop_summary),
    }


def _labelled_set(
    instances: list[Instance], judge: Judge, args: argparse.Namespace, figures: dict[str, Any]
) -> None:
    """3. The judge on labelled pairs: its accuracy per aspect and kind, and its mistakes."""
    pairs = build_labelled_set(instances)
    if args.labelled_limit and args.labelled_limit < len(pairs):
        pairs = random.Random(0).sample(pairs, args.labelled_limit)
    eval_judge = (
        judge if args.judge == "offline" else create_judge(args.judge, api_base=args.judge_api_base)
    )
    started = time.perf_counter()
    table, mistakes = evaluate_judge(eval_judge, pairs)
    judge_time = time.perf_counter() - started
    kinds = Counter((p.aspect, p.kind, p.similar) for p in pairs)
    print(f"\nlabelled set: {len(pairs)} pairs, judged by {eval_judge.name} in {judge_time:.2f} s")
    for (aspect, kind, label), count in sorted(kinds.items()):
        print(f"  {aspect:11s} {kind:26s} {'similar' if label else 'different':9s} {count}")
    print(
        f"\n  {'':34s} {'n':>6s} {'acc':>7s} {'prec':>7s} {'recall':>7s} {'F1':>7s}"
        f" {'tp':>6s} {'fp':>6s} {'fn':>6s} {'tn':>6s} {'err':>4s}"
    )
    for key in sorted(table):
        f = table[key].figures()
        print(
            f"  {key:34s} {f['n']:6d} {_fmt(f['accuracy']):>7s} {_fmt(f['precision']):>7s}"
            f" {_fmt(f['recall']):>7s} {_fmt(f['f1']):>7s} {f['tp']:6d} {f['fp']:6d}"
            f" {f['fn']:6d} {f['tn']:6d} {f['judge_errors']:4d}"
        )
    figures["labelled"] = {key: c.figures() for key, c in table.items()}
    figures["labelled_seconds"] = judge_time
    if args.show:
        by_kind: dict[str, list[tuple[LabelledPair, str]]] = {}
        for pair, reason in mistakes:
            by_kind.setdefault(f"{pair.aspect}/{pair.kind}", []).append((pair, reason))
        rng = random.Random(1)
        for key, items in sorted(by_kind.items()):
            print(f"\n  mistakes in {key} ({len(items)}), a sample:")
            for pair, reason in rng.sample(items, min(args.show, len(items))):
                print(f"    golden:    {' '.join(pair.golden.split())[:150]}")
                print(f"    predicted: {' '.join(pair.predicted.split())[:150]}")
                print(f"    judge:     {reason[:150]}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pytest_enconda.bench grading")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="enconda-dev folder")
    parser.add_argument("--every", type=int, default=5, help="drop replay: every k-th instance")
    parser.add_argument("--judge", default="offline", help="judge for the labelled set")
    parser.add_argument("--judge-api-base", default=None)
    parser.add_argument("--labelled-limit", type=int, default=0, help="random sample of pairs")
    parser.add_argument("--show", type=int, default=5, help="judge mistakes shown per kind")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here")
    args = parser.parse_args(list(argv) if argv is not None else None)

    if not (args.data / "instances").is_dir():
        print(f"no EnConda-Bench data at {args.data} (expected instances/ inside)", file=sys.stderr)
        return 2
    figures: dict[str, Any] = {}
    instances = _load(args.data, figures)
    judge = create_judge("offline")
    _golden_replay(instances, judge, figures)
    _swap_replay(instances, judge, figures)
    _drop_replay(instances, judge, args.every, figures)
    _labelled_set(instances, judge, args, figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"\nfigures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
