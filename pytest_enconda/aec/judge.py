"""The trajectory judge of AEC's hybrid evaluation, asked only where the test log is inconclusive.

The question (the AEC paper's): did the trajectory end in a comprehensive test report of the
repository's own tests, and are its intermediate steps plausible and coherent (the environment
really built, the tests really run, nothing faked or skipped)? ``--judge llm:<model>`` asks a
model through the judge plumbing (``LlmJudge.ask``: cache, retries, token accounting); the offline
judge, and any judge that cannot read trajectories, answers ``inconclusive`` and says why: a
deterministic guess would be graded as if it were evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from .testlogs import Verdict

# What the model reads: the last steps, each cut, the whole bounded.
MAX_STEPS = 40
STEP_OUTPUT_CHARS = 1_500
MAX_TRAJECTORY_CHARS = 40_000

SYSTEM_PROMPT = """\
You judge whether an AI agent succeeded at automated environment configuration: configure the \
environment of a repository on an Ubuntu machine from its source code, install it, and run its \
test cases. You read the agent's trajectory (its commands and their outputs) and the output of \
the test command replayed afterwards.
Success means both:
1. The trajectory ends in a comprehensive test report of the repository's own test suite: the \
runner executed tests and reported them (a build that only compiles, a help text, a single \
hand-written check or a claim of success in prose is not a test report).
2. The intermediate steps are plausible and coherent: the environment was really built, the \
tests were not modified, deleted or skipped to pass, and the report is not fabricated.
Answer with only a JSON object, no other text:
{"success": true or false, "confidence": a number from 0 to 1, "reason": "one short sentence"}"""


class TrajectoryJudgement(BaseModel):
    """The judge's part of an ``aec_success`` verdict, recorded whether or not it decided."""

    verdict: Verdict
    judge: str
    reason: str
    confidence: float = 0.0
    evidence: list[str] = Field(default_factory=list, description="the steps it was shown, cut")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None


def render_trajectory(steps: Sequence[Any], limit: int = MAX_TRAJECTORY_CHARS) -> str:
    """The last ``MAX_STEPS`` steps as ``$ command`` / exit code / output tail, bounded."""
    parts = []
    shown = list(steps)[-MAX_STEPS:]
    if len(steps) > len(shown):
        parts.append(f"[{len(steps) - len(shown)} earlier steps not shown]")
    for step in shown:
        command = getattr(step, "command", "") or ""
        output = getattr(step, "output", "") or ""
        thought = (getattr(step, "thought", "") or "").strip()
        if len(output) > STEP_OUTPUT_CHARS:
            output = "…" + output[-STEP_OUTPUT_CHARS:]
        exit_code = getattr(step, "exit_code", None)
        head = f"$ {command}" + (f"   [exit {exit_code}]" if exit_code is not None else "")
        parts.append((f"# {thought[:500]}\n" if thought else "") + head + "\n" + output.rstrip())
    text = "\n\n".join(parts)
    return text if len(text) <= limit else "…" + text[-limit:]


def messages_for(task: str, trajectory: str, test_output: str) -> list[dict[str, str]]:
    user = (
        f"Task: {task}\n\nTrajectory (oldest first):\n<<<\n{trajectory or '(empty)'}\n>>>\n\n"
        f"Replayed test command's output (tail):\n<<<\n{test_output or '(none)'}\n>>>"
    )
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def judge_trajectory(
    judge: Any, task: str, steps: Sequence[Any], test_output: str = ""
) -> TrajectoryJudgement:
    """Ask ``judge`` whether the trajectory succeeded; ``inconclusive`` where it cannot say."""
    name = str(getattr(judge, "name", type(judge).__name__))
    trajectory = render_trajectory(steps)
    evidence = [line for line in trajectory.splitlines() if line.startswith("$ ")][-5:]
    ask = getattr(judge, "ask", None)
    if ask is None:
        return TrajectoryJudgement(
            verdict="inconclusive",
            judge=name,
            reason=f"the {name} judge does not read trajectories (--judge llm:<model> does): "
            "inconclusive rather than a guess",
            evidence=evidence,
        )
    if not steps:
        return TrajectoryJudgement(
            verdict="inconclusive", judge=name, reason="no trajectory to judge (the agent left "
            "no steps)",
        )  # fmt: skip
    answer = ask(messages_for(task, trajectory, test_output[-4000:]))
    base = {
        "judge": name,
        "evidence": evidence,
        "prompt_tokens": answer.prompt_tokens,
        "completion_tokens": answer.completion_tokens,
        "cost_usd": answer.cost_usd,
    }
    if answer.similar is None:
        return TrajectoryJudgement(verdict="inconclusive", reason=answer.reason, **base)
    return TrajectoryJudgement(
        verdict="success" if answer.similar else "failure",
        reason=answer.reason
        or ("the judge said success" if answer.similar else "the judge said failure"),
        confidence=answer.confidence,
        **base,
    )
