"""Triples from one trajectory: offline (failing command, its error, the command that made it
pass) or through a model (``llm:<model>``, the experience-extraction prompt).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Sequence
from typing import Any

from ..textio import JsonError, parse_json
from .normalise import generalise, signature
from .store import Triple
from .trajectories import Trace, TraceStep

# Steps that are commands of the agent (probes only look around; notes carry no command).
_RUN_KINDS = ("command", "action", "setup")
# How far after a failure its repair is looked for: a fix further away is rarely that fix.
WINDOW = 8
_FINDING = re.compile(r"^(?P<type>E\d+|repair \(not a README error\)) \[(?P<rule>[^\]]+)\]: "
                      r"(?P<desc>.*?)(?: Fix: (?P<fix>.*))?$", re.DOTALL)  # fmt: skip


def _runs(step: TraceStep) -> bool:
    return step.kind in _RUN_KINDS and bool(step.command.strip())


def _program(command: str) -> list[str]:
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    return [w for w in words if "=" not in w or w.startswith("-")][:2]


def _same_step(failed: str, later: str) -> bool:
    """``later`` retries ``failed`` (itself, or a corrected form of the same program)."""
    if later.strip() == failed.strip():
        return True
    a, b = _program(failed), _program(later)
    return bool(a and b and a[0] == b[0] and (len(a) < 2 or len(b) < 2 or a[1] == b[1]))


def _operands(command: str) -> set[str]:
    """The words after the program's own two (``pip install``, ``python -m``) that are no option."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    return {w for w in words[2:] if not w.startswith("-")}


def _corrects(failed: str, later: str, finding: re.Match[str] | None) -> bool:
    """``later``, a different command of ``failed``'s program, is its corrected form: the finding
    on ``failed`` names it as the fix, or it keeps one of ``failed``'s operands. Two pip installs
    of unrelated packages are not (hazm: `pip install pytest` passing after a failed `pip install
    git+https://...` was taken as its repair)."""
    if finding is not None and later.strip() in (finding.group("fix") or ""):
        return True
    return bool(_operands(failed) & _operands(later))


def offline_triples(
    trace: Trace, names: Sequence[str] = (), workdir: str = "/data/project"
) -> list[Triple]:
    """Each failure repaired within the trajectory: a failing command and its error signature,
    then what made it (or its corrected form) pass; the heuristic agent's finding, if recorded
    in between, gives the root cause and the error type."""
    steps = trace.steps
    triples: list[Triple] = []
    repaired: set[str] = set()
    failed_before = {s.command for s in steps if _runs(s) and s.exit_code not in (0, None)}
    for i, failed in enumerate(steps):
        if not _runs(failed) or failed.exit_code in (0, None) or failed.command in repaired:
            continue
        sig = signature(failed.output)
        if not sig:
            continue
        finding: re.Match[str] | None = None
        fixes: list[str] = []
        action = ""
        for later in steps[i + 1 : i + 1 + WINDOW]:
            if later.kind == "finding" and finding is None:
                # A finding is this failure's only if it quotes the failed command: the agent
                # may diagnose another step in between.
                if f"`{failed.command}`" in later.thought:
                    finding = _FINDING.match(later.thought)
                continue
            if not _runs(later):
                continue
            if _same_step(failed.command, later.command) and (
                later.command.strip() == failed.command.strip()
                or _corrects(failed.command, later.command, finding)
            ):
                if later.exit_code != 0:
                    continue
                if later.command.strip() != failed.command.strip():
                    action = later.command  # the corrected command is the repair
                elif fixes:
                    action = " && ".join(fixes)
                break
            if later.exit_code == 0 and later.command not in failed_before:
                # A check that failed earlier and passes now is a beneficiary, not the fix.
                fixes.append(later.command)
        if not action:
            continue
        repaired.add(failed.command)
        error_type = None
        if finding is not None and finding.group("type").startswith("E"):
            error_type = finding.group("type")
        cause = finding.group("desc").strip() if finding else f"the command failed with '{sig}'"
        solution = (
            f"Root cause: {cause} Fix: {finding.group('fix') or action}"
            if finding
            else f"Root cause: {cause}. Running `{action}` made it pass."
        )
        triples.append(
            Triple(
                problem=generalise(f"`{failed.command}` fails: {sig}", names, workdir),
                solution=generalise(solution, names, workdir),
                action=generalise(action, names, workdir),
                signature=generalise(sig, names, workdir),
                error_type=error_type,
            )
        )
    return triples


# ---------------------------------------------------------------------- through a model


def render_trace(trace: Trace, limit: int = 60_000) -> str:
    """The trajectory as the extraction prompt shows it: commands, exit codes, output tails."""
    parts = []
    for number, step in enumerate(trace.steps, 1):
        if step.kind in ("finding", "note", "static", "skip") and step.thought:
            parts.append(f"[{number}] ({step.kind}) {step.thought[:600]}")
        elif step.command:
            tail = step.output[-1200:]
            parts.append(f"[{number}] $ {step.command}\n(exit {step.exit_code})\n{tail}")
    text = "\n\n".join(parts)
    return text if len(text) <= limit else text[: limit // 2] + "\n...\n" + text[-limit // 2 :]


def _fenced_objects(content: str) -> Iterator[str]:
    """The text between each two fences (an optional ``json`` tag and blanks stripped) that is
    braced like an object, in order. Split, not matched: a lazy brace-to-fence regex tried
    from every fence costs a text of many unclosed fences its length squared."""
    pieces = content.split("```")
    for piece in pieces[1:-1]:
        body = piece.removeprefix("json").strip()
        if body.startswith("{") and body.endswith("}"):
            yield body


def parse_json_answer(content: str) -> dict[str, Any]:
    """The JSON object in a model's answer (bare, fenced, or amid prose); ``{}`` if none."""
    fenced = next(_fenced_objects(content), None)
    candidates = [fenced] if fenced is not None else []
    start, end = content.find("{"), content.rfind("}")
    if start != -1 and end > start:
        candidates.append(content[start : end + 1])
    for candidate in candidates:
        try:
            value = parse_json(candidate)
        except JsonError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def llm_triples(
    trace: Trace,
    complete: Any,
    names: Sequence[str] = (),
    workdir: str = "/data/project",
) -> list[Triple]:
    """Triples the model extracts (``complete(messages) -> text``), normalised like the offline
    ones: a model asked for repository-agnostic text still leaks names now and then."""
    from .prompts import extraction_messages

    answer = parse_json_answer(complete(extraction_messages(render_trace(trace))))
    out = []
    for raw in answer.get("triples") or []:
        if not isinstance(raw, dict):
            continue
        problem, solution, action = (str(raw.get(k) or "").strip()
                                     for k in ("problem", "solution", "action"))  # fmt: skip
        if not (problem and solution and action):
            continue
        out.append(
            Triple(
                problem=generalise(problem, names, workdir),
                solution=generalise(solution, names, workdir),
                action=generalise(action, names, workdir),
                signature=generalise(signature(problem) or problem[:240], names, workdir),
                source="llm",
            )
        )
    return out
