"""Reading trajectories of every agent the memory learns from into one list of steps.

Accepted: the project's agents' ``trajectory.jsonl`` (swe-agent, zero-shot, command, heuristic:
one ``Step`` per line, written by ``agents.llm.TrajectoryWriter``) and mini-swe-agent's own
trajectory JSON (``{"messages": [...], "info": {...}}``, commands in fenced ``bash`` blocks or
``bash`` tool calls, outputs with ``<returncode>``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..textio import JsonError, parse_json

MAX_BYTES = 64 << 20


@dataclass
class TraceStep:
    kind: str
    command: str
    output: str = ""
    exit_code: int | None = None
    thought: str = ""


@dataclass
class Trace:
    steps: list[TraceStep]
    format: str
    model: str = ""


# What one step keeps: a command longer than this is no command a triple could offer (it is
# kept as a note), and an output's tail is where its error is. Extraction splits commands and
# scans outputs line by line, so an unbounded field would cost a hostile file minutes.
MAX_COMMAND_CHARS = 100_000
MAX_OUTPUT_CHARS = 200_000
MAX_THOUGHT_CHARS = 20_000


def read_trace(path: Path, root: Path | None = None) -> Trace:
    """The steps of the trajectory in ``path``; ``ValueError`` if its format is not known, its
    structure is not the format's (a field of the wrong type, JSON nested too deeply), or the
    file is not a regular file (a FIFO would hang the build), is larger than ``MAX_BYTES``,
    or, inside a run directory ``root``, lies behind a link (a run may come from anyone)."""
    from ..textio import read_bounded, read_within

    try:
        data = read_within(root, path, MAX_BYTES) if root else read_bounded(path, MAX_BYTES)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    text = data.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    if stripped.startswith("{") and '"messages"' in text:
        try:
            whole = parse_json(text)
        except JsonError as exc:
            if exc.lineno == 0:  # nested too deeply, a huge number: no JSON Lines either
                raise ValueError(f"{path}: {exc}") from None
            whole = None
        if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
            try:
                return _mini(whole)
            except ValueError as exc:
                raise ValueError(f"{path}: {exc}") from None
    steps = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = parse_json(line)
        except JsonError as exc:
            raise ValueError(f"{path}:{number}: not a trajectory line ({exc.msg})") from None
        if not isinstance(raw, dict) or "command" not in raw:
            raise ValueError(f"{path}:{number}: not a trajectory step")
        try:
            steps.append(_enconda_step(raw))
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
    return Trace(steps, "enconda")


def _string(raw: dict[str, Any], key: str) -> str:
    """A step's text field: a string, or absent (``None``, ``""``); ``ValueError`` otherwise."""
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{key} is a {type(value).__name__}, not a string")
    return value


def _step(kind: str, command: str, output: str, exit_code: Any, thought: str) -> TraceStep:
    """A step with its fields bounded (see ``MAX_COMMAND_CHARS``)."""
    if len(command) > MAX_COMMAND_CHARS:
        kind, thought = "note", f"(a command of {len(command)} characters, not read)"
        command = ""
    # bool is an int to Python, never an exit code.
    code = exit_code if isinstance(exit_code, int) and not isinstance(exit_code, bool) else None
    return TraceStep(
        kind=kind,
        command=command,
        output=output[-MAX_OUTPUT_CHARS:],
        exit_code=code,
        thought=thought[:MAX_THOUGHT_CHARS],
    )


def _enconda_step(raw: dict[str, Any]) -> TraceStep:
    return _step(
        _string(raw, "kind") or "command",
        _string(raw, "command"),
        _string(raw, "output"),
        raw.get("exit_code"),
        _string(raw, "thought"),
    )


# Linear on any text: the language and the blanks after it cannot trade characters with the
# block (``\s*\n`` before a lazy block made an unclosed fence over 300,000 newlines quadratic).
_FENCE = re.compile(r"```(?:bash|sh|shell)?[ \t\r]*\n(.*?)```", re.DOTALL)
# Ten digits at most: int() of thousands of digits is a ValueError, and no exit code is that long.
_RETURNCODE = re.compile(
    r"<returncode>\s*(-?\d{1,10})\s*</returncode>|\"returncode\"\s*:\s*(-?\d{1,10})(?!\d)"
)


def _shown_output(text: str) -> str | None:
    """What ``<output>...</output>`` holds, stripped; found by ``str.find``, not a regex: a
    lazy group between two blank runs was cubic on an unclosed ``<output>`` and spaces."""
    start = text.find("<output>")
    if start == -1:
        return None
    start += len("<output>")
    end = text.find("</output>", start)
    return None if end == -1 else text[start:end].strip()


def _content(message: dict[str, Any], where: str) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    if content is None or isinstance(content, str):
        return content or ""
    raise ValueError(f"{where}: content is a {type(content).__name__}, not text")


def _call_command(call: Any, where: str) -> str:
    """The ``command`` argument of a ``bash`` tool call, or ''; ``ValueError`` for a call that
    is not an object with a ``function`` object."""
    if not isinstance(call, dict):
        raise ValueError(f"{where}: a tool call is a {type(call).__name__}, not an object")
    function = call.get("function")
    if function is None:
        return ""
    if not isinstance(function, dict):
        raise ValueError(f"{where}: a tool call's function is not an object")
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = parse_json(arguments or "{}")
        except JsonError:
            return ""  # a model's malformed call: no command, as before
    if not isinstance(arguments, dict):
        return ""
    command = arguments.get("command")
    return command if isinstance(command, str) else ""


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` when it is a table (a dict), else an empty one."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _mini(data: dict[str, Any]) -> Trace:
    steps: list[TraceStep] = []
    pending: TraceStep | None = None
    for number, message in enumerate(data["messages"], 1):
        if not isinstance(message, dict):
            continue
        where = f"message {number}"
        role = message.get("role")
        text = _content(message, where)
        if role == "assistant":
            command = ""
            calls = message.get("tool_calls") or []
            if not isinstance(calls, list):
                raise ValueError(f"{where}: tool_calls is a {type(calls).__name__}, not a list")
            for call in calls:
                command = _call_command(call, where) or command
            if not command:
                fences = _FENCE.findall(text)
                command = fences[-1].strip() if fences else ""
            thought = _FENCE.sub("", text).strip()
            pending = None
            if command:
                step = _step("command", command, "", None, thought[:2000])
                steps.append(step)
                # An oversized command became a note: the output after it is nobody's.
                pending = step if step.kind == "command" else None
        elif role in ("user", "tool") and pending is not None:
            code = _RETURNCODE.search(text)
            if code:
                pending.exit_code = int(code.group(1) or code.group(2))
            shown = _shown_output(text)
            pending.output = (shown if shown is not None else text)[-MAX_OUTPUT_CHARS:]
            pending = None
    # info.config.model.model_name, each level a table when it is there at all.
    name = _table(_table(_table(data, "info"), "config"), "model").get("model_name")
    return Trace(steps, "mini-swe-agent", name if isinstance(name, str) else "")
