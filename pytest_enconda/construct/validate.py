"""Validation in Docker, built on ``verify``.

The repository's original README must verify (``verify_repository`` with the literal ``readme``
agent and no recipe fallback): its commands set the project up and the tests pass; otherwise the
repository is refused with verify's reason. Each erroneous README is then run the way the
``readme`` agent runs it (its commands in order, sourced in one shell by ``setup_command``), in a
fresh container of the same task image, with a marker written before each command so the step
the setup stopped at is known; when the setup passes, the test command runs in the environment
it left and the PASS set is checked.

- **documentation-only**: the literal reader runs the same commands as on the original README;
- **effective**: the setup stops at or after the first edited command (the commands before it
  are the original's, which passed), or a PASS-set test fails;
- **ineffective**: the setup and the PASS set pass anyway (or it stopped *before* the edit).

Docker is imported inside functions: the plugin import stays cheap.
"""

from __future__ import annotations

import shlex
import tempfile
from pathlib import Path
from typing import Any

from ..agents.readme_commands import extract_commands
from ..cases.sidecar import RepoVerification
from .models import Validation

__all__ = ["RepoWorkspace", "Validator", "classify", "marked_script"]

SCRIPT = "/tmp/enconda/setup.sh"
STEP_FILE = "/tmp/enconda/construct-step"


def marked_script(commands: list[str]) -> str:
    """The literal agent's script with the step index recorded before each command."""
    body = []
    for index, command in enumerate(commands):
        body.append(f"printf '%s' {index} > {STEP_FILE}")
        body.append(command)
    return "#!/bin/bash\n" + "".join(line + "\n" for line in body)


def first_difference(original: list[str], erroneous: list[str]) -> int | None:
    for index, (a, b) in enumerate(zip(original, erroneous, strict=False)):
        if a != b:
            return index
    if len(original) != len(erroneous):
        return min(len(original), len(erroneous))
    return None


def classify(
    original: list[str],
    erroneous: list[str],
    setup_exit: int | None,
    failed_step: int | None,
    tests_failed: list[str],
    detail: str = "",
) -> Validation:
    """The verdict from what ran (pure: the fast tests check it without Docker)."""
    edited = first_difference(original, erroneous)
    if edited is None:
        return Validation(
            verdict="documentation-only",
            detail="the literal reader runs the original README's commands",
        )
    failed_command = (
        erroneous[failed_step]
        if failed_step is not None and 0 <= failed_step < len(erroneous)
        else ""
    )
    common: dict[str, Any] = {
        "setup_exit": setup_exit,
        "failed_step": failed_step if setup_exit else None,
        "failed_command": failed_command if setup_exit else "",
        "tests_failed": tests_failed,
    }
    if setup_exit:
        if failed_step is not None and failed_step < edited:
            return Validation(
                verdict="ineffective",
                detail=f"setup stopped at step {failed_step}, before the edited step {edited}: "
                f"{detail}",
                **common,
            )
        return Validation(
            verdict="effective",
            repair="passes",
            detail=f"setup exited with {setup_exit} at `{failed_command}`: {detail}",
            **common,
        )
    if tests_failed:
        return Validation(
            verdict="effective",
            repair="passes",
            detail=f"setup passed; {len(tests_failed)} PASS-set tests did not pass",
            **common,
        )
    return Validation(
        verdict="ineffective", detail="setup and every PASS-set test passed", **common
    )


