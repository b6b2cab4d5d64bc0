"""Grading one diagnosis: types, descriptions and fixes, under both metric definitions.

*paper* reproduces what EnConda-Bench's evaluator computes (so published numbers can be compared):
sets of types per instance, and a greedy match in prediction order where a pair scores
``0.6·same type + 0.3·confidence·description accepted + 0.1·confidence·fix accepted`` and needs
more than 0.5 (hence the same type). *per-error* is stricter: multisets of types (two E1 errors
need two E1 predictions) and an optimal one-to-one assignment between predictions and golden errors
of the same type, maximising accepted descriptions and fixes.

Both definitions share one verdict per (aspect, golden text, predicted text): every same-type pair
is judged once, in one ``judge_many`` batch, so an LLM judge can run the batch concurrently.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from ..agents.base import PredictedError
from ..aspects import DIAGNOSIS_ASPECTS
from ..cases.models import MAX_GOLDEN_ERRORS, GoldenAnswer, GoldenError
from ..error_types import ERROR_TYPES
from ..errors import RunStopped
from .judges.base import Aspect, Judge, JudgeRequest, Verdict
from .verdict import ItemVerdict

ITEMS = DIAGNOSIS_ASPECTS
# The official evaluator's match score and threshold (error_matcher.py).
PAPER_TYPE_WEIGHT = 0.6
PAPER_DESCRIPTION_WEIGHT = 0.3
PAPER_FIX_WEIGHT = 0.1
PAPER_THRESHOLD = 0.5

_TYPE_PREFIX = re.compile(r"^(E\d+)\b")


class TypeCount(BaseModel):
    tp: int = 0
    fp: int = 0
    fn: int = 0


class JudgedPair(BaseModel):
    """A golden error and a same-type prediction, with both verdicts."""

    golden_index: int
    predicted_index: int
    error_type: str
    description: Verdict
    fix: Verdict


class MatchedPair(BaseModel):
    golden_index: int
    predicted_index: int
    error_type: str
    description_similar: bool | None
    fix_similar: bool | None


class _CaseCounts(BaseModel):
    """Type counts and accepted matched pairs of one instance, under one definition."""

    tp: int
    fp: int
    fn: int
    matched: list[MatchedPair] = Field(default_factory=list)
    description_accepted: int = 0
    fix_accepted: int = 0


class PaperCase(_CaseCounts):
    """EnConda-Bench's numbers for one instance."""

    description_judged: int = Field(
        default=0, description="matched pairs with a verdict (no judge error)"
    )
    fix_judged: int = 0
    description_acc: float | None = Field(
        default=None, description="None: no golden error, or judge errors on every matched pair"
    )
    fix_acc: float | None = None


class PerErrorCase(_CaseCounts):
    description_judge_errors: int = 0
    fix_judge_errors: int = 0


class DiagnosisGrade(BaseModel):
    golden_types: list[str]
    predicted_types: list[str] = Field(description="as graded (normalised when recognisable)")
    invalid_types: list[str] = Field(default_factory=list, description="as the agent wrote them")
    set_counts: dict[str, TypeCount] = Field(description="paper: per-type counts on type sets")
    multiset_counts: dict[str, TypeCount] = Field(description="per-error: on type multisets")
    paper: PaperCase
    per_error: PerErrorCase
    judged: list[JudgedPair] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    items: dict[str, ItemVerdict] = Field(default_factory=dict)

    @property
    def golden_errors(self) -> int:
        return len(self.golden_types)


def normalise_type(raw: str) -> tuple[str, str | None]:
    """The type to grade and, when the agent's spelling was not a known type, the problem."""
    text = raw.strip().upper()
    if text in ERROR_TYPES:
        return text, None if text == raw else f"error type {raw!r} read as {text}"
    match = _TYPE_PREFIX.match(text)
    if match and match.group(1) in ERROR_TYPES:
        return match.group(1), f"error type {raw!r} read as {match.group(1)}"
    expected = ", ".join(ERROR_TYPES)
    return raw, f"unknown error type {raw!r} (expected one of {expected}): graded as a wrong type"


