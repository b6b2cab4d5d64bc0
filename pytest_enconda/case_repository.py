"""A case's repository on this host and the task image built from it, for the pipeline.

The repository is materialised (what a snapshot lacked, and how its submodules were checked out,
said once per case); the task image holds it with the case's README written over the
repository's own, which is kept for the test step; a case whose README is the repository's own
(imported research) reads it from the checkout. The pipeline holds one ``TaskImages``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import textio
from .cases.models import README_FROM_REPOSITORY
from .errors import HarnessError
from .repo.readme import MAX_README_BYTES, repository_readme

if TYPE_CHECKING:
    from .backends.base import Backend
    from .cases.models import Case
    from .sandbox.git_deps import GitDependency
    from .settings import EncondaSettings

Progress = Callable[[str], None]


class TaskImages:
    """The repositories and task images of a run's cases, in this process."""

    def __init__(
        self,
        settings: EncondaSettings,
        *,
        backend: Callable[[], Backend],
        once: Callable[[Case, str, Callable[[], Any]], Any],
        progress: Progress,
        build_progress: Progress,
    ) -> None:
        self.settings = settings
        self.backend = backend
        self.once = once
        self.progress = progress
        self.build_progress = build_progress
        self.repo_readmes: dict[str, tuple[str, str]] = {}
        # The repository's own README where the case's replaces it in the task image: written
        # back for the tests (``run_execution``'s ``restore``), never shown to the agent.
        self.own_readmes: dict[str, dict[str, bytes]] = {}
        # case id -> files its repository's snapshot lacked (the checkout went on without them)
        self.absent: dict[str, list[str]] = {}
        self._submodules_said: set[str] = set()

    def agent_readme(self, case: Case) -> tuple[str, str]:
        """The README the agent is given: the case's, or the repository's own (imported research,
        or the original variant of an instance whose dataset lacks the original README file).

        The repository's README is only known once it is materialised: building the task image
        does that, and an agent that needs no image (one answering from the README) has the
        repository materialised for its README alone.
        """
        if README_FROM_REPOSITORY not in case.spec.tags:
            return Path(case.spec.readme_target).name, case.readme_text
        if case.id not in self.repo_readmes:
            self.once(case, "repository-readme", lambda: self._read_repository_readme(case))
        name, text = self.repo_readmes[case.id]
        if not text.strip():
            source = case.spec.repository
            where = f"{source.url or source.path}@{source.revision or 'its folder'}"
            raise HarnessError(
                f"{case.id}: the repository has no README ({case.spec.readme_target} or "
                f"README.*) at {where}"
            )
        return name, text

    def _read_repository_readme(self, case: Case) -> None:
        with tempfile.TemporaryDirectory(prefix="enconda-readme-") as tmp:
            repo_dir = Path(tmp) / "repo"
            self.check_out(case, repo_dir)
            self.repo_readmes[case.id] = repository_readme(repo_dir, case.spec.readme_target)

    def check_out(self, case: Case, repo_dir: Path) -> str:
        """The case's repository into ``repo_dir`` (its tree hash). A snapshot lacking some files'
        contents is checked out without them, as verify made the reference: which ones is said
        now and kept for ``case.json``."""
        from .sandbox.repo import describe_absent, materialize
        from .sandbox.submodules import FROM_MIRROR, LEFT_EMPTY, said_path

        absent: list[str] = []
        submodules: list[str] = []
        digest = materialize(
            case.spec.repository,
            case.case_dir,
            repo_dir,
            mirror_dir=self.settings.repo_mirror,
            cache_dir=self.backend().cache_dir,
            absent=absent,
            submodules=submodules,
        )
        empty = [line for line in submodules if LEFT_EMPTY in line]
        said = case.reference.submodules if case.reference is not None else ()
        had = {said_path(line) for line in said if FROM_MIRROR in line}
        needed = [line for line in empty if said_path(line) in had]
        if needed:
            # Tests that import the submodule would fail whatever the agent did: the mirror is
            # short of what the reference was verified with, a harness fault.
            raise HarnessError(
                f"{case.id}: the verified reference had submodule(s) from the mirror that the "
                f"mirror now lacks: {'; '.join(needed)}; fetch them into --repo-mirror"
            )
        if case.id not in self._submodules_said:
            self._submodules_said.add(case.id)
            for line in empty:
                self.progress(f"{case.id}: warning: submodule {line}")
        if absent:
            if case.id not in self.absent:
                self.progress(
                    f"{case.id}: warning: the repository's snapshot lacks "
                    + describe_absent(absent, "checked out without them")
                )
            self.absent[case.id] = absent
        return digest

    def _build(self, case: Case) -> str:
        backend = self.backend()
        spec = case.spec
        self.progress(f"{case.id}: preparing image (base {spec.base_image})")
        with tempfile.TemporaryDirectory(prefix="enconda-repo-") as tmp:
            repo_dir = Path(tmp) / "repo"
            # The repository first: an unavailable one should fail before minutes of building.
            digest = self.check_out(case, repo_dir)
            if README_FROM_REPOSITORY in spec.tags:
                # Nothing is written over the repository's own README; the agent reads it.
                overrides: dict[str, bytes] = {}
                self.repo_readmes[case.id] = repository_readme(repo_dir, spec.readme_target)
            else:
                overrides = {spec.readme_target: case.readme_text.encode("utf-8")}
                self._keep_own_readme(case, repo_dir, overrides)
            git_deps = self._git_deps(case, repo_dir)
            return backend.task_image(
                case,
                repo_dir,
                overrides,
                tree_hash=digest,
                progress=self.build_progress,
                git_deps=git_deps,
            )

    def _git_deps(self, case: Case, repo_dir: Path) -> list[GitDependency]:
        """The repository's GitHub dependencies the mirror holds, said once per case: the
        verified reference was installed with the same copies."""
        from .sandbox.git_deps import describe, mirrored_dependencies

        deps = mirrored_dependencies(repo_dir, self.settings.repo_mirror)
        if deps:
            self.progress(f"{case.id}: {describe(deps)}")
        return deps

    def _keep_own_readme(self, case: Case, repo_dir: Path, overrides: dict[str, bytes]) -> None:
        """Keep the repository's own README for the test step, which runs on it; one that
        cannot be read (a link, too large) is said, since the tests then meet the case's."""
        target = case.spec.readme_target
        own = repo_dir / target
        if not own.exists() and not own.is_symlink():
            return  # the repository has none: the case's README is the only one
        try:
            data = textio.read_within(repo_dir, own, MAX_README_BYTES)
        except (OSError, ValueError) as exc:
            self.progress(
                f"{case.id}: warning: the repository's own {target} cannot be restored for the "
                f"test step ({exc}); the tests run on the case's README"
            )
            return
        if data != overrides[target]:
            self.own_readmes[case.id] = {target: data}

    def task_image(self, case: Case) -> str:
        return self.once(case, "image", lambda: self._build(case))  # type: ignore[no-any-return]
