"""One heuristic run in its container: the plan of README steps, their execution with
classification and repair, the usage checks, and the script and diagnosis they leave.

``agent.HeuristicAgent`` opens the container, reads the repository and hands over to a ``Run``;
the final check in a fresh container is the agent's again.
"""

from __future__ import annotations

import re
import time
from pathlib import PurePath
from typing import Any

from pydantic import ConfigDict, Field

from ...kinds import TASK_KINDS
from ..base import AgentTask, Step
from ..llm import TrajectoryWriter
from ..memory_options import EmbedderFields
from ..swe_agent import head_tail
from .classify import Context, classify, missing_distribution
from .findings import Finding
from .memory import MemoryConsult, expected_to_fail, signature
from .prepass import installs_project
from .repo_view import RepoFacts, canonicalize_name, requirement_name
from .steps import SETUP_KINDS, ReadmeStep, classify_command, words_of

OUTPUT_CHARS = 6_000


class HeuristicConfig(EmbedderFields):
    """``--agent-option KEY=VALUE`` for ``heuristic``."""

    model_config = ConfigDict(extra="forbid")

    command_timeout: float = Field(default=600, gt=0, description="seconds per setup command")
    check_timeout: float = Field(default=300, gt=0, description="seconds per usage or test run")
    max_repairs: int = Field(default=3, ge=0, description="repairs tried per README command")
    max_commands: int | None = Field(
        default=None, gt=0, description="commands run in all; default: the case's agent_steps"
    )
    final_check: bool = Field(
        default=True, description="run the final script again in a fresh container"
    )
    memory: str | None = Field(
        default=None,
        description="a memory file (pytest-enconda memory build): a failure whose error matches "
        "a stored triple tries the triple's action first",
    )
    memory_same_repository: bool = Field(
        default=False,
        description="let the memory return triples learnt on this case's own repository "
        "(off: the leakage guard)",
    )