def _type_counts(golden: Sequence[str], predicted: Sequence[str]) -> tuple[dict, dict]:
    g_multi, p_multi = Counter(golden), Counter(predicted)
    set_counts: dict[str, TypeCount] = {}
    multi_counts: dict[str, TypeCount] = {}
    for error_type in sorted(set(g_multi) | set(p_multi)):
        g, p = g_multi[error_type], p_multi[error_type]
        set_counts[error_type] = TypeCount(
            tp=int(g > 0 and p > 0), fp=int(p > 0 and g == 0), fn=int(g > 0 and p == 0)
        )
        both = min(g, p)
        multi_counts[error_type] = TypeCount(tp=both, fp=p - both, fn=g - both)
    return set_counts, multi_counts


def _shortcut(aspect: Aspect, golden: str, predicted: str) -> Verdict | None:
    """Verdicts that need no judge: nothing predicted, or the golden text itself."""
    if not predicted.strip():
        return Verdict(similar=False, confidence=1.0, reason=f"the prediction has no {aspect}")
    if predicted.strip() == golden.strip():
        return Verdict(similar=True, confidence=1.0, reason=f"identical to the golden {aspect}")
    return None


def _requests(golden: GoldenError, predicted: PredictedError) -> dict[Aspect, JudgeRequest]:
    return {
        "description": JudgeRequest(
            aspect="description",
            golden=golden.error_description,
            candidates=list(golden.correction_candidates),
            predicted=predicted.error_description,
            context=f"error type {golden.error_type}; golden fix: {golden.golden_answer}",
        ),
        "fix": JudgeRequest(
            aspect="fix",
            golden=golden.golden_answer,
            candidates=list(golden.correction_candidates),
            predicted=predicted.fix_suggestion,
            context=f"error type {golden.error_type}; error: {golden.error_description}",
        ),
    }


def _judge_pairs(
    golden: Sequence[GoldenError],
    predicted: Sequence[PredictedError],
    types: Sequence[str],
    judge: Judge,
) -> list[JudgedPair]:
    pairs: list[tuple[int, int, dict[Aspect, JudgeRequest]]] = []
    pending: dict[tuple[str, str, str], JudgeRequest] = {}
    known: dict[tuple[str, str, str], Verdict] = {}
    for gi, g in enumerate(golden):
        for pi, p in enumerate(predicted):
            if types[pi] != g.error_type:
                continue
            requests = _requests(g, p)
            for request in requests.values():
                key = request.key()
                if key in known or key in pending:
                    continue
                shortcut = _shortcut(request.aspect, request.golden, request.predicted)
                if shortcut is not None:
                    known[key] = shortcut
                else:
                    pending[key] = request
            pairs.append((gi, pi, requests))
    if pending:
        batch = list(pending.values())
        try:
            verdicts = list(judge.judge_many(batch))
            if len(verdicts) != len(batch):
                raise ValueError(f"{len(verdicts)} verdicts for {len(batch)} requests")
        except RunStopped:
            raise  # --max-cost reached: not graded, which is neither a verdict nor an error
        except Exception as exc:
            # A broken judge (a third-party one, say) is the judge's failure, not the agent's.
            failed = Verdict.judge_error(f"judge {judge.name!r} raised {type(exc).__name__}: {exc}")
            verdicts = [failed] * len(batch)
        for request, verdict in zip(batch, verdicts, strict=True):
            known[request.key()] = verdict
    return [
        JudgedPair(
            golden_index=gi,
            predicted_index=pi,
            error_type=golden[gi].error_type,
            description=known[requests["description"].key()],
            fix=known[requests["fix"].key()],
        )
        for gi, pi, requests in pairs
    ]


