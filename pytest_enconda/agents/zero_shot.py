"""``zero-shot``: one litellm call, no tools.

The prompt gives the repository's file tree, its README, the codebase profile and the base
environment (read from a task container, which is then removed); the model answers with the
analysis as a fenced JSON block and a complete bash script in a fenced block. Parsing is lenient
about form (fence language ``json``, ``bash``, ``sh``, ``shell`` in any case; an object or a
list; prose around the blocks; a JSON value without fences) and strict about substance: a
response without a script fails execution with the reason, and the raw response is kept
(``agent/response.md`` and the trajectory), never replaced by a placeholder script.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from pathlib import PurePath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..artifacts import atomic_write_text
from ..errors import ModelUnavailable, RunStopped
from ..kinds import TASK_KINDS
from ..textio import JsonError, parse_json
from .base import AgentOutcome, AgentTask, PredictedError, Step, TokenUsage
from .configured import ConfiguredAgent
from .llm import (
    TrajectoryWriter,
    api_key_for,
    call_usage,
    cost_ledger,
    empty_reply,
    litellm,
    model_failure,
    model_for,
    response_cost,
    response_usage,
)
from .output import DIAGNOSIS, REPORT, SETUP, diagnosis_from_value
from .prompts import ZERO_SHOT_SYSTEM, zero_shot_prompt
from .workspace import RepositoryView, agent_dir, base_environment, file_tree, profile_of

# A fence's line is bounded and possessive: the blanks, the language and the rest of the line
# cannot trade characters, and a "```" that no newline follows soon is no fence (unbounded,
# each of a long line's "```"s scanned it to its end). A fence starts where a run of backticks
# does, not at each of a long run's backticks.
_FENCE = re.compile(
    r"(?<!`)```[ \t]{0,64}+([A-Za-z0-9_+-]{0,32}+)[^\n]{0,200}+\n(.*?)(?:```|\Z)", re.DOTALL
)
# Where bare JSON is looked for: each try may parse to the end of the text, so a text of many
# brackets would cost its length squared.
MAX_JSON_STARTS = 200
SCRIPT_LANGUAGES = {"bash", "sh", "shell", "zsh", "console", "shellscript"}
_PERMANENT_STATUS = frozenset({400, 401, 403, 404, 422})


class ZeroShotConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1)
    api_base: str | None = None
    temperature: float = Field(default=0.0, ge=0, le=2)
    max_tokens: int = Field(default=4096, gt=0)
    request_timeout: float = Field(default=300, gt=0)
    retries: int = Field(default=2, ge=0)
    backoff: float = Field(default=1.0, ge=0)
    tree_limit: int = Field(default=400, gt=0)


class ParsedResponse(BaseModel):
    value: Any = None
    script: str | None = None
    problems: dict[str, str] = Field(default_factory=dict)


def _json_error(where: str, exc: JsonError) -> str:
    if not exc.lineno:  # nested too deeply, a number too long: no place to name
        return f"{where} is not JSON this harness reads: {exc.msg}"
    return f"{where}: line {exc.lineno} column {exc.colno}: {exc.msg}"


def _bare_json(text: str) -> Any:
    """The first JSON object or list in prose; ``None`` if there is none."""
    decoder = json.JSONDecoder()
    for match in itertools.islice(re.finditer(r"[\[{]", text), MAX_JSON_STARTS):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):  # ValueError: also int()'s digit limit
            continue
        if isinstance(value, dict | list):
            return value
    return None


def parse_response(text: str) -> ParsedResponse:
    """The JSON value and the script of a zero-shot answer, with what is missing or malformed
    (keyed ``json`` and ``script``)."""
    parsed = ParsedResponse()
    # findall is untyped: the pattern's two groups, the fence's language and its body.
    blocks: list[tuple[str, str]] = [(lang.lower(), body) for lang, body in _FENCE.findall(text)]
    json_blocks = [body for lang, body in blocks if lang in ("json", "jsonc", "json5")]
    scripts = [body for lang, body in blocks if lang in SCRIPT_LANGUAGES]
    if not json_blocks:
        # An unlabelled block that holds JSON counts, then JSON in the prose itself.
        for lang, body in blocks:
            if lang == "" and body.lstrip()[:1] in ("{", "["):
                json_blocks.append(body)
    if json_blocks:
        try:
            parsed.value = parse_json(json_blocks[0])
        except JsonError as exc:
            parsed.problems["json"] = _json_error("the response's ```json block", exc)
    else:
        outside = _FENCE.sub("", text)
        parsed.value = _bare_json(outside)
        if parsed.value is None:
            parsed.problems["json"] = "the response has no ```json block and no JSON object"
    if not scripts:
        unlabelled = [body for lang, body in blocks if lang == "" and body.strip()]
        unlabelled = [body for body in unlabelled if body.lstrip()[:1] not in ("{", "[")]
        scripts = unlabelled
    if scripts and scripts[-1].strip():
        parsed.script = scripts[-1]
        if not parsed.script.endswith("\n"):
            parsed.script += "\n"
    else:
        parsed.problems["script"] = (
            "no setup script: the response has no ```bash (or sh/shell) block"
            if not scripts
            else "the response's ```bash block is empty"
        )
    return parsed


class ZeroShotAgent(ConfiguredAgent):
    name = "zero-shot"
    config_model = ZeroShotConfig
    needs_model = True

    def _complete(self, messages: list[dict[str, str]], deadline: float) -> Any:
        """The reply, retried on transient failures within the agent's wall clock; a provider
        failure that persists raises ``ModelUnavailable`` (a harness error)."""
        config = self.config
        kwargs: dict[str, Any] = {
            "model": model_for(config.model, config.api_base),
            "messages": messages,
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
            "timeout": config.request_timeout,
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,
        }
        if config.api_base:
            kwargs["api_base"] = config.api_base
        key = api_key_for(config.api_base, config.model)
        if key:
            kwargs["api_key"] = key
        last: Exception | None = None
        for attempt in range(config.retries + 1):
            if attempt:
                time.sleep(
                    max(0.0, min(config.backoff * 2 ** (attempt - 1), deadline - time.monotonic()))
                )
            left = deadline - time.monotonic()
            if left < 1:
                break
            kwargs["timeout"] = min(config.request_timeout, left)
            try:
                response = litellm().completion(**kwargs)
            except Exception as exc:
                last = exc
                if getattr(exc, "status_code", None) in _PERMANENT_STATUS:
                    break
                continue
            if empty_reply(response):
                last = ModelUnavailable(config.model, "an empty reply (no text)")
                continue
            return response
        if last is None:
            raise ModelUnavailable(config.model, "no time left in the agent's wall clock")
        failure = model_failure(last, config.model)
        if failure is None:
            raise last
        raise failure from last

    def run(self, task: AgentTask) -> AgentOutcome:
        config = self.config
        suite = task.case.spec.suite
        writer = TrajectoryWriter(task.trajectory_path)
        ledger = cost_ledger(task.run_dir, task.max_cost) if task.run_dir is not None else None
        outcome = AgentOutcome(
            case_id=task.case.id, agent=self.name, model=config.model, config=self.describe()
        )
        # The answer's JSON is the self-report where the kind asks for one, else the diagnosis.
        self_report = TASK_KINDS.get(suite).writes_self_report
        second = REPORT if self_report else DIAGNOSIS
        reason = ledger.exhausted() if ledger is not None else None
        if reason:
            raise RunStopped(f"not started: {reason}")
        assert task.start_container is not None
        # Read before the clock starts: the harness measures the machine's slowdown for it.
        budget = float(task.budgets.agent_seconds)
        with task.start_container() as box:
            # The agent's clock starts with its container, not with the image build.
            started = time.monotonic()
            environment = base_environment(box)
            with RepositoryView(box, task.workdir) as repo:
                tree = file_tree(repo, config.tree_limit)
                profile = profile_of(repo, task)
        prompt = zero_shot_prompt(
            case_id=task.case.id,
            suite=suite,
            workdir=task.workdir,
            readme_name=task.readme_name or PurePath(task.case.spec.readme_target).name,
            readme_text=task.readme_text,
            packages_before=task.packages_before,
            file_tree=tree,
            environment=environment,
            profile=profile.render(),
        )
        messages = [
            {"role": "system", "content": ZERO_SHOT_SYSTEM},
            {"role": "user", "content": prompt},
        ]
        call_started = time.time()
        estimate = 0.0
        if ledger is not None:
            estimate, reason = ledger.reserve()
            if reason:
                raise RunStopped(f"not started: {reason}")
        deadline = started + budget
        try:
            response = self._complete(messages, deadline)
        except BaseException as exc:
            if ledger is not None:
                ledger.settle(estimate, None, called=False)
            message = f"{type(exc).__name__}: {exc}"[:2000]
            writer.add(Step(kind="model", command="", output=message, started_at=call_started))
            raise
        prompt_tokens, completion_tokens = response_usage(response)
        cost = response_cost(response, model_for(config.model, config.api_base), task.model_price)
        if ledger is not None:
            ledger.settle(estimate, cost)
        try:
            text = response.choices[0].message.content or ""
        except (AttributeError, IndexError):
            text = ""
        folder = agent_dir(task)
        if folder is not None:
            atomic_write_text(folder / "response.md", text)
        writer.add(
            Step(
                kind="model",
                command="",
                thought=text,
                started_at=call_started,
                duration=time.time() - call_started,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
                cost_usd=cost,
            )
        )
        usage: TokenUsage = call_usage(prompt_tokens, completion_tokens, cost)
        parsed = parse_response(text)
        problems: dict[str, str] = {}
        if "script" in parsed.problems:
            problems[SETUP] = parsed.problems["script"]
        else:
            outcome.setup_script = parsed.script or ""
        if "json" in parsed.problems:
            problems[second] = parsed.problems["json"]
        elif self_report:
            if isinstance(parsed.value, dict):
                outcome.self_report = parsed.value
            else:
                problems[REPORT] = "the response's JSON is not an object (the self-report)"
                outcome.self_report = {"__invalid__": problems[REPORT]}
        else:
            try:
                diagnosis: list[PredictedError] = diagnosis_from_value(
                    parsed.value, "the response's JSON"
                )
                outcome.diagnosis = diagnosis
            except ValueError as exc:
                problems[DIAGNOSIS] = str(exc)
        outcome.output_problems = problems
        outcome.usage = usage
        outcome.trajectory = writer.steps
        outcome.wall_time = time.monotonic() - started
        outcome.status = "completed"
        outcome.message = "; ".join(problems.values()) if problems else "answered"
        if problems:
            outcome.message += f" (raw response kept in agent/response.md: {text[:300]!r})"
        return outcome
