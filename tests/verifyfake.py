"""verify's context with no engine behind it: the image steps answer names, the tests' own
``_attempt`` stands in for the boxes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pytest_enconda import verify
from pytest_enconda.sandbox.recipes import BASE_RECIPES


def fake_context(
    tmp_path: Path,
    mirror: Path,
    lines: list[str],
    *,
    debian_mirror: str = "",
    ensure_base: Callable[..., str] = lambda *_a, **_k: "base",
    ensure_task_image: Callable[..., str] = lambda *_a, **_k: "image",
    logs: Path | None = None,
    pypi_files: Callable[[str], Any] | None = None,
    **options: Any,
) -> Any:
    """A context ``verify.verify_repository`` accepts: options from ``options``, progress into
    ``lines``, the recipes of the real bases."""
    settings = SimpleNamespace(
        cache_dir=tmp_path / "cache", pull_base=None, debian_mirror=debian_mirror
    )
    return SimpleNamespace(
        options=verify.VerifyOptions(
            dataset=tmp_path,
            out=tmp_path / "s.json",
            logs=logs or tmp_path,
            repo_mirror=mirror,
            **options,
        ),
        progress=lines.append,
        pypi_files=pypi_files or _no_pypi,
        images=SimpleNamespace(
            settings=settings,
            recipes=BASE_RECIPES,
            recipe=lambda name: BASE_RECIPES[name],
            ensure_base=ensure_base,
            ensure_task_image=ensure_task_image,
        ),
    )


def _no_pypi(name: str) -> Any:
    from pytest_enconda.cases.wheel_pythons import PyPIError

    raise PyPIError(f"no PyPI in this test ({name})")