def _matched(pair: JudgedPair) -> MatchedPair:
    return MatchedPair(
        golden_index=pair.golden_index,
        predicted_index=pair.predicted_index,
        error_type=pair.error_type,
        description_similar=pair.description.similar,
        fix_similar=pair.fix.similar,
    )


def _paper_score(pair: JudgedPair) -> float:
    score = PAPER_TYPE_WEIGHT
    if pair.description.similar:
        score += PAPER_DESCRIPTION_WEIGHT * pair.description.confidence
    if pair.fix.similar:
        score += PAPER_FIX_WEIGHT * pair.fix.confidence
    return score


def _paper_match(n_predicted: int, judged: Sequence[JudgedPair]) -> list[MatchedPair]:
    """The official greedy match: predictions in order, each takes its best unused golden."""
    by_prediction: dict[int, list[JudgedPair]] = {}
    for pair in judged:
        by_prediction.setdefault(pair.predicted_index, []).append(pair)
    used: set[int] = set()
    matched = []
    for pi in range(n_predicted):
        best: JudgedPair | None = None
        best_score = 0.0
        for pair in sorted(by_prediction.get(pi, []), key=lambda p: p.golden_index):
            if pair.golden_index in used:
                continue
            score = _paper_score(pair)
            if score > best_score and score > PAPER_THRESHOLD:
                best, best_score = pair, score
        if best is not None:
            used.add(best.golden_index)
            matched.append(_matched(best))
    return matched


def _optimal_match(
    n_golden: int, n_predicted: int, judged: Sequence[JudgedPair]
) -> list[MatchedPair]:
    """One-to-one same-type assignment maximising accepted descriptions and fixes."""
    if not judged:
        return []
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    weights = np.zeros((n_golden, n_predicted))
    lookup: dict[tuple[int, int], JudgedPair] = {}
    for pair in judged:
        d = 1.0 if pair.description.similar else 0.0
        f = 1.0 if pair.fix.similar else 0.0
        # 1 for the type, 1 per accepted text; confidences only break ties.
        tie = 1e-3 * (d * pair.description.confidence + f * pair.fix.confidence)
        weights[pair.golden_index, pair.predicted_index] = 1.0 + d + f + tie
        lookup[(pair.golden_index, pair.predicted_index)] = pair
    rows, cols = linear_sum_assignment(weights, maximize=True)
    matched = [
        _matched(lookup[(int(r), int(c))])
        for r, c in zip(rows, cols, strict=True)
        if (int(r), int(c)) in lookup
    ]
    return sorted(matched, key=lambda m: m.golden_index)


def _paper_case(
    n_golden: int, set_counts: dict[str, TypeCount], matched: list[MatchedPair]
) -> PaperCase:
    case = PaperCase(
        tp=sum(c.tp for c in set_counts.values()),
        fp=sum(c.fp for c in set_counts.values()),
        fn=sum(c.fn for c in set_counts.values()),
        matched=matched,
    )
    case.description_accepted = sum(1 for m in matched if m.description_similar)
    case.fix_accepted = sum(1 for m in matched if m.fix_similar)
    case.description_judged = sum(1 for m in matched if m.description_similar is not None)
    case.fix_judged = sum(1 for m in matched if m.fix_similar is not None)
    if n_golden:
        # The official script scores 0 when nothing matched; a matched pair the judge could not
        # grade is left out of the share instead of being counted as "not similar".
        if not matched:
            case.description_acc = case.fix_acc = 0.0
        else:
            if case.description_judged:
                case.description_acc = case.description_accepted / case.description_judged
            if case.fix_judged:
                case.fix_acc = case.fix_accepted / case.fix_judged
    return case


def _per_error_case(multi: dict[str, TypeCount], matched: list[MatchedPair]) -> PerErrorCase:
    return PerErrorCase(
        tp=sum(c.tp for c in multi.values()),
        fp=sum(c.fp for c in multi.values()),
        fn=sum(c.fn for c in multi.values()),
        matched=matched,
        description_accepted=sum(1 for m in matched if m.description_similar),
        fix_accepted=sum(1 for m in matched if m.fix_similar),
        description_judge_errors=sum(1 for m in matched if m.description_similar is None),
        fix_judge_errors=sum(1 for m in matched if m.fix_similar is None),
    )


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _times(n: int, error_type: str) -> str:
    return error_type if n == 1 else f"{n}x {error_type}"


