"""``swe-agent``: mini-swe-agent's loop driving the case's task container through our sandbox.

mini-swe-agent (PyPI ``mini-swe-agent``, pinned in the ``agents`` extra) supplies the agent loop
(``DefaultAgent``) and the litellm model with its ``bash`` tool; the environment is ours:
``SandboxEnvironment.execute`` runs each command in the container the harness started, under the
sandbox's real timeout that kills the command's whole process tree, with output cut to its head
and tail. Its submission rule is kept: a command whose first output line is
``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`` and that exits 0 ends the run.

Budgets: steps, cost per case and wall clock (checked before each model call; the clock starts
when the agent's container is ready, so image builds are not the agent's time; neither a command
nor a model request outlives it), and the run-wide ``--max-cost`` ledger shared by xdist workers.
A provider failure (HTTP error, unreadable, empty or late reply) raises ``ModelUnavailable``: a
harness error, not the agent's failure. Whatever else stops the agent, the harness copies
``/enconda/output`` out and grades it. litellm and minisweagent are imported only when the agent
runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import PurePath
from typing import Any, Literal

from pydantic import ConfigDict, Field

from ..errors import EncondaError, ModelUnavailable, RunStopped
from ..lazy import litellm
from .base import AgentOutcome, AgentTask, Step, TokenUsage
from .configured import ConfiguredAgent
from .llm import (
    CostLedger,
    Price,
    TrajectoryWriter,
    api_key_for,
    call_usage,
    cost_ledger,
    empty_reply,
    model_failure,
    model_for,
    response_cost,
    response_usage,
)
from .memory_options import EmbedderFields
from .output import collect_outputs, prepare_output_dir
from .prompts import SUBMIT, SYSTEM_PROMPT, instance_prompt
from .workspace import RepositoryView, agent_dir, profile_of

MSWEA_VERSION = "2.4.6"


class SweAgentConfig(EmbedderFields):
    """``--model``, ``--api-base`` and ``--agent-option KEY=VALUE`` for ``swe-agent``."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(min_length=1, description="a litellm model string")
    api_base: str | None = Field(default=None, description="an OpenAI-compatible server's URL")
    temperature: float = Field(default=0.0, ge=0, le=2)
    step_limit: int | None = Field(default=None, gt=0, description="default: the case's budget")
    cost_limit: float = Field(default=3.0, ge=0, description="USD per case; 0 means none")
    wall_seconds: float | None = Field(default=None, gt=0, description="default: the case's")
    command_timeout: float = Field(default=600, gt=0, description="seconds per command")
    output_chars: int = Field(default=10_000, ge=200, description="head+tail shown per command")
    max_format_errors: int = Field(default=3, ge=0)
    request_timeout: float = Field(
        default=300, gt=0, description="seconds per model request (never past the wall clock)"
    )
    model_retries: int = Field(default=3, ge=1, description="attempts per model call")
    memory: str | None = Field(
        default=None, description="a memory file (--memory): AEC prompts' prior knowledge"
    )
    memory_queries: Literal["model", "templates"] = Field(
        default="model",
        description="the memory lookup's hypothetical queries: the model's, or the offline "
        "templates'",
    )


