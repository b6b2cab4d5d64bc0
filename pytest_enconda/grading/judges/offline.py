"""The offline judge: deterministic, no network, and every verdict says why.

What makes two fixes (or two error descriptions) the same in this domain is rarely the prose: it is
the command, flag, package name, version, file path or the action (remove, add, move) they name.
Those appear in backticks and quotes, or as tokens with digits and punctuation (``-L``,
``litgpt[all]``, ``docs/conf.py``, ``3.8``); plain package names are recognised by position (after
``install``) or because the whole fix is a command line. The judge therefore

* normalises both texts (quotes, code fences, Markdown links, whitespace, case),
* weighs tokens: key tokens (code-like) 3, action verbs 2, other words 1, stop words 0,
* for a fix, compares the golden fix with what the prediction *proposes* (in "replace X with Y"
  the X is dropped, so quoting the wrong command does not count for it), accepts it when it covers
  the golden key tokens and most of its words, and rejects it on a version conflict or a token
  substitution (``lhotse`` vs ``lhotse-speech``), naming the tokens in the reason;
* for a description, measures the share of golden key tokens the prediction mentions (*where*)
  and the weighted word overlap (*what*); naming the same command counts only up to
  ``KEY_BONUS_LIMIT`` above the word overlap, because other errors of the same README name the
  same package (score = max(overlap, min(key coverage, overlap + 0.25)) >= 0.5).

How the numbers were chosen: the fix thresholds and the token weights come from the rules above;
the description rule was settled after looking at score distributions on the ``dev`` half of the
labelled set built from the golden files (repositories split by a hash of their name).
``python -m pytest_enconda.bench grading`` prints accuracy, precision and recall on both halves.
``holdout`` is the less optimistic figure, not an untouched one: tokenisation bugs (shell prompts,
the "." of ``pip install -e .``) were fixed from mistakes sampled across both.

Rules added for issue 7 (measured by ``python -m pytest_enconda.bench judge``, a rule-generated
set of rewordings and near misses): version constraints in words ("3.9 to 3.11", "at least 3.9",
"below 3.12", "3.8+") become PEP 440 clauses with one spelling per range; long flags become short
ones (``--editable`` is ``-e``); ``./`` and a trailing ``/`` of a path do not count; the same
command with other flags (or another value of ``-c``) is rejected; an order the prediction
states (before/after, "first … then …", numbered steps, command sequences) that reverses the
golden one is rejected, and one that restates it is accepted.

Known blind spots: paraphrases that share no tokens, equivalent commands written
differently (``3.8+`` vs ``>= 3.8`` is handled, ``pip install a b`` vs two ``pip install`` lines
is not), and near-identical errors of different READMEs. That is what
``--judge llm:<model>`` is for.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from itertools import pairwise

from .base import JudgeRequest, JudgeStats, Verdict
from .offline_text import (
    COMMAND_START,
    FENCE,
    INSTALL_VERBS,
    TRANSLATE,
    VERB_WEIGHT,
    VERBS,
    VERSION,
    Analysis,
    Token,
    analyse,
    clean,
    code_segments,
    code_spans,
    drop_old_values,
    normalise,
)

# What decided a rules verdict: ``ACCEPT``, or the kind of rejection (``version``, ``order``,
# ``command``, ``flag``, ``different <kind>``, ``missing <kind>``, ``missing keys``,
# ``coverage``; ``score`` for a description): the meaning judge vetoes on some and not others.
ACCEPT = "accept"

FIX_KEY_COVERAGE = 0.8
FIX_COVERAGE = 0.6
DESCRIPTION_THRESHOLD = 0.5
KEY_BONUS_LIMIT = 0.25

_BOUNDARY = r"(?<![\w\-.\[/])" + "{}" + r"(?![\w\-\[/]|\.\w)"


def _found(token: str, other: Analysis, key: bool = True) -> bool:
    if token in other.texts() or (not key and token in other.stems()):
        return True
    # A key token glued to punctuation in the other text ("lhotse," or "(docs/conf.py)").
    if len(token) < 2:
        return False
    if re.search(_BOUNDARY.format(re.escape(token)), other.normal):
        return True
    # "imgs/" and "imgs" name the same folder; "src/imgs" does not.
    if token.endswith("/") and len(token) > 2:
        return re.search(_BOUNDARY.format(re.escape(token[:-1])), other.normal) is not None
    return False


_ACTIONS = frozenset(VERBS.values())


def _kind(token: str) -> str:
    if token in _ACTIONS:
        return "action"
    if VERSION.search(token):
        return "version"
    if token.startswith("-"):
        return "flag"
    if "/" in token or re.search(r"\.[a-z]{1,5}$", token):
        return "path"
    return "name"


def _substitutions(golden: Analysis, predicted: Analysis) -> list[tuple[str, str, str]]:
    """Key tokens and actions the prediction replaced: (kind, golden, predicted)."""
    a = golden.sequence(VERB_WEIGHT)
    b = predicted.sequence(VERB_WEIGHT)
    out = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace":
            continue
        old = [t for t in a[i1:i2] if not _found(t, predicted)]
        new = [t for t in b[j1:j2] if t not in golden.texts()]
        if old and new:
            kind = _kind(old[0])
            if kind == "action":
                old, new = old[:1], [t for t in new if t in _ACTIONS][:1] or new[:1]
            elif kind == "name" and i1 > 0 and a[i1 - 1] in INSTALL_VERBS:
                kind = "package name"
            out.append((kind, " ".join(old[:3]), " ".join(new[:3])))
    return out


def _show(token: str) -> str:
    return re.sub(r"-\^([a-z])", lambda m: "-" + m.group(1).upper(), token)


def _quote(tokens: Sequence[str], limit: int = 4) -> str:
    shown = ", ".join(f"'{_show(t)}'" for t in list(tokens)[:limit])
    return shown + (f" (+{len(tokens) - limit} more)" if len(tokens) > limit else "")


def _coverage(golden: Analysis, other: Analysis) -> tuple[float, float, list[Token]]:
    unique = golden.unique()
    total = sum(t.weight for t in unique) or 1.0
    key_total = sum(t.weight for t in unique if t.key)
    missing = [t for t in unique if not _found(t.text, other, t.key)]
    coverage = 1.0 - sum(t.weight for t in missing) / total
    missing_key = sum(t.weight for t in missing if t.key)
    key_coverage = 1.0 - missing_key / key_total if key_total else 1.0
    return coverage, key_coverage, missing


def _command_mismatch(golden: Analysis, predicted_text: str) -> str | None:
    """For a golden command line: what the proposed command adds or reorders, if anything."""
    segments = code_segments(predicted_text)
    if not segments:
        whole = analyse(predicted_text, True)
        if not whole.command_like:
            return None
        segments = (whole,)
    best = max(segments, key=lambda seg: (_coverage(golden, seg)[1], -len(seg.tokens)))
    g_keys = golden.sequence()
    added = [t for t in best.sequence() if not _found(t, golden)]
    if added:
        return f"adds {_kind(added[0])} {_quote(added)} to the golden command"
    found = [t for t in best.sequence() if t in g_keys]
    expected = [t for t in g_keys if t in found]
    if found != expected and sorted(found) == sorted(expected):
        return f"same tokens in a different order: {_quote(found, 6)}"
    return None


# --- flags ---------------------------------------------------------------------------------------

# Flags whose next word is their value: "-c conda-forge" and "-c anaconda" are different flags.
_VALUE_FLAGS = frozenset(
    [
        "-c",
        "-n",
        "-r",
        "-f",
        "-i",
        "-o",
        "-b",
        "-u",
        "-t",
        "-p",
        "--index-url",
        "--extra-index-url",
        "--depth",
        "--branch",
        "--config",
        "--prefix",
        "--target",
        "--python",
        "--channel",
        "--name",
        "--file",
        "--output",
    ]
)
_FLAG = re.compile(r"^--?[a-z^][\w^-]*(?:=\S+)?$")


def _program(words: Sequence[str]) -> tuple[str, list[str]]:
    """The program a command runs (``python -m pip`` counts as ``pip``) and its arguments."""
    words = [w for w in words if w not in ("sudo", "$")]
    if len(words) >= 3 and re.fullmatch(r"python[\d.]*|py", words[0]):
        at = next((i for i, w in enumerate(words) if w == "-m"), -1)
        if at >= 0 and at + 1 < len(words):
            return words[at + 1].replace("pip3", "pip"), words[at + 2 :]
    head = words[0] if words else ""
    return {"pip3": "pip", "python3": "python"}.get(head, head), words[1:]


def _flag_set(args: Sequence[str]) -> set[str]:
    out = set()
    for i, word in enumerate(args):
        if not _FLAG.match(word):
            continue
        if word in _VALUE_FLAGS and i + 1 < len(args) and not args[i + 1].startswith("-"):
            out.add(f"{word} {args[i + 1]}")
        else:
            out.add(word)
    return out


def _commands(text: str) -> list[list[str]]:
    """Commands a text proposes: the whole text when it is a command line, else its code spans."""
    whole = analyse(text, True)
    steps = _steps(text)
    if steps:
        sources = [normalise(step) for step in steps]
    elif whole.command_like:
        sources = [whole.normal.replace("`", " ")]
    else:
        sources = [seg.normal for seg in code_segments(text)]
    out = []
    for source in sources:
        for part in re.split(r"\s(?:&&|;|\|\|)\s", source):
            words = [clean(w) for w in part.split()]
            words = [w for w in words if w]
            if words and (words[0] in COMMAND_START or words[0] == "sudo"):
                out.append(words)
    return out


def _flag_mismatch(golden_text: str, predicted_text: str) -> str | None:
    """The same command with other flags: the near miss token overlap cannot see (E2)."""
    predicted = [_program(c) for c in _commands(predicted_text)]
    for command in _commands(golden_text):
        program, args = _program(command)
        rivals = [p for p in predicted if p[0] == program]
        if not rivals or not program:
            continue
        positional = {a for a in args if not _FLAG.match(a)}
        _, best = max(rivals, key=lambda p: len(positional & set(p[1])))
        if positional and not positional & set(best) and len(positional) > 1:
            continue  # another command of the same program, not this one reworded
        golden_flags, predicted_flags = _flag_set(args), _flag_set(best)
        if golden_flags == predicted_flags:
            continue
        extra = sorted(predicted_flags - golden_flags)
        missing = sorted(golden_flags - predicted_flags)
        shown = _show(" ".join(command))
        if extra and missing:
            return (
                f"different flag in '{shown}': golden {_quote(missing)} vs predicted "
                f"{_quote(extra)}"
            )
        if extra:
            return f"adds flag {_quote(extra)} to '{shown}'"
        return f"missing flag {_quote(missing)} of '{shown}'"
    return None


# --- order ---------------------------------------------------------------------------------------

_ORDER_KEY = re.compile(r"\b(before|after|prior to|once)\b")
_THEN = re.compile(
    # Blanks from the start of their run only (or none: the match may start right after the
    # last one took the blanks): from each blank of a long run the rest was rescanned.
    r",?(?:(?<!\s)\s+)?(?:\band\s++)?\b(?:then|finally|followed by|after that|afterwards|next)\b"
    r",?\s*"
    r"|(?:^|\s)\d+[.)]\s+"  # a numbered list
)
_CLAUSE_END = re.compile(r"(?<=[^\d\s])\.(?=\s|$)|[;\n!?]")


def _operand(text: str) -> frozenset[str]:
    tokens = analyse(text, False).unique()
    words = {t.text for t in tokens if t.text not in _ACTIONS and t.text != "first"}
    # Every word of a command counts, "make" included (a stop word in prose).
    for span in code_spans(normalise(text)):
        words.update(w for w in (clean(w) for w in span.split()) if w)
    return frozenset(words)


def _steps(text: str) -> list[str] | None:
    """A fix that is only commands, one per line or joined by ``&&``: its commands in order."""
    body = FENCE.sub(lambda m: m.group(1), text.translate(TRANSLATE))
    body = re.sub(r"^\s*(?:\d+[.)]|[-*])\s+", "", body, flags=re.M)  # list markers
    parts = [p.strip(" `$") for line in body.splitlines() for p in re.split(r"&&|;", line)]
    parts = [p for p in parts if p]
    if len(parts) < 2:
        return None
    heads = [clean(p.split()[0].lower()) for p in parts]
    if all(h in COMMAND_START or h.startswith("./") for h in heads):
        return parts
    return None


def _relations(text: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """What a text says must happen first: (earlier, later) pairs of token sets."""
    steps = _steps(text)
    if steps:
        sets = [_operand(f"`{s}`") for s in steps]
        return [(a, b) for a, b in pairwise(sets) if a and b]
    body = drop_old_values(normalise(text))
    out = []
    for clause in _CLAUSE_END.split(body):
        match = _ORDER_KEY.search(clause)
        if match:
            left, right = clause[: match.start()], clause[match.end() :]
            if not left.strip(" ,"):
                # "Before X, do Y" / "After X, do Y": the comma ends X.
                x, _, y = right.partition(",")
                first, second = (y, x) if match.group(1) in ("before", "prior to") else (x, y)
            elif match.group(1) in ("before", "prior to"):
                first, second = left, right
            else:
                first, second = right, left
            a, b = _operand(first), _operand(second)
            if a and b:
                out.append((a, b))
            continue
        parts = [p for p in _THEN.split(clause) if p.strip(" ,")]
        sets = [_operand(p) for p in parts]
        out += [(a, b) for a, b in pairwise(sets) if a and b]
    return out


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    # Dice, not containment: "make" must not count as "make install".
    return 2 * len(a & b) / (len(a) + len(b)) if a and b else 0.0


def _order_conflict(golden_text: str, predicted_text: str) -> tuple[str | None, bool]:
    """(reason, agrees): an order the prediction reverses; whether it states the golden order."""
    golden = _relations(golden_text)
    predicted = _relations(predicted_text)
    if not golden or not predicted:
        return None, False
    agrees = True
    for p_first, p_second in predicted:
        best_same = best_flipped = 0.0
        for g_first, g_second in golden:
            same = _overlap(g_first, p_first) + _overlap(g_second, p_second)
            flipped = _overlap(g_first, p_second) + _overlap(g_second, p_first)
            if flipped >= 1.2 and flipped >= same + 0.5:
                first, second = sorted(g_first & p_second), sorted(g_second & p_first)
                return (
                    f"reverses the golden order: {_quote(first, 3)} must come before "
                    f"{_quote(second, 3)}",
                    False,
                )
            best_same, best_flipped = max(best_same, same), max(best_flipped, flipped)
        agrees = agrees and best_same >= 1.5 and best_same > best_flipped
    return None, agrees


def _plain(text: str) -> str:
    # A sentence's final period goes; the "." of "pip install -e ." stays.
    return re.sub(r"(?<=[\w)\]'\"])\.$", "", normalise(text).replace("`", "").strip())


def rules_fix(golden_text: str, predicted_text: str) -> tuple[Verdict, str]:
    """The rules' verdict on a fix and what decided it (``accept`` or a rejection's ``TAGS``)."""
    if _plain(golden_text) == _plain(predicted_text):
        same = Verdict(similar=True, confidence=1.0, reason="same fix after normalising the text")
        return same, ACCEPT
    golden = analyse(golden_text, True)
    predicted = analyse(predicted_text, True)
    coverage, key_coverage, missing = _coverage(golden, predicted)
    missing_keys = [t.text for t in missing if t.key]
    score = 0.5 * key_coverage + 0.5 * coverage
    if golden.versions and predicted.versions and not (golden.versions & predicted.versions):
        return Verdict(
            similar=False,
            confidence=0.9,
            reason=(
                f"different version: golden {_quote(sorted(golden.versions))} vs predicted "
                f"{_quote(sorted(predicted.versions))}"
            ),
        ), "version"
    # A flag, version or path is the whole point of a fix when the golden one names it.
    precise = [t for t in missing_keys if _kind(t) in ("flag", "version", "path")]
    similar = key_coverage >= FIX_KEY_COVERAGE and coverage >= FIX_COVERAGE and not precise
    reversed_order, same_order = _order_conflict(golden_text, predicted_text)
    if reversed_order:
        return Verdict(similar=False, confidence=0.8, reason=reversed_order), "order"
    if not similar and same_order and not precise and not _steps(golden_text) and coverage >= 0.4:
        # "B should come after A" for "Move A before B": the order is the fix, and it agrees.
        return Verdict(
            similar=True,
            confidence=0.7,
            reason=f"states the golden order ({coverage:.0%} of the fix's weight)",
        ), ACCEPT
    if not similar and same_order and _steps(golden_text):
        # "Run `b` after `a`" for the golden sequence "a; b; c": one move that restores the
        # golden order names only the commands it moves.
        spans = code_spans(predicted.normal)
        words = [w for span in spans for w in (clean(x) for x in span.split()) if w]
        added = [w for w in words or predicted.sequence() if not _found(w, golden)]
        if not added:
            return Verdict(
                similar=True,
                confidence=0.7,
                reason="states the golden order of the commands it names",
            ), ACCEPT
    if similar and golden.command_like:
        mismatch = _command_mismatch(golden, predicted_text)
        if mismatch:
            return Verdict(similar=False, confidence=0.8, reason=mismatch), "command"
    if similar:
        flags = _flag_mismatch(golden_text, predicted_text)
        if flags:
            return Verdict(similar=False, confidence=0.8, reason=flags), "flag"
    if similar:
        keys = [t.text for t in golden.unique() if t.key]
        shown = _quote(keys) if keys else "its words"
        reason = f"proposes the golden fix: covers {shown} ({coverage:.0%} of the fix's weight)"
        if missing_keys:
            reason += f"; missing {_quote(missing_keys)}"
        return Verdict(similar=True, confidence=round(min(1.0, score), 3), reason=reason), ACCEPT
    subs = _substitutions(golden, predicted)
    if subs:
        kind, old, new = subs[0]
        reason = f"different {kind}: golden {_quote([old])} vs predicted {_quote([new])}"
        tag = f"different {kind}"
    elif precise:
        reason = f"missing {_kind(precise[0])} {_quote(precise)}"
        tag = f"missing {_kind(precise[0])}"
    elif missing_keys:
        reason = f"does not propose {_quote(missing_keys)}"
        tag = "missing keys"
    else:
        words = [t.text for t in missing]
        reason = f"covers {coverage:.0%} of the golden fix; missing {_quote(words)}"
        tag = "coverage"
    confidence = round(min(1.0, 1.5 - score), 3)
    return Verdict(similar=False, confidence=confidence, reason=reason), tag


def description_near_miss(golden_text: str, predicted_text: str) -> tuple[str, str] | None:
    """(tag, reason) when a description names another version, order or artefact than the
    golden one: what the rules-only judge's score never looked at."""
    golden = analyse(golden_text, False)
    predicted = analyse(predicted_text, False)
    if golden.versions and predicted.versions and not (golden.versions & predicted.versions):
        shown = f"{_quote(sorted(golden.versions))} vs {_quote(sorted(predicted.versions))}"
        return "version", f"different version: golden {shown}"
    reversed_order, _ = _order_conflict(golden_text, predicted_text)
    if reversed_order:
        return "order", reversed_order
    subs = _substitutions(golden, predicted)
    if subs:
        kind, old, new = subs[0]
        return f"different {kind}", f"different {kind}: golden {_quote([old])} vs {_quote([new])}"
    return None