def _types_item(
    golden_types: list[str],
    predicted_types: list[str],
    set_counts: dict[str, TypeCount],
    multi: dict[str, TypeCount],
    invalid: list[str],
) -> ItemVerdict:
    g, p = Counter(golden_types), Counter(predicted_types)
    numbers: dict[str, Any] = {
        "golden_types": golden_types,
        "predicted_types": predicted_types,
        "invalid_types": invalid,
        "paper_type_tp": sum(c.tp for c in set_counts.values()),
        "paper_type_fp": sum(c.fp for c in set_counts.values()),
        "paper_type_fn": sum(c.fn for c in set_counts.values()),
        "per_error_type_tp": sum(c.tp for c in multi.values()),
        "per_error_type_fp": sum(c.fp for c in multi.values()),
        "per_error_type_fn": sum(c.fn for c in multi.values()),
        "type_counts": {
            t: {"set": c.model_dump(), "multiset": multi[t].model_dump()}
            for t, c in set_counts.items()
        },
    }
    if g == p:
        listed = ", ".join(_times(n, t) for t, n in sorted(g.items())) or "none"
        message = "no errors injected, none predicted" if not g else f"types match: {listed}"
        return ItemVerdict(outcome="passed", message=message, numbers=numbers)
    missed, fewer, more, extra, invalid_parts = [], [], [], [], []
    for error_type in sorted(set(g) | set(p)):
        have, want = p[error_type], g[error_type]
        if error_type in invalid:
            invalid_parts.append(f"predicted {_times(have, repr(error_type))}: not an error type")
        elif want and not have:
            missed.append(f"missed {_times(want, error_type)}")
        elif have and not want:
            extra.append(f"predicted {_times(have, error_type)} not in golden")
        elif have < want:
            fewer.append(f"{error_type}: predicted {have} of {want}")
        elif have > want:
            more.append(f"{error_type}: predicted {have}, golden has {want}")
    parts = missed + fewer + more + extra + invalid_parts
    return ItemVerdict(outcome="failed", message="; ".join(parts), numbers=numbers)