def head_tail(text: str, limit: int) -> str:
    """``text`` cut to its first and last ``limit / 2`` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n[... {cut} characters cut ...]\n{text[-half:]}"


class SandboxEnvironment:
    """mini-swe-agent's ``Environment`` on a container the harness started."""

    def __init__(
        self,
        container: Any,
        *,
        workdir: str,
        command_timeout: float,
        deadline: float,
        output_chars: int,
        record: Any,
    ) -> None:
        self.container = container
        self.workdir = workdir
        self.command_timeout = command_timeout
        self.deadline = deadline
        self.output_chars = output_chars
        self.record = record
        self.config = {"workdir": workdir, "command_timeout": command_timeout}

    def execute(self, action: dict, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        from minisweagent.exceptions import Submitted

        command = str(action.get("command", ""))
        remaining = self.deadline - time.monotonic()
        limit = max(1.0, min(float(timeout or self.command_timeout), remaining))
        started = time.time()
        result = self.container.exec(
            command, timeout=limit, workdir=cwd or self.workdir, max_output=1_000_000
        )
        output = head_tail(result.output, self.output_chars)
        info = ""
        returncode = result.exit_code if result.exit_code is not None else -1
        if result.timed_out:
            info = (
                f"the command timed out after {limit:g} s and was killed with every process it "
                "started"
            )
        self.record(
            command=command,
            output=output,
            exit_code=result.exit_code,
            started_at=started,
            duration=result.duration,
            timed_out=result.timed_out,
        )
        observation = {"output": output, "returncode": returncode, "exception_info": info}
        lines = output.lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == SUBMIT and returncode == 0:
            submission = "".join(lines[1:])
            raise Submitted(
                {
                    "role": "exit",
                    "content": submission,
                    "extra": {"exit_status": "Submitted", "submission": submission},
                }
            )
        return observation

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {"workdir": self.workdir, **kwargs}

    def serialize(self) -> dict:
        return {
            "info": {
                "config": {
                    "environment": dict(self.config),
                    "environment_type": f"{type(self).__module__}.{type(self).__name__}",
                }
            }
        }


class _Run:
    """Accounting of one agent run: usage, the ledger and the trajectory."""

    def __init__(self, writer: TrajectoryWriter, ledger: CostLedger | None) -> None:
        self.writer = writer
        self.ledger = ledger
        self.usage = TokenUsage()
        self.pending: dict[str, Any] | None = None
        self.reserved = 0.0
        self.empty_replies = 0

    def model_call(self, extra: dict[str, Any], thought: str, started: float) -> dict[str, Any]:
        response = extra.get("response") or {}
        prompt_tokens, completion_tokens = response_usage(response)
        cost = extra.get("enconda_cost")
        usage = call_usage(prompt_tokens, completion_tokens, cost)
        self.usage = self.usage.add(usage)
        if self.ledger is not None:
            self.ledger.settle(self.reserved, cost)
            self.reserved = 0.0
        return {
            "thought": thought or "",
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "cost_usd": cost,
            "model_seconds": time.time() - started,
        }

    def side_call(self, model: str, price: Any) -> Callable[[Any], None]:
        """A model call outside the loop (the memory's hypothetical queries): its tokens and
        cost count as the run's."""

        def count(response: Any) -> None:
            cost = response_cost(response, model, price)
            self.usage = self.usage.add(call_usage(*response_usage(response), cost))
            if self.ledger is not None:
                self.ledger.add(cost)

        return count

    def command(self, **fields: Any) -> None:
        pending, self.pending = self.pending or {}, None
        self.writer.add(
            Step(
                kind="command",
                thought=pending.get("thought", ""),
                prompt_tokens=pending.get("prompt_tokens", 0),
                completion_tokens=pending.get("completion_tokens", 0),
                cost_usd=pending.get("cost_usd"),
                **fields,
            )
        )

    def flush_pending(self, kind: str, output: str = "") -> None:
        """A model turn that ran no command (a format error, or the last turn before a stop)."""
        if self.pending is None:
            return
        pending, self.pending = self.pending, None
        self.writer.add(
            Step(
                kind=kind,
                command="",
                output=output,
                thought=pending.get("thought", ""),
                prompt_tokens=pending.get("prompt_tokens", 0),
                completion_tokens=pending.get("completion_tokens", 0),
                cost_usd=pending.get("cost_usd"),
            )
        )


def _loop_class() -> type:
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.exceptions import FormatError, LimitsExceeded, TimeExceeded

    class EncondaLoop(DefaultAgent):
        """DefaultAgent with our accounting, our wall clock (from the container being ready)
        and the run-wide ledger before every model call."""

        run_state: _Run
        deadline: float
        model_name: str
        max_empty: int

        def query(self) -> dict:
            if time.monotonic() >= self.deadline:
                raise TimeExceeded(
                    {
                        "role": "exit",
                        "content": "TimeExceeded",
                        "extra": {"exit_status": "TimeExceeded", "submission": ""},
                    }
                )
            ledger = self.run_state.ledger
            reason = None
            if ledger is not None:
                self.run_state.reserved, reason = ledger.reserve()
            if reason:
                raise LimitsExceeded(
                    {
                        "role": "exit",
                        "content": reason,
                        "extra": {"exit_status": "RunCostLimit", "submission": "", "why": reason},
                    }
                )
            started = time.time()
            try:
                message = super().query()
            except FormatError as exc:
                extra = exc.messages[0].get("extra", {})
                self.run_state.pending = self.run_state.model_call(extra, "", started)
                self.run_state.flush_pending("format_error", str(exc.messages[0].get("content")))
                self._count_empty(extra.get("response"))
                raise
            except BaseException:
                if ledger is not None:
                    ledger.settle(self.run_state.reserved, None, called=False)
                    self.run_state.reserved = 0.0
                raise
            self.run_state.empty_replies = 0
            extra = message.get("extra", {})
            content = message.get("content")
            self.run_state.pending = self.run_state.model_call(
                extra, content if isinstance(content, str) else "", started
            )
            if not extra.get("actions"):
                self.run_state.flush_pending("model")
            return message

        def _count_empty(self, response: Any) -> None:
            """Replies with no text and no tool call, again and again, are the server's fault
            (an agent cannot answer nothing); a reply with text but no call is the model's."""
            if not empty_reply(response):
                self.run_state.empty_replies = 0
                return
            self.run_state.empty_replies += 1
            if self.run_state.empty_replies >= self.max_empty:
                raise ModelUnavailable(
                    self.model_name,
                    f"{self.run_state.empty_replies} empty replies in a row "
                    "(no text, no tool call)",
                )

    return EncondaLoop


class _OutOfTime(Exception):
    """No time is left for a model request (not retried)."""


def _model(config: SweAgentConfig, deadline: float, price: Price | None) -> Any:
    from minisweagent.models.litellm_model import LitellmModel

    model_name = model_for(config.model, config.api_base)

    class EncondaModel(LitellmModel):
        abort_exceptions = [*LitellmModel.abort_exceptions, _OutOfTime, ModelUnavailable]

        last_error: Exception | None = None

        def _query(self, messages: list[dict[str, str]], **kwargs: Any) -> Any:
            # A hung server must not hold the case past the agent's wall clock.
            left = deadline - time.monotonic()
            if left < 1:
                # The cause is the provider's last failure, if a retry is what ran out of time.
                failure = model_failure(self.last_error, config.model) if self.last_error else None
                raise failure or _OutOfTime("no time left for a model request")
            kwargs["timeout"] = min(config.request_timeout, left)
            try:
                return super()._query(messages, **kwargs)
            except Exception as exc:
                self.last_error = exc
                raise

        def _calculate_cost(self, response: Any) -> dict[str, Any]:
            # Unknown prices are not an error (mini-swe-agent's default raises): the cost is
            # reported as unknown and the tokens are still counted.
            cost = response_cost(response, model_name, price)
            return {"cost": cost or 0.0, "enconda_cost": cost}

    kwargs: dict[str, Any] = {
        "temperature": config.temperature,
        "drop_params": True,
        "timeout": config.request_timeout,
        # mini-swe-agent retries (model_retries); the client's own retries would multiply them.
        "num_retries": 0,
        "max_retries": 0,
    }
    if config.api_base:
        kwargs["api_base"] = config.api_base
    key = api_key_for(config.api_base, config.model)
    if key:
        kwargs["api_key"] = key
    return EncondaModel(
        model_name=model_name,
        model_kwargs=kwargs,
        cost_tracking="ignore_errors",
        observation_template=(
            "{% if output.exception_info %}<exception>{{output.exception_info}}</exception>\n"
            "{% endif %}<returncode>{{output.returncode}}</returncode>\n"
            "<output>\n{{output.output}}</output>"
        ),
        format_error_template=(
            "Format error: {{error}}\nCall the `bash` tool with exactly one command. To finish, "
            f"run `echo {SUBMIT}` on its own."
        ),
    )


def _import_minisweagent() -> None:
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    os.environ.setdefault("MSWEA_COST_TRACKING", "ignore_errors")
    try:
        # litellm first, through ours: minisweagent imports it too, and litellm fetches its
        # price list from GitHub on import unless told to use its bundled copy.
        litellm()
        import minisweagent  # noqa: F401
        from litellm.responses.mcp import chat_completions_handler  # noqa: F401
    except ImportError as exc:
        raise EncondaError(
            f"--agent=swe-agent needs mini-swe-agent=={MSWEA_VERSION} and litellm's tool-call "
            f"support: pip install 'pytest-enconda[agents]' ({exc})"
        ) from None


class SweAgent(ConfiguredAgent):
    name = "swe-agent"
    config_model = SweAgentConfig
    acts_in_container = True
    needs_model = True

    def describe(self) -> dict[str, Any]:
        return {"agent": self.name, "mini_swe_agent": MSWEA_VERSION, **self.config.model_dump()}

    def run(self, task: AgentTask) -> AgentOutcome:
        config = self.config
        budgets = task.budgets
        step_limit = config.step_limit or budgets.agent_steps
        wall = config.wall_seconds or float(budgets.agent_seconds)
        described = {**self.describe(), "step_limit": step_limit, "wall_seconds": wall}
        ledger = cost_ledger(task.run_dir, task.max_cost) if task.run_dir is not None else None
        writer = TrajectoryWriter(task.trajectory_path)
        outcome = AgentOutcome(
            case_id=task.case.id, agent=self.name, model=config.model, config=described
        )
        reason = ledger.exhausted() if ledger is not None else None
        if reason:
            raise RunStopped(f"not started: {reason}")
        _import_minisweagent()
        state = _Run(writer, ledger)
        assert task.start_container is not None
        with task.start_container() as box:
            # The budget is the agent's from here: building and starting the box was not.
            started = time.monotonic()
            deadline = started + wall
            prepare_output_dir(box)
            with RepositoryView(box, task.workdir) as repo:
                profile = profile_of(repo, task)
            prompt, system = _prompts(task, profile, config.memory, config, state)
            environment = SandboxEnvironment(
                box,
                workdir=task.workdir,
                command_timeout=config.command_timeout,
                deadline=deadline,
                output_chars=config.output_chars,
                record=state.command,
            )
            os.environ["MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT"] = str(config.model_retries)
            loop = _loop_class()(
                _model(config, deadline, task.model_price),
                environment,
                system_template="{{ enconda_system }}",
                instance_template="{{ task }}",
                step_limit=step_limit,
                cost_limit=config.cost_limit,
                # Ours (``deadline``) is the wall clock: it starts with the box, not the loop.
                wall_time_limit_seconds=0,
                max_consecutive_format_errors=config.max_format_errors,
            )
            loop.run_state = state
            loop.deadline = deadline
            loop.model_name = config.model
            loop.max_empty = max(1, config.max_format_errors)
            try:
                result = loop.run(prompt, enconda_system=system)
                if result.get("exit_status") == "RunCostLimit":
                    # Cut mid-run by --max-cost: not the agent's result, so no outcome is kept
                    # and --resume runs the case again.
                    why = result.get("why") or "run-wide cost limit reached"
                    raise RunStopped(f"cut after {loop.n_calls} model call(s): {why}")
                outcome.status, outcome.message = _status(result, loop, step_limit, wall, config)
            except EncondaError:
                raise
            except _OutOfTime as exc:
                raise ModelUnavailable(
                    config.model,
                    f"no answer within the agent's wall clock ({wall:g} s; request_timeout "
                    f"{config.request_timeout:g} s): {exc}",
                ) from None
            except Exception as exc:
                failure = model_failure(exc, config.model)
                if failure is not None:
                    raise failure from exc
                outcome.status = "crashed"  # the loop's own bug counts against the agent
                outcome.message = f"{type(exc).__name__}: {exc}"[:2000]
            state.flush_pending("model")
            folder = agent_dir(task)
            outputs = collect_outputs(
                box,
                folder / "output" if folder is not None else None,
                suite=task.case.spec.suite,
            )
        outputs.apply_to(outcome)
        outcome.trajectory = writer.steps
        outcome.usage = state.usage
        outcome.wall_time = time.monotonic() - started
        return outcome


def _prompts(
    task: AgentTask,
    profile: Any,
    memory: str | None,
    config: SweAgentConfig | None = None,
    state: _Run | None = None,
) -> tuple[str, str]:
    """(instance prompt, system prompt) for the case's task kind: AEC's template with its
    profile and prior-knowledge slots, else the diagnosis or research prompt."""
    spec = task.case.spec
    if spec.aec is not None:
        from ..aec.prompt import (
            AEC_SYSTEM_PROMPT,
            aec_instance_prompt,
            aec_profile_json,
            prior_knowledge_for,
        )

        folder = agent_dir(task)
        knowledge = prior_knowledge_for(
            memory,
            profile,
            spec.repository.name or task.case.id,
            record=folder / "memory.json" if folder is not None and memory else None,
            **_memory_lookup(config, task, state) if memory else {},
        )
        prompt = aec_instance_prompt(
            case_id=task.case.id,
            task=spec.aec.task,
            workdir=task.workdir,
            # The profile prompt's own shape (language, package manager, build tools, test
            # framework, system dependencies), as a model-made profile would fill the slot.
            profile=aec_profile_json(profile),
            prior_knowledge=knowledge,
            language=spec.aec.language,
        )
        return prompt, AEC_SYSTEM_PROMPT
    prompt = instance_prompt(
        case_id=task.case.id,
        suite=spec.suite,
        workdir=task.workdir,
        readme_name=task.readme_name or PurePath(spec.readme_target).name,
        readme_text=task.readme_text,
        packages_before=task.packages_before,
        profile=profile.render(),
    )
    return prompt, SYSTEM_PROMPT


def _memory_lookup(
    config: SweAgentConfig | None, task: AgentTask, state: _Run | None
) -> dict[str, Any]:
    """How the AEC prompt's memory lookup runs: the hypothetical queries through this agent's
    own model (counted as the run's), unless ``memory_queries=templates``; the embedder."""
    if config is None:
        return {}
    from ..memory.retrieve import completer

    complete = None
    if config.memory_queries == "model":
        complete = completer(
            config.model, config.api_base, config.temperature,
            timeout=config.request_timeout,
            on_response=state.side_call(config.model, task.model_price) if state else None,
        )  # fmt: skip
    return {
        "complete": complete,
        "embedder": config.embedder,
        "embedding_api_base": config.embedding_api_base,
    }


def _status(result: dict, loop: Any, step_limit: int, wall: float, config: SweAgentConfig):
    exit_status = result.get("exit_status", "")
    if exit_status == "Submitted":
        return "completed", "submitted"
    if exit_status == "TimeExceeded":
        return "timeout", f"wall-clock limit reached ({wall:g} s)"
    if exit_status == "LimitsExceeded":
        if loop.n_calls >= step_limit:
            return "budget_exhausted", f"step limit reached ({step_limit} model calls)"
        return "budget_exhausted", (
            f"cost limit reached (${loop.cost:.6f} of ${config.cost_limit:g} for this case)"
        )
    if exit_status == "RepeatedFormatError":
        return "crashed", (
            f"the model answered {config.max_format_errors} times in a row without a valid "
            "bash tool call"
        )
    return "crashed", f"the agent stopped: {exit_status or 'no exit status'}"
