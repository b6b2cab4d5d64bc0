"""``command``: any external CLI agent the user has installed, behind a documented contract.

The harness starts the task container, writes the task prompt to ``/enconda/input/prompt.md``
and creates ``/enconda/output``, then runs the user's command (``--agent-option
command="..."``, a shell command line):

- on the host (default), with ``bash -c`` in a scratch folder, in the user's own environment
  plus ``ENCONDA_CONTAINER_ID``/``ENCONDA_CONTAINER_NAME`` (drive the container with
  ``docker exec``), ``ENCONDA_REPO_DIR`` (the repository in the container), ``ENCONDA_README``,
  ``ENCONDA_CASE_ID``, ``ENCONDA_SUITE``, ``ENCONDA_OUTPUT_DIR`` (in the container),
  ``ENCONDA_PROMPT_FILE`` (a host copy of the prompt) and ``ENCONDA_TIMEOUT``;
- or inside the container (``--agent-option in_container=true``), from the repository, with
  only the ``ENCONDA_*`` variables (the host's environment and API keys never enter).

Either way the command gets ``timeout`` seconds (default: the case's agent budget); on the
host its whole process group is killed when it runs over, in the container the sandbox kills
the in-container process tree. Its stdout and stderr are kept as the trajectory, and the output
files it left in ``/enconda/output`` are graded like any agent's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path, PurePath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .base import AgentOutcome, AgentTask, Step, TokenUsage
from .configured import ConfiguredAgent
from .llm import TrajectoryWriter
from .output import OUTPUT_DIR, collect_outputs, prepare_output_dir
from .prompts import SYSTEM_PROMPT, instance_prompt
from .swe_agent import head_tail
from .workspace import RepositoryView, agent_dir, profile_of

PROMPT_PATH = "/enconda/input/prompt.md"
MAX_OUTPUT = 1_000_000


class CommandConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="shell command line of the CLI agent")
    in_container: bool = False
    timeout: float | None = Field(default=None, gt=0, description="default: the case's budget")
    model: str | None = Field(default=None, description="passed on as ENCONDA_MODEL")
    api_base: str | None = Field(default=None, description="passed on as ENCONDA_API_BASE")


def _kill_group(process: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


class CommandAgent(ConfiguredAgent):
    name = "command"
    config_model = CommandConfig
    acts_in_container = True

    def _variables(self, task: AgentTask, box: Any, timeout: float) -> dict[str, str]:
        variables = {
            "ENCONDA_CONTAINER_ID": box.id,
            "ENCONDA_CONTAINER_NAME": box.name,
            "ENCONDA_REPO_DIR": task.workdir,
            "ENCONDA_README": task.readme_name or PurePath(task.case.spec.readme_target).name,
            "ENCONDA_CASE_ID": task.case.id,
            "ENCONDA_SUITE": task.case.spec.suite,
            "ENCONDA_OUTPUT_DIR": OUTPUT_DIR,
            "ENCONDA_TIMEOUT": f"{timeout:g}",
        }
        if self.config.model:
            variables["ENCONDA_MODEL"] = self.config.model
        if self.config.api_base:
            variables["ENCONDA_API_BASE"] = self.config.api_base
        return variables

    def _on_host(
        self, variables: dict[str, str], prompt: str, timeout: float, log: Path | None
    ) -> tuple[int | None, str, bool, float]:
        with tempfile.TemporaryDirectory(prefix="enconda-command-") as scratch:
            prompt_file = Path(scratch) / "prompt.md"
            prompt_file.write_text(prompt, encoding="utf-8")
            env = {**os.environ, **variables, "ENCONDA_PROMPT_FILE": str(prompt_file)}
            output_file = Path(scratch) / "output.log"
            started = time.monotonic()
            with output_file.open("wb") as sink:
                process = subprocess.Popen(
                    ["bash", "-c", self.config.command],
                    cwd=scratch,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                timed_out = False
                try:
                    process.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    timed_out = True
                except BaseException:
                    _kill_group(process)
                    process.wait()
                    raise
                # Whatever it left running in its group goes too (daemons it started).
                _kill_group(process)
                process.wait()
            duration = time.monotonic() - started
            data = output_file.read_bytes()
            if log is not None:
                log.parent.mkdir(parents=True, exist_ok=True)
                log.write_bytes(data)
            text = data[-MAX_OUTPUT:].decode("utf-8", errors="replace")
            return (None if timed_out else process.returncode), text, timed_out, duration

    def run(self, task: AgentTask) -> AgentOutcome:
        config = self.config
        timeout = config.timeout or float(task.budgets.agent_seconds)
        writer = TrajectoryWriter(task.trajectory_path)
        outcome = AgentOutcome(
            case_id=task.case.id,
            agent=self.name,
            model=config.model,
            config=self.describe(),
            # An external CLI's model calls are its own: what it spent is unknown, never 0.
            usage=TokenUsage(cost_unknown=True),
        )
        folder = agent_dir(task)
        assert task.start_container is not None
        with task.start_container() as box:
            # The agent's time starts with its container (the image build is the harness's).
            started = time.monotonic()
            prepare_output_dir(box)
            with RepositoryView(box, task.workdir) as repo:
                profile = profile_of(repo, task)
            prompt = (
                SYSTEM_PROMPT
                + "\n\n"
                + instance_prompt(
                    case_id=task.case.id,
                    suite=task.case.spec.suite,
                    workdir=task.workdir,
                    readme_name=task.readme_name or PurePath(task.case.spec.readme_target).name,
                    readme_text=task.readme_text,
                    profile=profile.render(),
                    packages_before=task.packages_before,
                )
            )
            box.copy_in(prompt.encode("utf-8"), PROMPT_PATH)
            variables = self._variables(task, box, timeout)
            step_started = time.time()
            log = folder / "command.log" if folder is not None else None
            if config.in_container:
                variables["ENCONDA_PROMPT_FILE"] = PROMPT_PATH
                result = box.exec(
                    config.command,
                    timeout=timeout,
                    workdir=task.workdir,
                    env=variables,
                    log_path=log,
                    max_output=MAX_OUTPUT,
                )
                exit_code, text = result.exit_code, result.output
                timed_out, duration = result.timed_out, result.duration
            else:
                exit_code, text, timed_out, duration = self._on_host(
                    variables, prompt, timeout, log
                )
            writer.add(
                Step(
                    kind="command",
                    command=config.command,
                    output=head_tail(text, 20_000),
                    exit_code=exit_code,
                    started_at=step_started,
                    duration=duration,
                    timed_out=timed_out,
                )
            )
            outputs = collect_outputs(
                box,
                folder / "output" if folder is not None else None,
                suite=task.case.spec.suite,
            )
        if timed_out:
            outcome.status = "timeout"
            outcome.message = f"the command ran past its {timeout:g} s and was killed"
        elif exit_code != 0:
            outcome.status = "crashed"
            outcome.message = f"the command exited with {exit_code}"
        else:
            outcome.message = "the command exited 0"
        outputs.apply_to(outcome)
        outcome.trajectory = writer.steps
        outcome.wall_time = time.monotonic() - started
        return outcome
