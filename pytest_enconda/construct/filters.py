"""Offline filters of an injected error (and a judge's, where a model is given).

Offline, without running anything:

- **visible**: every edited line of the erroneous README is a command the literal reader runs
  (the error is in the README's commands, not in prose it skips), or an order swap of two;
- **fix differs**: the golden answer is not the erroneous text;
- **type rule**: the edit is of the kind its type names (E1 an install command, E2 an option or
  subcommand changed, E4 a path that the tree lacks, E6 two commands swapped unchanged, E7 a
  version bound or interpreter version, E8 anything else on a command line);
- **fix restores**: applying the golden answer to the erroneous lines gives back the original
  commands (the repair that ``verify`` proved to pass).

With a judge (``llm:<model>``): the judge must find the label's golden answer the same fix as
the original command, and its description the same error as the edit.
"""

from __future__ import annotations

import re
import shlex

from .injection_facts import RepoFacts, command_lines
from .models import Injection, apply_edits

__all__ = ["judge_filter", "offline_filter"]

_INSTALL = re.compile(
    r"\b(?:pip3?|conda|mamba|micromamba|apt-get|apt|uv pip|poetry|pipenv|yum|dnf|brew)\s+"
    r"(?:-\S+\s+)*(?:install|add|sync)\b"
)
_VERSION = re.compile(r"(?:[<>=!~]=?\s*\d|python3\.\d+)")


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _command_of(readme: str, number: int, readme_name: str) -> str | None:
    for cmd in command_lines(readme, readme_name):
        if cmd.line == number:
            return cmd.command
    return None


def offline_filter(
    injection: Injection, original: str, facts: RepoFacts, readme_name: str = "README.md"
) -> str | None:
    """None when the injection passes every offline check, else the first reason it fails.

    ``readme_name`` decides how commands are read (an RST ``::`` block is a command in
    ``README.rst`` only), exactly as the literal agent that validates the README reads them.
    """
    try:
        broken = apply_edits(original, list(injection.edits))
    except ValueError as exc:
        return f"edit does not apply to the original README: {exc}"
    label = injection.label
    new_commands = []
    old_commands = []
    for edit in injection.edits:
        new = _command_of(broken, edit.line, readme_name)
        old = _command_of(original, edit.line, readme_name)
        if new is None:
            return f"not visible: line {edit.line + 1} ({edit.new.strip()!r}) is not a command"
        if old is None:
            return f"line {edit.line + 1} of the original README is not a command"
        new_commands.append(new)
        old_commands.append(old)
    golden = label.golden_answer.strip()
    if golden in ("\n".join(new_commands), *new_commands):
        return "the golden answer is the erroneous text"
    pairs = sorted(zip(injection.edits, old_commands, strict=True), key=lambda p: p[0].line)
    fixed = "\n".join(command for _, command in pairs)
    if golden != fixed:
        return f"the golden answer {golden!r} does not restore the original {fixed!r}"
    reason = _type_rule(injection.error_type, old_commands, new_commands, facts)
    return f"type rule of {injection.error_type}: {reason}" if reason else None


def _type_rule(kind: str, old: list[str], new: list[str], facts: RepoFacts) -> str | None:
    if kind == "E6":
        if len(old) != 2 or sorted(old) != sorted(new) or old == new:
            return "expected two commands swapped, each unchanged"
        return None
    if len(old) != 1:
        return "expected one edited command"
    before, after = _words(old[0]), _words(new[0])
    changed = [w for w in after if w not in before] + [w for w in before if w not in after]
    if kind == "E1":
        return None if _INSTALL.search(old[0]) else "the edited command installs nothing"
    if kind == "E2":
        if any(w.startswith("-") for w in changed):
            return None
        if len(before) > 1 and len(after) > 1 and before[1] != after[1]:
            return None
        if len(after) < len(before) and before[0] == after[0]:
            return None
        return "no option or subcommand changed"
    if kind == "E4":
        removed = [_path(w) for w in before if w not in after]
        added = [_path(w) for w in after if w not in before]
        if any(p == "." or facts.has_path(p) for p in removed) and any(
            p != "." and not facts.has_path(p) for p in added
        ):
            return None
        return "no path of the tree was replaced by one the repository lacks"
    if kind == "E7":
        added = " ".join(w for w in after if w not in before)
        return None if _VERSION.search(added) else "no version bound or interpreter introduced"
    return None  # E8: any change of a command line


def _path(word: str) -> str:
    path = word.strip("\"'").split("[", 1)[0]
    return "." if path in (".", "./") else path.removeprefix("./").rstrip("/")


def judge_filter(injection: Injection, original: str, judge: object) -> str | None:
    """None when the judge agrees with the label, else why not (a judge failure drops too)."""
    from ..grading.judges.base import JudgeRequest

    fixed = "\n".join(edit.old.strip() for edit in injection.edits)
    broken = "\n".join(edit.new.strip() for edit in injection.edits)
    label = injection.label
    requests = [
        JudgeRequest(
            aspect="fix",
            golden=fixed,
            candidates=[],
            predicted=label.golden_answer,
            context=f"error type {label.error_type}; the erroneous lines: {broken}",
        ),
        JudgeRequest(
            aspect="description",
            golden=f"The README line `{fixed}` was changed to `{broken}`.",
            predicted=label.error_description,
            context=f"error type {label.error_type}",
        ),
    ]
    verdicts = judge.judge_many(requests)  # type: ignore[attr-defined]
    for request, verdict in zip(requests, verdicts, strict=True):
        if verdict.similar is None:
            return f"judge failed on the {request.aspect}: {verdict.error}"
        if not verdict.similar:
            return f"judge: the label's {request.aspect} is wrong: {verdict.reason}"
    return None
