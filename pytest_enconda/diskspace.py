"""Free disk space before an image is written.

A final-state snapshot copies what the agent installed (a research environment: gigabytes), and
a task image copies the checkout. Checked before either is written, a shortfall is a named
harness error that says how much is needed, rather than "No space left on device" from the
engine halfway through a commit, with a half-written layer left behind. Where the backend cannot
tell how much is free (a remote engine), nothing is checked.
"""

from __future__ import annotations

import os
from pathlib import Path

from .errors import HarnessError

# Left free beyond the image itself: the engine's metadata, the containers' logs, the run's
# own files. A commit also briefly needs the layer's tar stream on the same disk.
HEADROOM = 1 << 30
# A snapshot's layer on disk is its writable layer again, plus overlay and tar overhead.
SNAPSHOT_FACTOR = 1.1


class DiskSpaceError(HarnessError):
    """Not enough free space for an image the harness was about to write."""

    def __init__(self, what: str, expected: int, free: int, where: str) -> None:
        self.needed, self.free, self.where = expected + HEADROOM, free, where
        super().__init__(
            f"not enough disk space for {what}: it needs about {human(expected)} and "
            f"{human(HEADROOM)} of headroom, {human(self.needed)} in all, and {human(free)} is "
            f"free at {where}; free space (`pytest-enconda prune` removes cached task and snapshot "
            "images) or run fewer cases at once"
        )


def human(size: int) -> str:
    """``size`` bytes as a short figure with its unit (``6.5 GB``, in units of 1,024)."""
    value = float(size)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TB"


def require_space(free: int | None, expected: int, what: str, where: str) -> None:
    """Raise ``DiskSpaceError`` unless ``free`` bytes hold ``expected`` plus the headroom;
    ``free`` None (unknown) checks nothing."""
    if free is None:
        return
    if free < int(expected) + HEADROOM:
        raise DiskSpaceError(what, int(expected), free, where)


def tree_bytes(root: Path) -> int:
    """Bytes in the regular files under ``root`` (links not followed): a task image's copy."""
    total = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:  # a link is counted as itself (copied as a link)
            try:
                stat = os.lstat(os.path.join(folder, name))
            except OSError:
                continue
            total += stat.st_size
    return total
