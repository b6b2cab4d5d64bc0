"""verify builds a repository's reference on the base whose Python its declared range allows
(compserv/hknweb's ``<3.10,>=3.9`` failed on bookworm's 3.11.2), records it, and says why."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from gitutil import git

from pytest_enconda.cases.sidecar import RepoVerification
from pytest_enconda.errors import HarnessError
from pytest_enconda.sandbox.containers import ExecResult
from pytest_enconda.sandbox.recipes import BASE_RECIPES
from pytest_enconda.verify import VerifyOptions, _attempt, verify_repository

NARROW = '[project]\nname = "x"\nrequires-python = "<3.10,>=3.9"\n'


def snapshot(tmp_path: Path, pyproject: str, **files: str) -> tuple[Path, str]:
    """A bare clone in the fetch tool's layout, and its commit."""
    origin = tmp_path / "origin"
    origin.mkdir()
    git(origin, "init", "--quiet", "--initial-branch=main")
    (origin / "pyproject.toml").write_text(pyproject)
    for name, text in files.items():
        (origin / name.replace("_", ".")).write_text(text)
    git(origin, "add", "-A")
    git(origin, "commit", "--quiet", "-m", "one")
    bare = tmp_path / "o+n" / "repo"
    git(tmp_path, "clone", "--quiet", "--bare", str(origin), str(bare))
    return bare, git(origin, "rev-parse", "HEAD")


def context(tmp_path: Path, mirror: Path, built: list[str], pull_base: str | None = None) -> Any:
    """verify's context up to the image: ``ensure_base`` notes the base and stops there."""

    def ensure_base(name: str, **_: Any) -> str:
        built.append(name)
        raise HarnessError("no Docker in this test")

    lines: list[str] = []
    return SimpleNamespace(
        options=VerifyOptions(
            dataset=tmp_path, out=tmp_path / "s.json", logs=tmp_path / "logs", repo_mirror=mirror
        ),
        progress=lines.append,
        lines=lines,
        images=SimpleNamespace(
            settings=SimpleNamespace(cache_dir=tmp_path / "cache", pull_base=pull_base),
            recipes=BASE_RECIPES,
            ensure_base=ensure_base,
        ),
    )


def test_a_narrow_range_builds_and_records_the_older_base(tmp_path: Path) -> None:
    tox = "[testenv]\ndeps =\n    py39: backports.zoneinfo\n    py311: tomli-w\n"
    mirror, commit = snapshot(tmp_path, NARROW, tox_ini=tox)
    built: list[str] = []
    ctx = context(tmp_path, mirror, built)
    record = verify_repository(ctx, "o/n", commit)
    assert built == ["bullseye-py3.9"] and record.base_image == "bullseye-py3.9"
    # The test requirements are those of tox's environment on that Python.
    assert record.test_requirements == ["backports.zoneinfo"]
    assert (
        "o/n: base bullseye-py3.9: pyproject.toml [project] requires-python '<3.10,>=3.9' "
        "excludes 3.11.2, allows 3.9.2" in ctx.lines
    )
    # The choice comes before the build it decides: the line precedes the image's.
    assert ctx.lines.index("o/n: building its image") > ctx.lines.index(
        next(line for line in ctx.lines if line.startswith("o/n: base "))
    )


def test_a_range_the_default_fits_keeps_the_default(tmp_path: Path) -> None:
    mirror, commit = snapshot(tmp_path, '[project]\nrequires-python = ">=3.8"\n')
    built: list[str] = []
    record = verify_repository(context(tmp_path, mirror, built), "o/n", commit)
    assert built == ["bookworm-py3.11"] and record.base_image == "bookworm-py3.11"


def test_a_pulled_base_is_not_chosen(tmp_path: Path) -> None:
    """``pull_base`` replaces every recipe's Debian tree: another recipe would not change the
    interpreter, only fail its version check."""
    mirror, commit = snapshot(tmp_path, NARROW)
    built: list[str] = []
    ctx = context(tmp_path, mirror, built, pull_base="registry.example/base:1")
    record = verify_repository(ctx, "o/n", commit)
    assert built == ["bookworm-py3.11"] and record.base_image == "bookworm-py3.11"
    assert (
        "o/n: base bookworm-py3.11: the base is pulled (registry.example/base:1), not chosen"
        in ctx.lines
    )


class _Box:
    def copy_in(self, data: bytes, path: str) -> None:
        pass

    def exec(self, command: str, **_: Any) -> ExecResult:
        return ExecResult(exit_code=1, output="boom", duration=1, timed_out=False, truncated=False)


def test_the_setup_shares_the_download_cache_of_its_own_base(tmp_path: Path) -> None:
    """Wheels built for 3.9 are no use to 3.11: the boxes get the chosen base's cache."""
    caches: list[str | None] = []

    @contextmanager
    def container(*_: Any, download_cache: str | None = None, **__: Any) -> Any:
        caches.append(download_cache)
        yield _Box()

    ctx = SimpleNamespace(
        options=VerifyOptions(dataset=tmp_path, out=tmp_path / "s.json", logs=tmp_path),
        progress=lambda _line: None,
        sandbox=SimpleNamespace(container=container),
        download_cache=lambda base: f"cache-of-{base}",
        stopping=threading.Event(),
    )
    record = RepoVerification(
        repository="o/n", revision="r", status="unverified", base_image="bullseye-py3.9"
    )
    assert not _attempt(ctx, record, "img", "recipe", "pip install .\n", tmp_path, [])  # type: ignore[arg-type]
    assert caches == ["cache-of-bullseye-py3.9"]
