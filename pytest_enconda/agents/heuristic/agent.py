"""``heuristic``: an offline baseline that follows the README in the task container, classifies
each failure by its evidence and repairs it (no model, no API key, deterministic).

The agent sees what any agent sees: the erroneous README, the repository tree in the container
and the output of the commands it runs. It never reads the golden answer, the original README
or the repository's history.

1. A static pre-pass compares the README with the repository (``prepass``).
2. The README's commands run one at a time in the container (``steps`` says what each is); a
   failing command is classified (``classify``) and repaired (replaced, reordered, dropped,
   or preceded by the missing step), then run again.
3. Usage examples and test runs are executed as checks after the setup they need, never put
   in the setup script; the trajectory says why each skipped command was skipped.
4. The final script runs once more in a fresh container, with the repository's tests.

Outputs follow the contract: ``/enconda/output/diagnosis.json`` and ``setup.sh``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path, PurePath

from ..base import AgentOutcome, AgentTask, Step
from ..configured import ConfiguredAgent
from ..llm import TrajectoryWriter
from ..output import (
    DIAGNOSIS,
    OUTPUT_DIR,
    SETUP,
    TEST_COMMAND,
    collect_outputs,
    prepare_output_dir,
)
from ..profile import build_profile
from ..readme import asks_test_command
from ..swe_agent import head_tail
from ..workspace import RepositoryView, agent_dir
from .examples import example_findings
from .memory import MemoryConsult
from .prepass import run_prepass
from .repo_view import scan
from .run import OUTPUT_CHARS, HeuristicConfig, OutOfBudget, Run
from .steps import readme_steps


class HeuristicAgent(ConfiguredAgent):
    name = "heuristic"
    config_model = HeuristicConfig

    def run(self, task: AgentTask) -> AgentOutcome:
        max_commands = self.config.max_commands or max(task.budgets.agent_steps, 60)
        writer = TrajectoryWriter(task.trajectory_path)
        outcome = AgentOutcome(case_id=task.case.id, agent=self.name, config=self.describe())
        readme_name = task.readme_name or PurePath(task.case.spec.readme_target).name
        aec = asks_test_command(task.case.spec.suite)
        default_test = ""
        folder = agent_dir(task)
        assert task.start_container is not None
        # Read before the clock starts: the harness measures the machine's slowdown for it.
        budget = float(task.budgets.agent_seconds)
        with task.start_container() as box:
            # The budget's clock starts with the container, not with the image build.
            started = time.monotonic()
            deadline = started + budget
            prepare_output_dir(box)
            with RepositoryView(box, task.workdir) as repo:
                facts = scan(repo)
                steps = readme_steps(task.readme_text, readme_name, facts, aec=aec)
                if aec:
                    default_test = build_profile(repo, readme_name).test_command or ""
                static = run_prepass(steps, facts, task.readme_text, readme_name)
                examples = example_findings(
                    task.readme_text, readme_name, facts, lambda rel: _read(repo, rel)
                )
            run = Run(box, task, facts, steps, writer, self.config, deadline, max_commands)
            run.default_test = default_test
            if self.config.memory:
                run.memory = MemoryConsult.open(
                    self.config.memory, task, facts.names, self.config.memory_same_repository,
                    self.config.embedder, self.config.embedding_api_base,
                )  # fmt: skip
            run.note(
                f"repository: {len(facts.files)} files; manifests {facts.manifests or 'none'}; "
                f"project {facts.names or 'unnamed'}; requires-python "
                f"{facts.requires_python or 'not declared'}; extras {sorted(facts.extras)}; "
                f"requirement files {sorted(facts.requirement_files)}; "
                f"README commands: {len(steps)}",
                kind="static",
            )
            plan: list[int] = []
            try:
                run.ctx.pythons = run.pythons()
                plan = run.initial_plan(static)
                plan = run.execute(plan)
                if examples:
                    run.check_examples(examples)
                outcome.message = f"{run.commands_run} commands run"
            except OutOfBudget as stop:
                outcome.status, outcome.message = stop.status, stop.message  # type: ignore[assignment]
            script = run.script(plan)
            if self.config.final_check and outcome.status == "completed":
                outcome.message += "; " + self._final_check(task, run, plan, script)
            box.copy_in(script.encode("utf-8"), f"{OUTPUT_DIR}/{SETUP}")
            diagnosis = {"detected_errors": run.diagnosis()}
            box.copy_in(
                (json.dumps(diagnosis, indent=2) + "\n").encode("utf-8"),
                f"{OUTPUT_DIR}/{DIAGNOSIS}",
            )
            if aec:
                test_command = run.test_command(plan)
                run.note(f"test command: `{test_command or 'none found'}`")
                box.copy_in((test_command + "\n").encode("utf-8"), f"{OUTPUT_DIR}/{TEST_COMMAND}")
            if run.memory is not None:
                run.memory.save(folder / "memory.json" if folder is not None else None)
            outputs = collect_outputs(
                box,
                folder / "output" if folder is not None else None,
                suite=task.case.spec.suite,
            )
        outputs.apply_to(outcome)
        outcome.trajectory = writer.steps
        outcome.wall_time = time.monotonic() - started
        return outcome

    def _final_check(self, task: AgentTask, run: Run, plan: list[int], script: str) -> str:
        """The final script and the checks in a fresh container: what the grader will see."""
        tests = [
            run.steps[i].final or run.steps[i].command
            for i in plan
            if run.steps[i].kind == "test" and i in run.ctx.done
        ]
        body = script.split("\n", 1)[1]
        command = "set -eo pipefail\n" + body + "\n".join(tests)
        remaining = run.deadline - time.monotonic()
        if remaining < 30:
            run.note("no time left for the final check in a fresh container")
            return "final check skipped (no time left)"
        assert task.start_container is not None
        with task.start_container() as fresh:
            started = time.time()
            result = fresh.exec(command, timeout=remaining - 10, workdir=task.workdir)
        run.writer.add(
            Step(
                kind="final_check",
                command=command,
                output=head_tail(result.output, OUTPUT_CHARS),
                exit_code=result.exit_code,
                started_at=started,
                duration=result.duration,
                timed_out=result.timed_out,
                thought="the final setup script and the passing checks, in a fresh container",
            )
        )
        return "final check " + ("passed" if result.exit_code == 0 else "failed")


def _read(repo: Path, rel: str) -> str | None:
    path = repo / rel
    try:
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    except OSError:
        return None
