"""Reading trajectories of every agent the memory learns from into one list of steps.

Accepted: the project's agents' ``trajectory.jsonl`` (swe-agent, zero-shot, command, heuristic:
one ``Step`` per line, written by ``agents.llm.TrajectoryWriter``) and mini-swe-agent's own
trajectory JSON (``{"messages": [...], "info": {...}}``, commands in fenced ``bash`` blocks or
``bash`` tool calls, outputs with ``<returncode>``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


def read_trace(path: Path, root: Path | None = None) -> Trace:
    """The steps of the trajectory in ``path``; ``ValueError`` if its format is not known, or
    the file is not a regular file (a FIFO would hang the build), is larger than ``MAX_BYTES``,
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
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("messages"), list):
            return _mini(data)
    steps = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not a trajectory line ({exc.msg})") from None
        if not isinstance(raw, dict) or "command" not in raw:
            raise ValueError(f"{path}:{number}: not a trajectory step")
        steps.append(
            TraceStep(
                kind=str(raw.get("kind") or "command"),
                command=str(raw.get("command") or ""),
                output=str(raw.get("output") or ""),
                exit_code=raw.get("exit_code") if isinstance(raw.get("exit_code"), int) else None,
                thought=str(raw.get("thought") or ""),
            )
        )
    return Trace(steps, "enconda")


_FENCE = re.compile(r"```(?:bash|sh|shell)?\s*\n(.*?)```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>|\"returncode\"\s*:\s*(-?\d+)")
_OUTPUT = re.compile(r"<output>\s*(.*?)\s*</output>", re.DOTALL)


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def _mini(data: dict[str, Any]) -> Trace:
    steps: list[TraceStep] = []
    pending: TraceStep | None = None
    for message in data["messages"]:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        text = _content(message)
        if role == "assistant":
            command = ""
            for call in message.get("tool_calls") or []:
                try:
                    args = json.loads(call.get("function", {}).get("arguments") or "{}")
                except (json.JSONDecodeError, AttributeError):
                    args = {}
                command = str(args.get("command") or command)
            if not command:
                fences = _FENCE.findall(text)
                command = fences[-1].strip() if fences else ""
            thought = _FENCE.sub("", text).strip()
            pending = TraceStep("command", command, thought=thought[:2000]) if command else None
            if pending is not None:
                steps.append(pending)
        elif role in ("user", "tool") and pending is not None:
            code = _RETURNCODE.search(text)
            if code:
                pending.exit_code = int(code.group(1) or code.group(2))
            shown = _OUTPUT.search(text)
            pending.output = shown.group(1) if shown else text
            pending = None
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    model = config.get("model") if isinstance(config.get("model"), dict) else {}
    return Trace(steps, "mini-swe-agent", str(model.get("model_name") or ""))
