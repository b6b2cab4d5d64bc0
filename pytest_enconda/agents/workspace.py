"""What agents that work on the task container read from it: the repository (for the codebase
profile and the file tree) and the base environment."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..artifacts import atomic_write_text
from .base import AgentTask
from .profile import CodebaseProfile, build_profile

TREE_LIMIT = 400
_SKIP_DIRS = {".git", "__pycache__", ".venv", "venv", "node_modules", ".tox", ".mypy_cache"}

ENVIRONMENT_PROBE = r"""
. /etc/os-release 2>/dev/null && echo "OS: $PRETTY_NAME"
echo "user: $(id -un)"
echo "python3: $(python3 --version 2>&1) at $(command -v python3)"
echo "python: $(command -v python || echo none)"
echo "pip: $(pip --version 2>&1 | cut -d' ' -f1-2)"
for tool in uv poetry pipenv conda git gcc make curl wget apt-get; do
  if command -v "$tool" >/dev/null 2>&1; then echo "$tool: available"
  else echo "$tool: not installed"; fi
done
"""


def agent_dir(task: AgentTask) -> Path | None:
    """The case's ``agent/`` folder in the run directory, where the agent's files are kept."""
    path = task.trajectory_path or task.log_path
    return path.parent if path is not None else None


def copy_repository(container: Any, workdir: str, target: Path) -> Path:
    container.copy_out(workdir, target)
    return target


def profile_of(repo: Path, task: AgentTask) -> CodebaseProfile:
    """The codebase profile, saved as ``agent/profile.json`` beside the trajectory."""
    profile = build_profile(repo, task.readme_name or "README.md")
    folder = agent_dir(task)
    if folder is not None:
        atomic_write_text(folder / "profile.json", profile.model_dump_json(indent=2) + "\n")
    return profile


def file_tree(repo: Path, limit: int = TREE_LIMIT) -> str:
    """Relative paths, sorted, directories first level by level; the first ``limit`` shown."""
    paths: list[str] = []

    def walk(folder: Path) -> None:
        for entry in sorted(folder.iterdir(), key=lambda p: (p.is_file(), p.name)):
            if entry.is_dir() and entry.name in _SKIP_DIRS:
                continue
            rel = entry.relative_to(repo).as_posix()
            paths.append(rel + ("/" if entry.is_dir() and not entry.is_symlink() else ""))
            if entry.is_dir() and not entry.is_symlink():
                walk(entry)

    walk(repo)
    shown = paths[:limit]
    if len(paths) > limit:
        shown.append(f"... and {len(paths) - limit} more")
    return "\n".join(shown)


def base_environment(container: Any) -> str:
    result = container.exec(ENVIRONMENT_PROBE, timeout=60)
    return result.output.strip()


class RepositoryView:
    """A host copy of the container's repository for as long as the ``with`` lasts."""

    def __init__(self, container: Any, workdir: str) -> None:
        self.container = container
        self.workdir = workdir
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> Path:
        self._tmp = tempfile.TemporaryDirectory(prefix="enconda-repo-view-")
        return copy_repository(self.container, self.workdir, Path(self._tmp.name) / "repo")

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
