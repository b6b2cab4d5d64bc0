"""What one ``verify`` run shares between its repositories: the options, the backend whose boxes
and images the attempts use (Docker in production, any ``Backend`` in tests), the base recipes
and the sandbox settings the ladder reads (the pulled base, the Debian mirror, the memory limit).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..backends.base import Backend, Box, started
from ..cases.models import Case, CaseSpec, RepoSource
from ..cases.sidecar import MIN_PASS_SHARE, RepoVerification
from ..errors import EncondaError, HarnessError

if TYPE_CHECKING:
    from ..sandbox.git_deps import GitDependency
    from ..sandbox.recipes import BaseRecipe
    from ..sandbox.settings import SandboxSettings
    from .wheel_pythons import ReleaseFile

__all__ = ["Progress", "Stopped", "VerifyContext", "VerifyOptions"]

Progress = Callable[[str], None]


class VerifyOptions(BaseModel):
    model_config = ConfigDict(frozen=True)

    dataset: Path
    out: Path
    logs: Path
    agent: str = "readme"
    agent_options: dict[str, Any] = Field(default_factory=dict)
    recipe_fallback: bool = True
    # A recipe that fails on today's dependency releases is tried once more with those of its
    # revision's day (pip's upload-time cutoff): nevergrad imports what bayes_opt 2 removed.
    recipe_as_of: bool = True
    # A re-run may start at a later attempt when the earlier ones' failures are on record
    # (meerkat: the agent's and the plain recipe's test runs took an hour each before the dated
    # recipe, the one that got furthest); the attempts skipped are said in the record.
    first_attempt: Literal["agent", "recipe", "as-of"] = "agent"
    repo_mirror: Path | None = None
    workers: int = 1
    # A torch-size install on a loaded machine takes more than 15 minutes: 900 s verified two
    # held-out repositories only on a second try with 2,400 s.
    setup_seconds: float = 2400
    # The agent's attempt follows the repository's own README, which often ends by starting a
    # server or a notebook in the foreground (pyftpdlib's `python -m pyftpdlib`): such a setup
    # never exits and held a repository for the whole 2,400 s. The recipe, tried next, gets
    # setup_seconds; with no recipe to fall back on, the agent gets setup_seconds too.
    agent_setup_seconds: float = 900
    test_seconds: float = 900
    min_pass_share: float = MIN_PASS_SHARE
    # The default: a repository whose declared Python range excludes its interpreter gets the
    # recipe whose interpreter the range allows (sandbox.recipes.choose_base).
    base_image: str = "bookworm-py3.11"
    only: tuple[str, ...] = ()
    redo: bool = False


class Stopped(EncondaError):
    """verify was interrupted: no further box is started."""


class VerifyContext:
    """The run's backend and settings; ``box`` starts the boxes every attempt runs in."""

    def __init__(
        self,
        options: VerifyOptions,
        progress: Progress,
        *,
        backend: Backend | None = None,
        settings: SandboxSettings | None = None,
        recipes: Mapping[str, BaseRecipe] | None = None,
        forget_image: Callable[[str], None] | None = None,
    ) -> None:
        from ..sandbox.recipes import BASE_RECIPES
        from ..sandbox.settings import SandboxSettings

        self.options = options
        self.progress = progress
        self.settings = settings if settings is not None else SandboxSettings.from_env()
        self.recipes: Mapping[str, BaseRecipe] = recipes if recipes is not None else BASE_RECIPES
        if backend is None:
            backend, forget_image = default_backend(self.settings)
        self.backend = backend
        # The protocol has no image removal: Docker's snapshots (a whole environment each) go
        # at once; another backend's stay until it closes.
        self.forget_image = forget_image or (lambda _image: None)
        self.lock = threading.Lock()
        # Set when verify is interrupted: a worker stops before its next box.
        self.stopping = threading.Event()

    def recipe(self, name: str) -> BaseRecipe:
        try:
            return self.recipes[name]
        except KeyError:
            known = ", ".join(sorted(self.recipes))
            raise HarnessError(f"unknown base image recipe {name!r}; known: {known}") from None

    def pypi_files(self, name: str) -> dict[str, list[ReleaseFile]]:
        """PyPI's files of project ``name`` (``wheel_pythons.PyPIError`` when it cannot say)."""
        from .wheel_pythons import fetch_release_files

        return fetch_release_files(name)

    def task_image(
        self,
        record: RepoVerification,
        repo_dir: Path,
        *,
        tree_hash: str | None,
        git_deps: list[GitDependency],
    ) -> str:
        """The image of the repository at /data/project on the record's base. A base missing on
        this machine is built here (minutes, once) and said; the task layer's build is not."""
        return self.backend.task_image(
            verify_case(record, repo_dir),
            repo_dir,
            {},
            tree_hash=tree_hash,
            progress=_until_task_image(self.progress),
            git_deps=git_deps,
        )

    @contextlib.contextmanager
    def box(
        self, record: RepoVerification, image: str, role: str, case_id: str = ""
    ) -> Iterator[Box]:
        """A box of ``image`` sharing the download cache of the record's base, that refuses once
        verify is interrupted: a worker abandoned at exit would otherwise go on to its next step
        (the recipe after the agent's attempt, a test run) in a new box that the backend, already
        closed, no longer removes. Checked after the box is made, so one made while the backend
        closes is removed here."""
        with started(
            self.backend,
            image,
            case_id=case_id or f"verify/{record.repository}",
            role=role,
            # ``download_cache_key``'s form: a benchmark run on the same base shares the cache.
            download_cache=f"base:{record.base_image}",
        ) as box:
            if self.stopping.is_set():
                raise Stopped("verify was interrupted")
            yield box


def verify_case(
    record: RepoVerification, repo_dir: Path, readme: str = "README.md", readme_text: str = ""
) -> Case:
    """The case a repository's reference is made as: its URL at the pinned revision, on the
    record's base, its test command as discovered, its own README."""
    spec = CaseSpec(
        id=f"verify/{record.repository}",
        suite="diagnosis",
        title=f"reference setup of {record.repository}",
        repository=RepoSource(
            kind="url", url=f"https://github.com/{record.repository}", revision=record.revision
        ),
        readme=readme,
        readme_target=readme,
        test_command=record.test_command,
        base_image=record.base_image,
    )
    return Case(spec=spec, case_dir=repo_dir, readme_text=readme_text)


def _until_task_image(progress: Progress) -> Progress:
    """``progress`` for the base's build only: the task layer's lines (its Docker build, once per
    repository and attempt base) would bury the ladder's own."""
    quiet = False

    def say(line: str) -> None:
        nonlocal quiet
        quiet = quiet or line.startswith("building task image")
        if not quiet:
            progress(line)

    return say


def default_backend(settings: SandboxSettings) -> tuple[Backend, Callable[[str], None]]:
    """The Docker backend of a verify run, and how it removes a snapshot image."""
    from ..backends.docker import DockerBackend
    from ..sandbox.containers import new_run_id

    backend = DockerBackend(settings, run_id=f"verify-{new_run_id()}")

    def forget(image: str) -> None:
        backend.sandbox.client.images.remove(image, force=True)

    return backend, forget
