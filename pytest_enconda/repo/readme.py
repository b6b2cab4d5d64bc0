"""A repository's own README: the one a checkout holds before any error is injected (the
pipeline, ``verify`` and ``construct`` read the same one)."""

from __future__ import annotations

from pathlib import Path

from .. import textio

# A README is a few pages: far larger is not one.
MAX_README_BYTES = 8 << 20
_README_NAMES = ("README.md", "README.rst", "README.txt", "README")


def repository_readme(repo_dir: Path, preferred: str = "README.md") -> tuple[str, str]:
    """(name, text) of a repository's own README: ``preferred``, else the usual names, any case
    (the README before errors; ``verify`` and ``construct`` read the same one)."""
    candidates = [repo_dir / preferred]
    by_lower = {entry.name.lower(): entry for entry in repo_dir.iterdir() if entry.is_file()}
    candidates += [by_lower[name.lower()] for name in _README_NAMES if name.lower() in by_lower]
    root = repo_dir.resolve()
    for path in candidates:
        # The repository is downloaded data: a README linking out of it must not read host files.
        if path.is_file() and not path.is_symlink() and root in path.resolve().parents:
            data = textio.read_bounded(path, MAX_README_BYTES, follow_links=False)
            return path.name, data.decode("utf-8", errors="replace")
    return Path(preferred).name, ""
