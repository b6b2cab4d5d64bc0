"""The harness's cache folder (locks, repository clones, bootstrap scratch, judge verdicts).

One place for it, so ``ENCONDA_CACHE_DIR`` moves all of it. Standard library only.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """``$ENCONDA_CACHE_DIR``, else ``$XDG_CACHE_HOME/pytest-enconda``, else ``~/.cache/…``."""
    explicit = os.environ.get("ENCONDA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "pytest-enconda"
