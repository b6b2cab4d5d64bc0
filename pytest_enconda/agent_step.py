"""The agent's step of a case: the run's agent (made once, from ``--agent`` and its options), its
task (the README it is given, a box of the task image on demand), its run under the cost
ceiling, and its outcome and setup script saved in the case's folder. An agent that acts in its
box leaves that box, frozen, as the final state the probes grade.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
import traceback
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from .agents.base import AgentOutcome, AgentTask
from .artifacts import append_jsonl, atomic_write_text, read_model, write_model
from .case_repository import TaskImages
from .cost_ceiling import CostCeiling
from .errors import EncondaError, RunStopped
from .kinds import TASK_KINDS
from .records import CaseDir, RunDir

if TYPE_CHECKING:
    from .agents.clock import AgentClock
    from .backends.base import Backend, Box
    from .cases.models import Case
    from .settings import EncondaSettings


class AgentStep:
    """The agent of one run in this process, and its step for each case."""

    def __init__(
        self,
        settings: EncondaSettings,
        run_dir: RunDir,
        *,
        worker_id: str | None,
        backend: Callable[[], Backend],
        images: TaskImages,
        cost: CostCeiling,
        progress: Callable[[str], None],
    ) -> None:
        self.settings = settings
        self.run_dir = run_dir
        self.worker_id = worker_id
        self.backend = backend
        self.images = images
        self.cost = cost
        self.progress = progress
        self._agent: Any = None

    @property
    def agent(self) -> Any:
        if self._agent is None:
            from .agents import registry
            from .agents.memory_options import embedder_options

            options: dict[str, Any] = dict(self.settings.agent_options)
            if self.settings.model:
                options["model"] = self.settings.model
            if self.settings.api_base:
                options["api_base"] = self.settings.api_base
            if self.settings.predictions:
                options["predictions"] = self.settings.predictions
            if self.settings.memory is not None:
                options["memory"] = str(self.settings.memory)
                options.update(
                    embedder_options(
                        self.settings.agent, self.settings.embedder,
                        self.settings.embedding_api_base,
                    )
                )  # fmt: skip
            self._agent = registry.create(self.settings.agent, **options)
        return self._agent

    def outcome(self, case: Case) -> AgentOutcome:
        paths = CaseDir(self.run_dir.root, case.id)
        if self.backend().existing is not None:
            return AgentOutcome(
                case_id=case.id,
                agent="existing-environment",
                message=f"existing environment: {self.settings.python} in {self.settings.repo}",
            )
        if paths.agent_outcome.is_file():
            return read_model(paths.agent_outcome, AgentOutcome)
        self.cost.check()
        agent = self.agent
        began = time.monotonic()
        # The task image is built when the agent asks for its box (``start_container``), and
        # agents start their clock once the box is up: a build of minutes under load is the
        # harness's time. Agents that need no box (oracle, replay) need no image either.
        readme_name, readme_text = self.images.agent_readme(case)
        task = AgentTask(
            case=case,
            readme_text=readme_text,
            readme_name=readme_name,
            log_path=paths.agent_log,
            trajectory_path=paths.trajectory,
            run_dir=self.run_dir.root,
            max_cost=self.settings.max_cost,
            model_price=self.settings.model_price,
            start_container=lambda: self._agent_box(case),
            measure_clock=lambda: self._clock(case),
        )
        append_jsonl(
            paths.agent_runs,
            {
                "pid": os.getpid(),
                "worker": self.worker_id,
                "host": socket.gethostname(),
                "agent": self.settings.agent,
                "started": time.time(),
            },
        )
        started = time.monotonic()
        try:
            outcome = agent.run(task)
        except RunStopped as exc:
            self.cost.say(str(exc))
            raise
        except EncondaError:
            # A harness failure (the model provider's included) saves no outcome, so
            # ``--resume`` runs this agent again.
            raise
        except Exception as exc:  # the agent's own bug counts against the agent
            outcome = AgentOutcome(
                case_id=case.id,
                agent=self.settings.agent,
                status="crashed",
                message="".join(traceback.format_exception(exc))[-4000:],
                wall_time=time.monotonic() - started,
            )
        # Whatever of the step was not the agent's own clock: the build above, starting and
        # removing the box (an agent without a clock of its own reports none).
        outcome.harness_seconds = round(max(0.0, time.monotonic() - began - outcome.wall_time), 3)
        outcome.clock = task.clock
        atomic_write_text(paths.setup_script, outcome.setup_script)
        write_model(paths.agent_outcome, outcome)
        return outcome

    def _clock(self, case: Case) -> AgentClock:
        """The agent's wall-clock budget here, measured when the agent first reads its budgets
        (``AgentTask.budgets``: before its clock starts), in a box of the case's task image:
        where its commands will run, in a scheduling group of their own (``agents.clock``)."""
        from .agents import clock
        from .backends.base import download_cache_key, started

        def in_box() -> clock.ClockProbe:
            image = self.images.task_image(case)
            # The case's download cache, as every box of the case: the probe downloads nothing.
            cache = download_cache_key(case)
            with started(
                self.backend(), image, case_id=case.id, role="clock", download_cache=cache
            ) as box:
                return clock.probe_in_box(box)

        budget = case.spec.budgets.agent_seconds
        measured = clock.measure(budget, self.settings.budget_scale, probe=in_box, method="box")
        self.progress(f"{case.id}: the agent's wall clock is {measured.describe()}")
        return measured

    @contextlib.contextmanager
    def _agent_box(self, case: Case) -> Iterator[Box]:
        from .backends.base import download_cache_key, started
        from .package_cutoff import cutoff_env

        image = self.images.task_image(case)
        with started(
            self.backend(),
            image,
            case_id=case.id,
            role="agent",
            env=cutoff_env(case),
            download_cache=download_cache_key(case),
        ) as box:
            yield box
            if TASK_KINDS.get(case.spec.suite).graded_by_probes and getattr(
                self.agent, "acts_in_container", False
            ):
                self._freeze_agent_box(case, box)

    def _freeze_agent_box(self, case: Case, box: Box) -> None:
        """The agent's box, as it left it, becomes the final state the probes grade."""
        from .probing.final_state import freeze

        self.progress(f"{case.id}: freezing the agent's container")
        paths = CaseDir(self.run_dir.root, case.id)
        state = freeze(box, case, paths, source="agent-container")
        write_model(paths.final_state, state)
