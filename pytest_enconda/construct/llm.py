"""The ``llm:<model>`` injector: a model proposes the edit and the label, in the rules' schema.

The model sees the README with numbered lines, the repository's facts and the error type, and
answers one JSON object: ``edits`` (``line``: 1-based, ``new``: the line's new text; one or two),
``error_description``, ``correction_candidates`` and ``golden_answer``. The answer becomes an
``Injection`` only when it validates (known type, existing lines, golden among the candidates);
otherwise the reason is returned. The same offline filters and Docker validation then apply.
litellm is imported on first use.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from ..error_types import BY_CODE
from ..textio import JsonError, parse_json
from .injection_facts import RepoFacts
from .models import ErrorLabel, Injection, LineEdit

__all__ = ["LlmInjector", "build_messages", "parse_injection"]


def build_messages(readme: str, facts: RepoFacts, error_type: str, attempt: int) -> list[dict]:
    numbered = "\n".join(f"{i + 1:4d}| {line}" for i, line in enumerate(readme.split("\n")))
    info = BY_CODE[error_type]
    definition = f"{info.name}: {info.description}"
    facts_text = json.dumps(
        {
            "project": facts.name,
            "dependencies": [r.text for r in facts.dependencies],
            "extras": {k: [r.text for r in v] for k, v in facts.extras.items()},
            "console_scripts": facts.scripts,
            "requires_python": facts.requires_python,
            "requirement_files": sorted(facts.pinned),
        }
    )
    system = (
        "You inject ONE realistic error into a README's setup instructions for a benchmark. "
        "Edit one or two lines (a minimal edit) of a shell command the reader will run, so that "
        "following the README literally makes setup fail. Answer with one JSON object only: "
        '{"edits": [{"line": <1-based line number>, "new": "<the new text of that line>"}], '
        '"error_description": "...", "correction_candidates": ["...", ...], '
        '"golden_answer": "<the correct command(s), as in the original README>"}. '
        "Quote the erroneous command in backticks in the description. The golden answer must be "
        "one of the correction candidates."
    )
    user = (
        f"Error type {error_type}: {definition}\n"
        f"Repository facts: {facts_text}\n"
        f"Variant {attempt}: choose a different line than in other variants if you can.\n\n"
        f"README:\n{numbered}\n"
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_injection(
    content: str, readme: str, repository: str, model: str, error_type: str
) -> Injection | str:
    """The model's answer as an ``Injection``, or why it is not one."""
    # From the first "{" to the last "}", found by str.find, not a regex: ``\{.*\}`` retried
    # from every "{" of an answer with no "}" to its end.
    content = content or ""
    start, end = content.find("{"), content.rfind("}")
    if start == -1 or end < start:
        return "the answer holds no JSON object"
    try:
        data = parse_json(content[start : end + 1])
    except JsonError as exc:
        return f"the answer's JSON does not parse: {exc.detail}"
    if not isinstance(data, dict):
        return "the answer is not a JSON object"
    lines = readme.split("\n")
    edits = []
    for index, raw in enumerate(data.get("edits") or []):
        if not isinstance(raw, dict) or not isinstance(raw.get("line"), int):
            return f"edits[{index}]: expected {{'line': int, 'new': str}}"
        number = raw["line"] - 1
        if not 0 <= number < len(lines):
            return f"edits[{index}].line: {raw['line']} is not a line of the README"
        try:
            edits.append(LineEdit(line=number, old=lines[number], new=str(raw.get("new", ""))))
        except ValidationError as exc:
            return f"edits[{index}]: {exc.errors()[0]['msg']}"
    try:
        label = ErrorLabel(
            error_type=error_type,
            error_description=str(data.get("error_description") or ""),
            correction_candidates=[str(c) for c in data.get("correction_candidates") or []],
            golden_answer=str(data.get("golden_answer") or ""),
        )
        return Injection(
            repository=repository, injector=f"llm:{model}", rule=model, edits=edits, label=label
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        return f"{where}: {first['msg']}"


class LlmInjector:
    def __init__(self, model: str, *, api_base: str | None = None, timeout: float = 120) -> None:
        import importlib.util

        if importlib.util.find_spec("litellm") is None:
            raise ValueError("llm injector: litellm is not installed (pip install litellm)")
        self.model = model
        self.name = f"llm:{model}"
        self.api_base = api_base
        self.timeout = timeout
        self._model = model if (api_base is None or "/" in model) else f"openai/{model}"

    def propose(
        self, repository: str, readme: str, facts: RepoFacts, error_type: str, attempt: int
    ) -> Injection | str:
        from ..lazy import litellm

        kwargs: dict[str, Any] = {
            "model": self._model,
            "messages": build_messages(readme, facts, error_type, attempt),
            "temperature": 0,
            "timeout": self.timeout,
        }
        if self.api_base:
            kwargs["api_base"] = self.api_base
            kwargs["api_key"] = "no-key"
        try:
            response = litellm().completion(**kwargs)
            content = response.choices[0].message.content or ""
        except Exception as exc:  # a model call's failure is one dropped proposal
            return f"the model call failed: {type(exc).__name__}: {exc}"
        return parse_injection(content, readme, repository, self.model, error_type)
