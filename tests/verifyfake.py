"""verify on the fake backend: a real ``VerifyContext`` whose boxes are temporary folders, with
the recipes of the real bases; images named by their base, or refused, where a test needs it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_enconda.backends.base import Backend
from pytest_enconda.backends.fake import FakeBackend
from pytest_enconda.cases.models import Case
from pytest_enconda.errors import HarnessError
from pytest_enconda.sandbox.common import Progress
from pytest_enconda.sandbox.git_deps import GitDependency
from pytest_enconda.sandbox.settings import SandboxSettings
from pytest_enconda.verify.context import VerifyContext, VerifyOptions


class ByBase(FakeBackend):
    """Task images named by the base they are built on, as Docker's differ by their inputs: a
    test sees which image each attempt's boxes start from."""

    def task_image(
        self,
        case: Case,
        repo_dir: Path,
        overrides: Mapping[str, bytes],
        *,
        tree_hash: str | None = None,
        progress: Progress | None = None,
        git_deps: Sequence[GitDependency] = (),
    ) -> str:
        ref = super().task_image(
            case, repo_dir, overrides, tree_hash=tree_hash, progress=progress, git_deps=git_deps
        )
        named = f"{ref}-on-{case.spec.base_image}"
        self.images[named] = self.images[ref]
        return named

    def bases(self) -> list[str]:
        """The base of each task image asked for, in order."""
        return [call.detail["base"] for call in self.ops("task_image")]


class NoImage(ByBase):
    """A backend that notes the base of the task image asked for and refuses to make it: verify
    stops there, as it does where an image cannot be built."""

    def task_image(self, case: Case, *args: Any, **kwargs: Any) -> str:
        super().task_image(case, *args, **kwargs)
        raise HarnessError("no Docker in this test")


def fake_context(
    tmp_path: Path,
    mirror: Path | None,
    lines: list[str],
    *,
    backend: Backend | None = None,
    debian_mirror: str = "",
    pull_base: str | None = None,
    logs: Path | None = None,
    pypi_files: Callable[[str], Any] | None = None,
    **options: Any,
) -> VerifyContext:
    """A context ``verify.ladder.verify_repository`` takes: options from ``options``, progress
    into ``lines``, boxes from ``backend`` (a ``ByBase`` fake by default)."""
    settings = SandboxSettings(
        cache_dir=tmp_path / "cache", pull_base=pull_base, debian_mirror=debian_mirror
    )
    ctx = VerifyContext(
        VerifyOptions(
            dataset=tmp_path,
            out=tmp_path / "s.json",
            logs=logs or tmp_path,
            repo_mirror=mirror,
            **options,
        ),
        lines.append,
        backend=backend if backend is not None else ByBase(tmp_path / "fake"),
        settings=settings,
    )
    ctx.pypi_files = pypi_files or _no_pypi  # type: ignore[method-assign]
    return ctx


def _no_pypi(name: str) -> Any:
    from pytest_enconda.verify.wheel_pythons import PyPIError

    raise PyPIError(f"no PyPI in this test ({name})")
