"""The verify workshop's writer of the verification sidecar (its format and reader are
``cases.sidecar``: every run reads it, only ``verify`` and ``construct`` write it)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from ..artifacts import atomic_write_text
from ..cases.sidecar import Sidecar

__all__ = ["now", "write_sidecar"]


def write_sidecar(path: Path, sidecar: Sidecar) -> None:
    """Atomically, sorted by repository so that a re-run changes only what changed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ordered = sidecar.model_copy(
        update={"repositories": dict(sorted(sidecar.repositories.items()))}
    )
    atomic_write_text(path, ordered.model_dump_json(indent=1) + "\n")


def now() -> str:
    """A record's ``verified_at``: UTC to the second (``2026-11-29T12:00:00+00:00``)."""
    return datetime.now(UTC).isoformat(timespec="seconds")