class RepoWorkspace:
    """One repository at its revision, materialised and built into a task image."""

    def __init__(
        self,
        repository: str,
        revision: str,
        mirror: Path | None,
        cache_dir: Path | None,
        validator: Validator | None = None,
    ) -> None:
        self.validator = validator
        self.mirror = mirror
        self.cache_dir = cache_dir
        self.repository = repository
        self.revision = revision
        self._tmp = tempfile.TemporaryDirectory(prefix="enconda-construct-")
        self.repo_dir = Path(self._tmp.name) / "repo"
        self.image: str | None = None
        self.digest = ""
        # Files the checkout went without (a snapshot lacking their contents), sorted.
        self.absent: list[str] = []

    def __enter__(self) -> RepoWorkspace:
        from ..cases.models import RepoSource
        from ..sandbox.repo import materialize

        source = RepoSource(
            kind="url", url=f"https://github.com/{self.repository}", revision=self.revision
        )
        self.digest = materialize(
            source,
            Path(self._tmp.name),
            self.repo_dir,
            mirror_dir=self.mirror,
            cache_dir=self.cache_dir,
            absent=self.absent,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self._tmp.cleanup()

    def ensure_image(self, record: RepoVerification) -> str:
        """The task image on the base the reference (``record``) was built on."""
        if self.image is None:
            assert self.validator is not None
            self.image = self.validator.ctx.task_image(
                record, self.repo_dir, tree_hash=self.digest, git_deps=[]
            )
        return self.image


class Validator:
    """Docker validation for ``construct``: one verify context, many READMEs."""

    def __init__(
        self,
        *,
        logs: Path,
        repo_mirror: Path | None,
        progress: Any = print,
        setup_seconds: float = 900,
        test_seconds: float = 600,
        base_image: str = "bookworm-py3.11",
    ) -> None:
        from ..verify import VerifyContext, VerifyOptions

        options = VerifyOptions(
            dataset=logs,
            out=logs / "unused.json",
            logs=logs,
            agent="readme",
            recipe_fallback=False,
            repo_mirror=repo_mirror,
            setup_seconds=setup_seconds,
            test_seconds=test_seconds,
            base_image=base_image,
        )
        self.ctx = VerifyContext(options, progress)
        self.ctx.backend.reap_orphans()

    def close(self) -> None:
        self.ctx.backend.close()

    def workspace(self, repository: str, revision: str) -> RepoWorkspace:
        return RepoWorkspace(
            repository,
            revision,
            self.ctx.options.repo_mirror,
            self.ctx.settings.cache_dir,
            self,
        )

    def reference(self, repository: str, revision: str) -> RepoVerification:
        """verify's record of the original README (readme agent only: no recipe fallback)."""
        from ..verify import verify_repository

        return verify_repository(self.ctx, repository, revision)

    def run_readme(
        self,
        workspace: RepoWorkspace,
        record: RepoVerification,
        original: str,
        erroneous: str,
        tag: str,
        readme_name: str = "README.md",
    ) -> Validation:
        from ..backends.base import started
        from ..probing.junit import JUNIT_PATH, JUnitError, read_junit
        from ..probing.shell import in_setup_env, setup_command
        from ..verify.attempt import graded_step

        ctx = self.ctx
        before = extract_commands(original, readme_name)
        after = extract_commands(erroneous, readme_name)
        if before == after:
            return classify(before, after, None, None, [])
        logs = ctx.options.logs / workspace.repository.replace("/", "__") / tag
        logs.mkdir(parents=True, exist_ok=True)
        (logs / readme_name).write_text(erroneous, encoding="utf-8")
        image = workspace.ensure_image(record)
        case_id = f"construct/{workspace.repository}"
        tests_failed: list[str] = []
        with started(ctx.backend, image, case_id=case_id, role="construct") as box:
            box.copy_in(marked_script(after).encode(), SCRIPT)
            setup = box.exec(
                setup_command(SCRIPT),
                timeout=ctx.options.setup_seconds,
                log_path=logs / "setup.log",
            )
            step_out = box.exec(f"cat {shlex.quote(STEP_FILE)} 2>/dev/null || true", timeout=30)
            try:
                step = int(step_out.output.strip().splitlines()[-1])
            except (ValueError, IndexError):
                step = None
            last = [line for line in setup.output.strip().splitlines() if line.strip()]
            detail = last[-1][:300] if last else "no output"
            if setup.timed_out:
                detail = f"timed out after {ctx.options.setup_seconds:g} s"
            if setup.exit_code == 0:
                command = in_setup_env(graded_step(record))
                box.exec(command, timeout=ctx.options.test_seconds, log_path=logs / "tests.log")
                outcomes: dict[str, str] = {}
                try:
                    box.copy_out(JUNIT_PATH, logs / "tests.xml")
                    outcomes = dict(read_junit(logs / "tests.xml"))
                except (FileNotFoundError, JUnitError):
                    outcomes = {}
                tests_failed = sorted(t for t in record.pass_set if outcomes.get(t) != "passed")
        exit_code = setup.exit_code if not setup.timed_out else (setup.exit_code or 124)
        return classify(before, after, exit_code, step, tests_failed, detail)