class OutOfBudget(Exception):
    """The case's seconds or commands are spent: ``status`` and ``message`` end the outcome."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Run:
    """One case: the container, the README's steps and what has been found so far."""

    def __init__(
        self,
        box: Any,
        task: AgentTask,
        facts: RepoFacts,
        steps: list[ReadmeStep],
        writer: TrajectoryWriter,
        config: HeuristicConfig,
        deadline: float,
        max_commands: int,
    ) -> None:
        self.box = box
        self.task = task
        self.facts = facts
        self.steps = steps
        self.writer = writer
        self.config = config
        self.deadline = deadline
        self.max_commands = max_commands
        self.commands_run = 0
        self.findings: list[Finding] = []
        self.keys: set[str] = set()
        self.step_types: set[tuple[int, str | None]] = set()
        self.failed_repairs: set[str] = set()
        self.preamble: list[str] = []
        # What the same command printed when it last failed: a repair after which it fails the
        # same way did nothing, and trying it again only repeats the failure.
        self.last_failure: dict[int, str] = {}
        self.memory: MemoryConsult | None = None
        # The test command the repository's profile names, for a README that runs none (AEC).
        self.default_test = ""
        self.ctx = Context(
            facts=facts,
            steps=steps,
            done=[],
            cwd="",
            probe=self.probe,
            readme_text=task.readme_text,
        )

    # ------------------------------------------------------------------ commands

    def note(self, text: str, kind: str = "note") -> None:
        self.writer.add(Step(kind=kind, command="", thought=text))

    def _exec(
        self, command: str, timeout: float, thought: str, kind: str
    ) -> tuple[int | None, str]:
        remaining = self.deadline - time.monotonic()
        if remaining < 5:
            raise OutOfBudget(
                "timeout",
                "wall-clock limit reached (the case's agent_seconds, stretched by this "
                "machine's slowdown)",
            )
        if self.commands_run >= self.max_commands:
            raise OutOfBudget("budget_exhausted", f"command limit reached ({self.max_commands})")
        self.commands_run += 1
        script = "\n".join(["set -eo pipefail", *self.preamble, command])
        started = time.time()
        result = self.box.exec(
            script, timeout=max(1.0, min(timeout, remaining)), workdir=self.task.workdir,
            max_output=400_000,
        )  # fmt: skip
        output = result.output
        if result.timed_out:
            output += f"\n[the command timed out after {min(timeout, remaining):g} s]"
        self.writer.add(
            Step(
                kind=kind,
                command=command,
                output=head_tail(output, OUTPUT_CHARS),
                exit_code=result.exit_code,
                started_at=started,
                duration=result.duration,
                timed_out=result.timed_out,
                thought=thought,
            )
        )
        return (None if result.timed_out else result.exit_code), output

    def probe(self, command: str) -> tuple[int | None, str]:
        """A look at the container (``--help``, ``apt-cache``) on the way to a repair."""
        return self._exec(command, 120, "inspect the environment for a repair", "probe")

    # ------------------------------------------------------------------ findings

    def add(self, finding: Finding) -> bool:
        """Record ``finding``; ``False`` if the same error was already diagnosed."""
        if finding.key and finding.key in self.keys:
            return False
        self.keys.add(finding.key)
        self.findings.append(finding)
        label = finding.error_type or "repair (not a README error)"
        self.note(
            f"{label} [{finding.rule}]: {finding.description} Fix: {finding.fix}", kind="finding"
        )
        return True

    def new_step(self, command: str, kind: str, section: str) -> ReadmeStep:
        step = ReadmeStep(len(self.steps), command, section, kind)
        self.steps.append(step)
        return step

    # ------------------------------------------------------------------ the plan

    def initial_plan(self, static: list[Finding]) -> list[int]:
        clone_dirs = set()
        for step in self.steps:
            words = words_of(step.command)
            if words[:2] == ["git", "clone"]:
                args = [w for w in words[2:] if not w.startswith("-")]
                if args:
                    clone_dirs.add(args[1] if len(args) > 1 else
                                   PurePath(args[0]).name.removesuffix(".git"))  # fmt: skip
        plan = []
        for step in self.steps:
            words = words_of(step.command)
            if step.kind == "state" and words[:1] == ["cd"] and len(words) > 1:
                target = words[1].rstrip("/")
                if target in clone_dirs or (
                    not self.facts.exists(target)
                    and (PurePath(target).name in clone_dirs or self._names_repository(target))
                ):
                    step.kind, step.reason, step.final = (
                        "skip",
                        "enters the cloned repository, which is the working directory here",
                        None,
                    )
            release = self._release_of_project(step)
            if release is not None:
                step.final = release
                self.note(f"`{step.command}` installs the project's release from PyPI; the "
                          f"checkout is what is set up here: `{release}`")  # fmt: skip
            if step.kind == "skip":
                self.note(f"skipped `{step.command}`: {step.reason}", kind="skip")
                continue
            if step.kind == "usage":
                self.note(f"`{step.command}` ({step.section or 'no section'}): {step.reason}")
            plan.append(step.index)
        for finding in static:
            self.add(finding)
            target = finding.move
            if target is None or target not in plan:
                continue
            step = self.steps[target]
            if finding.action == "replace" and finding.commands:
                step.final = finding.commands[0]
            elif finding.action == "drop":
                step.final = None
                plan.remove(target)
            elif finding.action == "move_before" and finding.commands:
                # Static reorder: the install goes right after the activation it should follow.
                after = int(finding.commands[0])
                plan.remove(target)
                plan.insert(plan.index(after) + 1 if after in plan else len(plan), target)
        if not any(self.steps[i].kind == "test" for i in plan):
            # An AEC repository in any language: its profile's runner (cargo test, ctest, ...).
            default = self.default_test or ("python -m pytest -q" if self._has_tests() else "")
            if default:
                step = self.new_step(default, "test", "(added: the repository's tests)")
                self.note(f"the README runs no tests; the repository's test command: `{default}`")
                plan.append(step.index)
        return plan

    def test_command(self, plan: list[int]) -> str:
        """The command line that runs the tests (AEC's ``test_command``): the last test run of
        the plan, as repaired, preferring one that ran to an exit code."""
        tests = [i for i in plan if self.steps[i].kind == "test"]
        ran = [i for i in tests if i in self.ctx.done] or tests
        if not ran:
            return ""
        step = self.steps[ran[-1]]
        return (step.final or step.command).strip()

    def _names_repository(self, target: str) -> bool:
        """``cd <target>`` means the repository itself (the README's reader cloned it): a
        folder that is not here named like the project, its repository or the workdir.
        Taking the closest subfolder instead runs every later command in the wrong place."""
        spec = self.task.case.spec.repository
        names = {*self.facts.names, PurePath(self.task.workdir).name,
                 PurePath(str(spec.url or spec.path or "")).name.removesuffix(".git")}  # fmt: skip
        wanted = {canonicalize_name(n) for n in names if n}
        leaf = canonicalize_name(PurePath(target).name)
        return leaf in wanted or any(
            leaf.startswith(f"{name}-") and leaf[len(name) + 1 :] in ("main", "master")
            for name in wanted
        )

    def _release_of_project(self, step: ReadmeStep) -> str | None:
        """``pip install <the project>`` fetches the PyPI release, not this checkout: the
        same install from the repository folder (extras kept)."""
        if step.kind != "install" or not step.final:
            return None
        words = words_of(step.final)
        pip = words[:2] in (["pip", "install"], ["pip3", "install"]) or words[:4] in (
            ["python", "-m", "pip", "install"],
            ["python3", "-m", "pip", "install"],
        )
        if not pip:
            return None
        targets = [w for w in words[words.index("install") + 1 :] if not w.startswith("-")]
        if len(targets) != 1:
            return None
        match = re.fullmatch(r"([A-Za-z0-9][\w.-]*)(\[[^\]]*\])?", targets[0])
        if not match or canonicalize_name(match.group(1)) not in set(self.facts.names):
            return None
        if self.facts.exists(match.group(1)):
            return None  # a folder of that name: the README installs a path, not a release
        extras = match.group(2)
        return _swap_word(step.final, targets[0], f'".{extras}"' if extras else ".")

    def _has_tests(self) -> bool:
        return any(re.search(r"(^|/)(tests?/|test_[^/]*\.py$)", path) for path in self.facts.files)

    # ------------------------------------------------------------------ execution

    def execute(self, plan: list[int]) -> list[int]:
        attempts: dict[int, int] = {}
        pos = 0
        while pos < len(plan):
            index = plan[pos]
            step = self.steps[index]
            setup = step.kind in SETUP_KINDS
            command = step.final if setup else (step.final or step.command)
            if command is None:
                pos += 1
                continue
            timeout = self.config.command_timeout if setup else self.config.check_timeout
            thought = f"{step.kind} step from '{step.section or 'the README'}'"
            code, output = self._exec(command, timeout, thought, "command")
            self.ctx.attempted.add(index)
            if (
                code != 0
                and self.memory is not None
                and self._memory_repair(step, command, output, plan, pos)
            ):
                pos += 2  # past the action inserted before this step, and the step itself
                continue
            finding = classify(step, command, code, output, self.ctx)
            if (
                finding is not None
                and finding.error_type == "E2"
                and expected_to_fail(self.task.readme_text, step.command)
            ):
                self.note(f"`{command}` fails as the README says it should; not an error")
                finding = None
                code = 0 if step.kind in ("usage", "test") else code
            failure = signature(output) if code != 0 else ""
            if failure and self.last_failure.get(index) == failure and attempts.get(index):
                self.note(f"`{command}` failed the same way after its repair ('{failure}'); "
                          "not tried again")  # fmt: skip
                if finding is not None and finding.key:
                    self.failed_repairs.add(finding.key)
                finding = None
            self.last_failure[index] = failure
            if finding is None and code != 0 and step.kind in ("test", "usage"):
                finding = self._declared_in_output(command, output)
            if finding is None and code != 0 and step.kind == "usage":
                finding = self._before_install(step, command)
            if finding is not None and finding.key in self.failed_repairs:
                self.note(f"{finding.rule}: its repair already failed; not tried again")
                finding = None
            if finding is not None and step.section.startswith("(added"):
                # A check the agent added itself: what it needs is no error of the README.
                finding.error_type = None
            if finding is None:
                if code == 0:
                    self._succeeded(step, command)
                else:
                    self._unexplained(step, command, code)
                pos += 1
                continue
            # One diagnosis per error (its key) and per type on one step: a repair that needs
            # a second try is still the same error.
            if (index, finding.error_type) in self.step_types:
                self.note(f"again on this step ({finding.rule}); repaired without a new diagnosis")
            else:
                self.add(finding)
            self.step_types.add((index, finding.error_type))
            tries = attempts.get(index, 0)
            if tries >= self.config.max_repairs or (finding.action == "none" and code == 0):
                if code == 0:
                    self._succeeded(step, command)
                else:
                    self._unexplained(step, command, code)
                pos += 1
                continue
            attempts[index] = tries + 1
            pos = self._apply(finding, plan, pos, step, code)
        return plan

    def _memory_repair(
        self, step: ReadmeStep, command: str, output: str, plan: list[int], pos: int
    ) -> bool:
        """The memory's action for this failure, tried before any rule: ``True`` if the
        command passes after it (the action then joins the setup script before the step)."""
        assert self.memory is not None
        action, hit = self.memory.action_for(command, output)
        if action is None or hit is None:
            return False
        self.note(f"memory: triple {hit.id} ({hit.problem}) suggests `{action}`", kind="memory")
        kind, _ = classify_command(action, self.facts)
        if kind not in SETUP_KINDS:
            kind = "install"
        code, _ = self._exec(action, self.config.command_timeout, "repair from memory", "command")
        # Each command runs in a fresh shell: an action that sets shell state (an export, a
        # venv's activation) reaches the retried step only through the preamble, as a README's
        # own `export` does. Without it `export SETUPTOOLS_SCM_PRETEND_VERSION=...` never
        # helped the install it was stored for.
        carried = code == 0 and kind in ("state", "env_activate")
        if carried:
            self.preamble.append(action)
        again, _ = (code, "") if code != 0 else self._exec(
            command, self.config.command_timeout, "the step again, after the memory's action",
            "command",
        )  # fmt: skip
        if carried:
            self.preamble.pop()
        helped = code == 0 and again == 0
        self.memory.outcome(hit, action, helped)
        if not helped:
            self.note(f"memory: `{action}` did not make `{command}` pass", kind="memory")
            return False
        new = self.new_step(action, kind, "(added by the agent from memory)")
        plan.insert(pos, new.index)
        self._succeeded(new, action)
        # A kind whose agent writes a self-report (research) has no README errors to report.
        if hit.error_type and not TASK_KINDS.get(self.task.case.spec.suite).writes_self_report:
            self.add(
                Finding(
                    hit.error_type,
                    f"`{command}` fails ('{signature(output)}'); the same failure elsewhere: "
                    f"{hit.solution}",
                    f"`{action}`",
                    key=f"memory:{hit.id}",
                    rule="memory",
                )
            )
        self._succeeded(step, command)
        return True

    def _succeeded(self, step: ReadmeStep, command: str) -> None:
        self.ctx.done.append(step.index)
        words = words_of(command)
        if step.kind == "apt_update" or "apt-get update" in command:
            self.ctx.apt_updated = True
        if step.kind in ("state", "env_activate"):
            self.preamble.append(command)
            if words[:1] == ["cd"] and len(words) > 1:
                self.ctx.cwd = (PurePath(self.ctx.cwd) / words[1]).as_posix().lstrip("./")

    def _unexplained(self, step: ReadmeStep, command: str, code: int | None) -> None:
        if step.repair_key:
            self.failed_repairs.add(step.repair_key)
        if step.kind in SETUP_KINDS:
            step.final = None
            self.note(
                f"`{command}` failed (exit {code}) for a reason no rule explains; left out of "
                "the setup script so that the rest can run"
            )
        else:
            self.note(f"check `{command}` failed (exit {code}); no rule explains it")

    def _apply(self, finding: Finding, plan: list[int], pos: int, step: ReadmeStep, code) -> int:
        setup = step.kind in SETUP_KINDS
        action = finding.action
        if action == "replace" and finding.commands:
            if finding.move is not None and finding.move != step.index:
                # The repair widens an earlier install (an extra, a requirements file).
                earlier = self.steps[finding.move]
                earlier.final = finding.commands[0]
                self._run_now(finding.commands[0], "repair: install what was missing")
                return pos
            step.final = finding.commands[0]
            for extra in finding.commands[1:]:
                self._run_now(extra, "repair: undo what the faulty step changed")
            return pos if code != 0 else pos + 1
        if action == "drop":
            step.final = None
            for extra in finding.commands:
                self._run_now(extra, "repair: undo what the faulty step changed")
            return pos + 1
        if action == "move_before" and finding.move is not None:
            mover = finding.move
            if mover in plan:
                plan.remove(mover)
                pos = plan.index(step.index)
            plan.insert(pos, mover)
            return pos
        if action == "defer" and finding.move is not None:
            plan.remove(step.index)
            anchor = plan.index(finding.move) if finding.move in plan else len(plan) - 1
            plan.insert(anchor + 1, step.index)
            return pos
        if action in ("prepend", "append") and finding.commands:
            for command in reversed(finding.commands):
                kind = "state" if command.startswith("export ") else "install"
                new = self.new_step(command, kind, "(added by the agent)")
                new.repair_key = finding.key
                plan.insert(pos, new.index)
            return pos
        # Diagnosed but not repairable: a failed setup step stays out of the script.
        if code != 0:
            self._unexplained(step, step.final or step.command, code)
        elif setup:
            self._succeeded(step, step.final or step.command)
        return pos + 1

    def _before_install(self, step: ReadmeStep, command: str) -> Finding | None:
        """A usage example that failed and comes before the step installing the project."""
        facts = self.facts
        mentions = [*facts.scripts, *facts.packages, *facts.names]
        words = set(re.split(r"[\s./:()'\"=]+", command))
        if not any(name in words for name in mentions):
            return None
        for later in self.ctx.later(step.index):
            if later.kind == "install" and installs_project(later, facts):
                return Finding(
                    "E6",
                    f"`{command}` uses the project before `{later.command}` installs it "
                    "(it fails here).",
                    f"Run `{later.command}` before `{command}`.",
                    action="defer",
                    move=later.index,
                    key=f"order:{later.index}",
                    rule="used before installed",
                )
        return None

    def _run_now(self, command: str, thought: str) -> None:
        self._exec(command, self.config.command_timeout, thought, "command")

    def _declared_in_output(self, command: str, output: str) -> Finding | None:
        """A check failed and its output names a distribution the repository declares."""
        _, frozen = self.probe("python -m pip list --format=freeze 2>/dev/null")
        installed = {requirement_name(line.split("==")[0]) for line in frozen.splitlines()}
        candidates = []
        for group in (*self.facts.extras.values(), *self.facts.requirement_files.values()):
            for req in group:
                name = requirement_name(req)
                spelled = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", req.strip())
                if not name or not spelled or name in installed or name in candidates:
                    continue
                if re.search(rf"(?<![\w-]){re.escape(spelled.group(0))}(?![\w-])", output):
                    candidates.append(name)
        for name in candidates:
            finding = missing_distribution(
                command, name, f"the output names {name}, which is not installed", self.ctx
            )
            if finding is not None and finding.error_type is not None:
                return finding
        return None

    # ------------------------------------------------------------------ examples

    def check_examples(self, examples: list[Finding]) -> None:
        for finding in examples:
            code = finding.commands[0] if finding.commands else ""
            status, output = self._exec(
                f"python - <<'ENCONDA_EXAMPLE'\n{code}\nENCONDA_EXAMPLE",
                60,
                "run the README's Python example (static analysis found undefined names)",
                "command",
            )
            if status != 0 and "NameError" in output:
                finding.commands = []
                self.add(finding)
            else:
                self.note(f"the Python example ran without NameError: not reported ({status})")

    # ------------------------------------------------------------------ results

    def script(self, plan: list[int]) -> str:
        lines = [
            self.steps[i].final
            for i in plan
            if self.steps[i].kind in SETUP_KINDS and self.steps[i].final
        ]
        return "#!/bin/bash\n" + "".join(f"{line}\n" for line in lines)

    def diagnosis(self) -> list[dict[str, str]]:
        return [f.diagnosis() for f in self.findings if f.error_type]

    def pythons(self) -> list[str]:
        code, text = self.probe(
            "ls /usr/bin /usr/local/bin 2>/dev/null | grep -E '^python3\\.[0-9]+$' | sort -u"
        )
        versions = sorted(
            {line.strip()[len("python") :] for line in text.splitlines() if line.strip()},
            key=lambda v: tuple(int(p) for p in v.split(".")),
        )
        return versions if code == 0 else []


def _swap_word(command: str, word: str, new: str) -> str:
    for quoted in (f'"{word}"', f"'{word}'", word):
        if quoted in command:
            return command.replace(quoted, new, 1)
    return command