def _text_item(
    aspect: Aspect,
    golden: Sequence[GoldenError],
    predicted: Sequence[PredictedError],
    judged: Sequence[JudgedPair],
    paper: PaperCase,
    per_error: PerErrorCase,
    judge_name: str,
) -> ItemVerdict:
    def verdict_of(pair: JudgedPair) -> Verdict:
        return pair.description if aspect == "description" else pair.fix

    def similar(m: MatchedPair) -> bool | None:
        return m.description_similar if aspect == "description" else m.fix_similar

    def golden_text(error: GoldenError) -> str:
        return error.error_description if aspect == "description" else error.golden_answer

    def predicted_text(error: PredictedError) -> str:
        return error.error_description if aspect == "description" else error.fix_suggestion

    by_pair = {(p.golden_index, p.predicted_index): p for p in judged}
    accepted = per_error.description_accepted if aspect == "description" else per_error.fix_accepted
    paper_accepted = paper.description_accepted if aspect == "description" else paper.fix_accepted
    judge_errors = sum(1 for p in judged if verdict_of(p).is_error)
    numbers: dict[str, Any] = {
        "golden_errors": len(golden),
        "per_error_matched": len(per_error.matched),
        "per_error_accepted": accepted,
        "paper_matched": len(paper.matched),
        "paper_accepted": paper_accepted,
        "paper_acc": paper.description_acc if aspect == "description" else paper.fix_acc,
        "judge_errors": judge_errors,
        "pairs": [
            {
                "golden": m.golden_index,
                "predicted": m.predicted_index,
                "type": m.error_type,
                "similar": similar(m),
                "reason": verdict_of(by_pair[(m.golden_index, m.predicted_index)]).reason,
            }
            for m in per_error.matched
        ],
    }
    noun = "description" if aspect == "description" else "fix"
    nouns = "descriptions" if aspect == "description" else "fixes"
    if accepted == len(golden):
        message = (
            f"no injected errors, no {noun} to check"
            if not golden
            else f"all {len(golden)} golden {nouns} matched by an accepted prediction"
        )
        return ItemVerdict(outcome="passed", message=message, numbers=numbers)
    matched = {m.golden_index: m for m in per_error.matched}
    lines = []
    for gi, error in enumerate(golden):
        m = matched.get(gi)
        head = f"golden {error.error_type} '{_clip(golden_text(error))}'"
        if m is None:
            lines.append(f"{head}: no {error.error_type} prediction left to match it")
        elif not similar(m):
            pair = by_pair[(gi, m.predicted_index)]
            lines.append(
                f"{head} matched prediction #{m.predicted_index} "
                f"'{_clip(predicted_text(predicted[m.predicted_index]))}': "
                f"{judge_name} judge: {verdict_of(pair).reason}"
            )
    summary = f"{accepted} of {len(golden)} golden {nouns} accepted"
    message = summary + "\n" + "\n".join(lines)
    # A failure the judge may have caused is not the agent's: report it as an error.
    outcome = "error" if judge_errors else "failed"
    if judge_errors:
        message = f"{judge_errors} judge error(s) while grading {nouns}; " + message
    return ItemVerdict(outcome=outcome, message=message, numbers=numbers)


# Golden files hold at most ``MAX_GOLDEN_ERRORS``; a diagnosis far longer than any golden one is
# noise, and judging it whole would cost golden x predicted judge calls.
MAX_JUDGED_PREDICTIONS = 2 * MAX_GOLDEN_ERRORS


def grade_diagnosis(
    golden: GoldenAnswer, predicted: Sequence[PredictedError], judge: Judge
) -> DiagnosisGrade:
    """Grade one case's diagnosis; pure apart from the judge's calls."""
    problems: list[str] = []
    types: list[str] = []
    invalid: list[str] = []
    for index, error in enumerate(predicted):
        graded, problem = normalise_type(error.error_type)
        types.append(graded)
        if problem:
            problems.append(f"prediction #{index}: {problem}")
        if graded not in ERROR_TYPES:
            invalid.append(graded)
    golden_types = golden.error_types
    set_counts, multi = _type_counts(golden_types, types)
    # Every prediction counts for the types; only the first MAX_JUDGED_PREDICTIONS are judged,
    # so a runaway diagnosis costs bounded judge calls and memory (pairs grow as golden x
    # predicted).
    if len(predicted) > MAX_JUDGED_PREDICTIONS:
        problems.append(
            f"{len(predicted)} predicted errors: only the first {MAX_JUDGED_PREDICTIONS} are "
            "matched and judged (all count for the error types)"
        )
    considered = predicted[:MAX_JUDGED_PREDICTIONS]
    judged = _judge_pairs(golden.errors, considered, types, judge)
    paper = _paper_case(len(golden.errors), set_counts, _paper_match(len(considered), judged))
    per_error = _per_error_case(multi, _optimal_match(len(golden.errors), len(considered), judged))
    grade = DiagnosisGrade(
        golden_types=golden_types,
        predicted_types=types,
        invalid_types=invalid,
        set_counts=set_counts,
        multiset_counts=multi,
        paper=paper,
        per_error=per_error,
        judged=judged,
        problems=problems,
    )
    grade.items = {
        "error_types": _types_item(golden_types, types, set_counts, multi, invalid),
        "descriptions": _text_item(
            "description", golden.errors, predicted, judged, paper, per_error, judge.name
        ),
        "fixes": _text_item("fix", golden.errors, predicted, judged, paper, per_error, judge.name),
    }
    return grade
