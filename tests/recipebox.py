"""A recipe run for real: a repository folder set up in a fresh box of the base image."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pytest_enconda.backends.base import started
from pytest_enconda.backends.docker import DockerBackend


def project(folder: Path, package: str, files: dict[str, str]) -> Path:
    """A repository at ``folder``: an empty ``package`` and ``files`` (relative path: text)."""
    (folder / package).mkdir(parents=True)
    (folder / package / "__init__.py").write_text("")
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


@contextmanager
def set_up(
    sandbox: Any, base_image: str, repo: Path, script: str, case_id: str
) -> Iterator[tuple[Any, str]]:
    """A box holding ``repo`` at /data/project after ``script`` ran there (with ``set -e``) and
    passed, and the script's output; the test then asks the box what got installed."""
    (repo / "setup.sh").write_text("set -e\n" + script)
    backend = DockerBackend(sandbox=sandbox)
    with started(backend, base_image, case_id=case_id, role="test", network=True) as box:
        box.copy_in(repo, "/data/project")
        run = box.exec("bash setup.sh", timeout=600, workdir="/data/project")
        assert run.exit_code == 0, run.output[-3000:]
        yield box, run.output


def installed_version(box: Any, name: str) -> str:
    """``pip show``'s Version line of ``name`` in the box ("" when it is not installed)."""
    shown = box.exec(f"python -m pip show {name}", timeout=60, workdir="/")
    return next(
        (
            line.split(":", 1)[1].strip()
            for line in shown.output.splitlines()
            if line.startswith("Version:")
        ),
        "",
    )


def source_in_bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``script`` run on this machine as a box runs a setup script: sourced by one bash under
    ``set -eo pipefail``."""
    return subprocess.run(
        ["bash", "-c", "set -eo pipefail; . /dev/stdin"],
        input=script,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