def rules_description(golden_text: str, predicted_text: str) -> tuple[Verdict, str]:
    """The rules-only verdict on a description and ``accept`` or ``score`` (below threshold)."""
    verdict = _judge_description(golden_text, predicted_text)
    return verdict, ACCEPT if verdict.similar else "score"


def _judge_description(golden_text: str, predicted_text: str) -> Verdict:
    if normalise(golden_text) == normalise(predicted_text):
        return Verdict(similar=True, confidence=1.0, reason="same description")
    golden = analyse(golden_text, False)
    predicted = analyse(predicted_text, False)
    g_unique = golden.unique()
    keys = [t for t in g_unique if t.key]
    key_total = sum(t.weight for t in keys)
    found_keys = [t for t in keys if _found(t.text, predicted)]
    key_coverage = sum(t.weight for t in found_keys) / key_total if key_total else 0.0

    g_words = {t.text: t.weight for t in g_unique if not t.key}
    p_words = {t.text: t.weight for t in predicted.unique() if not t.key}
    common = sum(w for word, w in g_words.items() if word in p_words)
    norm = (sum(g_words.values()) * sum(p_words.values())) ** 0.5
    word_sim = common / norm if norm else 0.0
    # A description says *where* (key tokens) and *what* (words). Naming the same command only
    # helps when the words agree too: other errors of the same README name the same package.
    score = max(word_sim, min(key_coverage, word_sim + KEY_BONUS_LIMIT)) if keys else word_sim
    similar = score >= DESCRIPTION_THRESHOLD
    shared_words = sum(1 for word in g_words if word in p_words)
    parts = []
    if keys:
        if found_keys:
            parts.append(f"mentions {_quote([t.text for t in found_keys])}")
        missing = [t.text for t in keys if t not in found_keys]
        if missing:
            parts.append(f"not {_quote(missing)}")
    parts.append(f"{shared_words}/{len(g_words)} golden words in common (overlap {word_sim:.2f})")
    reason = "; ".join(parts) + f"; score {score:.2f}, threshold {DESCRIPTION_THRESHOLD}"
    confidence = min(1.0, 0.5 + abs(score - DESCRIPTION_THRESHOLD))
    return Verdict(similar=similar, confidence=round(confidence, 3), reason=reason)


class OfflineJudge:
    """Token-based judge (``offline-rules``, version 1); a pure function of its inputs, so it
    needs no cache."""

    name = "offline-rules"
    version = "1"

    def __init__(self) -> None:
        self._calls = 0

    def judge(self, request: JudgeRequest) -> Verdict:
        self._calls += 1
        if not request.predicted.strip():
            return Verdict(similar=False, confidence=1.0, reason=f"no {request.aspect} predicted")
        if request.aspect == "fix":
            return rules_fix(request.golden, request.predicted)[0]
        return _judge_description(request.golden, request.predicted)

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[Verdict]:
        label = f"{self.name}/{self.version}"
        return [self.judge(r).model_copy(update={"judge": label}) for r in requests]

    def stats(self) -> JudgeStats:
        return JudgeStats(name=self.name, calls=self._calls, version=self.version)
