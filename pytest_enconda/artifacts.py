"""Run-directory layout and atomic file writes.

Every stage writes its artifacts here as it produces them, so a killed run loses at most the step
in flight and ``--resume`` can pick up from what is on disk.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from .errors import EncondaError
from .textio import read_bounded

M = TypeVar("M", bound=BaseModel)

MAX_ARTIFACT_BYTES = 64 << 20
MAX_NAME_CHARS = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def safe_name(case_id: str) -> str:
    """A case id as one path component, injectively: two ids never share a case folder.

    Imported ids contain ``/``; each character outside ``[A-Za-z0-9._-]`` becomes ``+XX`` per
    byte of its UTF-8 (``/`` is ``+2f``, ``+`` itself ``+2b``: fixed width, so the escape can be
    undone), and a leading dot is escaped the same way, so the folder is never hidden, ``.`` or
    ``..``. A name longer than ``MAX_NAME_CHARS`` is cut and ends with a hash of the id.
    """
    name = _UNSAFE.sub(
        lambda m: "".join(f"+{byte:02x}" for byte in m.group().encode("utf-8")), case_id
    )
    if name.startswith("."):
        name = "+2e" + name[1:]
    if len(name) > MAX_NAME_CHARS:
        # A file name has 255 bytes at most (ENAMETOOLONG past that, and the whole run stops):
        # a long id keeps a readable head and a hash of the whole id. "~" never appears in an
        # escaped name, so a shortened name cannot equal an unshortened one.
        digest = hashlib.sha256(case_id.encode("utf-8")).hexdigest()[:20]
        name = f"{name[: MAX_NAME_CHARS - 21]}~{digest}"
    return name or "+"


def atomic_write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file private; sidecars and constructed datasets are shared.
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_model(path: Path, model: BaseModel) -> None:
    atomic_write_text(path, model.model_dump_json(indent=2) + "\n")


class ArtifactError(EncondaError, ValueError):
    """A saved artifact cannot be read back (edited by hand, or from another version)."""


def read_model(path: Path, model: type[M]) -> M:
    """Load a model from JSON; errors name the file and each invalid field."""
    try:
        # A saved artifact is never a link or a FIFO in a run this harness wrote: refused.
        data = read_bounded(path, MAX_ARTIFACT_BYTES, follow_links=False)
        return model.model_validate_json(data)
    except ValidationError as exc:
        errors = exc.errors()
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in errors[:10]
        ) + (f"; and {len(errors) - 10} more" if len(errors) > 10 else "")
        raise ArtifactError(f"{path}: not a valid {model.__name__}: {details}") from None
    except ValueError as exc:
        raise ArtifactError(f"{path}: cannot be read: {exc}") from None
    except OSError as exc:
        raise ArtifactError(f"{path}: cannot be read: {exc}") from None


def append_jsonl(path: Path, record: dict) -> None:
    """Append one line; a single write() of a short line is atomic enough for one writer."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
